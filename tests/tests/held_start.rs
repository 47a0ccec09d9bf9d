//! Deferred transaction starts fail on their own behalf (issue #13 item 4), in a routed gateway over
//! three real MariaDB servers playing the demo topology (`test.t0` HASH(c1): c1 = 0 → p0, leader
//! s1). `BEGIN` / `START TRANSACTION …` / `XA START` are answered by the gateway and replayed
//! before the next statement; an `XA START` with bad syntax is sent at once so that the server's
//! error answers it, and a start the server refuses at replay fails the statement that triggered
//! the replay with an error saying the transaction did not start — the statement never runs
//! (checked in the servers' general logs and tables), and no other statement's answer is
//! returned for it.

use std::sync::OnceLock;

use gateway_tests::cluster::{Cluster, ClusterOptions, Servers};
use gateway_tests::general_log;
use gateway_tests::mysql::{connect, err_code, err_message, query_one};
use gateway_tests::UserEntry;
use mysql_async::prelude::*;
use mysql_async::Conn;

struct Routed {
    c: Cluster,
}

static STACK: OnceLock<Routed> = OnceLock::new();

fn stack() -> &'static Routed {
    STACK.get_or_init(|| {
        let servers = Servers::start(&ClusterOptions::demo("held")).unwrap_or_else(|e| panic!("servers: {e}"));
        // An account without SUPER / READ_ONLY ADMIN: `read_only` applies to it.
        servers
            .on_every_server(
                "CREATE USER 'bob'@'127.0.0.1' IDENTIFIED BY 'bob-pw'; \
                 GRANT SELECT, INSERT, UPDATE, DELETE ON test.* TO 'bob'@'127.0.0.1'",
            )
            .unwrap_or_else(|e| panic!("bob: {e}"));
        let config = servers.gateway_config().unwrap_or_else(|e| panic!("{e}"));
        let toml = config.user(UserEntry::native("bob", "bob-pw")).to_toml();
        Routed { c: servers.route(&toml).unwrap_or_else(|e| panic!("gateway: {e}")) }
    })
}

impl Routed {
    async fn conn(&self, user: &str, pw: &str) -> Conn {
        connect(&self.c.gw.url(user, pw, Some("test")))
            .await
            .unwrap_or_else(|e| panic!("{e:?}\n{}", self.c.gw.log_tail(3000)))
    }

    /// Rows of `t0` with `c2 = marker`, over all servers, read directly.
    fn rows_with(&self, marker: &str) -> usize {
        self.c
            .servers()
            .map(|(_, s)| {
                let n = s
                    .sql(&format!("SELECT COUNT(*) FROM test.t0 WHERE c2 = '{marker}'"))
                    .unwrap_or_else(|e| panic!("{e}"));
                n.trim().parse::<usize>().unwrap_or_else(|e| panic!("{n:?}: {e}"))
            })
            .sum()
    }

    /// Names (s1…) of the servers whose general log has a statement containing `needle`.
    fn ran_on(&self, needle: &str) -> Vec<String> {
        self.c
            .servers()
            .filter(|(_, s)| general_log::read(&s.general_log_path()).iter().any(|e| e.text.contains(needle)))
            .map(|(name, _)| name.to_string())
            .collect()
    }
}

/// `XA START` with bad syntax is answered by the server's syntax error itself; the next
/// statement runs normally (before the fix: the XA START got OK and the INSERT got 1064, its row
/// never written).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn xa_start_with_bad_syntax_gets_its_own_error() {
    let st = stack();
    let mut c = st.conn("root", "").await;
    for (start, marker) in [("XA START 'z' ONE PHASE", "xa-one-phase"), ("XA START 'y' garbage", "xa-garbage")] {
        let e = c.query_drop(start).await.expect_err(start);
        assert_eq!(err_code(&e), Some(1064), "{start}: {e:?}");
        assert_eq!(st.ran_on(start).len(), 1, "{start} was sent to a server at once");
        c.query_drop(format!("INSERT INTO t0 VALUES (0, '{marker}')"))
            .await
            .unwrap_or_else(|e| panic!("{start}: insert: {e:?}"));
        assert_eq!(st.rows_with(marker), 1, "{start}: the INSERT ran and its row is there");
    }
    // A valid XA START is still held and works end to end.
    c.query_drop("XA START 'ok1'").await.expect("xa start");
    c.query_drop("INSERT INTO t0 VALUES (0, 'xa-ok')").await.expect("insert in xa");
    for s in ["XA END 'ok1'", "XA PREPARE 'ok1'", "XA COMMIT 'ok1'"] {
        c.query_drop(s).await.unwrap_or_else(|e| panic!("{s}: {e:?}"));
    }
    assert_eq!(st.rows_with("xa-ok"), 1);
}

/// `BEGIN` / `START TRANSACTION` with bad syntax are not held: their own error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn begin_with_bad_syntax_gets_its_own_error() {
    let st = stack();
    let mut c = st.conn("root", "").await;
    for start in ["BEGIN garbage", "START TRANSACTION READ SOMETIMES"] {
        let e = c.query_drop(start).await.expect_err(start);
        assert_eq!(err_code(&e), Some(1064), "{start}: {e:?}");
        assert_eq!(query_one(&mut c, "SELECT 7").await.expect("next").as_deref(), Some("7"), "after {start}");
    }
}

/// A duplicate XID is refused at replay: the statement that triggered it fails with XAER_DUPID
/// and a message saying the transaction did not start; it never ran (general log) and its row is
/// not written. The session goes on in autocommit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicate_xid_fails_the_statement_that_replays_it() {
    let st = stack();
    let mut a = st.conn("root", "").await;
    a.query_drop("XA START 'dup1'").await.expect("a: xa start");
    a.query_drop("INSERT INTO t0 VALUES (0, 'dup-a')").await.expect("a: insert (p0, s1)");
    let mut b = st.conn("root", "").await;
    b.query_drop("XA START 'dup1'").await.expect("b: held, valid syntax");
    let insert = "INSERT INTO t0 VALUES (0, 'dup-b')";
    let e = b.query_drop(insert).await.expect_err("the start was refused");
    assert_eq!(err_code(&e), Some(1440), "XAER_DUPID: {e:?}");
    let msg = err_message(&e);
    assert!(msg.contains("the transaction did not start"), "{msg}");
    assert!(msg.contains("XA START 'dup1'") && msg.contains("this statement was not executed"), "{msg}");
    assert!(st.ran_on(insert).is_empty(), "the INSERT was never sent");
    assert_eq!(st.rows_with("dup-b"), 0);
    // Next statements are answered on their own behalf, outside a transaction.
    assert_eq!(query_one(&mut b, "SELECT 8").await.expect("next").as_deref(), Some("8"));
    b.query_drop("INSERT INTO t0 VALUES (0, 'dup-b2')").await.expect("autocommit insert");
    assert_eq!(st.rows_with("dup-b2"), 1);
    for s in ["XA END 'dup1'", "XA ROLLBACK 'dup1'"] {
        a.query_drop(s).await.unwrap_or_else(|e| panic!("{s}: {e:?}"));
    }
    assert_eq!(st.rows_with("dup-a"), 0, "rolled back");
}

/// `START TRANSACTION READ ONLY` then a write: the write's own error (1792); a read-only server
/// (`read_only = 1`, an account without SUPER) refuses `START TRANSACTION READ WRITE` at
/// replay: the INSERT fails with 1290 saying the transaction did not start, and is not run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_transaction_and_read_only_server() {
    let st = stack();
    let mut c = st.conn("bob", "bob-pw").await;
    c.query_drop("START TRANSACTION READ ONLY").await.expect("held");
    let e = c.query_drop("INSERT INTO t0 VALUES (0, 'ro-txn')").await.expect_err("read-only transaction");
    assert_eq!(err_code(&e), Some(1792), "{e:?}");
    c.query_drop("ROLLBACK").await.expect("rollback");
    assert_eq!(st.rows_with("ro-txn"), 0);

    let s1 = st.c.server("s1");
    s1.sql("SET GLOBAL read_only = 1").expect("read_only");
    let start = "START TRANSACTION READ WRITE";
    c.query_drop(start).await.expect("held");
    let insert = "INSERT INTO t0 VALUES (0, 'ro-server')";
    let e = c.query_drop(insert).await.expect_err("read-only server");
    let msg = err_message(&e);
    s1.sql("SET GLOBAL read_only = 0").expect("read_only off");
    assert_eq!(err_code(&e), Some(1290), "{e:?}");
    assert!(msg.contains("the transaction did not start") && msg.contains(start), "{msg}");
    assert!(st.ran_on(insert).is_empty(), "the INSERT was never sent");
    assert_eq!(st.rows_with("ro-server"), 0);
    c.query_drop("ROLLBACK").await.expect("rollback after the failed start");
    assert_eq!(query_one(&mut c, "SELECT 9").await.expect("next").as_deref(), Some("9"));
}
