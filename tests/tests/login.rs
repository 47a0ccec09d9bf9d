//! Login through the gateway: mysql_native_password and caching_sha2_password (full authentication
//! on the first login of an account, fast path afterwards), wrong password and unknown user (1045),
//! connect with a database, `default_database`, an account configured by `password_hash`.
//!
//! One MariaDB + one gateway for the whole file. Each caching_sha2 account is used by one test only,
//! so "first login after gateway start" holds whatever order the tests run in.

use std::sync::OnceLock;

use gateway_tests::clients::{parse_kv, python};
use gateway_tests::mysql::{connect, err_code, err_message, query_one, query_values};
use gateway_tests::stack::{shared, Stack};
use gateway_tests::{native_password_hash, UserEntry};
use mysql_async::prelude::*;

static STACK: OnceLock<Result<Stack, String>> = OnceLock::new();

fn stack() -> &'static Stack {
    shared(&STACK, || {
        Stack::start(
            "login",
            |db| {
                for (u, p) in [
                    ("alice", "alice-pw"),
                    ("carol", "carol-pw"),
                    ("dave", "dave-pw"),
                    ("erin", "erin-pw"),
                    ("frank", "frank-pw"),
                    ("gina", "gina-pw"),
                    ("hank", "hank-pw"),
                ] {
                    db.create_user(u, p)?;
                }
                db.sql("CREATE DATABASE dbf; CREATE TABLE dbf.t (id INT PRIMARY KEY); INSERT INTO dbf.t VALUES (42)")?;
                Ok(())
            },
            |c| {
                c.user(UserEntry::native("alice", "alice-pw"))
                    .user(UserEntry::caching_sha2("carol", "carol-pw"))
                    .user(UserEntry::caching_sha2("dave", "dave-pw"))
                    .user(UserEntry::native_hash("erin", &native_password_hash("erin-pw")))
                    .user(UserEntry::native("frank", "frank-pw").with_database("dbf"))
                    .user(UserEntry::caching_sha2("gina", "gina-pw"))
                    .user(UserEntry::caching_sha2("hank", "hank-pw"))
            },
        )
    })
}

/// Asserts that a login failed with 1045 and the MySQL wording for `user`.
fn assert_denied(res: Result<mysql_async::Conn, mysql_async::Error>, user: &str, s: &Stack) {
    match res {
        Ok(_) => panic!("login as {user} with a bad password succeeded"),
        Err(e) => {
            assert_eq!(
                err_code(&e),
                Some(1045),
                "expected ERROR 1045 for {user}, got {e:?}\ngateway log:\n{}",
                s.gw_log()
            );
            let msg = err_message(&e);
            assert!(msg.starts_with(&format!("Access denied for user '{user}'@'")), "message: {msg}");
            assert!(msg.ends_with("(using password: YES)"), "message: {msg}");
        }
    }
}

#[tokio::test]
async fn native_password_login_matches_direct() {
    let s = stack();
    let marker = format!("login-marker-{}", std::process::id());
    let mut gw =
        connect(&s.gw_url("alice", "alice-pw", None)).await.unwrap_or_else(|e| panic!("login: {e:?}\n{}", s.gw_log()));
    let mut direct = connect(&s.direct_url("alice", "alice-pw", None)).await.unwrap();
    let q = format!("SELECT CURRENT_USER(), USER() LIKE 'alice@%', '{marker}'");
    let a = query_values(&mut gw, &q).await.unwrap();
    let b = query_values(&mut direct, &q).await.unwrap();
    assert_eq!(a, b);
    assert_eq!(query_one(&mut gw, "SELECT CURRENT_USER()").await.unwrap().as_deref(), Some("alice@127.0.0.1"));
    // The statement reached the backend (general log), under some backend thread.
    assert!(s.db.general_log().contains(&marker), "marker not in the backend's general log");
    gw.disconnect().await.unwrap();
    direct.disconnect().await.unwrap();
}

#[test]
fn native_password_login_with_cli_and_pymysql() {
    let s = stack();
    let out = s.gw.cli().user("alice").password("alice-pw").sql("SELECT CURRENT_USER()").unwrap();
    assert_eq!(out.trim(), "alice@127.0.0.1");
    let out =
        python("login.py", &["127.0.0.1", &s.gw.port().to_string(), "alice", "alice-pw", "2"]).unwrap().ok().unwrap();
    let kv = parse_kv(&out);
    assert_eq!(kv.get("error_code"), None, "{out}\n{}", s.gw_log());
    assert_eq!(kv.get("conn1.user").map(String::as_str), Some("alice@127.0.0.1"), "{out}");
    assert_eq!(kv.get("conn2.user").map(String::as_str), Some("alice@127.0.0.1"), "{out}");
    assert_eq!(
        kv.get("conn1.path").map(String::as_str),
        Some("none"),
        "native account must not use caching_sha2: {out}"
    );
}

#[test]
fn caching_sha2_first_login_full_then_fast_pymysql() {
    let s = stack();
    let out =
        python("login.py", &["127.0.0.1", &s.gw.port().to_string(), "carol", "carol-pw", "3"]).unwrap().ok().unwrap();
    let kv = parse_kv(&out);
    assert_eq!(kv.get("error_code"), None, "{out}\n{}", s.gw_log());
    assert_eq!(
        kv.get("conn1.path").map(String::as_str),
        Some("full"),
        "first login must be full authentication: {out}"
    );
    assert_eq!(kv.get("conn2.path").map(String::as_str), Some("fast"), "second login must take the fast path: {out}");
    assert_eq!(kv.get("conn3.path").map(String::as_str), Some("fast"), "{out}");
    for i in 1..=3 {
        assert_eq!(kv.get(&format!("conn{i}.user")).map(String::as_str), Some("carol@127.0.0.1"), "{out}");
    }
}

#[test]
fn caching_sha2_wrong_password_pymysql() {
    let s = stack();
    // gina: a wrong password first (full authentication fails), then the right one twice.
    let port = s.gw.port().to_string();
    let out = python("login.py", &["127.0.0.1", &port, "gina", "wrong", "1"]).unwrap().ok().unwrap();
    let kv = parse_kv(&out);
    assert_eq!(kv.get("error_code").map(String::as_str), Some("1045"), "{out}\n{}", s.gw_log());
    let msg = kv.get("error_msg").cloned().unwrap_or_default();
    assert!(msg.starts_with("Access denied for user 'gina'@'") && msg.ends_with("(using password: YES)"), "{msg}");
    let out = python("login.py", &["127.0.0.1", &port, "gina", "gina-pw", "2"]).unwrap().ok().unwrap();
    let kv = parse_kv(&out);
    assert_eq!(kv.get("error_code"), None, "{out}\n{}", s.gw_log());
    assert_eq!(kv.get("conn1.path").map(String::as_str), Some("full"), "a failed login must not fill the cache: {out}");
    assert_eq!(kv.get("conn2.path").map(String::as_str), Some("fast"), "{out}");
}

#[tokio::test]
async fn caching_sha2_login_mysql_async_twice() {
    let s = stack();
    for round in 1..=2 {
        let mut c = connect(&s.gw_url("dave", "dave-pw", None))
            .await
            .unwrap_or_else(|e| panic!("login {round} as dave: {e:?}\n{}", s.gw_log()));
        assert_eq!(query_one(&mut c, "SELECT CURRENT_USER()").await.unwrap().as_deref(), Some("dave@127.0.0.1"));
        c.disconnect().await.unwrap();
    }
    assert_denied(connect(&s.gw_url("dave", "not-daves", None)).await, "dave", s);
}

#[tokio::test]
async fn wrong_password_is_1045() {
    let s = stack();
    assert_denied(connect(&s.gw_url("alice", "wrong", None)).await, "alice", s);
    assert_denied(connect(&s.gw_url("root", "not-empty", None)).await, "root", s);
    // CLI: exit status and message.
    let out = s.gw.cli().user("alice").password("wrong").run("SELECT 1").unwrap();
    assert!(!out.success());
    assert!(
        out.stderr.contains("ERROR 1045") && out.stderr.contains("Access denied for user 'alice'@"),
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn unknown_user_is_1045() {
    let s = stack();
    assert_denied(connect(&s.gw_url("nobody", "whatever", None)).await, "nobody", s);
    let out = s.gw.cli().user("nobody").password("x").run("SELECT 1").unwrap();
    assert!(
        out.stderr.contains("ERROR 1045") && out.stderr.contains("Access denied for user 'nobody'@"),
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn connect_with_database() {
    let s = stack();
    let mut c =
        connect(&s.gw_url("alice", "alice-pw", Some("dbf"))).await.unwrap_or_else(|e| panic!("{e:?}\n{}", s.gw_log()));
    assert_eq!(query_one(&mut c, "SELECT DATABASE()").await.unwrap().as_deref(), Some("dbf"));
    assert_eq!(query_one(&mut c, "SELECT id FROM t").await.unwrap().as_deref(), Some("42"));
    c.disconnect().await.unwrap();
    // CLI -D
    let out =
        s.gw.cli()
            .user("alice")
            .password("alice-pw")
            .database("dbf")
            .sql("SELECT DATABASE(), COUNT(*) FROM t")
            .unwrap();
    assert_eq!(out.trim(), "dbf\t1");
    // An unknown database is the backend's error 1049, like direct.
    let e = connect(&s.gw_url("alice", "alice-pw", Some("no_such_db")))
        .await
        .expect_err("login into a missing database must fail");
    let d = connect(&s.direct_url("alice", "alice-pw", Some("no_such_db"))).await.expect_err("direct");
    assert_eq!(err_code(&e), err_code(&d), "gateway: {e:?}, direct: {d:?}");
    assert_eq!(err_code(&e), Some(1049));
}

#[tokio::test]
async fn default_database_from_config() {
    let s = stack();
    let mut c = connect(&s.gw_url("frank", "frank-pw", None)).await.unwrap_or_else(|e| panic!("{e:?}\n{}", s.gw_log()));
    assert_eq!(query_one(&mut c, "SELECT DATABASE()").await.unwrap().as_deref(), Some("dbf"));
    c.disconnect().await.unwrap();
    // A database named by the client wins over the configured default.
    let mut c = connect(&s.gw_url("frank", "frank-pw", Some("test"))).await.unwrap();
    assert_eq!(query_one(&mut c, "SELECT DATABASE()").await.unwrap().as_deref(), Some("test"));
    c.disconnect().await.unwrap();
}

#[tokio::test]
async fn password_hash_account() {
    let s = stack();
    // The configured hash is what the server itself computes.
    assert_eq!(s.db.sql("SELECT PASSWORD('erin-pw')").unwrap().trim(), native_password_hash("erin-pw"));
    let mut c = connect(&s.gw_url("erin", "erin-pw", None)).await.unwrap_or_else(|e| panic!("{e:?}\n{}", s.gw_log()));
    assert_eq!(query_one(&mut c, "SELECT CURRENT_USER()").await.unwrap().as_deref(), Some("erin@127.0.0.1"));
    let n: Option<u64> = c.query_first("SELECT COUNT(*) FROM dbf.t").await.unwrap();
    assert_eq!(n, Some(1));
    c.disconnect().await.unwrap();
    assert_denied(connect(&s.gw_url("erin", "erin-wrong", None)).await, "erin", s);
}

#[tokio::test]
async fn client_character_set_reaches_backend() {
    let s = stack();
    let q =
        "SELECT @@character_set_client, @@character_set_connection, @@character_set_results, @@collation_connection";
    let mut g = connect(&s.gw_url("alice", "alice-pw", None)).await.unwrap();
    let mut d = connect(&s.direct_url("alice", "alice-pw", None)).await.unwrap();
    assert_eq!(query_values(&mut g, q).await.unwrap(), query_values(&mut d, q).await.unwrap(), "mysql_async (utf8mb4)");
    g.disconnect().await.unwrap();
    d.disconnect().await.unwrap();
    for cs in ["latin1", "utf8mb4", "binary"] {
        let arg = format!("--default-character-set={cs}");
        let a = s.gw.cli().arg(&arg).sql(q).unwrap();
        let b = s.db.cli().arg(&arg).sql(q).unwrap();
        assert_eq!(a, b, "mariadb CLI with {arg}");
    }
}

/// mysql_async cannot say which caching_sha2 path it took, so a raw probe (src/raw.rs) looks at the
/// gateway's answer to a correct scramble before and after mysql_async's first login of `hank`.
#[tokio::test]
async fn caching_sha2_cache_filled_by_mysql_async_full_auth() {
    use gateway_tests::raw::{probe_caching_sha2, Sha2Path};
    let s = stack();
    let probe = || {
        probe_caching_sha2(s.gw.addr(), "hank", "hank-pw").unwrap_or_else(|e| panic!("probe: {e:#}\n{}", s.gw_log()))
    };
    assert_eq!(probe(), Sha2Path::Full, "before any login of hank the gateway must ask for full authentication");
    assert_eq!(probe(), Sha2Path::Full, "a probe that stops before full authentication must not fill the cache");
    let wrong = probe_caching_sha2(s.gw.addr(), "hank", "wrong").unwrap();
    assert!(matches!(wrong, Sha2Path::Full | Sha2Path::Err(_)), "{wrong:?}");
    for round in 1..=2 {
        let mut c = connect(&s.gw_url("hank", "hank-pw", None))
            .await
            .unwrap_or_else(|e| panic!("login {round}: {e:?}\n{}", s.gw_log()));
        assert_eq!(query_one(&mut c, "SELECT CURRENT_USER()").await.unwrap().as_deref(), Some("hank@127.0.0.1"));
        c.disconnect().await.unwrap();
        assert_eq!(probe(), Sha2Path::Fast, "after mysql_async login {round} the fast path must succeed");
    }
    // A wrong scramble on the fast path is refused (ERR 1045, or full authentication requested).
    match probe_caching_sha2(s.gw.addr(), "hank", "wrong").unwrap() {
        Sha2Path::Err(e) => assert_eq!(e.code, 1045, "{e}"),
        Sha2Path::Full => {}
        other => panic!("wrong password on the fast path: {other:?}"),
    }
}
