//! MariaDB's `ed25519` authentication through the gateway, 1:1 and routed: the gateway verifies
//! the client's `client_ed25519` signature (`[[users]] auth_plugin = "ed25519"`) and signs for
//! the server when the server account is ed25519 too; PyMySQL (with PyNaCl, as its
//! `testAuthEd25519`) and the `mariadb` CLI log in, a wrong password gets the server's ERROR 1045.
//! A server account of the plugin that is not in `[[users]]` (`[auth] accounts = "servers"`) gets
//! ERROR 1251: the gateway cannot log in to servers without the clear password.
//!
//! One MariaDB with `auth_ed25519` installed, listening on 127.0.0.1, .2 and .3 (the demo
//! topology's three servers for the routed gateway).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use gateway_tests::clients::{parse_kv, python};
use gateway_tests::{Gateway, GatewayConfig, MariaDb, MariaDbOptions, UserEntry};

struct Fixture {
    db: MariaDb,
    one_to_one: Gateway,
    routed: Gateway,
}

/// `None`: the plugin is not available here (the test prints SKIP).
fn start() -> anyhow::Result<Option<Fixture>> {
    let opts = MariaDbOptions {
        extra_args: vec!["--bind-address=127.0.0.1,127.0.0.2,127.0.0.3".into()],
        ..Default::default()
    };
    let db = MariaDb::start_with("auth-ed25519", opts)?;
    if let Err(e) = db.sql("INSTALL SONAME 'auth_ed25519'") {
        gateway_tests::skip::skip("auth_ed25519", &format!("auth_ed25519 cannot be installed on this MariaDB: {e:#}"));
        return Ok(None);
    }
    db.sql(
        "CREATE USER ed_both@'%' IDENTIFIED VIA ed25519 USING PASSWORD('both-pw'); \
         CREATE USER ed_front@'%' IDENTIFIED BY 'front-pw'; \
         CREATE USER ed_server@'%' IDENTIFIED VIA ed25519 USING PASSWORD('server-pw'); \
         CREATE USER gwmeta@'127.0.0.1' IDENTIFIED BY 'meta-pw'; GRANT SELECT ON mysql.global_priv TO gwmeta@'127.0.0.1'",
    )?;
    let ed = |name: &str, pw: &str| UserEntry { auth_plugin: "ed25519".into(), ..UserEntry::native(name, pw) };
    let mut base = GatewayConfig::new(db.addr())?.user(ed("ed_both", "both-pw")).user(ed("ed_front", "front-pw"));
    base.extra_tables.push("[auth]\naccounts = \"servers\"\nuser = \"gwmeta\"\npassword = \"meta-pw\"\n".into());
    let one_to_one = Gateway::start(&base.to_toml())?;
    let mut routed = GatewayConfig { listen_port: gateway_tests::free_port()?, ..base };
    let port = db.port();
    routed.extra_tables.push(format!(
        "[routing]\ntopology = \"demo\"\nidc = \"idc1\"\nseed = 3\n\
         server_addresses = {{ s1 = \"127.0.0.1:{port}\", s2 = \"127.0.0.2:{port}\", s3 = \"127.0.0.3:{port}\" }}\n"
    ));
    let routed = Gateway::start(&routed.to_toml())?;
    Ok(Some(Fixture { db, one_to_one, routed }))
}

static FIXTURE: OnceLock<Result<Option<Fixture>, String>> = OnceLock::new();

fn fixture() -> Option<&'static Fixture> {
    match FIXTURE.get_or_init(|| start().map_err(|e| format!("{e:#}"))) {
        Ok(f) => f.as_ref(),
        Err(e) => panic!("fixture did not start: {e}"),
    }
}

fn py_login(port: u16, user: &str, password: &str) -> BTreeMap<String, String> {
    let out = python("account_login.py", &["127.0.0.1", &port.to_string(), user, password]).unwrap();
    assert!(out.success(), "account_login.py failed: {}", out.stderr);
    parse_kv(&out.stdout)
}

fn outcome(kv: &BTreeMap<String, String>) -> String {
    match kv.get("result").map(String::as_str) {
        Some("ok") => format!("ok {}", kv["user"]),
        _ => format!("{} {} {}", kv["stage"], kv["error_code"], kv["error_msg"]),
    }
}

#[test]
fn pymysql_and_the_cli_log_in_with_ed25519_in_both_modes() {
    let Some(f) = fixture() else { return };
    for (mode, gw) in [("1:1", &f.one_to_one), ("routed", &f.routed)] {
        let logs = || gw.log_tail(3000);
        // The server's account is ed25519 (the gateway signs for it) or native (it scrambles).
        for (user, pw) in [("ed_both", "both-pw"), ("ed_front", "front-pw")] {
            assert_eq!(outcome(&py_login(gw.port(), user, pw)), format!("ok {user}@%"), "{mode} PyMySQL\n{}", logs());
            let cli = gw.cli().user(user).password(pw).sql("SELECT CURRENT_USER()");
            assert_eq!(cli.ok().map(|s| s.trim().to_string()), Some(format!("{user}@%")), "{mode} CLI\n{}", logs());
        }
        let direct = outcome(&py_login(f.db.port(), "ed_both", "wrong"));
        assert!(direct.starts_with("login 1045 "), "{direct}");
        assert_eq!(outcome(&py_login(gw.port(), "ed_both", "wrong")), direct, "{mode}");
        let server_only = outcome(&py_login(gw.port(), "ed_server", "server-pw"));
        assert!(server_only.starts_with("login 1251 Authentication plugin 'ed25519'"), "{mode}: {server_only}");
    }
}

#[test]
fn the_gateway_asks_the_client_for_client_ed25519() {
    let Some(f) = fixture() else { return };
    // ed_front is a native account on the server: directly, a client without ed25519 support
    // logs in; through the gateway ([[users]] auth_plugin = "ed25519") it is asked for it.
    let args = |port: u16| {
        python("account_login.py", &["127.0.0.1", &port.to_string(), "ed_front", "front-pw", "--no-nacl", "1"])
    };
    assert_eq!(outcome(&parse_kv(&args(f.db.port()).unwrap().stdout)), "ok ed_front@%");
    for gw in [&f.one_to_one, &f.routed] {
        let kv = parse_kv(&args(gw.port()).unwrap().stdout);
        assert!(outcome(&kv).contains("'pynacl' package is required"), "{kv:?}");
    }
}
