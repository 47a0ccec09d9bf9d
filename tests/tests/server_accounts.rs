//! Accounts from the servers (`[auth] accounts = "servers"`): accounts made with `CREATE USER` on
//! MariaDB log in through a 1:1 and a routed gateway with no `[[users]]` entry (PyMySQL, the
//! `mariadb` CLI, mysql_async's COM_CHANGE_USER); a changed password works at once and the old one
//! stops within one refresh; a dropped account is refused; and every refusal (wrong password,
//! unknown user, empty password, locked, expired, host-restricted, ucs2 handshake) carries the
//! code and text the server gives directly.
//!
//! One MariaDB listening on 127.0.0.1, .2 and .3 plays the demo topology's three servers (one
//! accounts table, as a replicated cluster has), so both gateways see the same accounts.

use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use gateway_tests::clients::{parse_kv, python};
use gateway_tests::mysql::{connect_with, err_code, err_message, query_one};
use gateway_tests::{Gateway, GatewayConfig, MariaDb, MariaDbOptions, UserEntry};
use mysql_async::{ChangeUserOpts, Conn};

/// `[auth] refresh_secs` of both gateways.
const REFRESH_SECS: u64 = 2;

struct Fixture {
    db: MariaDb,
    one_to_one: Gateway,
    routed: Gateway,
}

fn auth_table() -> String {
    format!(
        "[auth]\naccounts = \"servers\"\nuser = \"gwmeta\"\npassword = \"meta-pw\"\nrefresh_secs = {REFRESH_SECS}\n\
         negative_cache_secs = 1\n"
    )
}

fn start() -> anyhow::Result<Fixture> {
    let opts = MariaDbOptions {
        extra_args: vec!["--bind-address=127.0.0.1,127.0.0.2,127.0.0.3".into()],
        ..Default::default()
    };
    let db = MariaDb::start_with("server-accounts", opts)?;
    db.sql(
        "CREATE USER gwmeta@'127.0.0.1' IDENTIFIED BY 'meta-pw'; GRANT SELECT ON mysql.global_priv TO gwmeta@'127.0.0.1'; \
         CREATE DATABASE dbc",
    )?;
    // `clash` is also a server account with the same password; the entry's default database
    // tells which one the gateway used.
    let base = GatewayConfig::new(db.addr())?.user(UserEntry::native("clash", "clash-pw").with_database("dbc"));
    let mut one = base.clone();
    one.extra_tables.push(auth_table());
    let mut routed = GatewayConfig { listen_port: gateway_tests::free_port()?, ..base };
    routed.extra_tables.push(auth_table());
    let port = db.port();
    routed.extra_tables.push(format!(
        "[routing]\ntopology = \"demo\"\nidc = \"idc1\"\nseed = 3\n\
         server_addresses = {{ s1 = \"127.0.0.1:{port}\", s2 = \"127.0.0.2:{port}\", s3 = \"127.0.0.3:{port}\" }}\n"
    ));
    let one_to_one = Gateway::start(&one.to_toml())?;
    let routed = Gateway::start(&routed.to_toml())?;
    Ok(Fixture { db, one_to_one, routed })
}

static FIXTURE: OnceLock<Result<Fixture, String>> = OnceLock::new();

fn fixture() -> &'static Fixture {
    match FIXTURE.get_or_init(|| start().map_err(|e| format!("{e:#}"))) {
        Ok(f) => f,
        Err(e) => panic!("fixture did not start: {e}"),
    }
}

impl Fixture {
    /// The two gateways with their names.
    fn gateways(&self) -> [(&'static str, &Gateway); 2] {
        [("1:1", &self.one_to_one), ("routed", &self.routed)]
    }

    fn logs(&self) -> String {
        format!("1:1 log:\n{}\nrouted log:\n{}", self.one_to_one.log_tail(3000), self.routed.log_tail(3000))
    }
}

/// One PyMySQL login to `port` (`tests/py/account_login.py`), as key=value pairs.
fn py_login(port: u16, user: &str, password: &str, extra: &[&str]) -> BTreeMap<String, String> {
    let port = port.to_string();
    let mut args = vec!["127.0.0.1", port.as_str(), user, password];
    args.extend_from_slice(extra);
    let out = python("account_login.py", &args).unwrap();
    assert!(out.success(), "account_login.py failed: {}", out.stderr);
    parse_kv(&out.stdout)
}

/// What a login answered: `ok <CURRENT_USER()>` or `<stage> <code> <message>`.
fn outcome(kv: &BTreeMap<String, String>) -> String {
    match kv.get("result").map(String::as_str) {
        Some("ok") => format!("ok {}", kv["user"]),
        _ => format!("{} {} {}", kv["stage"], kv["error_code"], kv["error_msg"]),
    }
}

/// mysql_async login as `user` (sent as is).
async fn login(port: u16, user: &str, pw: &str, db: Option<&str>) -> Result<Conn, mysql_async::Error> {
    let url = format!("mysql://127.0.0.1:{port}/");
    let (user, pw, db) = (user.to_string(), pw.to_string(), db.map(str::to_string));
    connect_with(&url, |b| b.user(Some(user)).pass(Some(pw)).db_name(db)).await
}

/// Polls `check` until it holds or `within` has passed; returns whether it held.
fn eventually(within: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + within;
    loop {
        if check() {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn server_account_logs_in_through_both_modes_without_a_users_entry() {
    let f = fixture();
    f.db.sql("CREATE USER sa_login@'%' IDENTIFIED BY 'login-pw'; GRANT SELECT ON test.* TO sa_login@'%'").unwrap();
    for (mode, gw) in f.gateways() {
        let kv = py_login(gw.port(), "sa_login", "login-pw", &[]);
        assert_eq!(outcome(&kv), "ok sa_login@%", "{mode} PyMySQL\n{}", f.logs());
        let out = gw.cli().user("sa_login").password("login-pw").sql("SELECT CURRENT_USER()");
        assert_eq!(
            out.map(|s| s.trim().to_string()).ok().as_deref(),
            Some("sa_login@%"),
            "{mode} mariadb CLI\n{}",
            f.logs()
        );
        let kv = py_login(gw.port(), "sa_login", "not-it", &[]);
        assert_eq!(kv["error_code"], "1045", "{mode}: wrong password");
    }
}

#[test]
fn users_entry_wins_on_a_name_clash() {
    let f = fixture();
    f.db.sql("CREATE USER clash@'%' IDENTIFIED BY 'clash-pw'; GRANT ALL ON dbc.* TO clash@'%'").unwrap();
    for (mode, gw) in f.gateways() {
        let kv = py_login(gw.port(), "clash", "clash-pw", &[]);
        assert_eq!(outcome(&kv), "ok clash@%", "{mode}\n{}", f.logs());
        assert_eq!(kv["db"], "dbc", "{mode}: the [[users]] entry's default_database applies");
    }
}

#[test]
fn changed_password_works_at_once_old_one_and_dropped_account_stop_within_a_refresh() {
    let f = fixture();
    f.db.sql("CREATE USER sa_alter@'%' IDENTIFIED BY 'old-pw'").unwrap();
    for (mode, gw) in f.gateways() {
        assert_eq!(outcome(&py_login(gw.port(), "sa_alter", "old-pw", &[])), "ok sa_alter@%", "{mode}\n{}", f.logs());
    }
    f.db.sql("ALTER USER sa_alter@'%' IDENTIFIED BY 'new-pw'").unwrap();
    let direct_old = outcome(&py_login(f.db.port(), "sa_alter", "old-pw", &[]));
    assert!(direct_old.starts_with("login 1045 Access denied for user 'sa_alter'@'127.0.0.1'"), "{direct_old}");
    for (mode, gw) in f.gateways() {
        // The failed check against the cached hash reads the accounts again: no refresh wait.
        assert_eq!(outcome(&py_login(gw.port(), "sa_alter", "new-pw", &[])), "ok sa_alter@%", "{mode}\n{}", f.logs());
        let refused = eventually(Duration::from_secs(REFRESH_SECS * 2 + 2), || {
            outcome(&py_login(gw.port(), "sa_alter", "old-pw", &[])) == direct_old
        });
        assert!(refused, "{mode}: old password still accepted after a refresh\n{}", f.logs());
    }
    f.db.sql("DROP USER sa_alter@'%'").unwrap();
    let direct_dropped = outcome(&py_login(f.db.port(), "sa_alter", "new-pw", &[]));
    for (mode, gw) in f.gateways() {
        let refused = eventually(Duration::from_secs(REFRESH_SECS * 2 + 2), || {
            outcome(&py_login(gw.port(), "sa_alter", "new-pw", &[])) == direct_dropped
        });
        assert!(refused, "{mode}: dropped account still accepted ({direct_dropped})\n{}", f.logs());
    }
}

#[test]
fn refusals_carry_the_servers_codes_and_texts() {
    let f = fixture();
    f.db.sql(
        "CREATE USER sa_sec@'%' IDENTIFIED BY 'sec-pw'; CREATE USER sa_empty@'%'; \
         CREATE USER sa_locked@'%' IDENTIFIED BY 'lock-pw' ACCOUNT LOCK; \
         CREATE USER sa_host@'127.0.0.1' IDENTIFIED BY 'host-pw'; CREATE USER sa_net@'10.%' IDENTIFIED BY 'net-pw'",
    )
    .unwrap();
    let cases: &[(&str, &str, &[&str])] = &[
        ("sa_sec", "wrong", &[]),
        ("sa_nobody", "any", &[]),
        ("sa_nobody", "", &[]),
        ("sa_empty", "", &[]),
        ("sa_empty", "x", &[]),
        ("sa_locked", "lock-pw", &[]),
        ("sa_locked", "wrong", &[]),
        // The client's own address decides, not the gateway's (127.0.0.1 is admitted).
        ("sa_host", "host-pw", &["--bind", "127.0.0.2"]),
        ("sa_host", "host-pw", &["--bind", "127.0.0.1"]),
        ("sa_net", "net-pw", &[]),
        // A ucs2 handshake: MariaDB refuses it at login (ERROR 1231), also when the routed
        // gateway holds a pooled connection of the account (made by the login before).
        ("sa_sec", "sec-pw", &[]),
        ("sa_sec", "sec-pw", &["--charset-id", "35"]),
        ("sa_sec", "sec-pw", &["--charset-id", "101"]),
    ];
    for (user, pw, extra) in cases {
        let direct = outcome(&py_login(f.db.port(), user, pw, extra));
        for (mode, gw) in f.gateways() {
            let through = outcome(&py_login(gw.port(), user, pw, extra));
            assert_eq!(through, direct, "{mode}: {user} / {pw:?} {extra:?}\n{}", f.logs());
        }
    }
}

#[test]
fn expired_password_sandbox_through_one_to_one_refused_at_login_when_routed() {
    let f = fixture();
    f.db.sql("CREATE USER sa_expired@'%' IDENTIFIED BY 'exp-pw' PASSWORD EXPIRE").unwrap();
    // The server keeps such a login in sandbox mode: every statement gets ERROR 1820.
    let direct = outcome(&py_login(f.db.port(), "sa_expired", "exp-pw", &[]));
    assert_eq!(direct, "query 1820 You must SET PASSWORD before executing this statement");
    assert_eq!(outcome(&py_login(f.one_to_one.port(), "sa_expired", "exp-pw", &[])), direct, "{}", f.logs());
    // A routed session cannot offer the sandbox (its statements go to many servers): refused
    // as a server with disconnect_on_expired_password does.
    assert_eq!(
        outcome(&py_login(f.routed.port(), "sa_expired", "exp-pw", &[])),
        "login 1862 Your password has expired. To log in you must change it using a client that supports expired passwords."
    );
    assert!(outcome(&py_login(f.routed.port(), "sa_expired", "wrong", &[])).starts_with("login 1045 "));
    let cli = f.one_to_one.cli().user("sa_expired").password("exp-pw").run("SELECT 1").unwrap();
    assert!(cli.stderr.contains("ERROR 1820"), "mariadb CLI through 1:1: {cli:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn change_user_to_server_accounts_empty_password_and_long_names() {
    let f = fixture();
    let long_user = format!("sa_{}", "u".repeat(77));
    let long_db = format!("db_{}", "d".repeat(61));
    assert_eq!((long_user.len(), long_db.len()), (80, 64));
    f.db.sql(&format!(
        "CREATE USER sa_cu@'%' IDENTIFIED BY 'cu-pw'; CREATE USER sa_cu_empty@'%'; \
         CREATE USER '{long_user}'@'%' IDENTIFIED BY 'long-pw'; CREATE DATABASE {long_db}; \
         GRANT ALL ON {long_db}.* TO '{long_user}'@'%'; GRANT ALL ON {long_db}.* TO sa_cu_empty@'%'; GRANT ALL ON {long_db}.* TO sa_cu@'%'"
    ))
    .unwrap();
    for (mode, gw) in f.gateways() {
        let mut c =
            login(gw.port(), "sa_cu", "cu-pw", None).await.unwrap_or_else(|e| panic!("{mode}: {e}\n{}", f.logs()));
        for (user, pw) in [(long_user.as_str(), "long-pw"), ("sa_cu_empty", ""), ("sa_cu", "cu-pw")] {
            let opts = ChangeUserOpts::default()
                .with_user(Some(user.into()))
                .with_pass(Some(pw.into()))
                .with_db_name(Some(long_db.clone()));
            c.change_user(opts).await.unwrap_or_else(|e| panic!("{mode}: change_user {user}: {e}\n{}", f.logs()));
            let who = query_one(&mut c, "SELECT CONCAT(CURRENT_USER(), ' ', IFNULL(DATABASE(), '-'))").await.unwrap();
            assert_eq!(who, Some(format!("{user}@% {long_db}")), "{mode}");
        }
        // A refused COM_CHANGE_USER keeps the session and its user, as on MariaDB.
        for (user, pw) in [("sa_cu", "wrong"), ("sa_cu_unknown", "x")] {
            let opts = ChangeUserOpts::default().with_user(Some(user.into())).with_pass(Some(pw.into()));
            let e = c.change_user(opts).await.expect_err("wrong password");
            assert_eq!(err_code(&e), Some(1045), "{mode}: {}", err_message(&e));
            let who = query_one(&mut c, "SELECT CURRENT_USER()").await;
            assert_eq!(
                who.ok().flatten().as_deref(),
                Some("sa_cu@%"),
                "{mode}: session after a refused change\n{}",
                f.logs()
            );
        }
        // An account created a moment ago logs in at once (the unknown name makes a fresh read).
        f.db.sql(&format!(
            "CREATE USER sa_cu_new@'%' IDENTIFIED BY 'new-pw'; GRANT ALL ON {long_db}.* TO sa_cu_new@'%'"
        ))
        .unwrap();
        let opts = ChangeUserOpts::default().with_user(Some("sa_cu_new".into())).with_pass(Some("new-pw".into()));
        c.change_user(opts).await.unwrap_or_else(|e| panic!("{mode}: change_user to a new account: {e}\n{}", f.logs()));
        assert_eq!(query_one(&mut c, "SELECT CURRENT_USER()").await.unwrap().as_deref(), Some("sa_cu_new@%"));
        f.db.sql("DROP USER sa_cu_new@'%'").unwrap();
    }
}
