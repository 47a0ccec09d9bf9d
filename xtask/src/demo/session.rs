//! The demo's scripted session: one client connection through the gateway; for every statement
//! one line with the statement, its EXPLAIN ROUTE summary and where it actually ran (read from the
//! servers' general logs by a marker comment, never from the gateway's own account).

use anyhow::Context;
use mysql_async::prelude::*;
use mysql_async::{Conn, Row, Value};

use super::general_log::{self, LogServer, Ran};
use super::route_summary::RouteSummary;

/// One statement of the script.
struct Step {
    /// The SQL, without the marker (appended at run time).
    sql: &'static str,
    /// `Some(v)`: run as a prepared statement with one parameter `v` (the SQL has one `?`).
    param: Option<i64>,
}

const fn text(sql: &'static str) -> Step {
    Step { sql, param: None }
}

/// The script: a strong point read on each partitioned table and the non-partitioned one, a weak
/// read, an INSERT, a prepared point read, a transaction whose second statement's own leader is
/// another server (stickiness), and a statement without a table.
const STEPS: [Step; 12] = [
    text("SELECT c2 FROM t0 WHERE c1 = 123"),
    text("SELECT c2 FROM t_key WHERE c1 = 7"),
    text("SELECT c2 FROM t_range WHERE c1 = 500"),
    text("SELECT c2 FROM t1 WHERE c1 = 2"),
    text("SELECT /*+READ_CONSISTENCY(WEAK)*/ c2 FROM t0 WHERE c1 = 5"),
    text("INSERT INTO t0 VALUES (11, 'eleven')"),
    Step { sql: "SELECT c2 FROM t_key WHERE c1 = ?", param: Some(2) },
    text("BEGIN"),
    text("UPDATE t_range SET c2 = 'mid!' WHERE c1 = 500"),
    text("SELECT c2 FROM t0 WHERE c1 = 4"),
    text("COMMIT"),
    text("SELECT @@port, DATABASE()"),
];

/// What the session saw, for the caller's verdict.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Statements run.
    pub statements: usize,
    /// Statements (or their EXPLAIN ROUTE) that failed.
    pub errors: usize,
    /// Statements with an expected server (not BEGIN) that ran exactly there.
    pub matched: usize,
    /// Statements with an expected server.
    pub judged: usize,
    /// Every server any statement ran on, deduplicated.
    pub ran_on: Vec<String>,
}

/// Where the statements of an open transaction belong.
enum Txn {
    /// No transaction open.
    None,
    /// BEGIN seen, no statement yet.
    Opened,
    /// The transaction's server (the route of its first statement).
    On(String),
}

/// Runs the script through the gateway on 127.0.0.1:`port` as `demo`/`demo` in database `test`.
pub fn run(port: u16, servers: &[LogServer]) -> anyhow::Result<Outcome> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().context("tokio runtime")?;
    rt.block_on(session(port, servers))
}

async fn session(port: u16, servers: &[LogServer]) -> anyhow::Result<Outcome> {
    let url = format!("mysql://demo:demo@127.0.0.1:{port}/test");
    let mut conn = gateway_tests::mysql::connect(&url).await.with_context(|| format!("connecting to {url}"))?;
    let name_of =
        |addr: &str| servers.iter().find(|s| s.addr == addr).map_or_else(|| addr.to_string(), |s| s.name.clone());
    println!(
        "{:>2}  {:<58} {:<26} {:<8} {:<6} {:<5} result",
        "#", "statement", "EXPLAIN ROUTE", "expected", "ran on", "check"
    );
    let mut outcome = Outcome::default();
    let mut txn = Txn::None;
    for (i, step) in STEPS.iter().enumerate() {
        let marker = format!("/* demo-step-{:02} */", i + 1);
        let sql = format!("{} {marker}", step.sql);
        let route = explain(&mut conn, &sql, step.param).await;
        let result = execute(&mut conn, &sql, step.param).await;
        let ran = general_log::find(servers, &marker);
        let routed = route.as_ref().ok().and_then(|r| r.server.as_deref()).map(name_of);
        let in_txn = matches!(txn, Txn::On(_));
        let expected = expectation(&mut txn, step.sql, routed);
        let check = verdict(expected.as_deref(), &ran, &mut outcome);
        let expected_text = match &expected {
            Some(server) if in_txn => format!("{server} txn"),
            Some(server) => server.clone(),
            None => "-".to_string(),
        };
        let route_text = match &route {
            Ok(r) => r.text(name_of),
            Err(e) => format!("error: {e}"),
        };
        if route.is_err() || result.is_err() {
            outcome.errors += 1;
        }
        let shown = match step.param {
            Some(v) => format!("{} [?={v}]", step.sql),
            None => step.sql.to_string(),
        };
        let result = result.unwrap_or_else(|e| format!("error: {e}"));
        let ran_text = general_log::servers_text(&ran);
        println!("{:>2}  {shown:<58} {route_text:<26} {expected_text:<8} {ran_text:<6} {check:<5} {result}", i + 1);
        outcome.statements += 1;
        for r in ran {
            if !outcome.ran_on.contains(&r.server) {
                outcome.ran_on.push(r.server);
            }
        }
    }
    conn.disconnect().await.context("closing the demo session")?;
    Ok(outcome)
}

/// The EXPLAIN ROUTE summary of `sql` (with the parameter inlined for a prepared statement).
async fn explain(conn: &mut Conn, sql: &str, param: Option<i64>) -> Result<RouteSummary, String> {
    let sql = match param {
        Some(v) => sql.replacen('?', &v.to_string(), 1),
        None => sql.to_string(),
    };
    let text: Option<String> =
        conn.query_first(format!("EXPLAIN ROUTE {sql}")).await.map_err(|e| gateway_tests::mysql::err_message(&e))?;
    Ok(RouteSummary::parse(&text.unwrap_or_default()))
}

/// Runs the statement; returns a short result: the first row's values, or the affected rows.
async fn execute(conn: &mut Conn, sql: &str, param: Option<i64>) -> Result<String, String> {
    let rows: Vec<Row> = match param {
        Some(v) => conn.exec(sql, (v,)).await,
        None => conn.query(sql).await,
    }
    .map_err(|e| gateway_tests::mysql::err_message(&e))?;
    Ok(match rows.into_iter().next() {
        Some(row) => row.unwrap().into_iter().map(show_value).collect::<Vec<_>>().join(", "),
        None if conn.affected_rows() == 0 => "OK".to_string(),
        None => format!("{} row(s) affected", conn.affected_rows()),
    })
}

fn show_value(v: Value) -> String {
    match v {
        Value::NULL => "NULL".to_string(),
        Value::Bytes(b) => String::from_utf8_lossy(&b).into_owned(),
        other => other.as_sql(true),
    }
}

/// The server a statement should run on: its own route outside a transaction; inside one, the
/// server of the transaction's first statement (stickiness). `None` for BEGIN, which the gateway
/// may hold until the first statement.
fn expectation(txn: &mut Txn, sql: &str, routed: Option<String>) -> Option<String> {
    let head = sql.split_whitespace().next().unwrap_or("").to_ascii_uppercase();
    match head.as_str() {
        "BEGIN" | "START" => {
            *txn = Txn::Opened;
            None
        }
        "COMMIT" | "ROLLBACK" => match std::mem::replace(txn, Txn::None) {
            Txn::On(server) => Some(server),
            _ => routed,
        },
        _ => match txn {
            Txn::None => routed,
            Txn::Opened => {
                *txn = routed.clone().map_or(Txn::Opened, Txn::On);
                routed
            }
            Txn::On(server) => Some(server.clone()),
        },
    }
}

/// `ok` if the statement ran exactly on the expected server, `DIFF` if elsewhere, `held` if it
/// reached no server, empty if nothing was expected.
fn verdict(expected: Option<&str>, ran: &[Ran], outcome: &mut Outcome) -> &'static str {
    let Some(expected) = expected else {
        return if ran.is_empty() { "held" } else { "" };
    };
    outcome.judged += 1;
    if ran.is_empty() {
        "held"
    } else if ran.iter().all(|r| r.server == expected) {
        outcome.matched += 1;
        "ok"
    } else {
        "DIFF"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transactions_are_sticky() {
        let mut txn = Txn::None;
        let s = |n: &str| Some(n.to_string());
        assert_eq!(expectation(&mut txn, "SELECT 1", s("s1")), s("s1"));
        assert_eq!(expectation(&mut txn, "BEGIN", s("s1")), None);
        assert_eq!(expectation(&mut txn, "UPDATE t SET a = 1", s("s2")), s("s2"));
        assert_eq!(expectation(&mut txn, "SELECT a FROM t0", s("s1")), s("s2"));
        assert_eq!(expectation(&mut txn, "COMMIT", s("s1")), s("s2"));
        assert_eq!(expectation(&mut txn, "SELECT 2", s("s1")), s("s1"));
    }

    #[test]
    fn verdicts() {
        let mut o = Outcome::default();
        let ran = |s: &str| vec![Ran { server: s.into(), command: "Query".into() }];
        assert_eq!(verdict(Some("s1"), &ran("s1"), &mut o), "ok");
        assert_eq!(verdict(Some("s2"), &ran("s1"), &mut o), "DIFF");
        assert_eq!(verdict(Some("s2"), &[], &mut o), "held");
        assert_eq!(verdict(None, &ran("s1"), &mut o), "");
        assert_eq!((o.judged, o.matched), (3, 1));
    }
}
