//! The canary: one session of a real driver (mysql_async), logged in for the whole fuzz run,
//! issuing statements whose answers only it can know (a fresh nonce each time, as text and as a
//! prepared statement's parameter, also through the HASH-partitioned `t0` so routed sessions take
//! different servers) and failing on any wrong, missing or foreign answer. With `writes`, it also
//! commits a row per round in a transaction (read back before COMMIT); the caller checks every
//! committed row is on a server afterwards.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use mysql_async::prelude::*;
use mysql_async::{Conn, Row};

use super::Progress;
use crate::mysql::{connect, value_string};
use crate::workload::Rng;

/// How long one canary statement may take.
const STATEMENT_DEADLINE: Duration = Duration::from_secs(20);

/// The table of the canary's committed rows (`k BIGINT PRIMARY KEY, v VARCHAR(64)`), in a
/// database the fuzz account has no rights on.
pub const ROWS_TABLE: &str = "canary.rows";

/// Who the canary is and what it does.
#[derive(Debug, Clone)]
pub struct CanarySpec {
    /// Named in failures.
    pub name: String,
    /// mysql_async URL through the gateway.
    pub url: String,
    pub seed: u64,
    /// Commit rows to [`ROWS_TABLE`] too.
    pub writes: bool,
}

/// What a canary did.
#[derive(Debug, Default)]
pub struct CanaryReport {
    pub checks: u64,
    /// Rows whose COMMIT was acknowledged: (k, v).
    pub committed: Vec<(u64, String)>,
}

/// Runs checks until `progress.stop`; a failure says what went wrong and sets `progress.stop`
/// (ends the fuzz run).
pub async fn run(spec: CanarySpec, progress: Arc<Progress>) -> Result<CanaryReport, String> {
    let r = checks(&spec, &progress).await;
    if r.is_err() {
        progress.stop.store(true, Ordering::SeqCst);
    }
    r.map_err(|e| format!("canary {}: {e}", spec.name))
}

async fn checks(spec: &CanarySpec, progress: &Progress) -> Result<CanaryReport, String> {
    let mut conn = connect(&spec.url).await.map_err(|e| format!("login: {e}"))?;
    let mut rng = Rng::new(spec.seed ^ 0xCA4A_4157);
    let mut report = CanaryReport::default();
    let kinds = if spec.writes { 5 } else { 4 };
    let mut pace = tokio::time::interval(Duration::from_millis(5));
    while !progress.stop.load(Ordering::SeqCst) {
        pace.tick().await;
        let n = report.checks;
        let nonce = format!("canary-{}-{n}", rng.next_u64() >> 16);
        let kind = n % kinds;
        let got = tokio::time::timeout(STATEMENT_DEADLINE, statement(&mut conn, kind, n, &nonce)).await;
        let at = progress.started.load(Ordering::SeqCst);
        let want = expected(kind, &nonce);
        match got {
            Err(_) => {
                return Err(format!(
                    "check {n} (kind {kind}): no answer in {STATEMENT_DEADLINE:?} ({at} cases started)"
                ));
            }
            Ok(Err(e)) => {
                return Err(format!("check {n} (kind {kind}): error {e} ({at} cases started)"));
            }
            Ok(Ok(rows)) if rows != [want.clone()] => {
                return Err(format!("check {n} (kind {kind}): expected [{want:?}], got {rows:?} ({at} cases started)"));
            }
            Ok(Ok(_)) => {
                if kind == 4 {
                    report.committed.push((n, nonce));
                }
                report.checks += 1;
            }
        }
    }
    conn.disconnect().await.map_err(|e| format!("disconnect: {e}"))?;
    Ok(report)
}

/// The one row statement `kind` must answer.
fn expected(kind: u64, nonce: &str) -> Vec<Option<String>> {
    let n = Some(nonce.to_string());
    match kind {
        0 | 4 => vec![n],
        1 => vec![n, Some("canary".into())],
        2 => vec![Some("123".into()), n],
        _ => vec![Some("0".into()), n],
    }
}

/// One statement (or transaction) whose answer carries `nonce`; its rows as text.
async fn statement(
    conn: &mut Conn,
    kind: u64,
    n: u64,
    nonce: &str,
) -> Result<Vec<Vec<Option<String>>>, mysql_async::Error> {
    let rows: Vec<Row> = match kind {
        0 => conn.query(format!("SELECT '{nonce}'")).await?,
        1 => conn.exec("SELECT ?, ?", (nonce, "canary")).await?,
        2 => conn.query(format!("SELECT c1, '{nonce}' FROM t0 WHERE c1 = 123")).await?,
        3 => conn.exec("SELECT c1, ? FROM t0 WHERE c1 = ?", (nonce, 0)).await?,
        _ => {
            conn.query_drop("BEGIN").await?;
            let insert = format!("INSERT INTO {ROWS_TABLE} (k, v) VALUES (?, ?)");
            conn.exec_drop(insert, (n, nonce)).await?;
            let select = format!("SELECT v FROM {ROWS_TABLE} WHERE k = ?");
            let rows = conn.exec(select, (n,)).await?;
            conn.query_drop("COMMIT").await?;
            rows
        }
    };
    Ok(rows.into_iter().map(|r| r.unwrap().into_iter().map(value_string).collect()).collect())
}
