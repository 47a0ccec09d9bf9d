//! `[listen] session_io = "io_uring"` (the default): 1:1 and routed sessions on io_uring session
//! threads.
//! The server's general log says every statement ran; the ring's own counters (its `fdinfo`)
//! say the bytes went through the ring and not through epoll; a session thread keeps serving
//! through what ends a session badly: a client gone in the middle of an answer, a KILL from
//! another session, a drain. And `"epoll"` opens no ring at all.

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use gateway_tests::cluster::{ClusterOptions, Servers, APP_PASSWORD, APP_USER};
use gateway_tests::mysql::{connect, err_code, query_one};
use gateway_tests::skip::skip;
use gateway_tests::stack::{shared, Stack};
use gateway_tests::{Gateway, GatewayConfig, MariaDb, UserEntry};
use mysql_async::prelude::*;

static STACK: OnceLock<Result<Stack, String>> = OnceLock::new();

/// The line the gateway logs when its session threads started.
const STARTED: &str = "sessions run on io_uring session threads";
/// The line it logs when it falls back to epoll.
const UNAVAILABLE: &str = "io_uring is not available; sessions use epoll";

fn on_uring(mut c: GatewayConfig) -> GatewayConfig {
    c.listen_extra.retain(|l| !l.starts_with("session_io"));
    c.listen_extra.push("session_io = \"io_uring\"".into());
    c
}

fn stack() -> &'static Stack {
    shared(&STACK, || Stack::start("session-io", |_| Ok(()), on_uring))
}

/// Whether the gateway runs session threads: it must, unless it logged that io_uring is not
/// available here (then `test` is recorded as skipped).
fn uring_running(test: &str, gw: &Gateway) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let log = std::fs::read_to_string(gw.log_path()).unwrap_or_default();
        if log.contains(STARTED) {
            return true;
        }
        if let Some(line) = log.lines().find(|l| l.contains(UNAVAILABLE)) {
            skip(test, &format!("io_uring is not available here: {line}"));
            return false;
        }
        assert!(Instant::now() < deadline, "the gateway logged neither {STARTED:?} nor {UNAVAILABLE:?}:\n{log}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Completions the gateway's rings have posted so far (`CqTail` of each io_uring descriptor).
fn ring_completions(pid: u32) -> u64 {
    let mut total = 0;
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { return 0 };
    for fd in fds.flatten() {
        let is_ring = std::fs::read_link(fd.path()).is_ok_and(|l| l.to_string_lossy().contains("io_uring"));
        if !is_ring {
            continue;
        }
        let info = std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{}", fd.file_name().to_string_lossy()))
            .unwrap_or_default();
        total += info
            .lines()
            .find_map(|l| l.strip_prefix("CqTail:"))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(0);
    }
    total
}

/// Waits until `cond` holds, up to `timeout`; whether it did.
fn eventually(timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    cond()
}

#[tokio::test]
async fn statements_go_through_the_ring_and_each_runs_on_the_server() {
    let s = stack();
    if !uring_running("statements_go_through_the_ring_and_each_runs_on_the_server", &s.gw) {
        return;
    }
    let mut c = connect(&s.gw_url("root", "", Some("mysql"))).await.unwrap_or_else(|e| panic!("{e:?}\n{}", s.gw_log()));
    let before = ring_completions(s.gw.pid());
    const N: usize = 300;
    for i in 0..N {
        let got = query_one(&mut c, &format!("SELECT 'ring-marker-{i}'")).await.unwrap();
        assert_eq!(got.as_deref(), Some(format!("ring-marker-{i}").as_str()));
    }
    let after = ring_completions(s.gw.pid());
    // A statement is a receive and a send on each leg: four completions at least.
    assert!(after - before >= 4 * N as u64, "the ring completed {} operations for {N} statements", after - before);
    let log = s.db.general_log();
    let missing: Vec<usize> = (0..N).filter(|i| !log.contains(&format!("SELECT 'ring-marker-{i}'"))).collect();
    assert!(missing.is_empty(), "the server never ran markers {missing:?}");
    c.disconnect().await.unwrap();
}

#[tokio::test]
async fn a_client_gone_in_the_middle_of_an_answer_ends_its_server_statement_and_no_other_session() {
    let s = stack();
    if !uring_running("a_client_gone_in_the_middle_of_an_answer_ends_its_server_statement_and_no_other_session", &s.gw)
    {
        return;
    }
    let mut other = connect(&s.gw_url("root", "", None)).await.unwrap();
    // About 200 MB of answer: far more than the sockets hold, so the relay is mid-answer.
    let big = "SELECT REPEAT('z', 1000000) AS pad FROM seq_1_to_200 /* gone-client */";
    let mut cli = Command::new("mariadb")
        .args(["-h127.0.0.1", &format!("-P{}", s.gw.port()), "-uroot", "-Dmysql", "--quick", "-e", big])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("mariadb CLI");
    let mut first = vec![0u8; 1 << 20];
    cli.stdout.as_mut().expect("stdout").read_exact(&mut first).expect("the answer starts");
    cli.kill().expect("kill the client");
    let _ = cli.wait();
    let running = || {
        s.db.sql("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE '%gone-client%' AND INFO NOT LIKE '%PROCESSLIST%'")
            .map(|out| out.trim() == "0")
            .unwrap_or(false)
    };
    assert!(eventually(Duration::from_secs(20), running), "the server still runs the gone client's statement");
    assert_eq!(query_one(&mut other, "SELECT 'still here'").await.unwrap().as_deref(), Some("still here"));
    s.assert_healthy();
}

#[tokio::test]
async fn a_kill_from_another_session_ends_a_running_statement() {
    let s = stack();
    if !uring_running("a_kill_from_another_session_ends_a_running_statement", &s.gw) {
        return;
    }
    let url = s.gw_url("root", "", None);
    let mut victim = connect(&url).await.unwrap();
    let id = query_one(&mut victim, "SELECT CONNECTION_ID()").await.unwrap().expect("an id");
    let started = Instant::now();
    let sleeping = tokio::spawn(async move { victim.query_drop("SELECT SLEEP(60)").await });
    let mut killer = connect(&url).await.unwrap();
    // The victim's statement must have reached the server before the kill.
    let db = &s.db;
    assert!(
        eventually(Duration::from_secs(10), || db
            .sql("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO = 'SELECT SLEEP(60)'")
            .is_ok_and(|o| o.trim() == "1")),
        "the sleep never started"
    );
    killer.query_drop(format!("KILL {id}")).await.unwrap_or_else(|e| panic!("KILL {id}: {e:?}\n{}", s.gw_log()));
    let ended = tokio::time::timeout(Duration::from_secs(20), sleeping).await.expect("the killed statement ended");
    let err = ended.expect("task").expect_err("a killed statement fails");
    assert_eq!(err_code(&err), Some(1927), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(50), "the statement ran to its end");
    assert_eq!(query_one(&mut killer, "SELECT 1").await.unwrap().as_deref(), Some("1"));
}

/// The drain counts sessions on session threads (their task takes the count over from the task
/// that accepted them): it closes an idle one at once, waits for a busy one's answer, then the
/// gateway exits, long before the grace period would have ended.
// Multi-threaded: the busy statement's task runs while the test waits for the server to see it.
#[tokio::test(flavor = "multi_thread")]
async fn a_drain_closes_idle_ring_sessions_waits_for_busy_ones_and_exits() {
    let db = MariaDb::start("session-io-drain").expect("MariaDB");
    let mut config = on_uring(GatewayConfig::new(db.addr()).expect("config"));
    config.listen_extra.push("shutdown_grace_secs = 30".into());
    let mut gw = Gateway::start(&config.to_toml()).expect("gateway");
    if !uring_running("a_drain_closes_idle_ring_sessions_waits_for_busy_ones_and_exits", &gw) {
        return;
    }
    let mut idle = connect(&gw.url("root", "", None)).await.unwrap();
    assert_eq!(query_one(&mut idle, "SELECT 2").await.unwrap().as_deref(), Some("2"));
    let mut busy = connect(&gw.url("root", "", None)).await.unwrap();
    let answer = tokio::spawn(async move { query_one(&mut busy, "SELECT SLEEP(3) + 7").await });
    assert!(
        eventually(Duration::from_secs(10), || db
            .sql("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO = 'SELECT SLEEP(3) + 7'")
            .is_ok_and(|o| o.trim() == "1")),
        "the busy statement never started"
    );
    let asked = Instant::now();
    gw.terminate().expect("SIGTERM");
    // Uncounted, the busy session would be cut off here (no answer); counted twice (or never
    // given back), the gateway would wait out the grace period.
    let got = tokio::time::timeout(Duration::from_secs(20), answer).await.expect("the busy statement answered");
    assert_eq!(got.expect("task").unwrap_or_else(|e| panic!("{e:?}\n{}", gw.log_tail(3000))).as_deref(), Some("7"));
    let status = gw.wait_exit(Duration::from_secs(40)).expect("the gateway exits");
    assert!(status.success(), "exit status {status:?}");
    assert!(asked.elapsed() < Duration::from_secs(15), "the drain took {:?} of its 30 s grace", asked.elapsed());
    assert!(idle.query_drop("SELECT 3").await.is_err(), "the idle session survived the drain");
}

/// `session_io = "epoll"` keeps every session on tokio's reactor: the gateway opens no ring at
/// all (no io_uring descriptor), and its statements run.
#[tokio::test]
async fn with_epoll_no_ring_is_opened_and_statements_run() {
    let db = MariaDb::start("session-io-epoll").expect("MariaDB");
    let mut config = GatewayConfig::new(db.addr()).expect("config");
    config.listen_extra.retain(|l| !l.starts_with("session_io"));
    config.listen_extra.push("session_io = \"epoll\"".into());
    let gw = Gateway::start(&config.to_toml()).expect("gateway");
    let mut c = connect(&gw.url("root", "", None)).await.unwrap_or_else(|e| panic!("{e:?}\n{}", gw.log_tail(3000)));
    for i in 0..20 {
        let got = query_one(&mut c, &format!("SELECT 'epoll-marker-{i}'")).await.unwrap();
        assert_eq!(got.as_deref(), Some(format!("epoll-marker-{i}").as_str()));
    }
    let rings = std::fs::read_dir(format!("/proc/{}/fd", gw.pid()))
        .expect("the gateway's descriptors")
        .flatten()
        .filter(|fd| std::fs::read_link(fd.path()).is_ok_and(|l| l.to_string_lossy().contains("io_uring")))
        .count();
    assert_eq!(rings, 0, "an epoll gateway opened io_uring rings");
    let log = gw.log_tail(100_000);
    assert!(!log.contains(STARTED), "{log}");
    assert!(db.general_log().contains("SELECT 'epoll-marker-19'"), "the server never ran the statements");
}

/// A routed session runs on a session thread too. Its statements go through the ring and each
/// runs once, on the leader of its row, all on one server session: the connection the session
/// keeps between statements stays on the ring with it. One the server closed while it was kept
/// is seen to be gone, and the next statement runs on a new one instead of failing; so does the
/// first statement of a transaction, in the transaction.
#[tokio::test]
async fn routed_statements_go_through_the_ring_on_the_connection_the_session_keeps() {
    let test = "routed_statements_go_through_the_ring_on_the_connection_the_session_keeps";
    let servers = Servers::start(&ClusterOptions::new("ring-routed")).unwrap();
    let config = on_uring(servers.gateway_config().unwrap().user(UserEntry::native(APP_USER, APP_PASSWORD)));
    let c = servers.route(&config.to_toml()).unwrap();
    if !uring_running(test, &c.gw) {
        return;
    }
    let mut conn = connect(&c.gw_url(Some("test"))).await.unwrap_or_else(|e| panic!("{e:?}\n{}", c.gw_log()));
    let part = c.topology().partition_of("t_hash", 123).unwrap();
    let leader = c.topology().leader("t_hash", part);
    // Where a marker ran: (server, thread) of each general-log entry holding it.
    let ran = |marker: &str| -> Vec<(String, u64)> {
        let logs = c.general_logs();
        let on = |(name, entries): &(String, Vec<gateway_tests::general_log::Entry>)| {
            entries.iter().filter(|e| e.text.contains(marker)).map(|e| (name.clone(), e.thread)).collect::<Vec<_>>()
        };
        logs.iter().flat_map(on).collect()
    };

    let before = ring_completions(c.gw.pid());
    const N: usize = 200;
    for i in 0..N {
        let sql = format!("SELECT c3 FROM t_hash WHERE c1 = 123 /* ring-routed-{i} */");
        conn.query_drop(&sql).await.unwrap_or_else(|e| panic!("{sql}: {e:?}\n{}", c.gw_log()));
    }
    let after = ring_completions(c.gw.pid());
    assert!(after - before >= 4 * N as u64, "the ring completed {} operations for {N} statements", after - before);
    let first = ran("/* ring-routed-0 */");
    assert_eq!(first.len(), 1, "ring-routed-0 ran {first:?}");
    assert_eq!(first[0].0, leader, "t_hash c1 = 123 (p{part}) ran on {first:?}");
    let kept = first[0].1;
    for i in 1..N {
        let at = ran(&format!("/* ring-routed-{i} */"));
        assert_eq!(at, vec![(leader.to_string(), kept)], "ring-routed-{i} ran elsewhere than {leader} thread {kept}");
    }

    // The server ends the kept connection; once its thread is gone, the next statement still runs.
    let server = c.server(leader);
    server.sql(&format!("KILL {kept}")).unwrap();
    let gone = format!("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = {kept}");
    assert!(
        eventually(Duration::from_secs(10), || server.sql(&gone).is_ok_and(|n| n.trim() == "0")),
        "thread {kept} still listed on {leader}"
    );
    let sql = "SELECT c3 FROM t_hash WHERE c1 = 123 /* ring-routed-after-kill */";
    conn.query_drop(sql).await.unwrap_or_else(|e| panic!("{sql}: {e:?}\n{}", c.gw_log()));
    let at = ran("/* ring-routed-after-kill */");
    assert_eq!(at.len(), 1, "{at:?}");
    assert_eq!(at[0].0, leader);
    assert_ne!(at[0].1, kept, "the statement ran on the connection the server closed");

    // Again with a transaction begun and not yet sent (its start goes with its first statement):
    // the kept connection gone, the transaction starts on a new one, and its rollback undoes the
    // insert (the start was not lost on the way).
    let kept = at[0].1;
    server.sql(&format!("KILL {kept}")).unwrap();
    let gone = format!("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = {kept}");
    assert!(
        eventually(Duration::from_secs(10), || server.sql(&gone).is_ok_and(|n| n.trim() == "0")),
        "thread {kept} still listed on {leader}"
    );
    let k = (1_000_000..).find(|&k| c.topology().partition_of("t_hash", k) == Some(part)).unwrap();
    let insert = format!("INSERT INTO t_hash (c1, c2, c3) VALUES ({k}, 'ring', 1) /* ring-routed-in-txn */");
    for sql in ["BEGIN", insert.as_str(), "ROLLBACK"] {
        conn.query_drop(sql).await.unwrap_or_else(|e| panic!("{sql}: {e:?}\n{}", c.gw_log()));
    }
    for name in c.topology().server_names() {
        let left = c.server(name).sql(&format!("SELECT COUNT(*) FROM test.t_hash WHERE c1 = {k}")).unwrap();
        assert_eq!(left.trim(), "0", "the insert outlived its rollback on {name}: it ran outside the transaction");
    }
    let at = ran("/* ring-routed-in-txn */");
    assert_eq!(at.len(), 1, "{at:?}");
    assert_eq!(at[0].0, leader);
    assert_ne!(at[0].1, kept, "the insert ran on the connection the server closed");
    conn.disconnect().await.unwrap();
}
