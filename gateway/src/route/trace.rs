//! The route trace: typed diagnosis points rendered in ODP's EXPLAIN ROUTE layout (docs/routing.md §15).
//!
//! A [`RoutePlan`] is an ordered list of [`PlanStep`]s. The route engine adds ROUTE_INFO,
//! ROUTE_POLICY and CONGESTION_CONTROL; other stages (SQL_PARSE, LOCATION_CACHE_LOOKUP,
//! PARTITION_ID_CALC_*, …) add their own points with [`Point::Other`] or new variants.

use std::fmt::{self, Write as _};

/// A field value in a point's `{k:v, …}` list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldValue {
    /// Printed in double quotes.
    Str(String),
    /// Printed bare.
    Int(i64),
    /// Printed bare.
    UInt(u64),
    /// Printed bare, `true` / `false`.
    Bool(bool),
}

impl fmt::Display for FieldValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FieldValue::Str(s) => write!(f, "\"{s}\""),
            FieldValue::Int(n) => write!(f, "{n}"),
            FieldValue::UInt(n) => write!(f, "{n}"),
            FieldValue::Bool(b) => write!(f, "{b}"),
        }
    }
}

/// Type of the route information used (`ROUTE_INFO:{route_info_type:…}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RouteInfoType {
    /// Location lookup and route policy.
    UsePartitionLocationLookup,
    /// `target_db_server` from configuration.
    UseConfigTargetDb,
    /// `target_db_server` from an SQL comment.
    UseCommentTargetDb,
    /// The last server connection was reused.
    UseLastSession,
    /// The transaction coordinator's connection.
    UseCoordinatorSession,
    /// `@obproxy_route_addr`.
    UseObproxyRouteAddr,
}

impl RouteInfoType {
    /// ODP's name.
    pub const fn name(self) -> &'static str {
        match self {
            RouteInfoType::UsePartitionLocationLookup => "USE_PARTITION_LOCATION_LOOKUP",
            RouteInfoType::UseConfigTargetDb => "USE_CONFIG_TARGET_DB",
            RouteInfoType::UseCommentTargetDb => "USE_COMMENT_TARGET_DB",
            RouteInfoType::UseLastSession => "USE_LAST_SESSION",
            RouteInfoType::UseCoordinatorSession => "USE_COORDINATOR_SESSION",
            RouteInfoType::UseObproxyRouteAddr => "USE_OBPROXY_ROUTE_ADDR",
        }
    }
}

/// One diagnosis point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Point {
    /// `ROUTE_INFO:{route_info_type:"…"}`.
    RouteInfo(RouteInfoType),
    /// `ROUTE_POLICY:{…}`; fields in print order.
    RoutePolicy(Vec<(&'static str, FieldValue)>),
    /// `CONGESTION_CONTROL:{svr_addr:"…", …}`; fields in print order.
    CongestionControl(Vec<(&'static str, FieldValue)>),
    /// Any other point, e.g. `SQL_PARSE` or `PARTITION_ID_CALC_DONE`.
    Other {
        /// Point name.
        name: &'static str,
        /// Fields in print order.
        fields: Vec<(&'static str, FieldValue)>,
    },
}

impl Point {
    /// The point's name.
    pub fn name(&self) -> &'static str {
        match self {
            Point::RouteInfo(_) => "ROUTE_INFO",
            Point::RoutePolicy(_) => "ROUTE_POLICY",
            Point::CongestionControl(_) => "CONGESTION_CONTROL",
            Point::Other { name, .. } => name,
        }
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{{", self.name())?;
        match self {
            Point::RouteInfo(t) => write!(f, "route_info_type:\"{}\"", t.name())?,
            Point::RoutePolicy(fields) | Point::CongestionControl(fields) | Point::Other { fields, .. } => {
                write_fields(f, fields)?
            }
        }
        f.write_str("}")
    }
}

fn write_fields(f: &mut fmt::Formatter<'_>, fields: &[(&'static str, FieldValue)]) -> fmt::Result {
    for (i, (k, v)) in fields.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{k}:{v}")?;
    }
    Ok(())
}

/// Severity of a prompt line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PromptLevel {
    /// `[INFO]`.
    Info,
    /// `[WARN]`.
    Warn,
}

/// One line of the Route Prompts section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompt {
    /// `[INFO]` or `[WARN]`.
    pub level: PromptLevel,
    /// The explanation.
    pub text: String,
}

impl fmt::Display for Prompt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tag = match self.level {
            PromptLevel::Info => "[INFO]",
            PromptLevel::Warn => "[WARN]",
        };
        write!(f, "{tag} {}", self.text)
    }
}

/// One step of the plan: a point at a tree depth, with its prompts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanStep {
    /// Tree depth (0 = top level); two spaces of indentation per level.
    pub depth: usize,
    /// The point.
    pub point: Point,
    /// Explanations printed under Route Prompts.
    pub prompts: Vec<Prompt>,
}

impl PlanStep {
    /// A top-level step without prompts.
    pub fn new(point: Point) -> Self {
        PlanStep { depth: 0, point, prompts: Vec::new() }
    }

    /// Adds an `[INFO]` prompt.
    pub fn info(mut self, text: impl Into<String>) -> Self {
        self.prompts.push(Prompt { level: PromptLevel::Info, text: text.into() });
        self
    }

    /// Adds a `[WARN]` prompt.
    pub fn warn(mut self, text: impl Into<String>) -> Self {
        self.prompts.push(Prompt { level: PromptLevel::Warn, text: text.into() });
        self
    }

    /// Sets the depth.
    pub fn at_depth(mut self, depth: usize) -> Self {
        self.depth = depth;
        self
    }
}

impl fmt::Display for PlanStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:indent$}> {}", "", self.point, indent = 2 * self.depth)
    }
}

/// The whole route plan of one request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RoutePlan {
    /// Steps in execution order.
    pub steps: Vec<PlanStep>,
}

const RULE: &str = "-----------------";

impl RoutePlan {
    /// Appends a step.
    pub fn push(&mut self, step: PlanStep) {
        self.steps.push(step);
    }

    /// Inserts steps of earlier stages in front (e.g. SQL_PARSE, LOCATION_CACHE_LOOKUP).
    pub fn prepend(&mut self, steps: impl IntoIterator<Item = PlanStep>) {
        let mut all: Vec<PlanStep> = steps.into_iter().collect();
        all.append(&mut self.steps);
        self.steps = all;
    }

    /// The Route Prompts section: each point with prompts, then its prompt lines.
    pub fn render_prompts(&self) -> String {
        let mut out = format!("Route Prompts\n{RULE}\n");
        for step in self.steps.iter().filter(|s| !s.prompts.is_empty()) {
            let _ = writeln!(out, "> {}", step.point.name());
            for p in &step.prompts {
                let _ = writeln!(out, "  {p}");
            }
        }
        out
    }

    /// The Route Plan section: one line per step.
    pub fn render_plan(&self) -> String {
        let mut out = format!("Route Plan\n{RULE}\n");
        for step in &self.steps {
            let _ = writeln!(out, "{step}");
        }
        out
    }
}

impl fmt::Display for RoutePlan {
    /// Both sections, separated by a blank line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}\n{}", self.render_prompts(), self.render_plan())
    }
}
