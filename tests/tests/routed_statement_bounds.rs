//! A routed client's prepared statements are bounded in the gateway's memory, whatever the
//! servers allow: at most 16,382 per protocol (MariaDB's default `max_prepared_stmt_count`) and
//! 64 MiB of statement text. The statement beyond gets ER 1461 without reaching a server; the
//! session goes on (closing a statement makes room) and other clients are served throughout.
//! The servers here allow far more statements, so the refusal is the gateway's own.

use gateway_tests::cluster::{Cluster, ClusterOptions, Servers};
use gateway_tests::mysql::{connect, err_code, err_message, query_one};
use gateway_tests::raw::{cmd, parse_err, RawConn};
use mysql_async::prelude::*;

/// The gateway's per-session statement limit (MariaDB's default `max_prepared_stmt_count`).
const MAX_STATEMENTS: usize = 16_382;

/// Three servers that allow 100,000 prepared statements, and a routing gateway over them.
fn start(name: &str) -> Cluster {
    let servers = Servers::start(&ClusterOptions::demo(name)).expect("servers");
    servers.on_every_server("SET GLOBAL max_prepared_stmt_count = 100000").expect("raise the servers' limit");
    let config = servers.gateway_config().expect("config").max_packet_size(32 << 20);
    servers.route(&config.to_toml()).expect("gateway")
}

#[test]
fn binary_statements_stop_at_the_gateways_limit() {
    let c = start("ps-count");
    let gw = &c.gw;
    let mut c = RawConn::login(gw.addr(), "root", "", Some("test")).expect("login");
    for n in 0..MAX_STATEMENTS {
        c.prepare(&format!("SELECT {n}")).unwrap_or_else(|e| panic!("statement {n}: {e:#}\n{}", gw.log_tail(2000)));
    }
    c.command(cmd::STMT_PREPARE, b"SELECT 'one more'").expect("send");
    let answer = c.read_packet().expect("answer");
    let err = parse_err(&answer).unwrap_or_else(|| panic!("statement {MAX_STATEMENTS} was prepared: {answer:02x?}"));
    assert_eq!(
        (err.code, err.message.as_str()),
        (1461, "Can't create more than max_prepared_stmt_count statements (current value: 16382)")
    );
    // The session goes on: a closed statement makes room.
    c.close_stmt(1).expect("close statement 1");
    c.prepare("SELECT 'one more'").expect("prepared after a close");
    let rows = c.query("SELECT 7").expect("query on the same session");
    assert!(rows.iter().any(|r| r.ends_with(b"7")), "SELECT 7: {rows:02x?}");
    let mut other = RawConn::login(gw.addr(), "root", "", None).expect("another client");
    other.prepare("SELECT 1").expect("another client prepares");
}

#[tokio::test]
async fn text_statements_stop_at_64_mib_of_text() {
    let c = start("ps-bytes");
    let gw = &c.gw;
    let mut c = connect(&gw.url("root", "", Some("test"))).await.expect("client");
    // Nine statements of 7 MiB (63 MiB) fit; a tenth does not.
    let body = "x".repeat(7 << 20);
    let prepare = |name: &str| format!("PREPARE {name} FROM 'SELECT ''{body}'''");
    for n in 0..9 {
        c.query_drop(prepare(&format!("s{n}"))).await.unwrap_or_else(|e| panic!("s{n}: {e}\n{}", gw.log_tail(2000)));
    }
    let refused = c.query_drop(prepare("s9")).await.expect_err("the tenth 7 MiB statement is refused");
    assert_eq!(err_code(&refused), Some(1461), "{refused}");
    let message = err_message(&refused);
    assert!(message.contains("64 MiB"), "{message}");
    // Deallocating one gives its bytes back; the session is intact.
    c.query_drop("DEALLOCATE PREPARE s0").await.expect("deallocate");
    c.query_drop(prepare("s9")).await.expect("prepared after a deallocate");
    let one = query_one(&mut c, "SELECT 1").await.expect("select");
    assert_eq!(one.as_deref(), Some("1"));
}
