//! The network fuzzer (issue #13 item 3) against a 1:1 gateway and a routed gateway (three
//! servers, the demo topology) in front of real MariaDB servers: seeded, mutated handshake
//! responses and commands over raw TCP (bit flips, truncation, length lies, 16 MiB frame
//! boundaries, wrong sequence ids, hostile COM_STMT_EXECUTE parameters, unknown commands, packets
//! after COM_QUIT), each case with a deadline, while a canary session checks its own answers.
//! Afterwards the gateway process is alive, serves a fresh login, and no server holds anything
//! that blocks a DDL on the table the cases wrote to.
//!
//! `NET_FUZZ_CASES=20000 cargo test -p gateway-tests --test net_fuzz` runs more cases; a failure
//! prints `NET_FUZZ_SEED=… NET_FUZZ_CASE=…`, which reruns that case alone (see
//! `gateway_tests::netfuzz` for the other settings).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use gateway_tests::cluster::{ClusterOptions, Servers};
use gateway_tests::mysql::{connect, query_one};
use gateway_tests::netfuzz::canary::{CanaryReport, CanarySpec, ROWS_TABLE};
use gateway_tests::netfuzz::{self, Progress, Settings, Target};
use gateway_tests::{Gateway, GatewayConfig, MariaDb, UserEntry};

/// Cases per gateway when `NET_FUZZ_CASES` is not set.
const DEFAULT_CASES: u64 = 2500;
const FUZZ: (&str, &str) = ("fuzz", "fuzz-pw");
const CANARY: (&str, &str) = ("canary", "canary-pw");

/// The fuzz cases' table and account, the canary's table: the account may read and write `test` only (no KILL of
/// others, no SHUTDOWN, no DDL on real tables), so any harm to the canary is the gateway's doing.
fn prepare_server(db: &MariaDb) -> anyhow::Result<()> {
    db.sql(
        "CREATE TABLE IF NOT EXISTS fz (k INT PRIMARY KEY, v VARCHAR(64)); \
         CREATE DATABASE IF NOT EXISTS canary; \
         CREATE TABLE IF NOT EXISTS canary.rows (k BIGINT PRIMARY KEY, v VARCHAR(64))",
    )?;
    for host in ["127.0.0.1", "localhost"] {
        db.cli().sql(&format!(
            "CREATE USER IF NOT EXISTS '{0}'@'{host}' IDENTIFIED BY '{1}'; \
             GRANT SELECT, INSERT, UPDATE, DELETE, CREATE TEMPORARY TABLES ON test.* TO '{0}'@'{host}'",
            FUZZ.0, FUZZ.1
        ))?;
    }
    Ok(())
}

fn config(backend: &MariaDb) -> GatewayConfig {
    GatewayConfig::new(backend.addr())
        .unwrap_or_else(|e| panic!("{e}"))
        .user(UserEntry::native(FUZZ.0, FUZZ.1))
        .user(UserEntry::native(CANARY.0, CANARY.1))
}

/// Runs the fuzzer and the canaries against `gw`, then checks the gateway and the servers.
fn fuzz(name: &str, gw: &Gateway, servers: &[&MariaDb]) {
    let settings = Settings::from_env(DEFAULT_CASES);
    eprintln!("{name}: seed {:#x}, {} cases, {} workers", settings.seed, settings.cases, settings.workers);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let progress = Arc::new(Progress::default());
    // One canary of its own account (committing rows too), one of the fuzz account: routed
    // sessions share pooled server connections per account, so that one would get any answer
    // a fuzz case left behind on a connection.
    let canaries: Vec<_> = [(CANARY, true), (FUZZ, false)]
        .into_iter()
        .map(|((user, pw), writes)| {
            let spec = CanarySpec {
                name: user.into(),
                url: gw.url(user, pw, Some("test")),
                seed: settings.seed ^ u64::from(writes),
                writes,
            };
            rt.spawn(netfuzz::canary::run(spec, progress.clone()))
        })
        .collect();
    let target = Target { addr: gw.addr(), user: FUZZ.0.into(), password: FUZZ.1.into() };
    let started = Instant::now();
    let result = netfuzz::run(&settings, &target, &progress, &|| gw.is_running());
    let elapsed = started.elapsed();
    progress.stop.store(true, Ordering::SeqCst);
    let reports: Vec<_> =
        canaries.into_iter().map(|c| rt.block_on(c).unwrap_or_else(|e| panic!("canary task: {e}"))).collect();
    let tally = result.unwrap_or_else(|e| panic!("{name}: {e}\ngateway log:\n{}", gw.log_tail(6000)));
    let seed = settings.seed;
    let reports: Vec<CanaryReport> = reports
        .into_iter()
        .map(|r| r.unwrap_or_else(|e| panic!("{name}: seed {seed:#x}: {e}\n{}", gw.log_tail(6000))))
        .collect();
    let checks: Vec<u64> = reports.iter().map(|r| r.checks).collect();
    eprintln!("{name}: seed {seed:#x}\n{tally}\ncanary checks: {checks:?}\ntime: {elapsed:.1?}");
    let single = settings.only.is_some();
    if !single {
        assert_eq!(tally.cases, settings.cases, "{name}: not every case ran");
        for c in &checks {
            assert!(*c >= 20, "{name}: a canary made only {c} checks during the run");
        }
    }
    assert!(gw.is_running(), "{name}: the gateway (pid {}) is gone\n{}", gw.pid(), gw.log_tail(6000));
    rt.block_on(fresh_login(gw, name));
    for db in servers {
        no_leftovers(db, name);
    }
    committed_rows_kept(servers, &reports[0].committed, name, single);
}

/// Every row whose COMMIT the canary saw acknowledged is on a server.
fn committed_rows_kept(servers: &[&MariaDb], committed: &[(u64, String)], name: &str, single: bool) {
    let mut stored = std::collections::BTreeSet::new();
    for db in servers {
        let out = db.sql(&format!("SELECT k, v FROM {ROWS_TABLE}")).unwrap_or_else(|e| panic!("{name}: {e:#}"));
        stored.extend(out.lines().map(str::to_owned));
    }
    let lost: Vec<_> = committed.iter().filter(|(k, v)| !stored.contains(&format!("{k}\t{v}"))).collect();
    assert!(single || !committed.is_empty(), "{name}: the canary committed no row");
    assert!(lost.is_empty(), "{name}: acknowledged rows lost: {lost:?}");
}

/// A fresh login through the gateway works, for the fuzz account and the canary's.
async fn fresh_login(gw: &Gateway, name: &str) {
    for (user, pw) in [FUZZ, CANARY] {
        let mut c = connect(&gw.url(user, pw, Some("test")))
            .await
            .unwrap_or_else(|e| panic!("{name}: fresh login of {user} after fuzzing: {e}\n{}", gw.log_tail(4000)));
        let got = query_one(&mut c, "SELECT c2 FROM t0 WHERE c1 = 123").await.unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(got.as_deref(), Some("a"), "{name}: {user} after fuzzing");
        c.disconnect().await.unwrap_or_else(|e| panic!("{e}"));
    }
}

/// Nothing the fuzz sessions left on `db` blocks a DDL on the table they wrote to (an open
/// transaction or a metadata lock of a session the gateway kept would make it wait, then fail).
fn no_leftovers(db: &MariaDb, name: &str) {
    let ddl = "SET SESSION lock_wait_timeout = 10; ALTER TABLE fz ADD COLUMN fuzz_check INT; ALTER TABLE fz DROP COLUMN fuzz_check";
    if let Err(e) = db.sql(ddl) {
        let list = db
            .sql("SELECT ID, USER, COMMAND, TIME, STATE, INFO FROM information_schema.PROCESSLIST")
            .unwrap_or_default();
        panic!("{name}: DDL on {}'s fz after fuzzing: {e:#}\nprocesslist:\n{list}", db.name());
    }
}

#[test]
fn one_to_one_gateway_survives_fuzzing() {
    let db = MariaDb::start("netfuzz-1to1").unwrap_or_else(|e| panic!("{e}"));
    db.sql("CREATE TABLE t0 (c1 INT NOT NULL, c2 VARCHAR(64)); INSERT INTO t0 VALUES (0,'a'),(123,'a')")
        .and_then(|_| db.create_user(CANARY.0, CANARY.1))
        .and_then(|_| prepare_server(&db))
        .unwrap_or_else(|e| panic!("{e:#}"));
    let gw = Gateway::start(&config(&db).to_toml()).unwrap_or_else(|e| panic!("{e:#}"));
    fuzz("1:1", &gw, &[&db]);
}

#[test]
fn routed_gateway_survives_fuzzing() {
    let opts = ClusterOptions::demo("netfuzz-routed").account(CANARY.0, CANARY.1);
    let servers = Servers::start(&opts).unwrap_or_else(|e| panic!("{e:#}"));
    for (_, db) in servers.iter() {
        prepare_server(db).unwrap_or_else(|e| panic!("{e:#}"));
    }
    let toml = config(servers.first()).to_toml();
    let cluster = servers.route(&toml).unwrap_or_else(|e| panic!("{e:#}"));
    fuzz("routed", &cluster.gw, &cluster.servers().map(|(_, db)| db).collect::<Vec<_>>());
}
