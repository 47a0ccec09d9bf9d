//! `cargo xtask bench`: sysbench against one MariaDB directly, through haproxy (TCP mode) and
//! through the gateway, interleaved round by round, reported as a table with gateway ratios.
//! `--cluster`: the gateway routes over three servers instead (see [`cluster`]).

mod cluster;
mod profile;

use std::fmt::Write as _;

use anyhow::{bail, Context};
use gateway_tests::{Gateway, MariaDb, MariaDbOptions};

use crate::mariadb_cli::{self, Format, Login};
use crate::process::{self, interrupted, Proc};
use crate::report::{self, Sample};
use crate::sysbench::{self, Outcome, RunSpec};
use crate::{haproxy, workspace};

/// Options of `cargo xtask bench`.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Seconds per sysbench run.
    #[arg(long, default_value_t = 10)]
    time: u64,
    /// sysbench client threads.
    #[arg(long, default_value_t = 4)]
    threads: u32,
    /// Rounds; each round runs direct, haproxy and gateway back to back. Medians are reported.
    #[arg(long, default_value_t = 1)]
    rounds: u32,
    /// sysbench tests to run.
    #[arg(long, value_delimiter = ',', default_value = "oltp_point_select,oltp_read_write")]
    tests: Vec<String>,
    /// `--db-ps-mode` values to run.
    #[arg(long, value_delimiter = ',', default_value = "auto,disable")]
    ps_modes: Vec<String>,
    /// Three servers with the same sbtest data and the gateway in routing mode over them (static
    /// topology written at bench time, sbtest tables HASH(id) with leaders on s1 and s2). direct
    /// and haproxy stay on s1: haproxy is an L4 proxy, it cannot split a session's statements
    /// across servers, so one server is the honest baseline of a 1:1 proxy.
    #[arg(long)]
    cluster: bool,
    /// Samples the gateway with `perf record` (when installed) during each gateway run, into
    /// `target/bench/perf-<test>-<ps mode>-r<round>.data` (read with `perf report -i <file>`).
    #[arg(long)]
    profile: bool,
}

const TARGETS: [&str; 3] = ["direct", "haproxy", "gateway"];

/// Everything the benchmark started, stopped (by PID) when dropped: gateway, haproxy, then MariaDB.
struct Rig {
    gateway: Gateway,
    gateway_config: String,
    #[allow(dead_code)] // held so that dropping the rig stops haproxy by PID
    haproxy: Proc,
    haproxy_port: u16,
    /// The servers: one, or s1–s3 with `--cluster`. direct and haproxy use the first.
    dbs: Vec<MariaDb>,
}

impl Rig {
    fn port(&self, target: &str) -> u16 {
        match target {
            "direct" => self.dbs[0].port(),
            "haproxy" => self.haproxy_port,
            _ => self.gateway.port(),
        }
    }

    /// Restarts the gateway if an earlier run made it exit; returns a note if it did.
    fn revive_gateway(&mut self) -> anyhow::Result<Option<String>> {
        if self.gateway.is_alive() {
            return Ok(None);
        }
        let tail = self.gateway.log_tail(1500);
        let tail = if tail.trim().is_empty() { "(log empty)".to_string() } else { format!("log tail:\n{tail}") };
        let note = format!("gateway (pid {}) had exited, restarting it; {tail}", self.gateway.pid());
        self.gateway = Gateway::start(&self.gateway_config)?;
        Ok(Some(note))
    }
}

/// Runs the benchmark.
pub fn run(args: &BenchArgs) -> anyhow::Result<()> {
    process::trap_interrupts();
    let tests = known_names(&args.tests, &["oltp_point_select", "oltp_read_write", "oltp_read_only", "oltp_write_only"])?;
    let ps_modes = known_names(&args.ps_modes, &["auto", "disable"])?;
    let rounds = args.rounds.max(1);
    workspace::use_release_gateway()?;
    let dir = workspace::scratch_dir("bench")?;
    let mut rig = start_rig(&dir, args.cluster)?;

    let total = tests.len() * ps_modes.len() * rounds as usize * TARGETS.len();
    let mut samples = Vec::with_capacity(total);
    'outer: for &test in &tests {
        for &ps_mode in &ps_modes {
            let spec = RunSpec { test, ps_mode, threads: args.threads, time: args.time };
            for round in 1..=rounds {
                for target in TARGETS {
                    if interrupted() {
                        println!("==> interrupted: reporting what has run");
                        break 'outer;
                    }
                    if target == "gateway" {
                        if let Some(note) = rig.revive_gateway()? {
                            println!("    {note}");
                        }
                    }
                    let before = (innodb_deadlocks(&rig.dbs), cluster::questions(&rig.dbs));
                    let perf = (args.profile && target == "gateway").then(|| profile::start(&dir, &spec, round, rig.gateway.pid()));
                    let mut outcome = sysbench::run(&spec, rig.port(target));
                    if let Some(p) = perf {
                        println!("    {}", profile::finish(p));
                    }
                    outcome.deadlocks = before.0.zip(innodb_deadlocks(&rig.dbs)).map(|(b, a)| a.saturating_sub(b));
                    if rig.dbs.len() > 1 {
                        outcome.spread = cluster::spread(&before.1, &cluster::questions(&rig.dbs));
                    }
                    println!("[{:>2}/{total}] {}", samples.len() + 1, progress_line(&spec, round, target, &outcome));
                    samples.push(Sample { test, ps_mode, target, round, outcome });
                }
            }
        }
    }

    let table = report::summarize(&samples);
    println!();
    print!("{}", table.to_text());
    let md_path = dir.join("result.md");
    std::fs::write(&md_path, result_markdown(args, &rig, &table, &samples))
        .with_context(|| format!("writing {}", md_path.display()))?;
    println!("\nwritten to {}", md_path.display());
    // The harness deletes the gateway's directory when it stops it; keep its log for post-mortem.
    let _ = std::fs::copy(rig.gateway.log_path(), dir.join("gateway.log"));
    drop(rig);

    let bad = samples.iter().filter(|s| s.outcome.is_bad()).count();
    if bad > 0 {
        bail!("{bad} of {} sysbench runs failed or reported errors", samples.len());
    }
    if samples.len() < total {
        bail!("interrupted after {} of {total} runs", samples.len());
    }
    Ok(())
}

/// Starts MariaDB (one, or three with `cluster`; fresh `sbtest` prepared on each), haproxy (in
/// front of the first) and the gateway (1:1 in front of the first, or routing over all three).
fn start_rig(dir: &std::path::Path, cluster: bool) -> anyhow::Result<Rig> {
    let count = if cluster { cluster::SERVERS } else { 1 };
    let mut dbs = Vec::with_capacity(count);
    for i in 1..=count {
        let name = if cluster { format!("bench-s{i}") } else { "bench".to_string() };
        dbs.push(start_server(&name)?);
    }

    let haproxy_port = process::free_port()?;
    let haproxy = haproxy::start(dir, haproxy_port, dbs[0].port())?;
    println!(
        "==> haproxy on 127.0.0.1:{haproxy_port} (pid {}), config {}, log {}",
        haproxy.pid(),
        dir.join("haproxy.cfg").display(),
        haproxy.log().display()
    );

    let gateway_port = process::free_port()?;
    let mut gateway_config = workspace::gateway_config(gateway_port, dbs[0].addr())?.to_toml();
    if cluster {
        gateway_config.push_str(&cluster::routing_section(dir, &dbs)?);
    }
    std::fs::write(dir.join("gateway.toml"), &gateway_config)?;
    let gateway = Gateway::start(&gateway_config)?;
    println!("==> gateway on 127.0.0.1:{gateway_port} (pid {}), log {}", gateway.pid(), gateway.log_path().display());

    for (name, port) in [("haproxy", haproxy_port), ("gateway", gateway_port)] {
        if let Err(e) = mariadb_cli::run(&Login::root(port), "SELECT 1", Format::Batch) {
            println!("    warning: SELECT 1 through {name} failed: {e:#}");
        }
    }
    Ok(Rig { gateway, gateway_config, haproxy, haproxy_port, dbs })
}

/// One MariaDB without general log, with `sbtest` freshly prepared (the same rows on every server:
/// sysbench's random seed is fixed).
fn start_server(name: &str) -> anyhow::Result<MariaDb> {
    println!("==> starting MariaDB {name}");
    // No general log: writing every statement to a file would dominate the measurement.
    let opts = MariaDbOptions { general_log: false, ..MariaDbOptions::default() };
    let db = MariaDb::start_with(name, opts).with_context(|| format!("starting MariaDB {name}"))?;
    println!("    127.0.0.1:{} (pid {})", db.port(), db.pid());
    db.cli().sql("DROP DATABASE IF EXISTS sbtest; CREATE DATABASE sbtest")?;
    println!("==> sysbench prepare on {name}: {} tables x {} rows", sysbench::TABLES, sysbench::TABLE_SIZE);
    sysbench::prepare(db.port())?;
    Ok(db)
}

/// The sum of the servers' `Innodb_deadlocks` counters, read directly (not through a proxy).
fn innodb_deadlocks(dbs: &[MariaDb]) -> Option<u64> {
    dbs.iter()
        .map(|db| {
            let out = db.cli().sql("SHOW GLOBAL STATUS LIKE 'Innodb_deadlocks'").ok()?;
            out.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .sum()
}

fn progress_line(spec: &RunSpec, round: u32, target: &str, o: &Outcome) -> String {
    let head = format!("{:<17} ps={:<7} round {round} {target:<7}", spec.test, spec.ps_mode);
    match &o.failure {
        Some(f) => format!("{head} FAILED: {f}"),
        None => {
            let deadlocks = match o.deadlocks {
                Some(d) if d > 0 => format!(" (server counted {d} deadlock{})", if d == 1 { "" } else { "s" }),
                _ => String::new(),
            };
            let spread = o.spread.as_ref().map(|s| format!("  [{s}]")).unwrap_or_default();
            format!("{head} {:>9.0} QPS  p95 {:>6.2} ms  errors {}{deadlocks}{spread}", o.qps, o.p95_ms, o.errors)
        }
    }
}

/// Checks names against `allowed` and returns the matching `'static` strings.
fn known_names(given: &[String], allowed: &[&'static str]) -> anyhow::Result<Vec<&'static str>> {
    given
        .iter()
        .map(|g| {
            allowed
                .iter()
                .copied()
                .find(|a| a == g)
                .with_context(|| format!("unknown value {g:?}; expected one of {}", allowed.join(", ")))
        })
        .collect()
}

fn result_markdown(args: &BenchArgs, rig: &Rig, table: &report::Table, samples: &[Sample]) -> String {
    let mut md = String::from("# sysbench: direct vs haproxy vs gateway\n\n");
    if args.cluster {
        let _ = writeln!(
            md,
            "Cluster mode: three MariaDB servers with the same sbtest rows (s1 :{}, s2 :{}, s3 :{}); \
             direct and haproxy use s1 only (an L4 proxy cannot split a session across servers); \
             the gateway routes with the static topology `topology.toml` next to this file (sbtest \
             tables HASH(id), leaders alternating s1/s2, read-only replicas on s3, gateway in idc1). \
             The `servers` column of every run is each server's share of the statements executed \
             during the run (its `Questions` counter).\n",
            rig.dbs[0].port(),
            rig.dbs[1].port(),
            rig.dbs[2].port()
        );
    }
    let _ = writeln!(
        md,
        "Direct: MariaDB 127.0.0.1:{}, haproxy 2.6 TCP mode (:{}), gateway release build (:{}); \
         sysbench {} tables x {} rows, {} threads, {} s per run, {} round(s), runs interleaved \
         direct → haproxy → gateway within each round. QPS and p95 are medians over rounds; the \
         ratios are medians of the per-round gateway/direct and gateway/haproxy QPS ratios.\n",
        rig.dbs[0].port(),
        rig.haproxy_port,
        rig.gateway.port(),
        sysbench::TABLES,
        sysbench::TABLE_SIZE,
        args.threads,
        args.time,
        args.rounds.max(1)
    );
    md.push_str(&table.to_markdown());
    md.push_str("\n## Every run\n\n");
    md.push_str(&report::raw_markdown(samples));
    md
}
