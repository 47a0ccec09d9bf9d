//! What a routed client leaves on pooled server connections, and the client session's own idle
//! limit, against three real MariaDB servers (demo topology): a departed client's transaction,
//! `LOCK TABLES` and `GET_LOCK` locks are gone from every server soon after it leaves and never
//! block another client's DDL; a client without a database never finds another's; the
//! `IGNORE_SPACE` of a login survives the pool's resets; `wait_timeout` / `interactive_timeout`
//! (set by the client, or the servers' defaults) close an idle client session as a server would.

use std::time::{Duration, Instant};

use gateway_tests::clients::{parse_kv, python};
use gateway_tests::cluster::{Cluster, ClusterOptions, Servers};
use gateway_tests::mysql::{connect, err_code, query_one};
use gateway_tests::Gateway;
use mysql_async::prelude::*;

/// Three servers with `test.t1` and a routing gateway over them.
fn start(name: &str, server_setup: &str) -> Cluster {
    let servers = Servers::start(&ClusterOptions::demo(name)).expect("servers");
    servers
        .on_every_server(&format!("CREATE TABLE t1 (id INT PRIMARY KEY AUTO_INCREMENT, v INT); {server_setup}"))
        .expect("setup");
    servers.route_default().expect("gateway")
}

/// Polls `sql` (one value) on every server until each gives `want`, for up to 10 s; the servers
/// whose value is still another, with that value.
fn wait_on_every_server(r: &Cluster, sql: &str, want: &str) -> Vec<(String, String)> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let off: Vec<(String, String)> = r
            .servers()
            .map(|(_, s)| {
                (s.name().to_string(), s.sql(sql).unwrap_or_else(|e| format!("error {e:#}")).trim().to_string())
            })
            .filter(|(_, v)| v != want)
            .collect();
        if off.is_empty() || Instant::now() > deadline {
            return off;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test]
async fn a_departed_clients_transaction_and_locks_leave_with_it() {
    let r = start("leftovers-locks", "");
    let url = r.gw.url("root", "", Some("test"));
    // A transaction (autocommit off, as PyMySQL runs), a user lock, then table locks.
    let mut a = connect(&url).await.expect("client a");
    a.query_drop("SET autocommit = 0").await.expect("autocommit off");
    a.query_drop("INSERT INTO t1 (v) VALUES (7)").await.expect("insert");
    assert_eq!(query_one(&mut a, "SELECT GET_LOCK('leftover_lock', 0)").await.expect("get_lock").as_deref(), Some("1"));
    a.disconnect().await.expect("a leaves");
    let trx = wait_on_every_server(&r, "SELECT COUNT(*) FROM information_schema.INNODB_TRX", "0");
    assert!(trx.is_empty(), "a departed client's transaction is still open on {trx:?}\n{}", r.gw.log_tail(3000));
    let locks = wait_on_every_server(&r, "SELECT IS_USED_LOCK('leftover_lock') IS NULL", "1");
    assert!(locks.is_empty(), "a departed client's GET_LOCK is still held on {locks:?}");
    let rows = wait_on_every_server(&r, "SELECT COUNT(*) FROM test.t1", "0");
    assert!(rows.is_empty(), "the uncommitted insert was not rolled back: {rows:?}");

    let mut b = connect(&url).await.expect("client b");
    b.query_drop("LOCK TABLES t1 WRITE").await.expect("lock tables");
    b.disconnect().await.expect("b leaves");
    let open = wait_on_every_server(&r, "SHOW OPEN TABLES FROM test WHERE In_use > 0", "");
    assert!(open.is_empty(), "a departed client's LOCK TABLES is still held on {open:?}");

    // Another client's DDL (autocommit off too) is never blocked by an idle pooled connection.
    let mut c = connect(&url).await.expect("client c");
    c.query_drop("SET autocommit = 0").await.expect("autocommit off");
    c.query_drop("INSERT INTO t1 (v) VALUES (8)").await.expect("insert");
    c.disconnect().await.expect("c leaves");
    let mut d = connect(&url).await.expect("client d");
    d.query_drop("SET SESSION lock_wait_timeout = 5").await.expect("lock_wait_timeout");
    let started = Instant::now();
    let ddl = d.query_drop("ALTER TABLE t1 COMMENT 'no idle connection holds me'").await;
    assert!(ddl.is_ok(), "DDL after a client left with an open transaction: {ddl:?} after {:?}", started.elapsed());
    d.disconnect().await.expect("d leaves");
}

#[tokio::test]
async fn a_client_without_a_database_never_finds_another_clients() {
    let r = start("leftovers-db", "CREATE DATABASE other");
    for round in 0..3 {
        let mut a = connect(&r.gw.url("root", "", Some("other"))).await.expect("client with a database");
        assert_eq!(query_one(&mut a, "SELECT DATABASE()").await.expect("database").as_deref(), Some("other"));
        a.disconnect().await.expect("a leaves");
        let mut b = connect(&r.gw.url("root", "", None)).await.expect("client without a database");
        assert_eq!(query_one(&mut b, "SELECT DATABASE()").await.expect("database"), None, "round {round}");
        let created = b.query_drop("CREATE TABLE leftover_x (a INT)").await;
        assert_eq!(created.as_ref().err().and_then(err_code), Some(1046), "round {round}: {created:?}");
        b.disconnect().await.expect("b leaves");
    }
    let made =
        wait_on_every_server(&r, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_NAME = 'leftover_x'", "0");
    assert!(made.is_empty(), "CREATE TABLE without a database created a table: {made:?}");
}

#[test]
fn ignore_space_of_the_login_survives_pool_resets() {
    let r = start("leftovers-space", "");
    let port = r.gw.port().to_string();
    let out = python("session_leftovers.py", &["ignore_space", "127.0.0.1", &port, "root", ""]).expect("python");
    let kv = parse_kv(&out.stdout);
    for n in 0..3 {
        let mode = kv.get(&format!("sql_mode_{n}")).cloned().unwrap_or_default();
        assert!(mode.contains("IGNORE_SPACE"), "client {n}: sql_mode {mode:?}\n{}{}", out.stdout, out.stderr);
        assert_eq!(kv.get(&format!("count_{n}")).map(String::as_str), Some("2"), "client {n}\n{}", out.stdout);
    }
}

/// Runs the `gone_away` scenario through `gw`: the client's next statement after `idle` seconds.
fn after_idle(gw: &Gateway, idle: &str, extra: &[&str]) -> String {
    let port = gw.port().to_string();
    let mut args = vec!["gone_away", "127.0.0.1", &port, "root", "", idle];
    args.extend_from_slice(extra);
    let out = python("session_leftovers.py", &args).expect("python");
    parse_kv(&out.stdout).get("result").cloned().unwrap_or_else(|| format!("no result: {}{}", out.stdout, out.stderr))
}

#[test]
fn wait_timeout_of_the_client_session_closes_it() {
    // Servers' defaults: 3 s for non-interactive sessions, 60 s for interactive ones.
    let r = start("leftovers-idle", "SET GLOBAL wait_timeout = 3; SET GLOBAL interactive_timeout = 60");
    let gone = ["result=error:2013", "result=error:2006"].map(|s| s.trim_start_matches("result=").to_string());
    let set = after_idle(&r.gw, "2", &["set=1"]);
    assert!(gone.contains(&set), "SET wait_timeout=1, idle 2 s: {set}\n{}", r.gw.log_tail(2000));
    let default = after_idle(&r.gw, "4", &[]);
    assert!(gone.contains(&default), "server default wait_timeout 3 s, idle 4 s: {default}");
    let interactive = after_idle(&r.gw, "4", &["interactive"]);
    assert_eq!(interactive, "ok", "interactive session (interactive_timeout 60 s), idle 4 s");
    let longer = after_idle(&r.gw, "4", &["set=30"]);
    assert_eq!(longer, "ok", "SET wait_timeout=30, idle 4 s: pooled connections closed by their servers are replaced");
}

/// The idle limit counts from the client's last command, not from the start of the session: a
/// client busy for longer than `wait_timeout` in total, never idle that long, stays connected;
/// once idle past the limit, it is closed.
#[tokio::test]
async fn wait_timeout_counts_idle_time_only() {
    let r = start("leftovers-busy", "");
    let mut c = connect(&r.gw.url("root", "", Some("test"))).await.expect("client");
    c.query_drop("SET SESSION wait_timeout = 2").await.expect("set wait_timeout");
    let began = Instant::now();
    // Pacing of the workload (a statement every 0.7 s for 5 s), not a synchronisation.
    while began.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(700)).await;
        let one = query_one(&mut c, "SELECT 1").await;
        assert!(
            matches!(&one, Ok(Some(v)) if v == "1"),
            "{:.1} s into a busy session with wait_timeout 2: {one:?}\n{}",
            began.elapsed().as_secs_f64(),
            r.gw.log_tail(2000)
        );
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    let after = query_one(&mut c, "SELECT 1").await;
    assert!(after.is_err(), "idle 3 s with wait_timeout 2: the session should be closed, got {after:?}");
}

#[tokio::test]
async fn a_new_client_gets_the_global_values_of_now() {
    let r = start("leftovers-globals", "");
    let url = r.gw.url("root", "", Some("test"));
    let mut a = connect(&url).await.expect("client a");
    assert_eq!(query_one(&mut a, "SELECT 1").await.expect("select").as_deref(), Some("1"));
    a.disconnect().await.expect("a leaves");
    // Its connections were reset as it left; the servers' globals change after that.
    for (_, s) in r.servers() {
        s.sql("SET GLOBAL max_join_size = 10000").expect("set global");
    }
    let mut b = connect(&url).await.expect("client b");
    let got = query_one(&mut b, "SELECT @@session.max_join_size").await.expect("select");
    assert_eq!(got.as_deref(), Some("10000"), "a new session starts with the global value of when it starts");
    b.disconnect().await.expect("b leaves");
}
