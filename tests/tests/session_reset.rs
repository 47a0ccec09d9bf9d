//! COM_CHANGE_USER (mysql_async `Conn::change_user`) and COM_RESET_CONNECTION (`Conn::reset`)
//! through the gateway: afterwards the session state (user variables, temporary tables, SQL-level
//! prepared statements, an open transaction) is gone, the user / database are what they should be,
//! and failures give the same error codes as direct.

use std::sync::OnceLock;

use gateway_tests::mysql::{connect, err_code, query_one};
use gateway_tests::stack::{shared, Stack};
use gateway_tests::UserEntry;
use mysql_async::prelude::*;
use mysql_async::{ChangeUserOpts, Conn};

static STACK: OnceLock<Result<Stack, String>> = OnceLock::new();

fn stack() -> &'static Stack {
    shared(&STACK, || {
        Stack::start(
            "session",
            |db| {
                for (u, p) in [("alice", "alice-pw"), ("bob", "bob-pw"), ("carl", "carl-pw")] {
                    db.create_user(u, p)?;
                }
                db.sql("CREATE DATABASE other; CREATE TABLE test.tx (id INT PRIMARY KEY) ENGINE=InnoDB")?;
                Ok(())
            },
            |c| {
                c.user(UserEntry::native("alice", "alice-pw"))
                    .user(UserEntry::native("bob", "bob-pw"))
                    .user(UserEntry::caching_sha2("carl", "carl-pw"))
            },
        )
    })
}

/// Creates session state: a user variable, a temporary table, an SQL prepared statement.
async fn dirty(c: &mut Conn) {
    c.query_drop("SET @v = 42").await.unwrap();
    c.query_drop("CREATE TEMPORARY TABLE tmp_state (a INT)").await.unwrap();
    c.query_drop("INSERT INTO tmp_state VALUES (1)").await.unwrap();
    c.query_drop("PREPARE sql_ps FROM 'SELECT 1'").await.unwrap();
    assert_eq!(query_one(c, "SELECT @v").await.unwrap().as_deref(), Some("42"));
}

/// Asserts the state made by `dirty` is gone.
async fn assert_clean(c: &mut Conn, what: &str) {
    assert_eq!(query_one(c, "SELECT @v").await.unwrap(), None, "user variable survived {what}");
    let e = c
        .query_drop("SELECT * FROM tmp_state")
        .await
        .err()
        .unwrap_or_else(|| panic!("temporary table survived {what}"));
    assert_eq!(err_code(&e), Some(1146), "{e:?}");
    let e = c.query_drop("EXECUTE sql_ps").await.err().unwrap_or_else(|| panic!("prepared statement survived {what}"));
    assert_eq!(err_code(&e), Some(1243), "{e:?}");
}

async fn gw(s: &Stack, user: &str, pw: &str) -> Conn {
    connect(&s.gw_url(user, pw, Some("test"))).await.unwrap_or_else(|e| panic!("{e:?}\n{}", s.gw_log()))
}

#[tokio::test]
async fn change_user_switches_account_and_clears_state() {
    let s = stack();
    let mut c = gw(s, "alice", "alice-pw").await;
    dirty(&mut c).await;
    let opts = ChangeUserOpts::default()
        .with_user(Some("bob".into()))
        .with_pass(Some("bob-pw".into()))
        .with_db_name(Some("other".into()));
    c.change_user(opts).await.unwrap_or_else(|e| panic!("change_user to bob: {e:?}\n{}", s.gw_log()));
    assert_eq!(query_one(&mut c, "SELECT CURRENT_USER()").await.unwrap().as_deref(), Some("bob@127.0.0.1"));
    assert_eq!(query_one(&mut c, "SELECT DATABASE()").await.unwrap().as_deref(), Some("other"));
    assert_clean(&mut c, "COM_CHANGE_USER").await;
    // The backend saw a change of user or a fresh login as bob.
    let log = s.db.general_log();
    assert!(log.contains("bob@localhost") || log.contains("bob@127.0.0.1"), "backend never saw bob log in");
    // Same user again (mysql_async's default options) also resets the session.
    dirty(&mut c).await;
    c.change_user(ChangeUserOpts::default()).await.unwrap();
    assert_eq!(query_one(&mut c, "SELECT CURRENT_USER()").await.unwrap().as_deref(), Some("bob@127.0.0.1"));
    assert_clean(&mut c, "COM_CHANGE_USER to the same user").await;
    // Prepared statements work on the new session.
    let n: Option<i64> = c.exec_first("SELECT ? * 2", (21,)).await.unwrap();
    assert_eq!(n, Some(42));
    c.disconnect().await.unwrap();
}

#[tokio::test]
async fn change_user_to_caching_sha2_account() {
    let s = stack();
    let mut c = gw(s, "alice", "alice-pw").await;
    dirty(&mut c).await;
    let opts = ChangeUserOpts::default().with_user(Some("carl".into())).with_pass(Some("carl-pw".into()));
    c.change_user(opts).await.unwrap_or_else(|e| panic!("change_user to carl (caching_sha2): {e:?}\n{}", s.gw_log()));
    assert_eq!(query_one(&mut c, "SELECT CURRENT_USER()").await.unwrap().as_deref(), Some("carl@127.0.0.1"));
    assert_clean(&mut c, "COM_CHANGE_USER").await;
    c.disconnect().await.unwrap();
}

#[tokio::test]
async fn change_user_failures_match_direct() {
    let s = stack();
    for (user, pw) in [("bob", "wrong"), ("nobody", "x")] {
        let mut g = gw(s, "alice", "alice-pw").await;
        let mut d = connect(&s.direct_url("alice", "alice-pw", Some("test"))).await.unwrap();
        let opts = ChangeUserOpts::default().with_user(Some(user.into())).with_pass(Some(pw.into()));
        let a = g.change_user(opts.clone()).await.err().map(|e| err_code(&e));
        let b = d.change_user(opts).await.err().map(|e| err_code(&e));
        assert_eq!(a, Some(Some(1045)), "change_user to {user} with a bad password through the gateway");
        assert_eq!(a, b, "gateway vs direct for {user}");
    }
    s.assert_healthy();
}

/// A failed COM_CHANGE_USER keeps the connection and its user, with the session's state cleared,
/// as MariaDB does (`sql_parse.cc`: `thd->change_user()`, then the old security context is
/// restored): the same connection (same `CONNECTION_ID()`) answers as the old user, without the
/// user variable set before — directly and through the gateway alike.
#[tokio::test]
async fn failed_change_user_keeps_the_user_and_clears_the_session() {
    let s = stack();
    for (user, pw) in [("bob", "wrong"), ("nobody", "")] {
        let mut answers = Vec::new();
        for url in [s.direct_url("alice", "alice-pw", Some("test")), s.gw_url("alice", "alice-pw", Some("test"))] {
            let mut c = connect(&url).await.unwrap();
            let id = query_one(&mut c, "SELECT CONNECTION_ID()").await.unwrap();
            c.query_drop("SET @kept = 'old session'").await.unwrap();
            let opts = ChangeUserOpts::default().with_user(Some(user.into())).with_pass(Some(pw.into()));
            let e = c.change_user(opts).await.expect_err("refused");
            assert_eq!(err_code(&e), Some(1045), "change_user to {user}: {e}");
            let after =
                query_one(&mut c, "SELECT CONCAT(CURRENT_USER(), ' ', IFNULL(@kept, 'cleared'), ' ', DATABASE())")
                    .await
                    .unwrap_or_else(|e| panic!("after a refused change_user to {user}: {e}\n{}", s.gw_log()));
            assert_eq!(query_one(&mut c, "SELECT CONNECTION_ID()").await.unwrap(), id, "same connection");
            answers.push(after);
        }
        assert_eq!(answers[0].as_deref(), Some("alice@127.0.0.1 cleared test"), "direct");
        assert_eq!(answers[1], answers[0], "gateway vs direct after a refused change_user to {user}");
    }
    s.assert_healthy();
}

#[tokio::test]
async fn reset_connection_clears_state_keeps_user_and_database() {
    let s = stack();
    let mut c = gw(s, "alice", "alice-pw").await;
    c.query_drop("USE other").await.unwrap();
    dirty(&mut c).await;
    // An open transaction is rolled back by the reset.
    c.query_drop("START TRANSACTION").await.unwrap();
    c.query_drop("INSERT INTO test.tx VALUES (1)").await.unwrap();
    let supported = c.reset().await.unwrap_or_else(|e| panic!("COM_RESET_CONNECTION: {e:?}\n{}", s.gw_log()));
    assert!(supported, "mysql_async did not send COM_RESET_CONNECTION (server version seen: {:?})", c.server_version());
    assert_eq!(query_one(&mut c, "SELECT CURRENT_USER()").await.unwrap().as_deref(), Some("alice@127.0.0.1"));
    assert_eq!(query_one(&mut c, "SELECT DATABASE()").await.unwrap().as_deref(), Some("other"));
    assert_clean(&mut c, "COM_RESET_CONNECTION").await;
    assert_eq!(s.db.sql("SELECT COUNT(*) FROM test.tx").unwrap().trim(), "0", "transaction was not rolled back");
    // Works again afterwards, including prepared statements.
    let n: Option<i64> = c.exec_first("SELECT ? + 1", (1,)).await.unwrap();
    assert_eq!(n, Some(2));
    c.disconnect().await.unwrap();
}
