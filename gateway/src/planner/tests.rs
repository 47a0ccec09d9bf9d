//! Planning against the embedded demo topology (metadata/demo_topology.toml): t0 is
//! HASH(c1) PARTITIONS 8 with p3's leader on s2 (127.0.0.1:3312), s1 in zone1, s3 read-only.

use super::*;

pub(super) fn config(seed: u64) -> RoutingConfig {
    RoutingConfig::demo(Some(seed))
}

pub(super) fn ctx() -> StatementContext {
    StatementContext { tenant: "sys".into(), database: Some("test".into()), autocommit: true, ..Default::default() }
}

async fn plan(sql: &str) -> Planned {
    let planner = Planner::from_config(&config(7)).await.unwrap();
    planner.plan(sql, &ctx()).await
}

#[tokio::test]
async fn strong_read_goes_to_the_partition_leader_with_odp_trace() {
    let sql = "SELECT /*+READ_CONSISTENCY(STRONG)*/ * FROM t0 WHERE c1=123";
    let p = plan(sql).await;
    let d = p.decision.as_ref().unwrap();
    assert_eq!(d.server().to_string(), "127.0.0.1:3312", "p3's leader is s2");
    assert_eq!(p.location.as_ref().unwrap().name(), "p3");
    let text = render_explain(sql, &p);
    let plan_part = &text[text.find("Route Plan").unwrap()..];
    let points: Vec<&str> = plan_part
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("> "))
        .map(|l| l.split(':').next().unwrap())
        .collect();
    assert_eq!(
        points,
        [
            "SQL_PARSE",
            "ROUTE_INFO",
            "LOCATION_CACHE_LOOKUP",
            "TABLE_ENTRY_LOOKUP_DONE",
            "PARTITION_ID_CALC_START",
            "EXPR_PARSE",
            "RESOLVE_EXPR",
            "RESOLVE_TOKEN",
            "CALC_PARTITION_ID",
            "PARTITION_ID_CALC_DONE",
            "PARTITION_ENTRY_LOOKUP_DONE",
            "ROUTE_POLICY",
            "CONGESTION_CONTROL"
        ],
        "{text}"
    );
    assert!(text.contains("  > PARTITION_ID_CALC_DONE:{partition_id:200065, level:1, partitions:\"(p3)\"}"), "{text}");
    assert!(
        text.contains("    > EXPR_PARSE:{col_val:\"c1=123\"}\n    > RESOLVE_EXPR:{part_range:\"[123 ; 123]\"}\n"),
        "{text}"
    );
    assert!(text.contains("      > RESOLVE_TOKEN:{token_type:\"TOKEN_INT_VAL\", token:\"123\"}"), "{text}");
    assert!(
        text.contains("    > CALC_PARTITION_ID:{part_description:\"partition by hash(c1) partitions 8\"}"),
        "{text}"
    );
    assert!(text.contains("  > PARTITION_ENTRY_LOOKUP_DONE:{leader:\"127.0.0.1:3312\""), "{text}");
    assert!(text.contains("ROUTE_TYPE_LEADER"), "{text}");
}

#[tokio::test]
async fn explicit_partition_name_is_traced() {
    let p = plan("SELECT * FROM t0 PARTITION(p1) WHERE c1=123").await;
    assert_eq!(p.location.as_ref().unwrap().name(), "p1");
    let text = render_explain("q", &p);
    assert!(text.contains("part_name:\"p1\""), "{text}");
    assert!(text.contains("Will route to specified partition name(p1)"), "{text}");
}

#[tokio::test]
async fn uncomputable_key_falls_back_to_servers_holding_the_table() {
    let p = plan("SELECT * FROM t0 WHERE c2 = 'x'").await;
    assert!(p.location.is_none());
    let d = p.decision.as_ref().unwrap();
    let chosen = d.server().to_string();
    assert!(["127.0.0.1:3311", "127.0.0.1:3312"].contains(&chosen.as_str()), "a leader of some partition: {chosen}");
    assert!(render_explain("q", &p).contains("Fail to calculate partition id"));
}

#[tokio::test]
async fn weak_read_prefers_same_idc_follower() {
    // p3: leader s2 (idc2), follower s1 (idc1 = ours), read-only s3 (idc3).
    let p = plan("SELECT /*+READ_CONSISTENCY(WEAK)*/ * FROM t0 WHERE c1=123").await;
    assert_eq!(p.decision.unwrap().server().to_string(), "127.0.0.1:3311");
}

#[tokio::test]
async fn statement_without_table_uses_tenant_servers() {
    let p = plan("SELECT 1").await;
    let chosen = p.decision.unwrap().server().to_string();
    assert!(chosen.starts_with("127.0.0.1:331"), "{chosen}");
}

#[tokio::test]
async fn multi_statement_is_strong_despite_weak_hint_and_session() {
    let planner = Planner::from_config(&config(7)).await.unwrap();
    let weak_session = StatementContext { read_consistency: Some(crate::route::ReadConsistency::Weak), ..ctx() };
    let weak = "SELECT /*+READ_CONSISTENCY(WEAK)*/ * FROM t0 WHERE c1=123";
    // The single statement reads weak (same-IDC follower s1), so the test can fail.
    let single = planner.plan(weak, &weak_session).await;
    assert_eq!(single.decision.as_ref().unwrap().consistency, crate::route::Consistency::Weak);
    for sql in [format!("{weak}; SELECT 1"), "SELECT * FROM t0 WHERE c1=123; SELECT 1".to_string()] {
        let p = planner.plan(&sql, &weak_session).await;
        let d = p.decision.as_ref().unwrap();
        assert_eq!(d.consistency, crate::route::Consistency::Strong, "{sql}");
        assert_eq!(d.server().to_string(), "127.0.0.1:3312", "p3's leader: {sql}");
    }
}

#[tokio::test]
async fn a_command_without_a_statement_goes_to_a_readonly_zone_under_force_readonly_zone() {
    let forced = RoutingConfig { proxy_route_policy: Some("FORCE_READONLY_ZONE".into()), ..config(7) };
    let planner = Planner::from_config(&forced).await.unwrap();
    // A statement-less command (the login's validation, COM_PING first thing) is a Command
    // request: accepted, on the read-only server s3.
    let p = planner.plan_command(&ctx()).await;
    let d = p.decision.as_ref().expect("a command is routed under FORCE_READONLY_ZONE");
    assert_eq!(d.server().to_string(), "127.0.0.1:3313", "s3 is the read-only zone's server");
    // An empty statement analysed as SQL is refused (what the sessions sent before): the test
    // can fail.
    assert!(planner.plan("", &ctx()).await.decision.is_err(), "a non-weak statement is refused");
}
