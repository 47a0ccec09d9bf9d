//! The canary: one session of a real driver (mysql_async), logged in for the whole fuzz run,
//! issuing statements whose answers only it can know (a fresh nonce each time, as text and as a
//! prepared statement's parameter, also through the HASH-partitioned `t0` so routed sessions take
//! different servers) and failing on any wrong, missing or foreign answer.

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

/// Runs checks until `progress.stop`; the number of checks done, or what went wrong. A failure
/// sets `progress.stop` (ends the fuzz run).
pub async fn run(url: String, seed: u64, progress: Arc<Progress>) -> Result<u64, String> {
    let r = checks(&url, seed, &progress).await;
    if r.is_err() {
        progress.stop.store(true, Ordering::SeqCst);
    }
    r
}

async fn checks(url: &str, seed: u64, progress: &Progress) -> Result<u64, String> {
    let mut conn = connect(url)
        .await
        .map_err(|e| format!("canary login: {e}"))?;
    let mut rng = Rng::new(seed ^ 0xCA4A_4157);
    let mut done = 0u64;
    let mut pace = tokio::time::interval(Duration::from_millis(5));
    while !progress.stop.load(Ordering::SeqCst) {
        pace.tick().await;
        let nonce = format!("canary-{}-{done}", rng.next_u64());
        let (sql, want): (&str, Vec<Option<String>>) = match done % 4 {
            0 => ("text", vec![Some(nonce.clone())]),
            1 => ("prepared", vec![Some(nonce.clone()), Some("canary".into())]),
            2 => ("t0 text", vec![Some("123".into()), Some(nonce.clone())]),
            _ => ("t0 prepared", vec![Some("0".into()), Some(nonce.clone())]),
        };
        let got =
            tokio::time::timeout(STATEMENT_DEADLINE, statement(&mut conn, done % 4, &nonce)).await;
        let at = progress.started.load(Ordering::SeqCst);
        match got {
            Err(_) => {
                return Err(format!(
                    "canary {sql} check {done}: no answer in {STATEMENT_DEADLINE:?} ({at} cases started)"
                ));
            }
            Ok(Err(e)) => {
                return Err(format!(
                    "canary {sql} check {done}: error {e} ({at} cases started)"
                ));
            }
            Ok(Ok(rows)) if rows != [want.clone()] => {
                return Err(format!(
                    "canary {sql} check {done}: expected [{want:?}], got {rows:?} ({at} cases started)"
                ));
            }
            Ok(Ok(_)) => done += 1,
        }
    }
    conn.disconnect()
        .await
        .map_err(|e| format!("canary disconnect: {e}"))?;
    Ok(done)
}

/// One statement whose answer carries `nonce`; its rows as text.
async fn statement(
    conn: &mut Conn,
    kind: u64,
    nonce: &str,
) -> Result<Vec<Vec<Option<String>>>, mysql_async::Error> {
    let rows: Vec<Row> = match kind {
        0 => conn.query(format!("SELECT '{nonce}'")).await?,
        1 => conn.exec("SELECT ?, ?", (nonce, "canary")).await?,
        2 => {
            conn.query(format!("SELECT c1, '{nonce}' FROM t0 WHERE c1 = 123"))
                .await?
        }
        _ => {
            conn.exec("SELECT c1, ? FROM t0 WHERE c1 = ?", (nonce, 0))
                .await?
        }
    };
    Ok(rows
        .into_iter()
        .map(|r| r.unwrap().into_iter().map(value_string).collect())
        .collect())
}
