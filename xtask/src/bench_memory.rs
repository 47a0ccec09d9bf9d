//! `cargo xtask bench-memory`: the gateway's resident memory per idle 1:1 session, for each
//! `[listen] session_io`. One MariaDB, a release gateway per mode, `--sessions` clients that each
//! log in, run one statement and stay idle; the gateway's `VmRSS` (`/proc/<pid>/status`) before
//! any, with half of them and with all of them. The second half's growth per session is the
//! figure: it leaves out what a process allocates once (per thread, at the first sessions).
//! Writes `target/bench/memory.md`.

use std::fmt::Write as _;
use std::time::Duration;

use anyhow::{bail, Context};
use gateway_tests::{Gateway, MariaDb, MariaDbOptions};
use mysql_async::prelude::Queryable;

use crate::workspace;

/// Options of `cargo xtask bench-memory`.
#[derive(clap::Args, Debug)]
pub struct MemoryArgs {
    /// Idle client sessions opened through each gateway.
    #[arg(long, default_value_t = 1000)]
    sessions: usize,
}

/// `[listen] session_io` values measured, in order.
const MODES: [&str; 2] = ["epoll", "io_uring"];

/// One gateway's figures (KiB).
struct Measured {
    mode: &'static str,
    /// Where the gateway said its sessions run (io_uring may be unavailable).
    note: String,
    before: u64,
    half: u64,
    full: u64,
}

/// Runs the benchmark.
pub fn run(args: &MemoryArgs) -> anyhow::Result<()> {
    if args.sessions < 2 {
        bail!("--sessions must be at least 2");
    }
    let bin = workspace::build_release_gateway()?;
    let db = MariaDb::start_with(
        "bench-memory",
        MariaDbOptions {
            general_log: false,
            extra_args: vec![format!("--max-connections={}", args.sessions + 100)],
            ..MariaDbOptions::default()
        },
    )?;
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().context("tokio runtime")?;
    let mut rows = Vec::new();
    for mode in MODES {
        let mut config = workspace::gateway_config(gateway_tests::free_port()?, db.addr())?;
        config.log_level = "info".into();
        config.listen_extra.push(format!("session_io = \"{mode}\""));
        let gw = Gateway::start_with_bin(&bin, &config.to_toml())?;
        let measured = rt.block_on(measure(&gw, mode, args.sessions))?;
        println!(
            "{mode:9} before {} KiB, {} sessions {} KiB, {} sessions {} KiB: {:.1} KiB per session ({})",
            measured.before,
            args.sessions / 2,
            measured.half,
            args.sessions,
            measured.full,
            per_session(measured.half, measured.full, args.sessions - args.sessions / 2),
            measured.note
        );
        rows.push(measured);
        gw.terminate()?;
    }
    let report = table(&rows, args.sessions);
    let path = gateway_tests::target_dir().join("bench").join("memory.md");
    std::fs::create_dir_all(path.parent().unwrap_or(&path)).context("creating target/bench")?;
    std::fs::write(&path, &report).with_context(|| format!("writing {}", path.display()))?;
    println!("\n{report}\nwritten to {}", path.display());
    Ok(())
}

/// Opens the sessions through `gw` and reads its memory along the way; closes them at the end.
async fn measure(gw: &Gateway, mode: &'static str, sessions: usize) -> anyhow::Result<Measured> {
    let url = gw.url("root", "", None);
    let before = rss_kib(gw.pid())?;
    let mut conns = Vec::with_capacity(sessions);
    let mut half = 0;
    for i in 0..sessions {
        let mut conn = gateway_tests::mysql::connect(&url).await.with_context(|| format!("session {i}"))?;
        // Answered through the gateway: the session is past its login and hand-off.
        conn.query_drop("SELECT 1").await.with_context(|| format!("session {i}: SELECT 1"))?;
        conns.push(conn);
        if i + 1 == sessions / 2 {
            half = rss_kib(gw.pid())?;
        }
    }
    let full = rss_kib(gw.pid())?;
    for conn in conns {
        let _ = conn.disconnect().await;
    }
    let note = if mode != "io_uring" {
        "tokio's epoll reactor".to_string()
    } else if gw.wait_log("sessions run on io_uring session threads", 1, Duration::ZERO).is_ok() {
        "io_uring session threads".to_string()
    } else {
        "io_uring is not available here: sessions used epoll".to_string()
    };
    Ok(Measured { mode, note, before, half, full })
}

/// The resident memory of process `pid`, in KiB.
fn rss_kib(pid: u32) -> anyhow::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).context("reading the gateway's status")?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .context("no VmRSS in /proc/<pid>/status")
}

/// KiB per session between two readings `sessions` apart.
fn per_session(from: u64, to: u64, sessions: usize) -> f64 {
    (to as f64 - from as f64) / sessions.max(1) as f64
}

/// The Markdown report.
fn table(rows: &[Measured], sessions: usize) -> String {
    let half = sessions / 2;
    let mut t = format!(
        "| session_io | RSS before (KiB) | with {half} (KiB) | with {sessions} (KiB) | KiB per session, sessions {} to {sessions} | KiB per session, all | sessions ran on |\n|---|---|---|---|---|---|---|\n",
        half + 1
    );
    for r in rows {
        let _ = writeln!(
            t,
            "| {} | {} | {} | {} | {:.1} | {:.1} | {} |",
            r.mode,
            r.before,
            r.half,
            r.full,
            per_session(r.half, r.full, sessions - half),
            per_session(r.before, r.full, sessions),
            r.note
        );
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_session_growth_and_the_table() {
        assert_eq!(per_session(1000, 3000, 100), 20.0);
        assert_eq!(per_session(3000, 1000, 100), -20.0);
        let rows = [Measured { mode: "epoll", note: "n".into(), before: 100, half: 1100, full: 2100 }];
        let t = table(&rows, 100);
        assert!(t.contains("| epoll | 100 | 1100 | 2100 | 20.0 | 20.0 | n |"), "{t}");
        assert!(t.contains("sessions 51 to 100"), "{t}");
    }
}
