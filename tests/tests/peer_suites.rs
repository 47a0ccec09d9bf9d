//! Peer test suites (PyMySQL's own tests, MariaDB's C-API test program `mariadb-client-test`)
//! run against MariaDB directly, through the 1:1 gateway in front of that server, and through the
//! routed gateway over three MariaDB servers holding the same databases (the demo topology, so
//! statements move between pooled server connections). Each suite passes when the three
//! case-by-case outcomes are identical; the tables (passed / failed / skipped / wall time) and
//! the cases that differ, with their outcome per mode, are printed.
//!
//! A case that fails directly too (the environment: the sdist lacks PyMySQL's data files, some
//! C-API cases expect mysql-test-run's server options) fails the same way in every mode.

use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use gateway_tests::cluster::{Cluster, ClusterOptions, Servers};
use gateway_tests::peers::{self, Endpoint, PeerTools, SuiteRun};
use gateway_tests::{Gateway, GatewayConfig, MariaDb};

/// The databases PyMySQL's CI creates for its suite.
const DATABASES: &str = "CREATE DATABASE IF NOT EXISTS test1 DEFAULT CHARACTER SET utf8mb4; \
    CREATE DATABASE IF NOT EXISTS test2 DEFAULT CHARACTER SET utf8mb4";

/// Logins are also checked against the accounts of the servers (root reads them).
const SERVER_ACCOUNTS: &str = "\n[auth]\naccounts = \"servers\"\nuser = \"root\"\npassword = \"\"\n";

/// Differences still open (issue #15), each exactly as the comparison prints it, with why. The
/// test fails on any other difference; a listed one that no longer shows is reported.
const CLIENT_TEST_KNOWN: &[(&str, &str)] = &[];

/// A PyMySQL test hanging on a lock is cut after this.
const PER_TEST: Duration = Duration::from_secs(30);

/// The three endpoints.
struct Endpoints {
    direct: MariaDb,
    one_to_one: Gateway,
    routed: Cluster,
}

impl Endpoints {
    fn start() -> anyhow::Result<Endpoints> {
        let direct = MariaDb::start("peers-direct")?;
        direct.sql(DATABASES)?;
        // Accounts the suites create on the server (COM_CHANGE_USER cases) log in through the
        // gateway as they would directly: [auth] accounts = "servers".
        let one_to_one = Gateway::start(&(GatewayConfig::new(direct.addr())?.to_toml() + SERVER_ACCOUNTS))?;
        let routed_servers = Servers::start(&ClusterOptions::demo("peers-routed"))?;
        routed_servers.on_every_server(DATABASES)?;
        // The same for the routed gateway: its accounts are read from the first server, where the
        // demo topology's primary zone runs table-less statements (CREATE USER, GRANT) — an
        // OceanBase tenant's servers share their accounts; these stand-ins do not.
        let toml = routed_servers.gateway_config()?.to_toml() + SERVER_ACCOUNTS;
        let routed = routed_servers.route(&toml)?;
        Ok(Endpoints { direct, one_to_one, routed })
    }

    /// (mode, endpoint, servers behind it).
    fn modes(&self) -> Vec<(&'static str, Endpoint, Vec<&MariaDb>)> {
        let ep = |port| Endpoint { port, user: "root".into(), password: String::new() };
        vec![
            ("MariaDB directly", ep(self.direct.port()), vec![&self.direct]),
            ("gateway 1:1", ep(self.one_to_one.port()), vec![&self.direct]),
            ("gateway routed", ep(self.routed.gw.port()), self.routed.servers().map(|(_, s)| s).collect()),
        ]
    }
}

static ENDPOINTS: OnceLock<Result<Endpoints, String>> = OnceLock::new();
/// The suites run one at a time (timing-sensitive cases; two CPU cores).
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn endpoints() -> &'static Endpoints {
    match ENDPOINTS.get_or_init(|| Endpoints::start().map_err(|e| format!("{e:#}"))) {
        Ok(e) => e,
        Err(e) => panic!("endpoints did not start: {e}"),
    }
}

/// Runs `suite` in every mode (after `prepare` on that mode's servers), prints the table, and
/// fails with the differing cases, except those listed in `known` exactly as they differ (each
/// printed with its reason, as still open).
fn compare(
    title: &str,
    prepare: &str,
    known: &[(&str, &str)],
    suite: impl Fn(&Endpoint, &[&MariaDb]) -> anyhow::Result<SuiteRun>,
) {
    let _serial = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let eps = endpoints();
    let mut runs = Vec::new();
    for (mode, ep, servers) in eps.modes() {
        for s in &servers {
            s.sql(prepare).unwrap_or_else(|e| panic!("{mode}: preparing {}: {e:#}", s.name()));
        }
        let run = suite(&ep, &servers).unwrap_or_else(|e| panic!("{mode}: {e:#}"));
        println!("{mode}: {} cases in {:.1} s", run.cases.len(), run.wall.as_secs_f64());
        runs.push((mode, run));
    }
    let refs: Vec<(&str, &SuiteRun)> = runs.iter().map(|(m, r)| (*m, r)).collect();
    println!("{}", peers::table(title, &refs));
    let diff = peers::differences(&refs);
    let (allowed, unexpected): (Vec<&String>, Vec<&String>) =
        diff.iter().partition(|d| known.iter().any(|(line, _)| d.as_str() == *line));
    for d in &allowed {
        let why = known.iter().find(|(line, _)| d.as_str() == *line).map_or("", |(_, why)| why);
        println!("KNOWN DIFFERENCE (open in issue #15): {d} — {why}");
    }
    for (line, _) in known.iter().filter(|(line, _)| !diff.iter().any(|d| d == line)) {
        println!("known difference no longer seen (remove it from the list): {line}");
    }
    assert!(
        unexpected.is_empty(),
        "{title}: {} cases differ between modes:\n{}\n1:1 gateway warnings:\n{}\nrouted gateway warnings:\n{}",
        unexpected.len(),
        unexpected.iter().map(|d| d.as_str()).collect::<Vec<_>>().join("\n"),
        warnings(&eps.one_to_one),
        warnings(&eps.routed.gw)
    );
}

/// The last WARN / ERROR lines of a gateway's log.
fn warnings(gw: &Gateway) -> String {
    let log = gw.log_tail(200_000);
    let lines: Vec<&str> = log.lines().filter(|l| l.contains(" WARN ") || l.contains(" ERROR ")).collect();
    lines[lines.len().saturating_sub(15)..].join("\n")
}

/// The installed suites, or `None` after recording why `test` is skipped.
fn tools(test: &str) -> Option<PeerTools> {
    match PeerTools::find() {
        Ok(t) => Some(t),
        Err(why) => {
            gateway_tests::skip::skip(test, &why);
            None
        }
    }
}

#[test]
fn pymysql_suite_same_in_all_modes() {
    let Some(tools) = tools("pymysql_suite_same_in_all_modes") else { return };
    let scratch = gateway_tests::scratch_dir("peers-pymysql").expect("scratch dir");
    let n = std::sync::atomic::AtomicU32::new(0);
    compare("PyMySQL 0.10.1 test suite", DATABASES, &[], |ep, _| {
        let dir = scratch.join(n.fetch_add(1, std::sync::atomic::Ordering::Relaxed).to_string());
        std::fs::create_dir_all(&dir)?;
        peers::pymysql(&tools, ep, &dir, PER_TEST)
    });
}

#[test]
fn mariadb_client_test_same_in_all_modes() {
    let Some(tools) = tools("mariadb_client_test_same_in_all_modes") else { return };
    let scratch = gateway_tests::scratch_dir("peers-client-test").expect("scratch dir");
    // A failed case exits without its clean-up: its database goes, and the global autocommit it
    // may have left off (test_connect_autocommit) comes back, so that one failure stays one.
    let drop = "DROP DATABASE IF EXISTS client_test_db; SET GLOBAL autocommit = 1";
    compare("mariadb-client-test (MariaDB C API)", drop, CLIENT_TEST_KNOWN, |ep, servers| {
        let fresh = || servers.iter().try_for_each(|s| s.sql(drop).map(|_| ()));
        peers::client_test(&tools, ep, &scratch, PER_TEST, &fresh)
    });
}
