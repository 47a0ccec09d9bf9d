//! The route-policy inputs that ODP users set (docs/routing.md §5), checked where each statement
//! ran (the servers' general logs), on the standard four-server cluster (s3 in a read-only zone)
//! and on the same cluster as a normal deployment (no read-only zone):
//!
//! * `/* target_db_server=ip:port */` and `/*+ODP: target_db_server=… */` hints send a statement
//!   to that server; an address that is not a server of the tenant is refused with 4179 and the
//!   statement runs nowhere;
//! * `SET @proxy_route_policy = 'FORCE_READONLY_ZONE'` sends weak reads to the read-only zone only
//!   and refuses strong ones (1235); `SET @proxy_route_policy = NULL` leaves the policy;
//! * `SET @proxy_idc_name = 'idc2'` makes the session's LDC order count from idc2;
//! * in a normal deployment, `[routing] proxy_primary_zone_name` keeps every request in its zones,
//!   and `@proxy_route_policy = 'follower_first'` sends weak reads to a follower first.

use std::sync::OnceLock;

use gateway_tests::cluster::{Cluster, ClusterOptions, Layout, Topology};
use gateway_tests::mysql::{connect, err_code, err_message, query_one};
use mysql_async::prelude::*;
use mysql_async::Conn;

static STANDARD: OnceLock<Cluster> = OnceLock::new();
static NORMAL: OnceLock<Cluster> = OnceLock::new();

fn standard() -> &'static Cluster {
    STANDARD.get_or_init(|| Cluster::start(ClusterOptions::new("policy-in")).expect("cluster"))
}

/// The normal deployment, with `proxy_primary_zone_name = "zone3"` (s3's zone, which leads nothing).
fn normal() -> &'static Cluster {
    NORMAL.get_or_init(|| {
        let mut opts = ClusterOptions::new("policy-pzn");
        opts.layout = Layout::Normal;
        opts.routing_toml = "proxy_primary_zone_name = \"zone3\"\n".into();
        Cluster::start(opts).expect("cluster")
    })
}

/// A key of `t_hash` whose partition `leader` leads.
fn key_led_by(t: &Topology, leader: &str) -> i64 {
    (1..1000).find(|&k| t.partition_of("t_hash", k).is_some_and(|p| t.leader("t_hash", p) == leader)).expect("a key")
}

/// A partition of `t_hash` led by s1, and a weak and a strong read of one of its keys.
struct Reads {
    p: usize,
    weak: String,
    strong: String,
}

fn reads_led_by_s1(t: &Topology) -> Reads {
    let k = key_led_by(t, "s1");
    Reads {
        p: t.partition_of("t_hash", k).expect("partition"),
        weak: format!("SELECT /*+READ_CONSISTENCY(WEAK)*/ c2 FROM t_hash WHERE c1 = {k}"),
        strong: format!("SELECT c2 FROM t_hash WHERE c1 = {k}"),
    }
}

/// Statements run through the gateway, each with its own marker, and where each should run.
struct Run {
    conn: Conn,
    next: u64,
    /// (marker, statement, the one server that must have run it; `None`: none may have).
    expect: Vec<(u64, String, Option<String>)>,
}

impl Run {
    async fn new(c: &Cluster, first_marker: u64) -> Run {
        let conn = connect(&c.gw_url(Some("test"))).await.expect("connect through the gateway");
        Run { conn, next: first_marker, expect: Vec::new() }
    }

    fn marked(&mut self, body: &str) -> (u64, String) {
        self.next += 1;
        (self.next, format!("/* q:{} */ {body}", self.next))
    }

    /// Runs `body`, which must succeed on `server`.
    async fn on(&mut self, server: &str, body: &str) {
        let (m, sql) = self.marked(body);
        if let Err(e) = self.conn.query_drop(&sql).await {
            panic!("{sql}: {e}");
        }
        self.expect.push((m, sql, Some(server.to_string())));
    }

    /// Runs `body`, which must be refused with `code` and run nowhere.
    async fn refused(&mut self, code: u16, body: &str) -> String {
        let (m, sql) = self.marked(body);
        let e = self.conn.query_drop(&sql).await.expect_err(&sql);
        assert_eq!(err_code(&e), Some(code), "{sql}: {e}");
        self.expect.push((m, sql, None));
        err_message(&e)
    }

    async fn set(&mut self, sql: &str) {
        self.conn.query_drop(sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    /// Every statement ran exactly where expected, by the servers' own general logs.
    fn check(self, c: &Cluster) {
        let index = c.marker_index();
        let wrong: Vec<String> = self
            .expect
            .iter()
            .filter_map(|(m, sql, want)| {
                let ran = index.servers(*m);
                let want: Vec<String> = want.iter().cloned().collect();
                (ran != want).then(|| format!("{sql}: ran on {ran:?}, expected {want:?}"))
            })
            .collect();
        assert!(
            wrong.is_empty(),
            "{} of {} statements ran elsewhere:\n{}",
            wrong.len(),
            self.expect.len(),
            wrong.join("\n")
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn target_db_server_hints_run_on_the_named_server_and_only_tenant_servers() {
    let c = standard();
    let t = c.topology();
    let addr = |s: &str| c.server(s).addr().to_string();
    let k = key_led_by(t, "s1");
    let select = format!("SELECT c2 FROM t_hash WHERE c1 = {k}");
    let mut run = Run::new(c, 910_000_000).await;
    run.on("s1", &select).await;
    run.on("s2", &format!("/* target_db_server={} */ {select}", addr("s2"))).await;
    run.on(
        "s3",
        &format!("SELECT /*+ODP: target_db_server={},{} */ c2 FROM t_hash WHERE c1 = {k}", addr("s3"), addr("s1")),
    )
    .await;
    run.on("s4", &format!("/* target_db_server={} */ UPDATE t_hash SET c3 = c3 WHERE c1 = {k}", addr("s4"))).await;
    // A hint for one statement only: the next goes back to the leader.
    run.on("s1", &select).await;
    for target in ["127.0.0.1:1".to_string(), "not-an-address".into(), format!("{},127.0.0.1:1", addr("s2"))] {
        let message = run.refused(4179, &format!("/* target_db_server={target} */ {select}")).await;
        assert!(message.starts_with("Not allow to route to target db server"), "{message}");
    }
    // Hostile lists: 50,000 repetitions of a tenant server count once; 65 distinct addresses
    // are over the bound (64).
    let repeated = vec![addr("s2"); 50_000].join(",");
    run.on("s2", &format!("/* target_db_server={repeated} */ {select}")).await;
    let distinct: Vec<String> = (1..=65).map(|i| format!("127.0.0.{i}:2881")).collect();
    let message = run.refused(4179, &format!("/* target_db_server={} */ {select}", distinct.join(","))).await;
    assert!(message.contains("more than 64 addresses"), "{message}");
    // The session goes on.
    run.on("s1", &select).await;
    run.check(c);
}

#[tokio::test(flavor = "multi_thread")]
async fn force_readonly_zone_from_the_user_variable_until_the_session_clears_it() {
    let c = standard();
    let t = c.topology();
    let Reads { p, weak, strong } = reads_led_by_s1(t);
    let mut run = Run::new(c, 920_000_000).await;
    // Before: the weak read takes the local read-write replica (so the test can fail).
    run.on(t.weak_target("t_hash", p), &weak).await;
    run.set("SET @proxy_route_policy = 'FORCE_READONLY_ZONE'").await;
    run.on("s3", &weak).await;
    let message = run.refused(1235, &strong).await;
    assert!(message.contains("FORCE_READONLY_ZONE"), "{message}");
    // The variable reached the read-only server with the session's state.
    let seen =
        query_one(&mut run.conn, "SELECT /*+READ_CONSISTENCY(WEAK)*/ @proxy_route_policy").await.expect("weak select");
    assert_eq!(seen.as_deref(), Some("FORCE_READONLY_ZONE"));
    run.set("SET @proxy_route_policy = NULL").await;
    run.on("s1", &strong).await;
    run.on(t.weak_target("t_hash", p), &weak).await;
    run.check(c);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_sessions_proxy_idc_name_moves_weak_reads_to_its_idc() {
    let c = standard();
    let t = c.topology();
    let Reads { p, weak, strong } = reads_led_by_s1(t);
    let mut run = Run::new(c, 940_000_000).await;
    // The gateway is in idc1: the weak read takes the local read-write replica, s1.
    run.on(t.weak_target("t_hash", p), &weak).await;
    // From idc2 (zone2, s2) the same read is local on s2; from idc3 (read-only zone3), on s3.
    run.set("SET @proxy_idc_name = 'idc2'").await;
    run.on("s2", &weak).await;
    run.on("s1", &strong).await;
    run.set("SET @proxy_idc_name = 'idc3'").await;
    run.on("s3", &weak).await;
    // Empty: the configuration's IDC again.
    run.set("SET @proxy_idc_name = ''").await;
    run.on(t.weak_target("t_hash", p), &weak).await;
    run.check(c);
}

#[tokio::test(flavor = "multi_thread")]
async fn proxy_primary_zone_name_and_follower_first_in_a_normal_deployment() {
    let c = normal();
    let t = c.topology();
    let k = key_led_by(t, "s1");
    let p = t.partition_of("t_hash", k).expect("partition");
    assert!(t.table("t_hash").placements[p].followers.contains(&"s2"), "s2 follows the partition");
    let weak = format!("SELECT /*+READ_CONSISTENCY(WEAK)*/ c2 FROM t_hash WHERE c1 = {k}");
    let strong = format!("SELECT c2 FROM t_hash WHERE c1 = {k}");
    let mut run = Run::new(c, 930_000_000).await;
    // proxy_primary_zone_name = zone3: strong and weak requests go to s3, which leads nothing.
    run.on("s3", &strong).await;
    run.on("s3", &weak).await;
    run.on("s3", "SELECT 1").await;
    // A follower policy decides weak reads: the same-region follower before the local leader.
    run.set("SET @proxy_route_policy = 'follower_first'").await;
    run.on("s2", &weak).await;
    run.on("s3", &strong).await;
    // An unknown name is ignored (docs/routing.md §5): back to the zone list.
    run.set("SET @proxy_route_policy = 'leader_first_please'").await;
    run.on("s3", &weak).await;
    run.check(c);
}
