//! `cargo xtask bench --tls`: a CA and a server certificate for 127.0.0.1 made at bench time, the
//! `REQUIRE SSL` account sysbench logs in with, and the gateway's TLS tables for both legs.
//!
//! Every TLS target is forced to really use TLS: MariaDB refuses the account over plain TCP (so
//! direct, haproxy's passthrough and the gateway's server leg must be TLS), and the TLS gateway's
//! listener is `tls = "required"` (so sysbench's leg to it must be TLS).

use std::path::{Path, PathBuf};

use anyhow::Context;
use gateway_tests::tls::{ServerTlsFiles, TestCa};
use gateway_tests::{GatewayConfig, MariaDb, UserEntry};

use crate::mariadb_cli::{self, Format, Login};
use crate::sysbench::Endpoint;

/// The account sysbench uses on the TLS targets: `REQUIRE SSL` on every server.
pub const USER: &str = "sbtls";
/// Its password.
pub const PASSWORD: &str = "sbtls";

/// The certificate files of a `--tls` run.
pub struct Certificates {
    /// The servers' (and the TLS gateway's) certificate, key and CA.
    pub server: ServerTlsFiles,
    /// sysbench's working directory: `client-cert.pem`, `client-key.pem` (a second certificate
    /// of the same CA) and `cacert.pem` (the CA), the file names sysbench 1.0 hard-codes.
    pub sysbench_dir: PathBuf,
}

/// Writes a fresh CA (`<dir>/tls/bench-ca.pem`), a certificate for 127.0.0.1 signed by it
/// (`server.pem`, `server.key`) used by every MariaDB server and by the gateway's listener, and
/// sysbench's client files under `<dir>/tls/sysbench/`.
pub fn certificates(dir: &Path) -> anyhow::Result<Certificates> {
    let tls_dir = dir.join("tls");
    let sysbench_dir = tls_dir.join("sysbench");
    std::fs::create_dir_all(&sysbench_dir).with_context(|| format!("creating {}", sysbench_dir.display()))?;
    let ca = TestCa::new(&tls_dir, "bench")?;
    let server = ca.issue("server").context("issuing the bench server certificate")?;
    let client = ca.issue("client").context("issuing sysbench's client certificate")?;
    for (from, to) in [(&client.cert, "client-cert.pem"), (&client.key, "client-key.pem"), (&client.ca, "cacert.pem")] {
        let to = sysbench_dir.join(to);
        std::fs::copy(from, &to).with_context(|| format!("copying {} to {}", from.display(), to.display()))?;
    }
    println!("==> TLS: CA {}, certificate {} (127.0.0.1)", server.ca.display(), server.cert.display());
    Ok(Certificates { server, sysbench_dir })
}

/// Creates the [`USER`] account (`REQUIRE SSL`, all rights on `sbtest`) on `db`.
pub fn create_account(db: &MariaDb) -> anyhow::Result<()> {
    db.cli().sql(&format!(
        "CREATE USER '{USER}'@'%' IDENTIFIED BY '{PASSWORD}' REQUIRE SSL; \
         GRANT ALL ON sbtest.* TO '{USER}'@'%'"
    ))?;
    Ok(())
}

/// Turns `config` into the TLS gateway's: the [`USER`] account, `[listen] tls = "required"`
/// with `[tls]` presenting `files`, and `[backend.tls]` verifying the servers against the CA.
pub fn gateway_config(mut config: GatewayConfig, files: &ServerTlsFiles) -> GatewayConfig {
    config.users.push(UserEntry::native(USER, PASSWORD));
    config.listen_extra.push("tls = \"required\"".into());
    config.extra_tables.push(format!("[tls]\ncert = \"{}\"\nkey = \"{}\"", files.cert.display(), files.key.display()));
    config.extra_tables.push(format!("[backend.tls]\nmode = \"verify_ca\"\nca = \"{}\"", files.ca.display()));
    config
}

/// Where sysbench connects for a TLS target on `port`.
pub fn endpoint(port: u16, certs: &Certificates) -> Endpoint<'_> {
    Endpoint { port, user: USER, password: PASSWORD, ssl_dir: Some(&certs.sysbench_dir) }
}

/// Logs in as [`USER`] over TLS through `port` and prints the cipher the server reports (through
/// the gateway: its server leg's), or a warning.
pub fn check(name: &str, port: u16) {
    let login = Login { user: USER.into(), password: PASSWORD.into(), ssl: true, ..Login::root(port) };
    match mariadb_cli::run(&login, "SHOW STATUS LIKE 'Ssl_cipher'", Format::Batch) {
        Ok(out) => println!("    {name}: TLS login as {USER} ok, server {}", out.trim().replace('\t', " ")),
        Err(e) => println!("    warning: TLS login as {USER} through {name} failed: {e:#}"),
    }
}
