//! TLS on both legs with real clients and a real MariaDB: the `mariadb` CLI, PyMySQL and
//! mysql_async over TLS to the gateway; `require_tls` accounts and a `tls = "required"`
//! listener refusing plain clients; caching_sha2_password full authentication over TLS (clear
//! text, no RSA); a TLS MariaDB behind `[backend] tls` (`verify_ca`, a wrong CA, a `REQUIRE SSL`
//! account); and certificate reload on SIGHUP (a bad key file rejected, the old certificate kept).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use gateway_tests::clients::{parse_kv, python};
use gateway_tests::cluster::{ClusterOptions, Servers};
use gateway_tests::mysql::{connect, connect_with, err_code, err_message, query_one};
use gateway_tests::stack::{self, Stack};
use gateway_tests::tls::{ServerTlsFiles, TestCa};
use gateway_tests::{Gateway, GatewayConfig, MariaDbOptions, UserEntry};
use mysql_async::SslOpts;

const SSL_CIPHER: &str =
    "SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'Ssl_cipher'";

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

/// A directory for certificates that lives as long as the test process.
fn cert_dir(name: &str) -> &'static Path {
    let dir = gateway_tests::scratch_dir(name).unwrap();
    Box::leak(dir.into_boxed_path())
}

/// `[tls]` of a gateway presenting `files`.
fn tls_table(files: &ServerTlsFiles) -> String {
    format!("[tls]\ncert = \"{}\"\nkey = \"{}\"", files.cert.display(), files.key.display())
}

/// PyMySQL login through `port`: over TLS verified against `ca`, or plain (`None`).
fn probe(port: u16, user: &str, password: &str, ca: Option<&Path>, sql: &str) -> BTreeMap<String, String> {
    let ca = ca.map_or("-".to_string(), |p| p.display().to_string());
    let out =
        python("tls_probe.py", &["127.0.0.1", &port.to_string(), user, password, &ca, sql]).unwrap().ok().unwrap();
    parse_kv(&out)
}

/// The client-leg stack: plain MariaDB, a gateway with a certificate (mode "optional" by default).
struct ClientLeg {
    s: Stack,
    files: ServerTlsFiles,
}

fn client_leg() -> &'static ClientLeg {
    static CELL: OnceLock<Result<ClientLeg, String>> = OnceLock::new();
    let started = CELL.get_or_init(|| {
        let start = || -> anyhow::Result<ClientLeg> {
            let ca = TestCa::new(cert_dir("tls-client-leg"), "client")?;
            let files = ca.issue("gateway")?;
            let table = tls_table(&files);
            let s = Stack::start(
                "tls-client",
                |db| {
                    db.create_user("tlsonly", "tls-pw")?;
                    db.create_user("sha2", "sha2-pw")?;
                    db.create_user("plainok", "plain-pw")
                },
                |mut c| {
                    c.extra_tables.push(table);
                    c.user(UserEntry::native("tlsonly", "tls-pw").require_tls())
                        .user(UserEntry::caching_sha2("sha2", "sha2-pw"))
                        .user(UserEntry::native("plainok", "plain-pw"))
                },
            )?;
            Ok(ClientLeg { s, files })
        };
        start().map_err(|e| format!("{e:#}"))
    });
    match started {
        Ok(c) => c,
        Err(e) => panic!("client-leg stack did not start: {e}"),
    }
}

#[test]
fn mariadb_cli_over_tls_sees_a_cipher_and_its_statements_run() {
    let c = client_leg();
    let cli =
        c.s.gw.cli().arg("--ssl").arg(&format!("--ssl-ca={}", c.files.ca.display())).arg("--ssl-verify-server-cert");
    let out = cli.sql("status; CREATE TABLE test.tls_cli (x INT); INSERT INTO test.tls_cli VALUES (7)").unwrap();
    assert!(out.contains("Cipher in use is"), "the CLI reports no TLS cipher:\n{out}");
    assert_eq!(c.s.db.sql("SELECT SUM(x) FROM test.tls_cli").unwrap().trim(), "7");
    // The same CLI with --skip-ssl still gets in (mode "optional"), without a cipher.
    let plain = c.s.gw.cli().arg("--skip-ssl").sql("status").unwrap();
    assert!(plain.contains("Not in use"), "plain CLI session:\n{plain}");
}

#[test]
fn pymysql_over_tls_has_an_ssl_socket_and_runs_queries() {
    let c = client_leg();
    let kv = probe(c.s.gw.port(), "plainok", "plain-pw", Some(&c.files.ca), "SELECT CURRENT_USER()");
    assert_eq!(kv.get("tls").map(String::as_str), Some("1"), "{kv:?}\n{}", c.s.gw_log());
    assert!(kv["tls.version"].starts_with("TLSv1."), "{kv:?}");
    assert_eq!(kv["tls.peer_sha256"], c.files.sha256, "the gateway serves the configured certificate");
    assert_eq!(kv["sql.result"], "plainok@127.0.0.1");
}

#[test]
fn require_tls_account_is_refused_over_plain_tcp_and_accepted_over_tls() {
    let c = client_leg();
    let port = c.s.gw.port();
    let plain = probe(port, "tlsonly", "tls-pw", None, "");
    assert_eq!(plain.get("error_code").map(String::as_str), Some("1045"), "{plain:?}");
    c.s.gw.wait_log("require_tls", 1, Duration::from_secs(10)).unwrap();
    let tls = probe(port, "tlsonly", "tls-pw", Some(&c.files.ca), "SELECT 1");
    assert_eq!(
        (tls.get("tls").map(String::as_str), tls.get("sql.result").map(String::as_str)),
        (Some("1"), Some("1")),
        "{tls:?}"
    );

    // mysql_async: refused without TLS, in with SslOpts (which a require_tls login proves).
    rt().block_on(async {
        let url = c.s.gw_url("tlsonly", "tls-pw", None);
        let Err(e) = connect(&url).await else { panic!("plain mysql_async login of a require_tls account succeeded") };
        assert_eq!(err_code(&e), Some(1045), "{}", err_message(&e));
        let ssl = SslOpts::default().with_root_certs(vec![c.files.ca.clone().into()]);
        let mut conn = connect_with(&url, |b| b.ssl_opts(Some(ssl))).await.unwrap();
        assert_eq!(query_one(&mut conn, "SELECT CURRENT_USER()").await.unwrap().as_deref(), Some("tlsonly@127.0.0.1"));
        conn.disconnect().await.unwrap();
    });
}

#[test]
fn caching_sha2_full_authentication_over_tls_is_clear_text_then_fast() {
    let c = client_leg();
    // Only this test logs in as sha2: the gateway's cache is empty, the first login is full.
    let first = probe(c.s.gw.port(), "sha2", "sha2-pw", Some(&c.files.ca), "SELECT CURRENT_USER()");
    assert_eq!(first.get("auth.path").map(String::as_str), Some("full_clear"), "{first:?}\n{}", c.s.gw_log());
    assert_eq!(first["sql.result"], "sha2@127.0.0.1");
    let second = probe(c.s.gw.port(), "sha2", "sha2-pw", Some(&c.files.ca), "SELECT 1");
    assert_eq!(second.get("auth.path").map(String::as_str), Some("fast"), "{second:?}");
}

#[test]
fn required_listener_refuses_a_plain_client_with_3159() {
    let c = client_leg();
    let mut config = GatewayConfig::new(c.s.db.addr()).unwrap().user(UserEntry::native("plainok", "plain-pw"));
    config.listen_extra.push("tls = \"required\"".into());
    config.extra_tables.push(tls_table(&c.files));
    let gw = Gateway::start(&config.to_toml()).unwrap();
    let plain = probe(gw.port(), "plainok", "plain-pw", None, "");
    assert_eq!(plain.get("error_code").map(String::as_str), Some("3159"), "{plain:?}");
    assert!(plain["error_msg"].contains("insecure transport"), "{plain:?}");
    let tls = probe(gw.port(), "plainok", "plain-pw", Some(&c.files.ca), "SELECT 1");
    assert_eq!(tls.get("sql.result").map(String::as_str), Some("1"), "{tls:?}\n{}", gw.log_tail(3000));
}

/// Two listeners of one gateway: `[listen] address` (TLS optional) and an extra address whose
/// `[[listen.dialled]]` entry requires TLS. The mode follows the address the client dialled.
#[test]
fn each_listener_address_has_its_own_tls_mode() {
    let c = client_leg();
    let extra = gateway_tests::free_port().unwrap();
    let mut config = GatewayConfig::new(c.s.db.addr()).unwrap().user(UserEntry::native("plainok", "plain-pw"));
    config.listen_extra.push(format!("extra_addresses = [\"127.0.0.1:{extra}\"]"));
    config.extra_tables.push(tls_table(&c.files));
    config.extra_tables.push(format!("[[listen.dialled]]\naddress = \"127.0.0.1:{extra}\"\ntls = \"required\""));
    let gw = Gateway::start(&config.to_toml()).unwrap();
    let main_plain = probe(gw.port(), "plainok", "plain-pw", None, "SELECT 1");
    assert_eq!(main_plain.get("sql.result").map(String::as_str), Some("1"), "{main_plain:?}\n{}", gw.log_tail(3000));
    assert_eq!(main_plain.get("tls").map(String::as_str), Some("0"), "{main_plain:?}");
    let extra_plain = probe(extra, "plainok", "plain-pw", None, "SELECT 1");
    assert_eq!(extra_plain.get("error_code").map(String::as_str), Some("3159"), "{extra_plain:?}");
    let extra_tls = probe(extra, "plainok", "plain-pw", Some(&c.files.ca), "SELECT 1");
    assert_eq!(extra_tls.get("sql.result").map(String::as_str), Some("1"), "{extra_tls:?}\n{}", gw.log_tail(3000));
    assert_eq!(extra_tls.get("tls").map(String::as_str), Some("1"), "{extra_tls:?}");
}

#[test]
fn certificate_reload_serves_the_new_certificate_and_rejects_a_bad_key() {
    let c = client_leg();
    let ca = TestCa::new(cert_dir("tls-reload"), "reload").unwrap();
    let old = ca.issue("gw").unwrap();
    let mut config = GatewayConfig::new(c.s.db.addr()).unwrap().user(UserEntry::native("plainok", "plain-pw"));
    config.extra_tables.push(tls_table(&old));
    let gw = Gateway::start(&config.to_toml()).unwrap();
    let seen = |gw: &Gateway| {
        probe(gw.port(), "plainok", "plain-pw", Some(&old.ca), "SELECT 1").get("tls.peer_sha256").cloned()
    };
    assert_eq!(seen(&gw).as_deref(), Some(old.sha256.as_str()));

    let new = ca.issue("gw").unwrap();
    assert_ne!(new.sha256, old.sha256);
    gw.reload().unwrap();
    gw.wait_log("configuration reloaded", 1, Duration::from_secs(10)).unwrap();
    assert_eq!(seen(&gw).as_deref(), Some(new.sha256.as_str()), "after SIGHUP the new certificate is served");

    std::fs::write(&new.key, "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n").unwrap();
    gw.reload().unwrap();
    gw.wait_log("config reload rejected", 1, Duration::from_secs(10)).unwrap();
    let log = std::fs::read_to_string(gw.log_path()).unwrap();
    assert!(log.lines().any(|l| l.contains("config reload rejected") && l.contains("gw.key")), "{log}");
    assert_eq!(seen(&gw).as_deref(), Some(new.sha256.as_str()), "a rejected reload keeps the certificate in force");
}

/// The server-leg stack: MariaDB with TLS and a `REQUIRE SSL` account, a gateway in front of
/// it with `[backend] tls` `verify_ca` against the right CA; and the server's files.
fn server_leg() -> (&'static Stack, &'static ServerTlsFiles) {
    static CELL: OnceLock<Result<Stack, String>> = OnceLock::new();
    static FILES: OnceLock<ServerTlsFiles> = OnceLock::new();
    let files = FILES.get_or_init(|| TestCa::new(cert_dir("tls-server-leg"), "db").unwrap().issue("mariadb").unwrap());
    let s = stack::shared(&CELL, || {
        let opts = MariaDbOptions { tls: Some(files.clone()), ..MariaDbOptions::default() };
        Stack::start_with(
            "tls-server",
            opts,
            |db| {
                db.sql("CREATE USER 'sslonly'@'127.0.0.1' IDENTIFIED BY 'ssl-pw' REQUIRE SSL; GRANT ALL ON *.* TO 'sslonly'@'127.0.0.1'")?;
                Ok(())
            },
            |mut c| {
                c.extra_tables.push(backend_tls("verify_ca", &files.ca));
                c.user(UserEntry::native("sslonly", "ssl-pw"))
            },
        )
    });
    (s, files)
}

fn backend_tls(mode: &str, ca: &Path) -> String {
    format!("[backend.tls]\nmode = \"{mode}\"\nca = \"{}\"", ca.display())
}

/// `SSL_CIPHER` through `url` (the server's view of the gateway's connection), or the error.
async fn server_cipher(url: &str) -> Result<String, (Option<u16>, String)> {
    let mut conn = connect(url).await.map_err(|e| (err_code(&e), err_message(&e)))?;
    let cipher = query_one(&mut conn, SSL_CIPHER).await.map_err(|e| (err_code(&e), err_message(&e)))?;
    let _ = conn.disconnect().await;
    Ok(cipher.unwrap_or_default())
}

#[test]
fn verify_ca_server_leg_is_encrypted_and_serves_a_require_ssl_account() {
    let (s, _) = server_leg();
    rt().block_on(async {
        let cipher = server_cipher(&s.gw_url("root", "", None)).await.unwrap();
        assert!(!cipher.is_empty(), "the server sees no TLS on the gateway's connection\n{}", s.gw_log());
        let cipher = server_cipher(&s.gw_url("sslonly", "ssl-pw", None)).await;
        assert!(cipher.is_ok_and(|c| !c.is_empty()), "REQUIRE SSL account through a TLS server leg\n{}", s.gw_log());
    });
    // The CLI, plain on the client leg, gets the same.
    assert!(!s.gw.cli().sql(SSL_CIPHER).unwrap().trim().is_empty());
}

#[test]
fn server_leg_off_leaves_a_require_ssl_account_refused_by_the_server() {
    let (s, _) = server_leg();
    let config = GatewayConfig::new(s.db.addr()).unwrap().user(UserEntry::native("sslonly", "ssl-pw"));
    let gw = Gateway::start(&config.to_toml()).unwrap();
    rt().block_on(async {
        assert_eq!(server_cipher(&gw.url("root", "", None)).await.unwrap(), "", "plain server leg");
        let refused = server_cipher(&gw.url("sslonly", "ssl-pw", None)).await.unwrap_err();
        assert_eq!(refused.0, Some(1045), "{refused:?}");
    });
}

#[test]
fn verify_ca_with_the_wrong_ca_fails_clearly_and_the_gateway_keeps_serving() {
    let (s, files) = server_leg();
    let other = TestCa::new(cert_dir("tls-wrong-ca"), "other").unwrap();
    let mut config = GatewayConfig::new(s.db.addr()).unwrap();
    config.extra_tables.push(backend_tls("verify_ca", &other.ca_path()));
    let mut gw = Gateway::start(&config.to_toml()).unwrap();
    rt().block_on(async {
        for _ in 0..2 {
            let (code, message) = server_cipher(&gw.url("root", "", None)).await.unwrap_err();
            assert_eq!(code, Some(2026), "{message}");
            assert!(message.contains("TLS to backend") && message.contains("certificate"), "{message}");
        }
    });
    assert!(gw.is_alive(), "the gateway survives failed server-leg handshakes");
    // The same process, given the right CA by a reload, serves again.
    config.extra_tables = vec![backend_tls("verify_ca", &files.ca)];
    gw.rewrite_config(&config.to_toml()).unwrap();
    gw.reload().unwrap();
    gw.wait_log("configuration reloaded", 1, Duration::from_secs(10)).unwrap();
    let cipher = rt().block_on(server_cipher(&gw.url("root", "", None)));
    assert!(cipher.is_ok_and(|c| !c.is_empty()), "{}", gw.log_tail(3000));
}

/// Routed sessions: three TLS MariaDB servers playing the demo topology (test.t0 HASH(c1)
/// PARTITIONS 8, even partitions led by s1, odd by s2), the account `REQUIRE SSL` on every
/// server, `[backend] tls` `verify_identity` (the certificate names 127.0.0.1): each statement
/// runs on its partition's leader over a TLS pooled connection (a plain one could not log in).
#[test]
fn routed_statements_run_over_tls_pool_connections() {
    let files = TestCa::new(cert_dir("tls-routed"), "routed").unwrap().issue("servers").unwrap();
    let setup = "UPDATE t0 SET c2 = 'even' WHERE c1 = 0; UPDATE t0 SET c2 = 'odd' WHERE c1 = 123; \
        CREATE USER 'alice'@'127.0.0.1' IDENTIFIED BY 'alice-pw' REQUIRE SSL; GRANT ALL ON *.* TO 'alice'@'127.0.0.1'";
    let mut opts = ClusterOptions::demo("tls-routed");
    opts.tls = Some(files.clone());
    let demo = Servers::start(&opts).unwrap();
    demo.on_every_server(setup).unwrap();
    let mut toml = demo.gateway_config().unwrap().user(UserEntry::native("alice", "alice-pw")).to_toml();
    toml += &format!("\n{}\n", backend_tls("verify_identity", &files.ca));
    let (gw, servers, _) = demo.route(&toml).unwrap().into_parts();
    rt().block_on(async {
        let mut c = connect(&gw.url("alice", "alice-pw", Some("test")))
            .await
            .unwrap_or_else(|e| panic!("{e:?}\n{}", gw.log_tail(4000)));
        let even = query_one(&mut c, "SELECT c2 FROM t0 WHERE c1 = 0 /* tls_even */").await.unwrap();
        let odd = query_one(&mut c, "SELECT c2 FROM t0 WHERE c1 = 123 /* tls_odd */").await.unwrap();
        assert_eq!((even.as_deref(), odd.as_deref()), (Some("even"), Some("odd")), "{}", gw.log_tail(4000));
        let cipher = query_one(&mut c, SSL_CIPHER).await.unwrap().unwrap_or_default();
        assert!(!cipher.is_empty(), "the server sees no TLS on the pooled connection");
        c.disconnect().await.unwrap();
    });
    let ran = |marker: &str| -> Vec<usize> { (0..3).filter(|&i| servers[i].general_log().contains(marker)).collect() };
    assert_eq!(ran("tls_even"), vec![0], "partition 0's leader is s1");
    assert_eq!(ran("tls_odd"), vec![1], "partition 3's leader is s2");
}
