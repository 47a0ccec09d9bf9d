//! The route-policy inputs a session or the configuration gives the planner (docs/routing.md §5):
//! `target_db_server` hints and configuration, `@proxy_route_policy`, `proxy_primary_zone_name`,
//! `enable_primary_zone`. The demo topology has a read-only zone; [`normal`] is the same cluster
//! as a normal deployment (zone3 read-write, s3 a full follower, primary zone zone2).

use super::tests::{config, ctx};
use super::*;

const S1: &str = "127.0.0.1:3311";
const S2: &str = "127.0.0.1:3312";
const S3: &str = "127.0.0.1:3313";
/// `c1 = 0` is p0 of t0: leader s1 (zone1, the gateway's IDC), followers s2 (zone2) and s3.
const P0_WEAK: &str = "SELECT /*+READ_CONSISTENCY(WEAK)*/ * FROM t0 WHERE c1 = 0";
const P0_STRONG: &str = "SELECT * FROM t0 WHERE c1 = 0";

async fn demo(cfg: RoutingConfig) -> Planner {
    Planner::from_config(&cfg).await.unwrap()
}

/// The demo cluster as a normal deployment, planned with `cfg`'s other settings.
async fn normal(cfg: RoutingConfig) -> Planner {
    let text = include_str!("../metadata/demo_topology.toml")
        .replace("type = \"ReadOnly\"", "type = \"ReadWrite\"")
        .replace("], readonly = [\"s3\"]", ", \"s3\"]")
        .replace("primary_zone = \"zone1;zone2,zone3\"", "primary_zone = \"zone2\"");
    assert!(!text.contains("ReadOnly") && !text.contains("readonly"), "the rewrite reached every line");
    let dir = std::env::temp_dir().join(format!("policy-inputs-{}-{}", std::process::id(), rand::random::<u32>()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("topology.toml");
    std::fs::write(&path, text).unwrap();
    let planner =
        Planner::from_config(&RoutingConfig { topology: Some(path.display().to_string()), ..cfg }).await.unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    planner
}

fn server(p: &Planned) -> String {
    p.decision.as_ref().map(|d| d.server().to_string()).unwrap_or_else(|e| format!("refused: {e}"))
}

fn policy(p: &Planned) -> &'static str {
    p.decision.as_ref().map_or("refused", |d| d.policy.name())
}

fn with_var(name: &str) -> StatementContext {
    StatementContext { proxy_route_policy: ProxyRoutePolicy::parse(name), ..ctx() }
}

#[tokio::test]
async fn a_target_db_server_hint_sends_the_statement_to_that_server() {
    let planner = demo(config(7)).await;
    assert_eq!(server(&planner.plan(P0_STRONG, &ctx()).await), S1, "without a hint: p0's leader");
    for sql in [
        format!("/* target_db_server={S3} */ {P0_STRONG}"),
        format!("SELECT /*+ODP: target_db_server={S3},{S1} */ * FROM t0 WHERE c1 = 0"),
        format!("/* target_db_server='{S3}' */ UPDATE t0 SET c2 = 'x' WHERE c1 = 0"),
    ] {
        let p = planner.plan(&sql, &ctx()).await;
        assert_eq!((server(&p), policy(&p)), (S3.to_string(), "TARGET_DB_SERVER_ONLY"), "{sql}");
        let text = render_explain(&sql, &p);
        assert!(text.contains(&format!("Will route to target db server({S3}")), "{text}");
    }
}

#[tokio::test]
async fn a_target_that_is_not_a_tenant_server_is_refused_with_4179() {
    let planner = demo(config(7)).await;
    for target in ["127.0.0.1:1", "10.0.0.9:2881", "not-an-address", "127.0.0.1", format!("{S1},127.0.0.1:1").as_str()]
    {
        let sql = format!("/* target_db_server={target} */ {P0_STRONG}");
        let p = planner.plan(&sql, &ctx()).await;
        let e = p.decision.as_ref().expect_err(&sql);
        assert_eq!((e.mysql_errno(), e.sql_state()), (4179, "HY000"), "{sql}: {e}");
        assert!(e.to_string().starts_with("Not allow to route to target db server"), "{e}");
        // The untraced path (the session's) refuses it too.
        let a = sql::analyze(&sql);
        let routed = planner.route(&a, &ctx(), &mut RouteMemo::default(), Instant::now()).await;
        assert_eq!(routed.decision.map_err(|e| e.mysql_errno()).err(), Some(4179), "{sql}");
    }
}

#[tokio::test]
async fn a_configured_target_db_server_applies_unless_a_hint_names_another() {
    let planner = demo(RoutingConfig { target_db_server: Some(format!(" {S2} ")), ..config(7) }).await;
    let p = planner.plan(P0_STRONG, &ctx()).await;
    assert_eq!((server(&p), policy(&p)), (S2.to_string(), "TARGET_DB_SERVER_ONLY"));
    let text = render_explain(P0_STRONG, &p);
    assert!(text.contains("USE_CONFIG_TARGET_DB") || text.contains("target db server"), "{text}");
    let hinted = format!("/* target_db_server={S3} */ {P0_STRONG}");
    assert_eq!(server(&planner.plan(&hinted, &ctx()).await), S3, "the statement's own hint wins");
}

#[tokio::test]
async fn force_readonly_zone_from_the_user_variable() {
    let planner = demo(config(7)).await;
    let forced = with_var("force_readonly_zone");
    let weak = planner.plan(P0_WEAK, &forced).await;
    assert_eq!((server(&weak), policy(&weak)), (S3.to_string(), "ONLY_READONLY_ZONE"));
    let strong = planner.plan(P0_STRONG, &forced).await;
    assert_eq!(strong.decision.as_ref().map_err(RouteError::mysql_errno).err(), Some(1235), "a strong read is refused");
    // Without the variable the same weak read stays in the read-write zones (READONLY_ZONE_FIRST
    // takes the local read-write replica first): the test can fail.
    assert_eq!(server(&planner.plan(P0_WEAK, &ctx()).await), S1);
    // The session can always leave the policy: SET and USE take the tree without it.
    for sql in ["SET @proxy_route_policy = NULL", "USE test"] {
        let p = planner.plan(sql, &forced).await;
        assert!(p.decision.is_ok(), "{sql}: {}", server(&p));
    }
}

#[tokio::test]
async fn follower_policies_from_the_user_variable_win_over_the_configuration() {
    let planner = normal(config(7)).await;
    let merged = planner.plan(P0_WEAK, &ctx()).await;
    assert_eq!((server(&merged), policy(&merged)), (S1.to_string(), "MERGE_IDC_ORDER"), "the local leader");
    for name in ["follower_first", "UNMERGE_FOLLOWER_FIRST", "Follower_Only"] {
        let p = planner.plan(P0_WEAK, &with_var(name)).await;
        assert_eq!(server(&p), S2, "{name}: the same-region follower before the local leader");
        assert_eq!(policy(&p), ProxyRoutePolicy::parse(name).map_or("?", ProxyRoutePolicy::name), "{name}");
    }
    // Strong reads never follow a follower policy.
    assert_eq!(server(&planner.plan(P0_STRONG, &with_var("follower_first")).await), S1);
    // The configuration's policy applies when the variable is unset or unknown.
    let configured = normal(RoutingConfig { proxy_route_policy: Some("FOLLOWER_ONLY".into()), ..config(7) }).await;
    for c in [ctx(), with_var("leader_first_please")] {
        let p = configured.plan(P0_WEAK, &c).await;
        assert_eq!((server(&p), policy(&p)), (S2.to_string(), "FOLLOWER_ONLY"));
    }
    let p = configured.plan(P0_WEAK, &with_var("follower_first")).await;
    assert_eq!(policy(&p), "FOLLOWER_FIRST", "the variable wins");
}

#[tokio::test]
async fn proxy_primary_zone_name_keeps_requests_in_its_zones() {
    let planner = normal(RoutingConfig { proxy_primary_zone_name: Some("zone3; zone2".into()), ..config(7) }).await;
    for sql in [P0_STRONG, P0_WEAK, "SELECT 1"] {
        let p = planner.plan(sql, &ctx()).await;
        assert_eq!((server(&p), policy(&p)), (S3.to_string(), "PROXY_PRIMARY_ZONE_NAME_ONLY"), "{sql}");
    }
    // A follower policy still decides weak reads.
    assert_eq!(policy(&planner.plan(P0_WEAK, &with_var("follower_first")).await), "FOLLOWER_FIRST");
    // Off: p0's leader.
    assert_eq!(server(&normal(config(7)).await.plan(P0_STRONG, &ctx()).await), S1);
}

#[tokio::test]
async fn enable_primary_zone_decides_table_less_strong_requests() {
    // The tenant's primary zone is zone2 (s2); the gateway's IDC is idc1 (s1).
    let on = normal(config(7)).await.plan("SELECT 1", &ctx()).await;
    assert_eq!((server(&on), policy(&on)), (S2.to_string(), "PRIMARY_ZONE_FIRST"));
    let off = normal(RoutingConfig { enable_primary_zone: false, ..config(7) }).await.plan("SELECT 1", &ctx()).await;
    assert_eq!((server(&off), policy(&off)), (S1.to_string(), "MERGE_IDC_ORDER"));
}

#[tokio::test]
async fn the_sessions_proxy_idc_name_replaces_the_configured_idc() {
    // The configuration says idc1: a weak read of p0 takes s1 (the local read-write replica).
    let planner = demo(config(7)).await;
    assert_eq!(server(&planner.plan(P0_WEAK, &ctx()).await), S1);
    let from = |idc: &str| StatementContext { idc: Some(Arc::from(idc)), ..ctx() };
    // From idc2, s2 is the local read-write replica; from idc3 (region hz), the read-only s3.
    assert_eq!(server(&planner.plan(P0_WEAK, &from("idc2")).await), S2);
    assert_eq!(server(&planner.plan(P0_WEAK, &from("IDC3")).await), S3);
    // Strong reads still go to the leader.
    assert_eq!(server(&planner.plan(P0_STRONG, &from("idc2")).await), S1);
}
