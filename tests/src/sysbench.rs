//! sysbench 1.0.20 driver: prepare / run / cleanup against a host:port, and the numbers parsed from
//! its report (docs/architecture.md §3).

use std::process::{Command, Stdio};

use anyhow::{bail, Context};

/// One sysbench workload against one endpoint.
#[derive(Debug, Clone)]
pub struct Sysbench {
    /// Lua test name, e.g. `oltp_read_write`.
    pub test: String,
    /// Port on 127.0.0.1.
    pub port: u16,
    pub user: String,
    pub password: String,
    /// Database (must exist).
    pub db: String,
    pub tables: u32,
    pub table_size: u32,
    pub threads: u32,
    /// Run duration in seconds.
    pub time: u32,
    /// `auto` (server-side prepared statements) or `disable` (text protocol).
    pub ps_mode: String,
    /// Extra options, e.g. `--skip_trx=on`.
    pub extra: Vec<String>,
    /// Network namespace to run in (`ip netns exec NS sysbench …`), e.g. the seekdb kernel's.
    pub netns: Option<String>,
}

/// Figures from a `run` report.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SysbenchReport {
    pub transactions: u64,
    pub tps: f64,
    pub queries: u64,
    pub qps: f64,
    pub ignored_errors: u64,
    pub reconnects: u64,
    pub latency_avg_ms: f64,
    pub latency_p95_ms: f64,
    /// The whole output, for diagnostics.
    pub output: String,
}

impl Sysbench {
    /// `oltp_read_write`, root, 2 tables x 1000 rows, 2 threads, 5 s, PS mode auto.
    pub fn new(port: u16, db: &str) -> Self {
        Sysbench {
            test: "oltp_read_write".into(),
            port,
            user: "root".into(),
            password: String::new(),
            db: db.into(),
            tables: 2,
            table_size: 1000,
            threads: 2,
            time: 5,
            ps_mode: "auto".into(),
            extra: Vec::new(),
            netns: None,
        }
    }

    fn command(&self, phase: &str) -> Command {
        let mut c = match &self.netns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns, "sysbench"]);
                c
            }
            None => Command::new("sysbench"),
        };
        c.arg(&self.test)
            .arg("--db-driver=mysql")
            .arg("--mysql-host=127.0.0.1")
            .arg(format!("--mysql-port={}", self.port))
            .arg(format!("--mysql-user={}", self.user))
            .arg(format!("--mysql-password={}", self.password))
            .arg(format!("--mysql-db={}", self.db))
            .arg(format!("--tables={}", self.tables))
            .arg(format!("--table-size={}", self.table_size))
            .arg(format!("--db-ps-mode={}", self.ps_mode));
        if phase == "run" {
            c.arg(format!("--threads={}", self.threads)).arg(format!("--time={}", self.time)).arg("--percentile=95");
        }
        c.args(&self.extra).arg(phase).stdin(Stdio::null());
        c
    }

    fn exec(&self, phase: &str) -> anyhow::Result<String> {
        let out = self.command(phase).output().context("running sysbench (installed by scripts/setup.sh)")?;
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        if !out.status.success() {
            bail!(
                "sysbench {} {phase} on port {} failed ({}):\n{stdout}\n{}",
                self.test,
                self.port,
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Ok(stdout)
    }

    /// Creates and fills the tables.
    pub fn prepare(&self) -> anyhow::Result<String> {
        self.exec("prepare")
    }
    /// Runs the workload and parses the report.
    pub fn run(&self) -> anyhow::Result<SysbenchReport> {
        let out = self.exec("run")?;
        parse_report(&out)
    }
    /// Drops the tables.
    pub fn cleanup(&self) -> anyhow::Result<String> {
        self.exec("cleanup")
    }
}

/// Parses the `run` report of sysbench 1.0.x.
pub fn parse_report(out: &str) -> anyhow::Result<SysbenchReport> {
    let mut r = SysbenchReport { output: out.to_string(), ..Default::default() };
    let mut seen = 0;
    let mut in_latency = false;
    for line in out.lines() {
        let t = line.trim();
        if t.starts_with("Latency (ms):") {
            in_latency = true;
            continue;
        }
        let Some((key, val)) = t.split_once(':') else { continue };
        let val = val.trim();
        let first = val.split_whitespace().next().unwrap_or("");
        let rate = val.split('(').nth(1).and_then(|s| s.split_whitespace().next()).and_then(|s| s.parse::<f64>().ok());
        match key.trim() {
            "transactions" => {
                r.transactions = first.parse().context("transactions")?;
                r.tps = rate.unwrap_or(0.0);
                seen += 1;
            }
            "queries" => {
                r.queries = first.parse().context("queries")?;
                r.qps = rate.unwrap_or(0.0);
                seen += 1;
            }
            "ignored errors" => {
                r.ignored_errors = first.parse().context("ignored errors")?;
                seen += 1;
            }
            "reconnects" => {
                r.reconnects = first.parse().context("reconnects")?;
                seen += 1;
            }
            "avg" if in_latency => r.latency_avg_ms = first.parse().unwrap_or(0.0),
            k if in_latency && k.ends_with("th percentile") => {
                r.latency_p95_ms = first.parse().unwrap_or(0.0);
                seen += 1;
            }
            _ => {}
        }
    }
    if seen < 5 {
        bail!("could not parse the sysbench report:\n{out}");
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    #[test]
    fn parses_a_report() {
        let out = "SQL statistics:\n    queries performed:\n        read:  1400\n        total: 2000\n    transactions:                        100    (19.95 per sec.)\n    queries:                             2000   (399.07 per sec.)\n    ignored errors:                      1      (0.20 per sec.)\n    reconnects:                          0      (0.00 per sec.)\n\nLatency (ms):\n         min:                                    2.11\n         avg:                                   10.02\n         max:                                   40.00\n         95th percentile:                       16.12\n         sum:                                 1002.00\n";
        let r = super::parse_report(out).unwrap();
        assert_eq!((r.transactions, r.queries, r.ignored_errors, r.reconnects), (100, 2000, 1, 0));
        assert_eq!((r.tps, r.qps, r.latency_avg_ms, r.latency_p95_ms), (19.95, 399.07, 10.02, 16.12));
    }
}
