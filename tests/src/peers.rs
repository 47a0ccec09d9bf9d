//! Peer test suites: other projects' own client test programs run against one endpoint (a server,
//! or a gateway in front of servers), each test case's outcome recorded by name, so that runs
//! against different endpoints can be compared case by case.
//!
//! * [`pymysql`] — PyMySQL's test suite (`pymysql/tests`, with the thirdparty MySQLdb tests) from
//!   the PyMySQL 0.10.1 sdist, run by pytest with a per-test timeout (pytest-timeout).
//! * [`client_test`] — MariaDB's C-API test program `mariadb-client-test` (Debian package
//!   `mariadb-test`, same version as the installed server), one process per case (the program
//!   stops at its first failure), each in a fresh `client_test_db`, so that one failure does not
//!   cascade into the next cases (a few cases that need an earlier one's tables fail everywhere).
//!   A case's pass/fail is its exit status; there are no skips.
//!
//! `scripts/setup.sh` puts both under `$GATEWAY_TOOLS/peers` (default `~/.cache/gateway/peers`);
//! [`PeerTools::find`] says what is missing.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

/// The PyMySQL release whose sdist carries its test suite.
pub const PYMYSQL_SUITE: &str = "PyMySQL-0.10.1";

/// Where the suites are installed.
#[derive(Debug, Clone)]
pub struct PeerTools {
    /// The unpacked PyMySQL sdist (`pymysql/` with `tests/` inside).
    pub pymysql: PathBuf,
    /// The `mariadb-client-test` binary.
    pub client_test: PathBuf,
}

impl PeerTools {
    /// The installed suites, or why they cannot run (a `SKIP:` reason).
    pub fn find() -> Result<PeerTools, String> {
        let tools = match std::env::var_os("GATEWAY_TOOLS") {
            Some(t) => PathBuf::from(t),
            None => {
                std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| "/root".into()).join(".cache/gateway")
            }
        };
        let peers = tools.join("peers");
        let t = PeerTools { pymysql: peers.join(PYMYSQL_SUITE), client_test: peers.join("mariadb-client-test") };
        if !t.pymysql.join("pymysql/tests/base.py").exists() {
            return Err(format!("{} missing: run scripts/setup.sh", t.pymysql.display()));
        }
        if !t.client_test.exists() {
            return Err(format!("{} missing: run scripts/setup.sh", t.client_test.display()));
        }
        let py = crate::clients::venv_python();
        let ok = Command::new(&py).args(["-c", "import pytest, pytest_timeout"]).stdin(Stdio::null()).output();
        if !ok.is_ok_and(|o| o.status.success()) {
            return Err(format!("pytest / pytest-timeout missing in {}: run scripts/setup.sh", py.display()));
        }
        Ok(t)
    }
}

/// One endpoint to run a suite against.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// TCP port on 127.0.0.1.
    pub port: u16,
    /// Login user.
    pub user: String,
    /// Its password.
    pub password: String,
}

/// Outcome of one test case, as the suite's runner words it (`PASSED`, `FAILED`, `SKIPPED`,
/// `XFAIL`, `XPASS`, `ERROR`; the C program only passes or fails).
pub type Outcome = &'static str;

/// The outcome of every case of one suite run, and its wall time.
#[derive(Debug, Clone, Default)]
pub struct SuiteRun {
    /// Case name → outcome.
    pub cases: BTreeMap<String, Outcome>,
    /// Wall time of the whole run.
    pub wall: Duration,
}

impl SuiteRun {
    /// (passed, failed, skipped): XPASS counts as passed, ERROR as failed, XFAIL as skipped.
    pub fn counts(&self) -> (usize, usize, usize) {
        let n = |set: &[&str]| self.cases.values().filter(|o| set.contains(o)).count();
        (n(&["PASSED", "XPASS"]), n(&["FAILED", "ERROR"]), n(&["SKIPPED", "XFAIL"]))
    }
}

/// Runs a command with a deadline, killing it (by its PID) when it overruns; returns its exit
/// status (`None` when killed) and its standard output.
fn run_with_deadline(cmd: &mut Command, limit: Duration) -> anyhow::Result<(Option<i32>, String)> {
    let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).spawn().context("spawning")?;
    let mut stdout = child.stdout.take().context("no stdout pipe")?;
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = stdout.read_to_end(&mut s);
        String::from_utf8_lossy(&s).into_owned()
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(st) = child.try_wait()? {
            break st.code();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let out = reader.join().unwrap_or_default();
    Ok((status, out))
}

/// PyMySQL's test suite against `ep` (databases `test1` and `test2` must exist), each test cut
/// after `per_test`; `scratch` receives a copy of the suite with its `databases.json`.
pub fn pymysql(tools: &PeerTools, ep: &Endpoint, scratch: &Path, per_test: Duration) -> anyhow::Result<SuiteRun> {
    let tree = scratch.join(PYMYSQL_SUITE);
    let cp = Command::new("cp").arg("-a").arg(&tools.pymysql).arg(scratch).status().context("copying the suite")?;
    if !cp.success() {
        bail!("cp -a {} failed", tools.pymysql.display());
    }
    let db = |name: &str, extra: &str| {
        format!(
            r#"{{"host":"127.0.0.1","port":{},"user":{:?},"passwd":{:?},"db":"{name}"{extra}}}"#,
            ep.port, ep.user, ep.password
        )
    };
    let json = format!("[{},\n{}]\n", db("test1", r#","use_unicode":true,"local_infile":true"#), db("test2", ""));
    std::fs::write(tree.join("pymysql/tests/databases.json"), json)?;
    let mut cmd = Command::new(crate::clients::venv_python());
    cmd.current_dir(&tree)
        .args(["-m", "pytest", "-p", "no:cacheprovider", "-v", "-rN", "-o", "console_output_style=classic"])
        .arg(format!("--timeout={}", per_test.as_secs().max(1)))
        .arg("pymysql/tests")
        .stderr(Stdio::null());
    let started = Instant::now();
    let (_, out) = run_with_deadline(&mut cmd, Duration::from_secs(30 * 60))?;
    // Kept for a look at a failure with GATEWAY_KEEP_SERVERS=1.
    std::fs::write(scratch.join("pytest.log"), &out)?;
    let cases = parse_pytest(&out);
    if cases.is_empty() {
        bail!("pytest reported no test case; output:\n{}", &out[out.len().saturating_sub(3000)..]);
    }
    Ok(SuiteRun { cases, wall: started.elapsed() })
}

/// The `path::Class::test OUTCOME` lines of `pytest -v` (classic console style).
pub fn parse_pytest(out: &str) -> BTreeMap<String, Outcome> {
    const OUTCOMES: [&str; 6] = ["PASSED", "FAILED", "SKIPPED", "XFAIL", "XPASS", "ERROR"];
    let mut cases = BTreeMap::new();
    for line in out.lines() {
        let mut words = line.split_whitespace();
        let (Some(name), Some(word)) = (words.next(), words.next()) else { continue };
        if !name.contains("::") {
            continue;
        }
        if let Some(o) = OUTCOMES.iter().find(|o| **o == word) {
            // A test that fails in teardown after passing is reported twice: the failure wins.
            let e = cases.entry(name.to_string()).or_insert(*o);
            if *o == "ERROR" || *o == "FAILED" {
                *e = *o;
            }
        }
    }
    cases
}

/// The case names of `mariadb-client-test`, in its own order; only those named in
/// `GATEWAY_CLIENT_TEST_CASES` (comma-separated), when set, to chase a few cases.
pub fn client_test_cases(tools: &PeerTools) -> anyhow::Result<Vec<String>> {
    let out = Command::new(&tools.client_test).args(["--no-defaults", "-T"]).stdin(Stdio::null()).output()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let only = std::env::var("GATEWAY_CLIENT_TEST_CASES").ok();
    let wanted = |name: &String| only.as_deref().is_none_or(|o| o.split(',').any(|c| c.trim() == name));
    // "All possible test names:", a blank line, then one name per line ("test_logs;" has a stray ';').
    Ok(text
        .lines()
        .skip_while(|l| !l.trim().is_empty())
        .map(|l| l.trim().trim_end_matches(';').to_string())
        .filter(|l| !l.is_empty())
        .filter(wanted)
        .collect())
}

/// `mariadb-client-test` against `ep`: every case in its own process (exit status 0 = passed),
/// in order, cut after `per_case`, after `before_each` (which drops the program's database
/// `client_test_db` on the servers: a failed case exits without dropping it). It needs the
/// database `test` on the server.
pub fn client_test(
    tools: &PeerTools,
    ep: &Endpoint,
    scratch: &Path,
    per_case: Duration,
    before_each: &dyn Fn() -> anyhow::Result<()>,
) -> anyhow::Result<SuiteRun> {
    let started = Instant::now();
    let mut cases = BTreeMap::new();
    for name in client_test_cases(tools)? {
        before_each()?;
        let mut cmd = Command::new(&tools.client_test);
        cmd.arg("--no-defaults")
            .arg("--host=127.0.0.1")
            .arg(format!("--port={}", ep.port))
            .arg(format!("--user={}", ep.user))
            .arg(format!("--vardir={}", scratch.display()))
            .arg("--silent")
            .stderr(Stdio::null());
        if !ep.password.is_empty() {
            cmd.arg(format!("--password={}", ep.password));
        }
        let (status, _) = run_with_deadline(cmd.arg(&name), per_case)?;
        cases.insert(name, if status == Some(0) { "PASSED" } else { "FAILED" });
    }
    if cases.is_empty() {
        bail!("{} lists no test case", tools.client_test.display());
    }
    Ok(SuiteRun { cases, wall: started.elapsed() })
}

/// The table of runs by mode: passed / failed / skipped / wall time.
pub fn table(suite: &str, runs: &[(&str, &SuiteRun)]) -> String {
    let mut t = format!("{suite}\n| endpoint | passed | failed | skipped | wall time |\n|---|---|---|---|---|\n");
    for (mode, run) in runs {
        let (p, f, s) = run.counts();
        t += &format!("| {mode} | {p} | {f} | {s} | {:.1} s |\n", run.wall.as_secs_f64());
    }
    t
}

/// Cases whose outcome is not the same in every run: `case: mode=OUTCOME …`, one per line.
pub fn differences(runs: &[(&str, &SuiteRun)]) -> Vec<String> {
    let mut names: Vec<&String> = runs.iter().flat_map(|(_, r)| r.cases.keys()).collect();
    names.sort();
    names.dedup();
    let mut out = Vec::new();
    for name in names {
        let got: Vec<Outcome> = runs.iter().map(|(_, r)| r.cases.get(name).copied().unwrap_or("MISSING")).collect();
        if got.iter().any(|o| *o != got[0]) {
            let by_mode: Vec<String> = runs.iter().zip(&got).map(|((m, _), o)| format!("{m}={o}")).collect();
            out.push(format!("{name}: {}", by_mode.join(" ")));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pytest_lines_are_parsed() {
        let out = "pymysql/tests/test_basic.py::TestConversion::test_bit PASSED\n\
                   pymysql/tests/test_basic.py::TestConversion::test_json SKIPPED (JSON type)\n\
                   No garbages!\n\
                   pymysql/tests/test_x.py::T::t FAILED\n\
                   pymysql/tests/test_y.py::T::t PASSED\npymysql/tests/test_y.py::T::t ERROR\n";
        let c = parse_pytest(out);
        assert_eq!(c.len(), 4);
        assert_eq!(c["pymysql/tests/test_basic.py::TestConversion::test_json"], "SKIPPED");
        assert_eq!(c["pymysql/tests/test_x.py::T::t"], "FAILED");
        assert_eq!(c["pymysql/tests/test_y.py::T::t"], "ERROR", "a teardown error after a pass is a failure");
    }
}
