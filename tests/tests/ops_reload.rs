//! Hot reload and graceful shutdown of a real gateway process in front of a real MariaDB:
//! SIGHUP in the middle of a sysbench run (0 errors, a new account usable right after), an
//! invalid file rejected with the reason in the log (old accounts keep working), and a SIGTERM
//! drain (a running `SELECT SLEEP(2)` completes, new connections are refused, idle sessions are
//! closed, exit status 0 within the grace period).

use std::time::{Duration, Instant};

use gateway_tests::mysql::{connect, query_one};
use gateway_tests::stack::Stack;
use gateway_tests::sysbench::Sysbench;
use gateway_tests::UserEntry;
use mysql_async::prelude::*;

const RELOADED: &str = "configuration reloaded";
const REJECTED: &str = "config reload rejected";

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

/// Whether `user` can log in through the gateway and run SELECT 1.
async fn can_log_in(s: &Stack, user: &str, password: &str) -> bool {
    match connect(&s.gw_url(user, password, None)).await {
        Ok(mut c) => {
            let one = query_one(&mut c, "SELECT 1").await.ok().flatten();
            let _ = c.disconnect().await;
            one.as_deref() == Some("1")
        }
        Err(_) => false,
    }
}

fn global_status(s: &Stack, name: &str) -> u64 {
    let out = s.db.sql(&format!("SHOW GLOBAL STATUS LIKE '{name}'")).unwrap();
    out.split_whitespace().nth(1).and_then(|v| v.parse().ok()).unwrap_or(0)
}

#[test]
fn sighup_during_sysbench_adds_a_user_without_errors() {
    let s = Stack::start(
        "ops-reload",
        |db| {
            db.sql("CREATE DATABASE sb")?;
            db.create_user("newbie", "newbie-pw")
        },
        |c| c,
    )
    .unwrap();
    let mut bench = Sysbench::new(s.gw.port(), "sb");
    bench.threads = 1;
    bench.time = 10;
    bench.prepare().unwrap();
    let rt = rt();
    assert!(!rt.block_on(can_log_in(&s, "newbie", "newbie-pw")), "newbie is not configured yet");

    let commits = global_status(&s, "Com_commit");
    let runner = std::thread::spawn(move || bench.run());
    // In the middle of the run: transactions are going through the gateway.
    let deadline = Instant::now() + Duration::from_secs(30);
    while global_status(&s, "Com_commit") < commits + 20 {
        assert!(Instant::now() < deadline, "sysbench made no progress; log:\n{}", s.gw_log());
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut config = s.config.clone().user(UserEntry::native("newbie", "newbie-pw"));
    s.gw.rewrite_config(&config.to_toml()).unwrap();
    s.gw.reload().unwrap();
    s.gw.wait_log(RELOADED, 1, Duration::from_secs(10)).unwrap();
    assert!(rt.block_on(can_log_in(&s, "newbie", "newbie-pw")), "newbie after reload; log:\n{}", s.gw_log());
    // A restart-only change is reported and not applied; reloads keep coming during the run.
    let listen_port = config.listen_port;
    config.listen_port = gateway_tests::free_port().unwrap();
    s.gw.rewrite_config(&config.to_toml()).unwrap();
    for n in 2..=4 {
        s.gw.reload().unwrap();
        s.gw.wait_log(RELOADED, n, Duration::from_secs(10)).unwrap();
    }
    assert!(s.gw_log().contains("needs restart"), "{}", s.gw_log());
    assert_eq!(s.gw.port(), listen_port);
    s.assert_healthy();

    let report = runner.join().unwrap().unwrap_or_else(|e| panic!("sysbench: {e:#}\nlog:\n{}", s.gw_log()));
    assert!(report.transactions > 0, "{}", report.output);
    assert_eq!((report.ignored_errors, report.reconnects), (0, 0), "{}", report.output);
    assert!(rt.block_on(can_log_in(&s, "newbie", "newbie-pw")));
}

#[test]
fn invalid_reload_is_rejected_and_old_users_still_work() {
    let s = Stack::start(
        "ops-invalid",
        |db| db.create_user("alice", "alice-pw"),
        |c| c.user(UserEntry::native("alice", "alice-pw")),
    )
    .unwrap();
    let rt = rt();
    // A session open across the reloads keeps working.
    let mut open = rt.block_on(connect(&s.gw_url("alice", "alice-pw", None))).unwrap();
    let dup = s.config.clone().user(UserEntry::native("alice", "other"));
    s.gw.rewrite_config(&dup.to_toml()).unwrap();
    s.gw.reload().unwrap();
    s.gw.wait_log(REJECTED, 1, Duration::from_secs(10)).unwrap();
    let log = s.gw_log();
    assert!(log.contains("user \"alice\" is configured twice"), "the log says why:\n{log}");
    s.gw.rewrite_config("[listen\naddress = 1").unwrap();
    s.gw.reload().unwrap();
    s.gw.wait_log(REJECTED, 2, Duration::from_secs(10)).unwrap();
    assert!(s.gw_log().contains("invalid config file"), "{}", s.gw_log());
    assert!(!s.gw_log().contains(RELOADED));
    assert!(rt.block_on(can_log_in(&s, "alice", "alice-pw")), "old users still log in");
    assert!(rt.block_on(can_log_in(&s, "root", "")));
    assert_eq!(rt.block_on(query_one(&mut open, "SELECT 2")).unwrap().as_deref(), Some("2"));
    s.assert_healthy();
}

#[test]
fn sigterm_lets_a_running_statement_finish_and_exits_zero() {
    let mut s = Stack::start(
        "ops-drain",
        |_| Ok(()),
        |mut c| {
            c.listen_extra.push("shutdown_grace_secs = 8".into());
            c
        },
    )
    .unwrap();
    let rt = rt();
    let url = s.gw_url("root", "", None);
    let (result, idle_err) = rt.block_on(async {
        let mut busy = connect(&url).await.unwrap();
        let mut idle = connect(&url).await.unwrap();
        let sleeper = tokio::spawn(async move { busy.query_first::<i64, _>("SELECT SLEEP(2)").await });
        // The statement is running on the server before SIGTERM.
        let deadline = Instant::now() + Duration::from_secs(10);
        while !s.db.sql("SHOW PROCESSLIST").unwrap().contains("SELECT SLEEP(2)") {
            assert!(Instant::now() < deadline, "SLEEP(2) never started");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        s.gw.terminate().unwrap();
        s.gw.wait_log("draining", 1, Duration::from_secs(5)).unwrap();
        // New connections are refused while the statement runs.
        let refused = std::net::TcpStream::connect(s.gw.addr());
        assert!(refused.is_err(), "a new connection was accepted during the drain");
        let result = sleeper.await.unwrap();
        // The idle session was closed at its statement boundary by the gateway, without sending
        // anything: every session has ended before the idle client speaks again.
        s.gw.wait_log("all sessions ended", 1, Duration::from_secs(5))
            .unwrap_or_else(|e| panic!("the idle session was not closed by the drain: {e}"));
        let idle_err = idle.query_drop("SELECT 1").await.err();
        (result, idle_err)
    });
    assert_eq!(result.unwrap_or_else(|e| panic!("SLEEP(2) during the drain: {e}")), Some(0));
    assert!(idle_err.is_some(), "the idle session is closed");
    let status = s.gw.wait_exit(Duration::from_secs(8)).unwrap();
    assert!(status.success(), "exit status {status}; log:\n{}", s.gw_log());
    assert!(s.gw_log().contains("all sessions ended"), "{}", s.gw_log());
}
