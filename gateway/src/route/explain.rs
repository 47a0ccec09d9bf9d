//! The route engine's part of the EXPLAIN ROUTE plan: ROUTE_INFO, ROUTE_POLICY, CONGESTION_CONTROL (docs/routing.md §15).

use super::congestion::CongestionState;
use super::decision::RouteDecision;
use super::order::{RankedCandidate, Via};
use super::request::{PartitionState, RouteRequest, TargetSource};
use super::trace::{FieldValue, PlanStep, Point, RouteInfoType, RoutePlan};

/// Builds the plan steps of a decision.
pub(crate) fn plan(req: &RouteRequest, d: &RouteDecision) -> RoutePlan {
    let mut plan = RoutePlan::default();
    plan.push(route_info(req));
    plan.push(route_policy(req, d));
    for skipped in d.skipped_congested.iter().filter(|r| r.addr != d.chosen.addr) {
        plan.push(congestion_skipped(skipped));
    }
    plan.push(congestion_chosen(d));
    plan
}

fn route_info(req: &RouteRequest) -> PlanStep {
    match &req.target_db_server {
        Some(t) if !t.addrs.is_empty() => {
            let kind = match t.source {
                TargetSource::Comment => RouteInfoType::UseCommentTargetDb,
                TargetSource::Config => RouteInfoType::UseConfigTargetDb,
            };
            let addrs: Vec<String> = t.addrs.iter().map(ToString::to_string).collect();
            PlanStep::new(Point::RouteInfo(kind)).info(format!("Will route to target db server({})", addrs.join(",")))
        }
        _ => PlanStep::new(Point::RouteInfo(RouteInfoType::UsePartitionLocationLookup))
            .info("Will route to partition server or routed by route policy"),
    }
}

fn str_field(s: impl Into<String>) -> FieldValue {
    FieldValue::Str(s.into())
}

fn route_policy(req: &RouteRequest, d: &RouteDecision) -> PlanStep {
    let c = &d.chosen;
    let mut fields =
        vec![("chosen_route_type", str_field(c.via.route_type())), ("route_policy", str_field(d.policy.name()))];
    if d.effective_policy != d.policy {
        fields.push(("opt_route_policy", str_field(d.effective_policy.name())));
    }
    fields.push(("consistency_level", str_field(d.consistency.name())));
    fields.push(("chosen_server", str_field(c.addr.to_string())));
    if let Some(code) = c.code {
        fields.push(("ldc", str_field(code.to_string())));
    }
    fields.push(("type", str_field(c.replica_type.name())));
    fields.push(("seed", FieldValue::UInt(d.seed)));
    let mut step = PlanStep::new(Point::RoutePolicy(fields)).info(policy_prompt(d));
    if d.effective_policy != d.policy {
        step = step.info(format!("No usable same-region partition server, switched to {}", d.effective_policy.name()));
    }
    if req.partition == PartitionState::CalcFailed {
        step = step.warn("fail to calculate partition id, route to a server holding the table's partitions");
    }
    for w in &d.warnings {
        step = step.warn(w.clone());
    }
    step
}

fn policy_prompt(d: &RouteDecision) -> String {
    let c = &d.chosen;
    let read = d.consistency.name();
    match c.via {
        Via::Leader => format!(
            "Will route to table's partition leader replica({}) using route policy {} because query for {read} read",
            c.addr, d.policy
        ),
        _ => format!(
            "Will route to {} replica({}) using route policy {} because query for {read} read",
            c.code.map_or_else(|| "target".to_owned(), |code| code.to_string()),
            c.addr,
            d.effective_policy
        ),
    }
}

fn congestion_skipped(r: &RankedCandidate) -> PlanStep {
    let mut fields = vec![("svr_addr", str_field(r.addr.to_string()))];
    let mut kind = "congested";
    if let CongestionState::Congested(k) = r.congestion {
        fields.push((k.field(), FieldValue::Bool(true)));
        kind = k.field();
    }
    PlanStep::new(Point::CongestionControl(fields)).warn(format!(
        "This replica({}) is {}, try next replica",
        r.addr,
        kind.replace('_', " ")
    ))
}

fn congestion_chosen(d: &RouteDecision) -> PlanStep {
    let c = &d.chosen;
    let mut fields = vec![("svr_addr", str_field(c.addr.to_string()))];
    match c.congestion {
        CongestionState::Alive => PlanStep::new(Point::CongestionControl(fields))
            .info(format!("This replica({}) is no need to pass congestion control", c.addr)),
        CongestionState::RetryDue => {
            fields.push(("alive_congested_retry", FieldValue::Bool(true)));
            PlanStep::new(Point::CongestionControl(fields))
                .info(format!("This replica({}) is alive congested, retry interval passed: try it once", c.addr))
        }
        CongestionState::Congested(k) => {
            fields.push((k.field(), FieldValue::Bool(true)));
            fields.push(("force_retry_congested", FieldValue::Bool(true)));
            PlanStep::new(Point::CongestionControl(fields))
                .warn(format!("Every replica is congested, force retry congested replica({})", c.addr))
        }
    }
}
