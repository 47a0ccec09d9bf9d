//! Hostile statements from the least-privileged account (issue #13, item 1): 100,000-deep
//! parentheses, unary and `NOT` chains, 100,000-term `OR` / `AND` chains and `IN` lists, nested
//! subqueries and `CASE`, sent as COM_QUERY, as text `PREPARE` (+ `EXECUTE`) and as
//! COM_STMT_PREPARE (+ COM_STMT_EXECUTE), through a routed gateway (three MariaDB servers playing
//! the demo topology) and a 1:1 gateway. Every statement must get its own answer (a result or
//! the server's error), the gateway process must stay up, and another client's open transaction
//! must survive and commit.

use std::time::Duration;

use gateway_tests::cluster::{Cluster, ClusterOptions, Servers};
use gateway_tests::mysql::{connect, err_code, query_one};
use gateway_tests::{Gateway, GatewayConfig, UserEntry};
use mysql_async::prelude::*;
use mysql_async::{Conn, Error};

const N: usize = 100_000;
const LOW: (&str, &str) = ("low", "low-pw");
const APP: (&str, &str) = ("app", "app-pw");

/// (name, statement) — the shapes that once overflowed the gateway's stack, at 100,000.
fn shapes() -> Vec<(&'static str, String)> {
    let chain = |n: usize, term: &dyn Fn(usize) -> String, sep: &str| (0..n).map(term).collect::<Vec<_>>().join(sep);
    vec![
        ("parentheses", format!("SELECT * FROM t0 WHERE c1 = {}1{}", "(".repeat(N), ")".repeat(N))),
        ("unary minus", format!("SELECT * FROM t0 WHERE c1 = {}1", "-".repeat(N))),
        ("NOT chain", format!("SELECT * FROM t0 WHERE {}c1 = 1", "NOT ".repeat(N))),
        ("OR chain", format!("SELECT * FROM t0 WHERE {}", chain(N, &|i| format!("c1 = {i}"), " OR "))),
        (
            "AND chain",
            format!("SELECT * FROM t0 WHERE c1 = 0 AND {}", chain(N, &|i| format!("c1 <> {}", i + 1), " AND ")),
        ),
        ("IN list", format!("SELECT * FROM t0 WHERE c1 IN ({})", chain(N, &|i| i.to_string(), ","))),
        ("placeholder in parentheses", format!("SELECT * FROM t0 WHERE c1 = {}?{}", "(".repeat(N), ")".repeat(N))),
        (
            "nested subqueries",
            format!(
                "SELECT * FROM t0 WHERE c1 IN {}0{}",
                "(SELECT c1 FROM t0 WHERE c1 IN ".repeat(N / 10),
                ")".repeat(N / 10)
            ),
        ),
        ("nested CASE", format!("SELECT {}1{} FROM t0", "CASE WHEN 1 THEN ".repeat(N / 10), " END".repeat(N / 10))),
    ]
}

struct Gateways {
    routed: Cluster,
    one_to_one: Gateway,
}

fn start() -> Gateways {
    let servers = Servers::start(&ClusterOptions::demo("hostile").account(APP.0, APP.1))
        .unwrap_or_else(|e| panic!("servers: {e}"));
    servers
        .on_every_server(&format!(
            "CREATE USER '{0}'@'127.0.0.1' IDENTIFIED BY '{1}'; GRANT SELECT, INSERT ON test.t0 TO '{0}'@'127.0.0.1'",
            LOW.0, LOW.1
        ))
        .unwrap_or_else(|e| panic!("{e}"));
    let config = servers
        .gateway_config()
        .unwrap_or_else(|e| panic!("{e}"))
        .user(UserEntry::native(LOW.0, LOW.1))
        .user(UserEntry::native(APP.0, APP.1));
    let routed = servers.route(&config.to_toml()).unwrap_or_else(|e| panic!("routed gateway: {e}"));
    let config = GatewayConfig { listen_port: gateway_tests::free_port().unwrap(), ..config };
    let one_to_one = Gateway::start(&config.to_toml()).unwrap_or_else(|e| panic!("1:1 gateway: {e}"));
    Gateways { routed, one_to_one }
}

/// An answer of the statement's own: a result or a server error. A lost connection (the gateway
/// went away) or anything the driver could not read is not one.
fn answered<T>(what: &str, r: Result<T, Error>, gw: &Gateway) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(e) if err_code(&e).is_some() => {
            eprintln!("{what}: server error {e}");
            None
        }
        Err(e) => panic!("{what}: no answer of its own: {e:?}\ngateway log:\n{}", gw.log_tail(4000)),
    }
}

/// Sends every shape every way on `conn`, checking after each that the gateway is alive.
async fn attack(mode: &str, gw: &Gateway, conn: &mut Conn) {
    for (name, sql) in shapes() {
        let started = std::time::Instant::now();
        let what = format!("{mode} COM_QUERY {name}");
        let _ =
            answered(&what, tokio::time::timeout(Duration::from_secs(60), conn.query_drop(&sql)).await.unwrap(), gw);
        assert!(gw.is_running(), "{what}: gateway died\n{}", gw.log_tail(4000));

        let what = format!("{mode} PREPARE {name}");
        let prepare = format!("PREPARE s FROM '{}'", sql.replace('\'', "''"));
        if answered(&what, conn.query_drop(&prepare).await, gw).is_some() {
            let execute = if sql.contains('?') { "EXECUTE s USING 1" } else { "EXECUTE s" };
            let _ = answered(&format!("{what} + EXECUTE"), conn.query_drop(execute).await, gw);
        }
        assert!(gw.is_running(), "{what}: gateway died\n{}", gw.log_tail(4000));

        let what = format!("{mode} COM_STMT_PREPARE {name}");
        if let Some(stmt) = answered(&what, conn.prep(&sql).await, gw) {
            let params = vec![mysql_async::Value::Int(1); usize::from(stmt.num_params())];
            let _ = answered(&format!("{what} + EXECUTE"), conn.exec_drop(&stmt, params).await, gw);
        }
        assert!(gw.is_running(), "{what}: gateway died\n{}", gw.log_tail(4000));
        // The attacker's own session still answers its own statements.
        assert_eq!(query_one(conn, "SELECT 'mine'").await.unwrap().as_deref(), Some("mine"), "{what}");
        eprintln!("{mode} {name}: {:?}", started.elapsed());
    }
}

/// A bystander's open transaction survives every attack and commits; its row is then visible.
async fn bystander_survives(mode: &str, gw: &Gateway, key: i64) {
    let mut bystander = connect(&gw.url(APP.0, APP.1, Some("test"))).await.unwrap();
    bystander.query_drop("BEGIN").await.unwrap();
    bystander.exec_drop("INSERT INTO t0 VALUES (?, 'bystander')", (key,)).await.unwrap();

    let mut attacker = connect(&gw.url(LOW.0, LOW.1, Some("test"))).await.unwrap();
    attack(mode, gw, &mut attacker).await;

    bystander
        .query_drop("COMMIT")
        .await
        .unwrap_or_else(|e| panic!("{mode}: bystander COMMIT: {e}\n{}", gw.log_tail(4000)));
    let mut fresh = connect(&gw.url(APP.0, APP.1, Some("test"))).await.unwrap();
    let seen = query_one(&mut fresh, &format!("SELECT c2 FROM t0 WHERE c1 = {key}")).await.unwrap();
    assert_eq!(seen.as_deref(), Some("bystander"), "{mode}: the bystander's committed row");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_statements_never_take_the_gateway_down() {
    let g = start();
    bystander_survives("routed", &g.routed.gw, 5_001).await;
    bystander_survives("1:1", &g.one_to_one, 5_002).await;
    // The routed gateway executed the attack on the servers (they answered), not only locally.
    let mut seen = 0;
    for (_, db) in g.routed.servers() {
        let log = std::fs::read_to_string(db.general_log_path()).unwrap_or_default();
        seen += log.matches("SELECT * FROM t0 WHERE c1 IN (0,1,2,3,").count();
    }
    assert!(seen >= 2, "the IN-list statement reached a server through both gateways ({seen} times)");
}
