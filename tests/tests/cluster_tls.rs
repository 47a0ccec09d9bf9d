//! Server-leg TLS per cluster (issue #7; README "TLS", "Clusters and tenants"), with real servers.
//!
//! Two `[[clusters]]` in one gateway, each routed through its own sys tenant (a MariaDB playing
//! OceanBase, `gateway_tests::sys_tenant`, rslist form): cluster `c1` (sys tenant `sys1`) has
//! tenant `t1` on `d1` and `d2`, MariaDB servers with TLS (a test CA), and `tls = { mode =
//! "verify_ca", ca = <that CA> }`; cluster `c2` (sys tenant `sys2`) has tenant `t2` on the plain
//! server `e1`, no `tls` of its own, and `[backend] tls` is off. The account `sslu` is `REQUIRE
//! SSL` on d1 and d2 (a plain server connection could not log in there) and a plain account on e1.
//! c1's sys tenant is a TLS server too, and its sys user `proxyro` is `REQUIRE SSL`: the metadata
//! connections follow the cluster's `tls`.
//! Where a statement ran comes from the servers' general logs, the server leg's encryption from
//! `Ssl_cipher` as the server sees it.
//!
//! Run: `cargo test -p gateway-tests --test cluster_tls -- --nocapture`.

use std::net::SocketAddr;
use std::path::Path;

use gateway_tests::mysql::{connect_with, err_code, err_message, query_values, value_string};
use gateway_tests::tls::{ServerTlsFiles, TestCa};
use gateway_tests::{general_log, sys_tenant, Gateway, MariaDb, MariaDbOptions};
use tokio::sync::OnceCell;

const SSL_CIPHER: &str =
    "SELECT CURRENT_USER(), VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = 'Ssl_cipher'";
const USER: &str = "sslu";
const PASSWORD: &str = "ssl-pw";

struct Fixture {
    d1: MariaDb,
    d2: MariaDb,
    e1: MariaDb,
    sys1: MariaDb,
    sys2: MariaDb,
    /// The CA that signed d1's and d2's certificate.
    c1_ca: ServerTlsFiles,
    gw: Gateway,
}

static FIXTURE: OnceCell<Fixture> = OnceCell::const_new();

async fn fixture() -> &'static Fixture {
    FIXTURE.get_or_init(|| async { start().unwrap_or_else(|e| panic!("fixture did not start: {e:#}")) }).await
}

/// A directory for certificates that lives as long as the test process.
fn cert_dir(name: &str) -> anyhow::Result<&'static Path> {
    Ok(Box::leak(gateway_tests::scratch_dir(name)?.into_boxed_path()))
}

fn start() -> anyhow::Result<Fixture> {
    let files = TestCa::new(cert_dir("ctls-c1")?, "c1")?.issue("c1-servers")?;
    let tls = MariaDbOptions { tls: Some(files.clone()), ..MariaDbOptions::default() };
    // Five servers, started in parallel.
    let (d1, d2, e1, sys1, sys2) = std::thread::scope(|s| {
        let d1 = s.spawn(|| MariaDb::start_with("ctls-d1", tls.clone()));
        let d2 = s.spawn(|| MariaDb::start_with("ctls-d2", tls.clone()));
        let e1 = s.spawn(|| MariaDb::start("ctls-e1"));
        let sys1 = s.spawn(|| sys_tenant::start_with("ctls-sys1", tls.clone()));
        let sys2 = s.spawn(|| sys_tenant::start("ctls-sys2"));
        let join = |h: std::thread::ScopedJoinHandle<'_, anyhow::Result<MariaDb>>| {
            h.join().map_err(|_| anyhow::anyhow!("start panicked"))?
        };
        anyhow::Ok((join(d1)?, join(d2)?, join(e1)?, join(sys1)?, join(sys2)?))
    })?;
    for db in [&d1, &d2] {
        db.sql(&format!(
            "CREATE USER '{USER}'@'127.0.0.1' IDENTIFIED BY '{PASSWORD}' REQUIRE SSL; GRANT ALL ON *.* TO '{USER}'@'127.0.0.1'"
        ))?;
    }
    e1.create_user(USER, PASSWORD)?;
    sys1.sql("CREATE USER 'proxyro'@'127.0.0.1' IDENTIFIED BY 'ro-pw' REQUIRE SSL; GRANT SELECT ON oceanbase.* TO 'proxyro'@'127.0.0.1'")?;
    sys1.cli().sql(&cluster_sql("t1", 1002, &[d1.addr(), d2.addr()]))?;
    sys2.cli().sql(&cluster_sql("t2", 1004, &[e1.addr()]))?;
    let gw = Gateway::start(&config(&sys1, &sys2, &e1, &files.ca)?)?;
    Ok(Fixture { d1, d2, e1, sys1, sys2, c1_ca: files, gw })
}

/// The sys-tenant rows of a one-zone cluster whose servers `servers` all host `tenant`.
fn cluster_sql(tenant: &str, id: u64, servers: &[SocketAddr]) -> String {
    let mut sql = sys_tenant::zone_sql("z1", "hz") + &sys_tenant::tenant_sql(id, tenant, "z1");
    for &s in servers {
        sql += &(sys_tenant::server_sql(s, "z1") + &sys_tenant::dummy_sql(tenant, s));
    }
    sql
}

/// The gateway's config: c1 with `tls` verified against `c1_ca`, c2 without, `[backend] tls` off.
fn config(sys1: &MariaDb, sys2: &MariaDb, backend: &MariaDb, c1_ca: &Path) -> anyhow::Result<String> {
    Ok(format!(
        r#"
[listen]
address = "127.0.0.1:{port}"

[backend]
address = "{backend}"

[[users]]
name = "{USER}"
password = "{PASSWORD}"

[log]
level = "info,gateway::clusters=debug"

[routing]
default_tenant = "t2"

[[clusters]]
name = "c1"
rslist = ["{sys1}"]
sys_user = "proxyro"
sys_password = "ro-pw"
tls = {{ mode = "verify_ca", ca = "{ca}" }}

[[clusters]]
name = "c2"
rslist = ["{sys2}"]
sys_user = "root"
"#,
        port = gateway_tests::free_port()?,
        backend = backend.addr(),
        sys1 = sys1.addr(),
        sys2 = sys2.addr(),
        ca = c1_ca.display(),
    ))
}

/// A statement comment that no other statement of this file contains.
fn marker(what: &str) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    format!("ctls-{what}-{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed))
}

/// The servers among `servers` whose general log has `text`.
fn where_ran<'a>(servers: &[(&'a str, &MariaDb)], text: &str) -> Vec<&'a str> {
    let ran = |db: &MariaDb| general_log::read(&db.general_log_path()).iter().any(|e| e.text.contains(text));
    servers.iter().filter(|(_, db)| ran(db)).map(|(n, _)| *n).collect()
}

fn all(f: &Fixture) -> [(&'static str, &MariaDb); 5] {
    [("d1", &f.d1), ("d2", &f.d2), ("e1", &f.e1), ("sys1", &f.sys1), ("sys2", &f.sys2)]
}

/// What one session as `login` through `gw` saw: the server's `CURRENT_USER()` and `Ssl_cipher`
/// for each of `n` statements, with each statement's marker; or the error code and message.
async fn ciphers(gw: &Gateway, login: &str, n: usize) -> Result<Vec<(String, String, String)>, (Option<u16>, String)> {
    let fail = |e: mysql_async::Error| (err_code(&e), err_message(&e));
    let mut conn = connect_with(&gw.url("x", PASSWORD, None), |b| b.user(Some(login))).await.map_err(fail)?;
    let mut seen = Vec::new();
    for _ in 0..n {
        let m = marker(login);
        let rows = query_values(&mut conn, &format!("{SSL_CIPHER} /* {m} */")).await.map_err(fail)?;
        let row: Vec<String> = rows
            .into_iter()
            .next()
            .unwrap_or_default()
            .into_iter()
            .map(|v| value_string(v).unwrap_or_default())
            .collect();
        assert_eq!(row.len(), 2, "one row of two columns for {login}");
        seen.push((m, row[0].clone(), row[1].clone()));
    }
    let _ = conn.disconnect().await;
    Ok(seen)
}

#[tokio::test]
async fn each_cluster_gets_its_own_server_leg_tls() {
    let f = fixture().await;
    let c1 = ciphers(&f.gw, &format!("{USER}@t1#c1"), 6)
        .await
        .unwrap_or_else(|e| panic!("c1: {e:?}\n{}", f.gw.log_tail(3000)));
    for (m, user, cipher) in &c1 {
        let at = where_ran(&all(f), m);
        assert!(at == ["d1"] || at == ["d2"], "t1 of c1 ran on {at:?}");
        assert_eq!(user, "sslu@127.0.0.1");
        assert!(!cipher.is_empty(), "c1's server {at:?} sees no TLS on the gateway's connection");
    }
    let c2 = ciphers(&f.gw, &format!("{USER}@t2#c2"), 3)
        .await
        .unwrap_or_else(|e| panic!("c2: {e:?}\n{}", f.gw.log_tail(3000)));
    for (m, user, cipher) in &c2 {
        assert_eq!(where_ran(&all(f), m), ["e1"], "t2 of c2");
        assert_eq!(user, "sslu@127.0.0.1");
        assert_eq!(cipher, "", "c2 has no TLS of its own and [backend] tls is off");
    }
}

/// A second gateway whose c1 trusts another CA: c1's sys-tenant connection fails its handshake,
/// so c1 cannot be set up and its logins get ERROR 2003 naming the certificate problem, while c2
/// keeps working in the same gateway. (A data-server handshake failure is ERROR 2026: tls.rs for
/// 1:1 sessions, `PoolError::Tls` for pooled ones.)
#[tokio::test]
async fn a_wrong_ca_for_one_cluster_fails_that_cluster_only() {
    let f = fixture().await;
    let other = TestCa::new(cert_dir("ctls-other").expect("cert dir"), "other").expect("other CA");
    let toml = config(&f.sys1, &f.sys2, &f.e1, &other.ca_path()).expect("config");
    assert!(toml.contains(&other.ca_path().display().to_string()) && !toml.contains(&f.c1_ca.ca.display().to_string()));
    let mut gw = Gateway::start(&toml).expect("second gateway");
    for _ in 0..2 {
        let (code, message) = ciphers(&gw, &format!("{USER}@t1#c1"), 1).await.expect_err("c1 with the wrong CA");
        assert_eq!(code, Some(2003), "{message}\n{}", gw.log_tail(3000));
        assert!(
            message.contains("c1") && message.contains("certificate") && message.contains("UnknownIssuer"),
            "{message}"
        );
        let c2 = ciphers(&gw, &format!("{USER}@t2#c2"), 1)
            .await
            .unwrap_or_else(|e| panic!("c2: {e:?}\n{}", gw.log_tail(3000)));
        assert_eq!(where_ran(&all(f), &c2[0].0), ["e1"]);
        assert_eq!(c2[0].2, "");
    }
    assert!(gw.is_alive(), "the gateway survives failed server-leg handshakes");
}
