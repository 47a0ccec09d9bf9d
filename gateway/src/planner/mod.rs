//! The per-statement routing pipeline: analyse, locate the partition, look up its replicas,
//! decide — one traced value that EXPLAIN ROUTE, `gateway route` and the session all use.

mod calc_trace;
mod candidates;
mod explain;
pub mod show_route;

use std::sync::Arc;

use crate::config::RoutingConfig;
use crate::metadata::{MetadataError, StaticSource};
use crate::partition::{locate_statement, CastContext, Location};
use crate::route::{
    decide, ClientLocation, ConsistencyInputs, FieldValue, PartitionState, PlanStep, Point, RequestKind, RouteDecision,
    RouteError, RoutePlan, RouteRequest,
};
use crate::sql::{self, Analysis, StmtKind};
use crate::topology::{Locator, Lookup, PartitionReplicas, TableKey};

pub use explain::render_explain;

/// Session facts that change how a statement is routed.
#[derive(Debug, Clone, Default)]
pub struct StatementContext {
    /// Tenant of the session.
    pub tenant: String,
    /// Current database.
    pub database: Option<String>,
    /// Session `ob_read_consistency`.
    pub read_consistency: Option<crate::route::ReadConsistency>,
    /// Session `ob_route_policy`.
    pub ob_route_policy: Option<i64>,
    /// Inside a transaction.
    pub in_transaction: bool,
    /// `autocommit`.
    pub autocommit: bool,
}

/// The outcome of planning one statement.
#[derive(Debug)]
pub struct Planned {
    /// The decision, or why none could be made.
    pub decision: Result<RouteDecision, RouteError>,
    /// The full trace, pipeline stages included.
    pub plan: RoutePlan,
    /// The partition, when one was computed.
    pub location: Option<Location>,
}

/// Plans statements against one topology.
#[derive(Debug, Clone)]
pub struct Planner {
    locator: Locator,
    config: Arc<RoutingConfig>,
}

impl Planner {
    /// A planner over the static topology named in the config; refreshes the cluster once.
    pub async fn from_config(config: &RoutingConfig) -> Result<Planner, MetadataError> {
        let source = if config.topology == "demo" {
            StaticSource::demo(&config.server_addresses)?
        } else {
            StaticSource::load(std::path::Path::new(&config.topology), &config.server_addresses)?
        };
        let locator = Locator::new(Arc::new(source), config.cache.clone());
        locator.refresh_cluster().await?;
        Ok(Planner { locator, config: Arc::new(config.clone()) })
    }

    /// The location service.
    pub fn locator(&self) -> &Locator {
        &self.locator
    }

    /// Plans `sql` for a session.
    pub async fn plan(&self, sql: &str, ctx: &StatementContext) -> Planned {
        self.plan_analysis(&sql::analyze(sql), "COM_QUERY", ctx).await
    }

    /// Plans an execution of the prepared statement `sql` with its bound parameter values
    /// (partition.md §9: a `?` in a key predicate routes by the value bound to it).
    pub async fn plan_bound<'a>(&self, sql: &'a str, params: &[sql::Value<'a>], ctx: &StatementContext) -> Planned {
        self.plan_analysis(&sql::analyze_prepared(sql, params), "COM_STMT_EXECUTE", ctx).await
    }

    /// Plans an already analysed statement; `cmd` names the client command in the trace.
    pub async fn plan_analysis(&self, analysis: &Analysis<'_>, cmd: &str, ctx: &StatementContext) -> Planned {
        let mut steps = vec![parse_step(analysis, cmd)];
        let (mut req, location) = self.request(analysis, ctx, &mut steps).await;
        req.seed = self.config.seed.unwrap_or_else(rand::random);
        let decision = decide(&req);
        let mut plan = RoutePlan::default();
        if let Ok(d) = &decision {
            plan = d.plan.clone();
        }
        splice_steps(&mut plan, steps);
        Planned { decision, plan, location }
    }

    /// Builds the route request: candidates from the table's partition, or the tenant's servers.
    async fn request(
        &self,
        a: &Analysis<'_>,
        ctx: &StatementContext,
        steps: &mut Vec<PlanStep>,
    ) -> (RouteRequest, Option<Location>) {
        let tenant_servers = self.locator.tenant_placed(&ctx.tenant).await.unwrap_or_default();
        let mut req = RouteRequest::new(candidates::tenant(&tenant_servers), 0);
        self.fill_inputs(&mut req, a, ctx);
        let Some(table) = a.table() else {
            return (req, None);
        };
        req.names_table = true;
        steps.push(PlanStep::new(other("LOCATION_CACHE_LOOKUP", vec![("mode", s("oceanbase"))])));
        let db = table.schema.as_deref().or(ctx.database.as_deref()).unwrap_or("");
        let key = TableKey::new(&ctx.tenant, db, &table.name);
        let lookup = self.locator.table(&key).await;
        let Some(entry) = lookup.value().cloned() else {
            steps.push(PlanStep::new(other("TABLE_ENTRY_LOOKUP_DONE", vec![("table", s(&table.name))]))
                .at_depth(1)
                .warn(format!("no location for table {key}: routed by tenant servers")));
            req.partition = PartitionState::NoLocation;
            return (req, None);
        };
        steps.push(table_step(&table.name, &entry, &lookup));
        let location = if entry.is_partitioned() {
            match self.partition(a, table, &entry, steps) {
                Some(l) => Some(l),
                None => {
                    req.partition = PartitionState::CalcFailed;
                    req.candidates = candidates::all_partitions(&self.locator, &key, &entry, &tenant_servers).await;
                    return (req, None);
                }
            }
        } else {
            None
        };
        match self.locator.replicas(&key, location.as_ref()).await {
            Ok(reps) => {
                steps.push(entry_step(&reps));
                req.partition = PartitionState::Located;
                req.candidates = candidates::with_replicas(&reps, &tenant_servers);
            }
            Err(e) => {
                steps.push(PlanStep::new(other("PARTITION_ENTRY_LOOKUP_DONE", vec![])).at_depth(1).warn(e.to_string()));
                req.partition = PartitionState::NoLocation;
            }
        }
        (req, location)
    }

    fn partition(
        &self,
        a: &Analysis<'_>,
        table: &sql::TableRef<'_>,
        entry: &crate::topology::TableEntry,
        steps: &mut Vec<PlanStep>,
    ) -> Option<Location> {
        steps.push(PlanStep::new(other("PARTITION_ID_CALC_START", vec![])).at_depth(1));
        let Some(scheme) = entry.scheme.as_ref() else {
            steps.push(calc_failed("the table's partitioning is not known"));
            return None;
        };
        match locate_statement(scheme, a, table, &CastContext::default()) {
            Ok(loc) => {
                if table.partitions.is_empty() {
                    steps.extend(calc_trace::calc_steps(scheme, a));
                }
                steps.push(calc_done(&loc, entry, !table.partitions.is_empty()));
                Some(loc)
            }
            Err(e) => {
                steps.push(calc_failed(&e.to_string()));
                None
            }
        }
    }

    fn fill_inputs(&self, req: &mut RouteRequest, a: &Analysis<'_>, ctx: &StatementContext) {
        req.kind = match a.kind {
            StmtKind::Select => RequestKind::Select,
            StmtKind::Set | StmtKind::Use | StmtKind::Begin | StmtKind::Commit | StmtKind::Rollback => {
                RequestKind::SessionStatement
            }
            _ => RequestKind::OtherStatement,
        };
        req.consistency = ConsistencyInputs {
            is_select: a.kind == StmtKind::Select,
            hint: a.hints.consistency.map(|c| match c {
                sql::Consistency::Weak => crate::route::Consistency::Weak,
                sql::Consistency::Strong => crate::route::Consistency::Strong,
            }),
            session: ctx.read_consistency,
            in_transaction: ctx.in_transaction,
            autocommit: ctx.autocommit,
            locking_read: a.lock.is_some(),
            ..ConsistencyInputs::default()
        };
        req.ob_route_policy = ctx.ob_route_policy;
        req.proxy_route_policy_config = self.config.proxy_route_policy.clone();
        req.client = ClientLocation { idc: self.config.idc.clone(), regions: Vec::new() };
        if let Some(t) = self.locator.tenant(&ctx.tenant) {
            req.primary_zone = candidates::primary_zone(&t.primary_zone);
        }
    }
}

/// Puts the pipeline's steps in ODP's order: SQL_PARSE, ROUTE_INFO, the location steps, then
/// the rest of the decision's steps.
fn splice_steps(plan: &mut RoutePlan, mut ours: Vec<PlanStep>) {
    let decision_steps = std::mem::take(&mut plan.steps);
    let (info, rest): (Vec<_>, Vec<_>) = decision_steps.into_iter().partition(|st| matches!(st.point, Point::RouteInfo(_)));
    let location = ours.split_off(1.min(ours.len()));
    plan.steps = ours.into_iter().chain(info).chain(location).chain(rest).collect();
}

fn s(v: &str) -> FieldValue {
    FieldValue::Str(v.to_string())
}

fn other(name: &'static str, fields: Vec<(&'static str, FieldValue)>) -> Point {
    Point::Other { name, fields }
}

fn parse_step(a: &Analysis<'_>, cmd: &str) -> PlanStep {
    let mut fields = vec![("cmd", s(cmd))];
    if let Some(t) = a.table() {
        fields.push(("table", s(&t.name)));
    }
    PlanStep::new(other("SQL_PARSE", fields))
}

fn table_step(name: &str, entry: &crate::topology::TableEntry, lookup: &Lookup<crate::topology::TableEntry>) -> PlanStep {
    let mut fields = vec![("table", s(name))];
    if let Some(id) = entry.table_id {
        fields.push(("table_id", FieldValue::UInt(id)));
    }
    fields.push(("partition_num", FieldValue::UInt(entry.part_num as u64)));
    fields.push(("table_type", s(entry.table_type.name())));
    fields.push(("entry_from_remote", FieldValue::Bool(lookup.from_remote())));
    PlanStep::new(other("TABLE_ENTRY_LOOKUP_DONE", fields)).at_depth(1)
}

fn calc_done(loc: &Location, entry: &crate::topology::TableEntry, by_name: bool) -> PlanStep {
    let mut fields = Vec::new();
    if let Some(t) = entry.tablet_of(loc) {
        fields.push(("partition_id", FieldValue::UInt(t)));
    }
    fields.push(("level", FieldValue::UInt(if loc.sub.is_some() { 2 } else { 1 })));
    let step = if by_name {
        fields.push(("part_name", s(loc.name())));
        PlanStep::new(other("PARTITION_ID_CALC_DONE", fields)).info(format!("Will route to specified partition name({})", loc.name()))
    } else {
        let idx = match &loc.sub {
            Some((i, _)) => format!("(p{}sp{i})", loc.part_idx),
            None => format!("(p{})", loc.part_idx),
        };
        fields.push(("partitions", FieldValue::Str(idx)));
        PlanStep::new(other("PARTITION_ID_CALC_DONE", fields))
    };
    step.at_depth(1)
}

fn calc_failed(why: &str) -> PlanStep {
    PlanStep::new(other("PARTITION_ID_CALC_DONE", vec![("error", s(why))]))
        .at_depth(1)
        .warn(format!("Fail to calculate partition id ({why}): route to a server holding the table's partitions"))
}

fn entry_step(reps: &PartitionReplicas) -> PlanStep {
    let mut fields = Vec::new();
    if let Some(l) = reps.leader() {
        fields.push(("leader", s(&l.replica.addr.to_string())));
    }
    fields.push(("entry_from_remote", FieldValue::Bool(reps.from_remote)));
    PlanStep::new(other("PARTITION_ENTRY_LOOKUP_DONE", fields)).at_depth(1)
}

#[cfg(test)]
mod tests;
