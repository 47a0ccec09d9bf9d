//! Cluster and tenant routing through the sys tenant (issue #7 item 2; docs/routing.md §14, §12,
//! docs/routing.md §12, §14), with real servers only.
//!
//! MariaDB servers play OceanBase: `sys1` is the sys tenant of cluster `c1` (rslist: a dead
//! port, then `sys1`), whose servers are `a1`, `a2`; `sys2` is the sys tenant of cluster `c2`
//! (rslist from the config server) and one of its servers, with `a3`. Tenants: `t1` on
//! a1, a2, `t3` on a1 and `t5` on a1 (c1; the refresh test adds sys1 to t5 only, so that the
//! other tests' view of t3 stays fixed whatever order they run in); `t2` on sys2 and `t4` on sys2, a3 (c2). The view tables list
//! the real `127.0.0.1:<port>` addresses, so routed statements run there and the general logs
//! show where. The config server is a real HTTP server (`gateway_tests::config_server`)
//! answering c2's entry and a cluster list with `c3` (same servers as c2) and `c5` (non-JSON).
//! The gateway's own listen address is mapped to cluster c2, tenant t2 (`[[listen.dialled]]`).
//!
//! Run: `cargo test -p gateway-tests --test cluster_routing -- --nocapture`.

use std::time::{Duration, Instant};

use gateway_tests::config_server::{cluster_json, list_json, Answer, ConfigServer};
use gateway_tests::mysql::{connect, connect_with, err_code, err_message, query_one, query_values, value_string};
use gateway_tests::{general_log, sys_tenant, Gateway, MariaDb};
use mysql_async::prelude::Queryable;
use tokio::sync::OnceCell;

struct Fixture {
    sys1: MariaDb,
    sys2: MariaDb,
    a1: MariaDb,
    a2: MariaDb,
    a3: MariaDb,
    cs: ConfigServer,
    gw: Gateway,
}

static FIXTURE: OnceCell<Fixture> = OnceCell::const_new();

async fn fixture() -> &'static Fixture {
    FIXTURE.get_or_init(|| async { start().await.unwrap_or_else(|e| panic!("fixture did not start: {e:#}")) }).await
}

async fn start() -> anyhow::Result<Fixture> {
    let (sys1, sys2) = (sys_tenant::start("cr-sys1")?, sys_tenant::start("cr-sys2")?);
    let (a1, a2, a3) = (MariaDb::start("cr-a1")?, MariaDb::start("cr-a2")?, MariaDb::start("cr-a3")?);
    for db in [&sys1, &sys2, &a1, &a2, &a3] {
        db.create_user("app", "")?;
    }
    let z = |db: &MariaDb| sys_tenant::server_sql(db.addr(), "z1");
    let mut c1 = sys_tenant::zone_sql("z1", "hz") + &z(&a1) + &z(&a2);
    c1 += &(sys_tenant::tenant_sql(1002, "t1", "z1") + &sys_tenant::tenant_sql(1006, "t3", "z1"));
    c1 += &sys_tenant::tenant_sql(1010, "t5", "z1");
    c1 += &(sys_tenant::dummy_sql("t1", a1.addr()) + &sys_tenant::dummy_sql("t1", a2.addr()));
    c1 += &(sys_tenant::dummy_sql("t3", a1.addr()) + &sys_tenant::dummy_sql("t5", a1.addr()));
    sys1.cli().sql(&c1)?;
    let mut c2 = sys_tenant::zone_sql("z1", "sh") + &z(&sys2) + &z(&a3);
    c2 += &(sys_tenant::tenant_sql(1004, "t2", "z1") + &sys_tenant::tenant_sql(1008, "t4", "z1"));
    c2 += &(sys_tenant::dummy_sql("t2", sys2.addr()) + &sys_tenant::dummy_sql("t4", sys2.addr()));
    c2 += &sys_tenant::dummy_sql("t4", a3.addr());
    sys2.cli().sql(&c2)?;
    // `CALL test.p()`: an answer on sys2, OB_TENANT_NOT_IN_SERVER (5150) as the first answer
    // packet on a3, as an OceanBase server without the tenant answers (a function signalling in
    // a SELECT would fail after the column definitions, i.e. after execution began).
    create_procedure(&sys2, "SELECT 'from-sys2'").await?;
    create_procedure(&a3, "SIGNAL SQLSTATE 'HY000' SET MYSQL_ERRNO = 5150, MESSAGE_TEXT = 'tenant not in server'")
        .await?;
    let cs = ConfigServer::start()?;
    cs.set("/c2", Answer::Json(cluster_json("c2", &[sys2.addr()])));
    cs.set("/list", Answer::Json(list_json(&[("c3", cs.url("/c3")), ("c5", cs.url("/c5"))])));
    cs.set("/c3", Answer::Status(503));
    cs.set("/c5", Answer::Garbage);
    let gw = Gateway::start(&config(&cs, &sys1, &a1)?)?;
    Ok(Fixture { sys1, sys2, a1, a2, a3, cs, gw })
}

async fn create_procedure(db: &MariaDb, body: &str) -> anyhow::Result<()> {
    let mut conn = connect(&db.url("root", "", Some("test"))).await?;
    conn.query_drop(format!("CREATE PROCEDURE test.p() {body}")).await?;
    conn.disconnect().await?;
    Ok(())
}

fn config(cs: &ConfigServer, sys1: &MariaDb, backend: &MariaDb) -> anyhow::Result<String> {
    let port = gateway_tests::free_port()?;
    let dead = gateway_tests::free_port()?;
    Ok(format!(
        r#"
[listen]
address = "127.0.0.1:{port}"
[[listen.dialled]]
address = "127.0.0.1:{port}"
cluster = "c2"
tenant = "t2"

[backend]
address = "{backend}"

[[users]]
name = "app"
password = ""
[[users]]
name = "root"
password = ""
admin = true

[log]
level = "info,gateway::clusters=debug,gateway::topology::locator=debug"

[routing]
default_tenant = "t1"
config_server_url = "{list}"
cluster_sys_user = "root"

[routing.cache]
min_refetch_ms = 200

[[clusters]]
name = "c1"
rslist = ["127.0.0.1:{dead}", "{sys1}"]
sys_user = "root"
refresh_ms = 300

[[clusters]]
name = "c2"
config_server_url = "{c2}"
sys_user = "root"
refresh_ms = 300
"#,
        backend = backend.addr(),
        list = cs.url("/list"),
        sys1 = sys1.addr(),
        c2 = cs.url("/c2"),
    ))
}

/// A statement text that no other statement of this file contains.
fn marker(what: &str) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    format!("cr-{what}-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed))
}

/// Logs in to the gateway as `name` (a login name with `@`, `#` or separators: not URL-safe).
async fn log_in(f: &Fixture, name: &str, db: Option<&str>) -> Result<mysql_async::Conn, mysql_async::Error> {
    connect_with(&f.gw.url("x", "", db), |b| b.user(Some(name))).await
}

/// Whether `text` ran on `db` (its general log).
fn ran_on(db: &MariaDb, text: &str) -> bool {
    general_log::read(&db.general_log_path()).iter().any(|e| e.text.contains(text))
}

/// How many `__all_dummy` queries for `tenant` reached the sys server `db`.
fn dummy_queries(db: &MariaDb, tenant: &str) -> usize {
    let needle =
        format!("A.tenant_name = '{tenant}' AND A.database_name = 'oceanbase' AND A.table_name = '__all_dummy'");
    general_log::read(&db.general_log_path()).iter().filter(|e| e.text.contains(&needle)).count()
}

/// Whether the gateway logged a fetch of t4's servers that found one server.
fn t4_list_has_one_server(gw: &Gateway) -> bool {
    let log = std::fs::read_to_string(gw.log_path()).unwrap_or_default();
    log.lines().any(|l| l.contains("tenant servers fetched") && l.contains("tenant=\"t4\"") && l.contains("servers=1"))
}

fn where_ran<'a>(f: &'a Fixture, text: &str) -> Vec<&'a str> {
    let all = [("sys1", &f.sys1), ("sys2", &f.sys2), ("a1", &f.a1), ("a2", &f.a2), ("a3", &f.a3)];
    all.into_iter().filter(|(_, db)| ran_on(db, text)).map(|(n, _)| n).collect()
}

/// Runs `SELECT '<marker>'` as `login` and returns the marker.
async fn select_marker(f: &Fixture, login: &str, what: &str) -> String {
    let m = marker(what);
    let mut conn = log_in(f, login, None).await.unwrap_or_else(|e| panic!("{login}: {e}\n{}", f.gw.log_tail(3000)));
    let got = query_one(&mut conn, &format!("SELECT '{m}'")).await.expect("select marker");
    assert_eq!(got.as_deref(), Some(m.as_str()));
    conn.disconnect().await.expect("disconnect");
    m
}

async fn login_error(f: &Fixture, login: &str) -> (Option<u16>, String) {
    match log_in(f, login, None).await {
        Ok(_) => panic!("{login} logged in"),
        Err(e) => (err_code(&e), err_message(&e)),
    }
}

#[tokio::test]
async fn each_cluster_and_tenant_routes_to_its_own_servers() {
    let f = fixture().await;
    for _ in 0..6 {
        let m = select_marker(f, "app@t1#c1", "t1c1").await;
        let at = where_ran(f, &m);
        assert!(at.len() == 1 && ["a1", "a2"].contains(&at[0]), "t1 of c1 ran on {at:?}");
    }
    for _ in 0..3 {
        let m = select_marker(f, "app@t2#c2", "t2c2").await;
        assert_eq!(where_ran(f, &m), ["sys2"], "t2 of c2");
    }
    // The separator form names the cluster too.
    let m = select_marker(f, "c1:t3:app", "t3c1").await;
    assert_eq!(where_ran(f, &m), ["a1"], "t3 of c1");
    // c1's rslist starts with a dead port: the sys-tenant client went on to sys1.
    assert!(dummy_queries(&f.sys1, "t1") >= 1);
    f.gw.wait_log("sys tenant server unreachable", 1, Duration::from_secs(5)).expect("dead rslist server skipped");
}

#[tokio::test]
async fn a_login_naming_no_cluster_gets_the_listener_defaults() {
    let f = fixture().await;
    // The listen address maps to c2 / t2.
    let m = select_marker(f, "app", "bare").await;
    assert_eq!(where_ran(f, &m), ["sys2"], "bare login: c2's t2");
    // A name giving the tenant only keeps the listener's cluster: t1 is not a tenant of c2.
    let (code, msg) = login_error(f, "app@t1").await;
    assert_eq!(code, Some(5157), "{msg}");
}

#[tokio::test]
async fn unknown_clusters_and_tenants_are_refused_with_odp_codes() {
    let f = fixture().await;
    let (code, msg) = login_error(f, "app@t1#nope").await;
    assert_eq!((code, msg.as_str()), (Some(4669), "cluster not exist"));
    let (code, msg) = login_error(f, "app@tx#c1").await;
    assert_eq!((code, msg.as_str()), (Some(5157), "Unknown tenant 'tx'"));
    // t4 exists in c2, not in c1.
    let (code, _) = login_error(f, "app@t4#c1").await;
    assert_eq!(code, Some(5157));
}

#[tokio::test]
async fn config_server_is_asked_once_and_its_failures_are_clear() {
    let f = fixture().await;
    for _ in 0..4 {
        select_marker(f, "app@t2#c2", "cached").await;
    }
    assert_eq!(f.cs.count("/c2"), 1, "c2's entry is fetched once, then kept in memory");
    // c3 is known from the cluster list only; its entry answers 503 before the first login.
    let (code, msg) = login_error(f, "app@t2#c3").await;
    assert_eq!(code, Some(2003), "{msg}");
    assert!(msg.contains("config server") && msg.contains("503") && msg.contains("/c3"), "{msg}");
    let (code, msg) = login_error(f, "app@t2#c5").await;
    assert_eq!(code, Some(2003), "{msg}");
    assert!(msg.contains("not the expected JSON"), "{msg}");
    // Fixed: the next login sets c3 up.
    f.cs.set("/c3", Answer::Json(cluster_json("c3", &[f.sys2.addr()])));
    let m = select_marker(f, "app@t2#c3", "c3").await;
    assert_eq!(where_ran(f, &m), ["sys2"]);
    // Down again: logins to c3 keep working from memory.
    f.cs.set("/c3", Answer::Close);
    f.cs.set("/list", Answer::Close);
    let m = select_marker(f, "app@t2#c3", "c3-down").await;
    assert_eq!(where_ran(f, &m), ["sys2"]);
    assert_eq!(f.cs.count("/c3"), 2, "one failed fetch, one good one");
    assert_eq!(f.cs.count("/list"), 1, "the cluster list is reused too");
}

#[tokio::test]
async fn a_server_added_to_the_views_is_used_after_a_refresh() {
    let f = fixture().await;
    let m = select_marker(f, "app@t5#c1", "before").await;
    assert_eq!(where_ran(f, &m), ["a1"]);
    // sys1 joins c1 and hosts t5 from now on.
    let add = sys_tenant::server_sql(f.sys1.addr(), "z1") + &sys_tenant::dummy_sql("t5", f.sys1.addr());
    f.sys1.cli().sql(&add).expect("add server");
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut mconn = log_in(f, "app@t5#c1", None).await.expect("login");
    loop {
        let m = marker("after");
        query_one(&mut mconn, &format!("SELECT '{m}'")).await.expect("select");
        let at = where_ran(f, &m);
        assert!(at == ["a1"] || at == ["sys1"], "t5 ran on {at:?}");
        if at == ["sys1"] {
            break;
        }
        assert!(Instant::now() < deadline, "the added server was never used; log:\n{}", f.gw.log_tail(3000));
    }
    mconn.disconnect().await.expect("disconnect");
}

#[tokio::test]
async fn tenant_not_in_server_refetches_the_tenant_and_retries_elsewhere() {
    let f = fixture().await;
    let mut conn = log_in(f, "app@t4#c2", Some("test")).await.expect("login t4");
    let before = dummy_queries(&f.sys2, "t4");
    assert!(before >= 1, "t4's servers were read at login");
    // a3 no longer hosts t4 (and answers 5150); the gateway still has it in t4's list.
    f.sys2.cli().sql(&sys_tenant::drop_dummy_sql("t4", f.a3.addr())).expect("drop a3 from t4");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let m = marker("p");
        let got =
            query_one(&mut conn, &format!("CALL test.p() /* {m} */")).await.expect("5150 is retried on another server");
        assert_eq!(got.as_deref(), Some("from-sys2"), "the answer comes from sys2");
        if ran_on(&f.a3, &m) {
            assert!(ran_on(&f.sys2, &m), "retried on sys2 after a3's 5150");
            break;
        }
        assert!(Instant::now() < deadline, "no statement was routed to a3");
    }
    // The 5150 made t4's server list dirty: the next access refetches it (sys2's general log) and
    // the gateway takes the new list, without a3 ...
    let deadline = Instant::now() + Duration::from_secs(30);
    while !t4_list_has_one_server(&f.gw) {
        query_one(&mut conn, "CALL test.p()").await.expect("call");
        assert!(Instant::now() < deadline, "t4's servers were not refetched; log:\n{}", f.gw.log_tail(3000));
    }
    assert!(dummy_queries(&f.sys2, "t4") > before, "t4's __all_dummy was queried again");
    // ... and a3 is not used any more.
    for _ in 0..8 {
        let m = marker("after-5150");
        let got = query_one(&mut conn, &format!("CALL test.p() /* {m} */")).await.expect("call");
        assert_eq!(got.as_deref(), Some("from-sys2"));
        assert_eq!(where_ran(f, &m), ["sys2"], "a3 is used after t4's list was refetched");
    }
    conn.disconnect().await.expect("disconnect");
}

#[tokio::test]
async fn show_proxysession_shows_each_sessions_cluster() {
    let f = fixture().await;
    let mut c2 = log_in(f, "app@t2#c2", None).await.expect("login c2");
    let mut admin = log_in(f, "root@t1#c1", None).await.expect("admin login");
    let rows = query_values(&mut admin, "SHOW PROXYSESSION").await.expect("SHOW PROXYSESSION");
    let rows: Vec<Vec<Option<String>>> = rows.into_iter().map(|r| r.into_iter().map(value_string).collect()).collect();
    let pairs: Vec<(Option<String>, Option<String>, Option<String>)> =
        rows.iter().map(|r| (r[1].clone(), r[2].clone(), r[3].clone())).collect();
    let has = |c: &str, t: &str, u: &str| pairs.contains(&(Some(c.into()), Some(t.into()), Some(u.into())));
    assert!(has("c2", "t2", "app") && has("c1", "t1", "root"), "{pairs:?}");
    query_one(&mut c2, "SELECT 1").await.expect("c2 session still works");
    c2.disconnect().await.expect("disconnect");
    admin.disconnect().await.expect("disconnect");
}
