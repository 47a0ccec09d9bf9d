//! sysbench 1.0 for the benchmark: prepare through the harness; each run under a wall-clock limit
//! (a stalled proxy must not hang the benchmark) with its outcome recorded, never an early return.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::process::run_with_timeout;

/// Tables and rows per table (docs/architecture.md §3).
pub const TABLES: u32 = 4;
/// Rows per table.
pub const TABLE_SIZE: u32 = 10_000;

/// What one sysbench run does.
#[derive(Debug, Clone)]
pub struct RunSpec {
    /// Lua test name, e.g. `oltp_point_select`.
    pub test: &'static str,
    /// `--db-ps-mode`: `auto` (server-side prepared statements) or `disable` (text protocol).
    pub ps_mode: &'static str,
    /// `--threads`.
    pub threads: u32,
    /// `--time` in seconds.
    pub time: u64,
}

/// The measured result of one run.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// Queries per second.
    pub qps: f64,
    /// Statements sysbench sent during the run (its `queries:` total).
    pub queries: u64,
    /// With `--cpu`: the proxy process's CPU time over the run per statement, in µs.
    pub cpu_us: Option<f64>,
    /// With `--cpu`: the user-time part of `cpu_us` (the rest is system time), in µs.
    pub cpu_user_us: Option<f64>,
    /// With `--cpu`: the servers' (mariadbd) CPU time over the run per statement, in µs.
    pub server_us: Option<f64>,
    /// With `--cpu`, perf and one server: the server's system calls per statement over the run.
    pub server_syscalls: Option<f64>,
    /// With `--cpu`, perf and one server: the server's context switches per statement over the run.
    pub server_switches: Option<f64>,
    /// With `--cpu` and one server: the statements the server counted (`Questions`) per
    /// statement sysbench sent; above 1, the proxy sent statements of its own.
    pub server_questions: Option<f64>,
    /// With `--cpu`: sysbench's own CPU time over the run per statement, in µs.
    pub client_us: Option<f64>,
    /// With `--cpu`: the whole machine's busy CPU time over the run per statement, in µs (client,
    /// server, proxy, kernel workers and interrupts together).
    pub host_us: Option<f64>,
    /// With `--cpu`: TCP segments the machine sent per statement over the run (`/proc/net/snmp`).
    pub segments: Option<f64>,
    /// With `--cpu` and perf: the proxy process's system calls per statement over the run.
    pub syscalls: Option<f64>,
    /// With `--cpu` and perf: the proxy process's context switches per statement over the run.
    pub switches: Option<f64>,
    /// 95th-percentile latency in ms.
    pub p95_ms: f64,
    /// "ignored errors" reported by sysbench (its default ignore list: 1213 deadlock, 1020 record
    /// changed, 1205 lock wait timeout).
    pub errors: u64,
    /// InnoDB deadlocks the server counted during the run (`Innodb_deadlocks` delta), if known:
    /// tells whether ignored errors were the workload's own deadlocks.
    pub deadlocks: Option<u64>,
    /// Why the run failed (non-zero exit, timeout, unparsable report), if it did.
    pub failure: Option<String>,
    /// With several servers: each one's share of the statements executed during the run
    /// (`s1 60% s2 40% s3 0%`).
    pub spread: Option<String>,
}

impl Outcome {
    /// A run that counts as bad: failed, or reported errors beyond the InnoDB deadlocks the server
    /// counted during it (read_write deadlocks on its own, on direct and haproxy too; sysbench
    /// retries them).
    pub fn is_bad(&self) -> bool {
        self.failure.is_some() || self.errors > self.deadlocks.unwrap_or(0)
    }
}

/// Where and as whom a run connects (always 127.0.0.1).
#[derive(Debug, Clone, Copy)]
pub struct Endpoint<'a> {
    /// TCP port.
    pub port: u16,
    /// `--mysql-user`.
    pub user: &'a str,
    /// `--mysql-password`.
    pub password: &'a str,
    /// `--mysql-ssl=on`, run in this directory: sysbench 1.0 has no options for the TLS files,
    /// it hands the client library `client-key.pem`, `client-cert.pem` and `cacert.pem` of its
    /// working directory, and fails to connect without them.
    pub ssl_dir: Option<&'a Path>,
}

impl Endpoint<'static> {
    /// `root` with an empty password, plain TCP.
    pub fn root(port: u16) -> Self {
        Endpoint { port, user: "root", password: "", ssl_dir: None }
    }
}

fn base_command(test: &str, to: &Endpoint) -> Command {
    let mut cmd = Command::new("sysbench");
    cmd.arg(test).args([
        "--db-driver=mysql",
        "--mysql-host=127.0.0.1",
        &format!("--mysql-port={}", to.port),
        &format!("--mysql-user={}", to.user),
        &format!("--mysql-password={}", to.password),
        "--mysql-db=sbtest",
        &format!("--tables={TABLES}"),
        &format!("--table-size={TABLE_SIZE}"),
    ]);
    if let Some(dir) = to.ssl_dir {
        cmd.arg("--mysql-ssl=on").current_dir(dir);
    }
    cmd
}

/// Creates and fills the sbtest tables on the server at `port` (database `sbtest` must exist);
/// the random seed is fixed, so every server prepared this way holds the same rows.
pub fn prepare(port: u16) -> anyhow::Result<()> {
    let mut sb = gateway_tests::sysbench::Sysbench::new(port, "sbtest");
    sb.tables = TABLES;
    sb.table_size = TABLE_SIZE;
    sb.extra = vec!["--rand-seed=1".into()];
    sb.prepare()?;
    Ok(())
}

/// Runs `spec` against `to`; never fails as a function, failures land in the outcome.
pub fn run(spec: &RunSpec, to: &Endpoint) -> Outcome {
    let mut cmd = base_command(spec.test, to);
    cmd.args([
        format!("--threads={}", spec.threads),
        format!("--time={}", spec.time),
        format!("--db-ps-mode={}", spec.ps_mode),
        "--percentile=95".to_string(),
        "run".to_string(),
    ]);
    let limit = Duration::from_secs(spec.time + 60);
    let (status, out, err) = match run_with_timeout(cmd, limit) {
        Ok(r) => r,
        Err(e) => return Outcome { failure: Some(format!("{e:#}")), ..Outcome::default() },
    };
    let parsed = parse(&out);
    let unparsed = parsed.is_none();
    let mut outcome = parsed.unwrap_or_default();
    match status {
        Some(s) if s.success() => {
            if unparsed {
                outcome.failure = Some("no QPS / p95 in sysbench output".into());
            }
        }
        Some(s) => {
            let code = s.code().map_or_else(|| s.to_string(), |c| format!("exit {c}"));
            outcome.failure = Some(format!("sysbench {code}: {}", first_fatal(&out, &err)));
        }
        None => outcome.failure = Some(format!("sysbench killed after {limit:?} (timeout or Ctrl-C)")),
    }
    outcome
}

/// The first `FATAL` line (sysbench prints driver errors there), else the end of stderr.
fn first_fatal(out: &str, err: &str) -> String {
    out.lines()
        .chain(err.lines())
        .find(|l| l.contains("FATAL") || l.contains("error"))
        .map(str::trim)
        .map(str::to_string)
        .unwrap_or_else(|| err.trim().lines().last().unwrap_or("").to_string())
}

/// QPS, p95 and ignored errors from a `run` report (parsed by the harness).
pub fn parse(report: &str) -> Option<Outcome> {
    let r = gateway_tests::sysbench::parse_report(report).ok()?;
    Some(Outcome {
        qps: r.qps,
        queries: r.queries,
        p95_ms: r.latency_p95_ms,
        errors: r.ignored_errors,
        ..Outcome::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = "SQL statistics:
    queries performed:
        read:                            226907
        total:                           226907
    transactions:                        226907 (22680.43 per sec.)
    queries:                             226907 (22680.43 per sec.)
    ignored errors:                      3      (0.30 per sec.)
    reconnects:                          0      (0.00 per sec.)

Latency (ms):
         min:                                    0.07
         avg:                                    0.17
         max:                                    5.32
         95th percentile:                        0.37
         sum:                                39600.43
";

    #[test]
    fn parses_run_report() {
        let mut o = parse(REPORT).unwrap();
        assert_eq!((o.qps, o.queries, o.p95_ms, o.errors), (22680.43, 226907, 0.37, 3));
        assert!(o.is_bad());
        o.deadlocks = Some(3);
        assert!(!o.is_bad(), "errors the server counted as deadlocks");
        o.deadlocks = Some(2);
        assert!(o.is_bad(), "an error beyond the deadlocks");
    }

    #[test]
    fn fatal_line_is_the_failure_reason() {
        assert!(parse("FATAL: unable to connect").is_none());
        assert_eq!(first_fatal("x\nFATAL: mysql_stmt_prepare() failed\n", ""), "FATAL: mysql_stmt_prepare() failed");
    }
}
