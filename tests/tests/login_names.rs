//! Login names (docs/routing.md §14) through a routed gateway on the demo topology (cluster `demo`,
//! tenant `sys`) over three real MariaDB servers, and through a 1:1 gateway without topology:
//! every form logs in with the `mariadb` CLI and mysql_async and the server sees the bare user;
//! wrong tenants and clusters get ODP's errors; accounts restricted to a tenant; COM_CHANGE_USER.

use std::sync::OnceLock;

use gateway_tests::cluster::{ClusterOptions, Servers};
use gateway_tests::mysql::{connect_with, err_code, err_message, query_one};
use gateway_tests::{Gateway, GatewayConfig, MariaDb, UserEntry};
use mysql_async::{ChangeUserOpts, Conn};

/// The account every server has; the `[[users]]` entry has no tenant.
const ALICE_PW: &str = "alice-pw";
/// An account restricted to tenant `sys` (`[[users]] tenant = "sys"`), caching_sha2.
const CAROL_PW: &str = "carol-pw";
/// An account whose name reads as the separator form (`my` : `app` : `01`).
const DASHED: &str = "my-app-01";

/// The forms of `alice` that must log in on the demo topology.
const ALICE_FORMS: &[&str] = &[
    "alice",
    "alice@sys",
    "alice@SYS",
    "alice#demo",
    "alice@sys#demo",
    "alice@sys#demo:1",
    "demo:sys:alice",
    "demo-sys-alice",
    "demo.sys.alice",
    "demo:sys:alice:1",
    "::alice",
];

struct Routed {
    _servers: Vec<MariaDb>,
    gw: Gateway,
}

fn start_routed() -> anyhow::Result<Routed> {
    let accounts = [("alice", ALICE_PW), ("carol", CAROL_PW), (DASHED, "dash-pw"), ("dora", "dora-pw")];
    let opts = accounts.iter().fold(ClusterOptions::demo("login-names"), |o, (user, pw)| o.account(user, pw));
    let servers = Servers::start(&opts)?;
    servers.on_every_server("CREATE TABLE t (a INT)")?;
    let mut toml = servers
        .gateway_config()?
        .user(UserEntry::native("alice", ALICE_PW))
        .user(UserEntry::native(DASHED, "dash-pw"))
        .user(UserEntry::caching_sha2("dora", "dora-pw"))
        .to_toml();
    toml.push_str(&format!(
        "\n[[users]]\nname = \"carol\"\npassword = \"{CAROL_PW}\"\nauth_plugin = \"caching_sha2_password\"\ntenant = \"sys\"\n"
    ));
    let (gw, servers, _) = servers.route(&toml)?.into_parts();
    Ok(Routed { _servers: servers, gw })
}

static ROUTED: OnceLock<Result<Routed, String>> = OnceLock::new();

fn routed() -> &'static Routed {
    match ROUTED.get_or_init(|| start_routed().map_err(|e| format!("{e:#}"))) {
        Ok(r) => r,
        Err(e) => panic!("routed stack did not start: {e}"),
    }
}

/// mysql_async login with `user` as sent (no URL escaping involved).
async fn login(gw: &Gateway, user: &str, pw: &str) -> Result<Conn, mysql_async::Error> {
    let url = format!("mysql://127.0.0.1:{}/test", gw.port());
    let (user, pw) = (user.to_string(), pw.to_string());
    connect_with(&url, |b| b.user(Some(user)).pass(Some(pw))).await
}

/// The user the server authenticated, without host.
async fn server_user(conn: &mut Conn) -> String {
    query_one(conn, "SELECT SUBSTRING_INDEX(CURRENT_USER(), '@', 1)").await.unwrap().unwrap_or_default()
}

/// The (code, message) of a refused login.
async fn refused(gw: &Gateway, user: &str, pw: &str) -> (Option<u16>, String) {
    match login(gw, user, pw).await {
        Ok(_) => panic!("login {user:?} should have been refused"),
        Err(e) => (err_code(&e), err_message(&e)),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_form_logs_in_and_the_server_sees_the_bare_user() {
    let r = routed();
    for &form in ALICE_FORMS {
        let mut c =
            login(&r.gw, form, ALICE_PW).await.unwrap_or_else(|e| panic!("{form}: {e}\n{}", r.gw.log_tail(3000)));
        assert_eq!(server_user(&mut c).await, "alice", "{form}");
        // Routed with tenant sys: a statement runs on a tenant server.
        assert_eq!(query_one(&mut c, "SELECT COUNT(*) FROM t").await.unwrap().as_deref(), Some("0"), "{form}");
        c.disconnect().await.unwrap();
    }
    for form in ["carol", "carol@sys", "carol@sys#demo", "demo:sys:carol", "carol"] {
        let mut c =
            login(&r.gw, form, CAROL_PW).await.unwrap_or_else(|e| panic!("{form}: {e}\n{}", r.gw.log_tail(3000)));
        assert_eq!(server_user(&mut c).await, "carol", "{form}");
        c.disconnect().await.unwrap();
    }
}

/// The caching_sha2 fast-auth cache is keyed by the account: a full authentication as `dora`
/// lets every other form of `dora` take the fast path (a raw probe tells the paths apart).
#[tokio::test(flavor = "multi_thread")]
async fn sha2_fast_path_is_shared_by_every_form_of_the_account() {
    use gateway_tests::raw::{probe_caching_sha2, Sha2Path};
    let r = routed();
    let probe =
        |name: &str| probe_caching_sha2(r.gw.addr(), name, "dora-pw").unwrap_or_else(|e| panic!("probe {name}: {e:#}"));
    assert_eq!(probe("dora@sys#demo"), Sha2Path::Full, "nothing cached before the first login");
    let mut c =
        login(&r.gw, "demo:sys:dora", "dora-pw").await.unwrap_or_else(|e| panic!("{e}\n{}", r.gw.log_tail(3000)));
    assert_eq!(server_user(&mut c).await, "dora");
    c.disconnect().await.unwrap();
    for name in ["dora", "dora@sys", "dora@sys#demo:1", "demo.sys.dora"] {
        assert_eq!(probe(name), Sha2Path::Fast, "{name}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn mariadb_cli_logs_in_with_every_form() {
    let r = routed();
    for &form in ALICE_FORMS {
        let out = r.gw.cli().user(form).password(ALICE_PW).database("test").sql("SELECT CURRENT_USER()");
        let out = out.unwrap_or_else(|e| panic!("{form}: {e:#}\n{}", r.gw.log_tail(3000)));
        assert!(out.trim().starts_with("alice@"), "{form}: {out}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_tenant_and_cluster_get_odp_errors() {
    let r = routed();
    let (code, msg) = refused(&r.gw, "alice@nosuch", ALICE_PW).await;
    assert_eq!((code, msg.as_str()), (Some(5157), "Unknown tenant 'nosuch'"));
    for name in ["alice@sys#nosuch", "alice#nosuch", "nosuch:sys:alice", "alice@sys#nosuch:3"] {
        let (code, msg) = refused(&r.gw, name, ALICE_PW).await;
        assert_eq!((code, msg.as_str()), (Some(4669), "cluster not exist"), "{name}");
    }
    let out = r.gw.cli().user("alice@nosuch").password(ALICE_PW).run("SELECT 1").unwrap();
    assert!(
        !out.success() && out.stderr.contains("ERROR 5157") && out.stderr.contains("Unknown tenant 'nosuch'"),
        "{out:?}"
    );
    let out = r.gw.cli().user("alice@sys#nosuch").password(ALICE_PW).run("SELECT 1").unwrap();
    assert!(!out.success() && out.stderr.contains("ERROR 4669") && out.stderr.contains("cluster not exist"), "{out:?}");
    // Topology checks come after the password: a wrong one is access denied whatever the name.
    let (code, msg) = refused(&r.gw, "alice@nosuch", "wrong").await;
    assert_eq!(code, Some(1045), "{msg}");
    assert!(msg.starts_with("Access denied for user 'alice@nosuch'@'"), "{msg}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_account_with_a_tenant_logs_in_to_that_tenant_only() {
    let r = routed();
    for name in ["carol@nosuch", "carol@other#demo", "demo:other:carol"] {
        let (code, msg) = refused(&r.gw, name, CAROL_PW).await;
        assert_eq!(code, Some(1045), "{name}: {msg}");
        assert!(msg.starts_with(&format!("Access denied for user '{name}'@'")), "{msg}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn malformed_names_are_refused_with_a_reason() {
    let r = routed();
    for name in ["@sys", "alice@sys#demo:x", "demo:sys:"] {
        let (code, msg) = refused(&r.gw, name, ALICE_PW).await;
        assert_eq!(code, Some(1045), "{name}: {msg}");
        assert!(msg.contains("malformed login name"), "{name}: {msg}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_account_named_like_the_separator_form_is_that_account() {
    let r = routed();
    // `my-app-01` is a configured account: the whole name is the user (ODP would read cluster
    // `my`, tenant `app`, user `01`). With `@` it is the standard form anyway.
    for form in [DASHED, "my-app-01@sys", "my-app-01@sys#demo"] {
        let mut c =
            login(&r.gw, form, "dash-pw").await.unwrap_or_else(|e| panic!("{form}: {e}\n{}", r.gw.log_tail(3000)));
        assert_eq!(server_user(&mut c).await, DASHED, "{form}");
        c.disconnect().await.unwrap();
    }
    // Not an account: the separator form, whose cluster `my` does not exist.
    let (code, _) = refused(&r.gw, "my-app-02", "dash-pw").await;
    assert_eq!(code, Some(1045), "unknown account `02` is refused before the cluster check");
}

#[tokio::test(flavor = "multi_thread")]
async fn change_user_takes_every_form_and_refuses_unknown_tenants() {
    let r = routed();
    let mut c = login(&r.gw, "carol", CAROL_PW).await.unwrap();
    for form in ["alice@sys#demo", "demo:sys:alice", "carol@sys", "alice"] {
        let pw = if form.contains("carol") { CAROL_PW } else { ALICE_PW };
        let opts = ChangeUserOpts::default()
            .with_user(Some(form.into()))
            .with_pass(Some(pw.into()))
            .with_db_name(Some("test".into()));
        c.change_user(opts).await.unwrap_or_else(|e| panic!("change_user {form}: {e}\n{}", r.gw.log_tail(3000)));
        let want = if form.contains("carol") { "carol" } else { "alice" };
        assert_eq!(server_user(&mut c).await, want, "{form}");
    }
    let opts = ChangeUserOpts::default().with_user(Some("alice@nosuch".into())).with_pass(Some(ALICE_PW.into()));
    let e = c.change_user(opts).await.expect_err("unknown tenant");
    assert_eq!((err_code(&e), err_message(&e)), (Some(5157), "Unknown tenant 'nosuch'".to_string()));
}

#[tokio::test(flavor = "multi_thread")]
async fn one_to_one_gateway_strips_the_tenant_for_mariadb() {
    let db = MariaDb::start("login-names-1to1").unwrap();
    db.sql("CREATE TABLE t (a INT)").unwrap();
    db.create_user("alice", ALICE_PW).unwrap();
    let gw =
        Gateway::start(&GatewayConfig::new(db.addr()).unwrap().user(UserEntry::native("alice", ALICE_PW)).to_toml())
            .unwrap();
    // Without a topology there is no cluster or tenant to check: every form is the account.
    for form in ["alice", "alice@sys", "alice@t1#c1:7", "c1:t1:alice"] {
        let mut c = login(&gw, form, ALICE_PW).await.unwrap_or_else(|e| panic!("{form}: {e}\n{}", gw.log_tail(3000)));
        assert_eq!(server_user(&mut c).await, "alice", "{form}");
        let opts = ChangeUserOpts::default().with_user(Some(form.into())).with_pass(Some(ALICE_PW.into()));
        c.change_user(opts).await.unwrap_or_else(|e| panic!("change_user {form}: {e}"));
        assert_eq!(server_user(&mut c).await, "alice", "{form} after COM_CHANGE_USER");
        c.disconnect().await.unwrap();
        let out = gw.cli().user(form).password(ALICE_PW).sql("SELECT CURRENT_USER()").unwrap();
        assert!(out.trim().starts_with("alice@"), "{form}: {out}");
    }
}
