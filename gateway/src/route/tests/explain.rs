//! The EXPLAIN ROUTE rendering of a decision (docs/routing.md §15).

use super::{congested, servers, strong_select, weak_select};
use crate::route::congestion::{CongestionKind, CongestionState};
use crate::route::decision::decide;
use crate::route::trace::{FieldValue, PlanStep, Point};

#[test]
fn strong_read_plan_matches_odp_layout() {
    let mut req = strong_select(servers(&["ANWPF", "BNWPL"]), 42);
    req.enable_primary_zone = false;
    let d = decide(&req).unwrap();
    let plan = d.plan.render_plan();
    let want = "Route Plan\n\
-----------------\n\
> ROUTE_INFO:{route_info_type:\"USE_PARTITION_LOCATION_LOOKUP\"}\n\
> ROUTE_POLICY:{chosen_route_type:\"ROUTE_TYPE_LEADER\", route_policy:\"MERGE_IDC_ORDER\", consistency_level:\"STRONG\", chosen_server:\"10.0.0.2:2881\", ldc:\"BNWPL\", type:\"FULL\", seed:42}\n\
> CONGESTION_CONTROL:{svr_addr:\"10.0.0.2:2881\"}\n";
    assert_eq!(plan, want);
    let prompts = d.plan.render_prompts();
    assert!(
        prompts.starts_with("Route Prompts\n-----------------\n> ROUTE_INFO\n  [INFO] Will route to partition server")
    );
    assert!(prompts.contains(
        "  [INFO] Will route to table's partition leader replica(10.0.0.2:2881) using route policy MERGE_IDC_ORDER because query for STRONG read\n"
    ));
    assert!(d.plan.to_string().contains("\n\nRoute Plan\n"));
}

#[test]
fn skipped_congested_replicas_are_traced() {
    let mut cands = servers(&["ANWPF", "BNWPF"]);
    cands[0] = congested(cands[0].clone(), CongestionState::Congested(CongestionKind::Dead));
    let d = decide(&weak_select(cands, 7)).unwrap();
    let plan = d.plan.render_plan();
    assert!(plan.contains("> CONGESTION_CONTROL:{svr_addr:\"10.0.0.1:2881\", dead_congested:true}\n"), "{plan}");
    assert!(plan.ends_with("> CONGESTION_CONTROL:{svr_addr:\"10.0.0.2:2881\"}\n"), "{plan}");
    assert!(d.plan.render_prompts().contains("[WARN] This replica(10.0.0.1:2881) is dead congested, try next replica"));
}

#[test]
fn optimized_switch_is_traced() {
    let d = decide(&weak_select(servers(&["ANWT", "CNWPF"]), 7)).unwrap();
    let plan = d.plan.render_plan();
    assert!(
        plan.contains("route_policy:\"MERGE_IDC_ORDER\", opt_route_policy:\"MERGE_IDC_ORDER_OPTIMIZED\""),
        "{plan}"
    );
    assert!(d.plan.render_prompts().contains("switched to MERGE_IDC_ORDER_OPTIMIZED"));
}

#[test]
fn other_stages_prepend_their_points() {
    let mut d = decide(&weak_select(servers(&["ANWPF"]), 1)).unwrap();
    let parse = Point::Other {
        name: "SQL_PARSE",
        fields: vec![("cmd", FieldValue::Str("COM_QUERY".to_owned())), ("table", FieldValue::Str("T0".to_owned()))],
    };
    let calc = Point::Other { name: "PARTITION_ID_CALC_START", fields: vec![] };
    d.plan.prepend([PlanStep::new(parse), PlanStep::new(calc).at_depth(1)]);
    let plan = d.plan.render_plan();
    assert!(
        plan.contains("\n> SQL_PARSE:{cmd:\"COM_QUERY\", table:\"T0\"}\n  > PARTITION_ID_CALC_START:{}\n> ROUTE_INFO:"),
        "{plan}"
    );
}
