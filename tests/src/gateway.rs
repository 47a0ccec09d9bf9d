//! The gateway process under test: configuration builder, binary lookup / one-time build, start
//! with `gateway run --config FILE`, readiness (greeting on the listen port), stop by PID on `Drop`.
//!
//! The binary is `target/debug/gateway` (or `$GATEWAY_BIN`). Unless `GATEWAY_BIN` or
//! `GATEWAY_NO_BUILD=1` is set, the harness runs `cargo build -p gateway` once per process first, so
//! `cargo test -p gateway-tests` always tests the current source.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

use crate::process;

/// One `[[users]]` entry.
#[derive(Debug, Clone)]
pub struct UserEntry {
    /// Account name.
    pub name: String,
    /// Plaintext password (`password = ...`); `None` with `password_hash` set.
    pub password: Option<String>,
    /// `password_hash = "*<40 hex>"`.
    pub password_hash: Option<String>,
    /// `mysql_native_password` or `caching_sha2_password`.
    pub auth_plugin: String,
    /// `default_database`.
    pub default_database: Option<String>,
    /// `admin = true` (may run the admin commands).
    pub admin: bool,
    /// `require_tls = true` (plain-TCP logins refused).
    pub require_tls: bool,
}

impl UserEntry {
    /// A `mysql_native_password` account with a plaintext password.
    pub fn native(name: &str, password: &str) -> Self {
        UserEntry {
            name: name.into(),
            password: Some(password.into()),
            password_hash: None,
            auth_plugin: "mysql_native_password".into(),
            default_database: None,
            admin: false,
            require_tls: false,
        }
    }
    /// A `caching_sha2_password` account.
    pub fn caching_sha2(name: &str, password: &str) -> Self {
        UserEntry { auth_plugin: "caching_sha2_password".into(), ..Self::native(name, password) }
    }
    /// A `mysql_native_password` account given only by its hash.
    pub fn native_hash(name: &str, hash: &str) -> Self {
        UserEntry { password: None, password_hash: Some(hash.into()), ..Self::native(name, "") }
    }
    /// Sets `default_database`.
    pub fn with_database(mut self, db: &str) -> Self {
        self.default_database = Some(db.into());
        self
    }
    /// Sets `admin = true`.
    pub fn admin(mut self) -> Self {
        self.admin = true;
        self
    }
    /// Sets `require_tls = true`.
    pub fn require_tls(mut self) -> Self {
        self.require_tls = true;
        self
    }
}

/// Builder for the gateway's TOML configuration.
#[derive(Debug, Clone)]
pub struct GatewayConfig {
    /// Listen port on 127.0.0.1 (a free one by default).
    pub listen_port: u16,
    /// `[backend] address`.
    pub backend: SocketAddr,
    /// `[listen] max_packet_size`, if set.
    pub max_packet_size: Option<usize>,
    /// `[[users]]`.
    pub users: Vec<UserEntry>,
    /// `[log] level`.
    pub log_level: String,
    /// More `key = value` lines of `[listen]` (e.g. `shutdown_grace_secs = 5`).
    pub listen_extra: Vec<String>,
    /// More tables, appended at the end (e.g. `[tls]` or `[backend.tls]` with their keys).
    pub extra_tables: Vec<String>,
}

impl GatewayConfig {
    /// A config on a free port in front of `backend`, with `root` (empty password, native).
    pub fn new(backend: SocketAddr) -> anyhow::Result<Self> {
        Ok(GatewayConfig {
            listen_port: crate::free_port()?,
            backend,
            max_packet_size: None,
            users: vec![UserEntry::native("root", "")],
            // `GATEWAY_TEST_LOG` (a `[log] level`, e.g. "debug") to see more when chasing a failure.
            log_level: std::env::var("GATEWAY_TEST_LOG").unwrap_or_else(|_| "info".into()),
            // `GATEWAY_TEST_SESSION_IO` (`epoll` or `io_uring`): every test's 1:1 sessions on that
            // `[listen] session_io`, to run the suite on either (unset: the default, io_uring).
            listen_extra: std::env::var("GATEWAY_TEST_SESSION_IO")
                .map(|io| vec![format!("session_io = \"{io}\"")])
                .unwrap_or_default(),
            extra_tables: Vec::new(),
        })
    }
    /// Adds a user.
    pub fn user(mut self, u: UserEntry) -> Self {
        self.users.push(u);
        self
    }
    /// Sets `max_packet_size`.
    pub fn max_packet_size(mut self, n: usize) -> Self {
        self.max_packet_size = Some(n);
        self
    }
    /// Renders the TOML text.
    pub fn to_toml(&self) -> String {
        let q = |s: &str| format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""));
        let mut t = format!("[listen]\naddress = \"127.0.0.1:{}\"\n", self.listen_port);
        if let Some(n) = self.max_packet_size {
            t.push_str(&format!("max_packet_size = {n}\n"));
        }
        for line in &self.listen_extra {
            t.push_str(line);
            t.push('\n');
        }
        t.push_str(&format!("\n[backend]\naddress = \"{}\"\n", self.backend));
        for u in &self.users {
            t.push_str(&format!("\n[[users]]\nname = {}\n", q(&u.name)));
            if let Some(p) = &u.password {
                t.push_str(&format!("password = {}\n", q(p)));
            }
            if let Some(h) = &u.password_hash {
                t.push_str(&format!("password_hash = {}\n", q(h)));
            }
            t.push_str(&format!("auth_plugin = {}\n", q(&u.auth_plugin)));
            if let Some(db) = &u.default_database {
                t.push_str(&format!("default_database = {}\n", q(db)));
            }
            if u.admin {
                t.push_str("admin = true\n");
            }
            if u.require_tls {
                t.push_str("require_tls = true\n");
            }
        }
        t.push_str(&format!("\n[log]\nlevel = {}\n", q(&self.log_level)));
        for table in &self.extra_tables {
            t.push('\n');
            t.push_str(table);
            t.push('\n');
        }
        t
    }
}

/// A running gateway process.
pub struct Gateway {
    dir: PathBuf,
    port: u16,
    child: Child,
}

impl Gateway {
    /// Writes `config_toml` to a file, runs `gateway run --config FILE` and waits until the listen
    /// port answers with a MySQL greeting. The listen port is read from `[listen] address`.
    pub fn start(config_toml: &str) -> anyhow::Result<Gateway> {
        Self::start_with_bin(&gateway_bin()?, config_toml)
    }

    /// [`Gateway::start`] with an explicit binary (e.g. a release build), no build step.
    pub fn start_with_bin(bin: &Path, config_toml: &str) -> anyhow::Result<Gateway> {
        Self::spawn(bin, None, config_toml)
    }

    /// [`Gateway::start`] inside network namespace `ns` (`ip netns exec`), e.g. next to the
    /// seekdb kernel; ready when it logs `gateway listening` (its port is not reachable from here).
    pub fn start_in_netns(ns: &str, config_toml: &str) -> anyhow::Result<Gateway> {
        Self::spawn(&gateway_bin()?, Some(ns), config_toml)
    }

    fn spawn(bin: &Path, ns: Option<&str>, config_toml: &str) -> anyhow::Result<Gateway> {
        let port = listen_port(config_toml)?;
        let dir = crate::servers_dir().join(format!("gateway-{}", crate::unique_suffix()));
        std::fs::create_dir_all(&dir)?;
        let config = dir.join("gateway.toml");
        std::fs::write(&config, config_toml)?;
        let mut cmd = match ns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns]).arg(bin);
                c
            }
            None => Command::new(bin),
        };
        cmd.env("NO_COLOR", "1")
            .arg("run")
            .arg("--config")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(dir.join("stdout.log"))?)
            .stderr(std::fs::File::create(dir.join("stderr.log"))?);
        let child = process::spawn_owned(cmd).with_context(|| format!("starting {}", bin.display()))?;
        process::register(child.id(), Some(dir.clone()));
        let mut gw = Gateway { dir, port, child };
        gw.wait_ready(Duration::from_secs(30), ns.is_some())?;
        Ok(gw)
    }

    fn wait_ready(&mut self, timeout: Duration, in_netns: bool) -> anyhow::Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait()? {
                bail!("gateway exited with {status} during start-up; stderr:\n{}", self.log_tail(4000));
            }
            let ready = if in_netns {
                std::fs::read_to_string(self.log_path()).unwrap_or_default().contains("gateway listening")
            } else {
                crate::mariadb::greeting_ok(self.addr())
            };
            if ready {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!(
                    "gateway sent no greeting on {} after {timeout:?}; stderr:\n{}",
                    self.addr(),
                    self.log_tail(4000)
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Listen port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }
    /// `127.0.0.1:port`.
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }
    /// PID of the gateway process.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
    /// Whether the process is still running (reaps it if it exited).
    pub fn is_alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
    /// Whether the process is still running, without needing `&mut` (signal 0 on the PID; a
    /// zombie counts as dead).
    pub fn is_running(&self) -> bool {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid())).unwrap_or_default();
        // Field 3 is the state; after the `(comm)` field.
        match stat.rsplit_once(") ") {
            Some((_, rest)) => !rest.starts_with('Z') && !rest.starts_with('X'),
            None => false,
        }
    }
    /// The directory with `gateway.toml`, `stderr.log`, `stdout.log`.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
    /// The gateway's log (stderr), where tracing output goes.
    pub fn log_path(&self) -> PathBuf {
        self.dir.join("stderr.log")
    }
    /// The last `max` bytes of the log (stdout and stderr), for failure messages.
    pub fn log_tail(&self, max: usize) -> String {
        let mut s = crate::tail_file(&self.log_path(), max);
        let out = crate::tail_file(&self.dir.join("stdout.log"), max);
        if !out.trim().is_empty() {
            s.push_str("\n--- stdout ---\n");
            s.push_str(&out);
        }
        s
    }
    /// The configuration file the gateway runs with.
    pub fn config_path(&self) -> PathBuf {
        self.dir.join("gateway.toml")
    }
    /// Replaces the configuration file (takes effect on [`Gateway::reload`]).
    pub fn rewrite_config(&self, config_toml: &str) -> anyhow::Result<()> {
        std::fs::write(self.config_path(), config_toml).context("rewriting gateway.toml")
    }
    /// Sends SIGHUP (reload the configuration file).
    pub fn reload(&self) -> anyhow::Result<()> {
        self.signal(libc::SIGHUP)
    }
    /// Sends SIGTERM (drain and exit) without waiting; see [`Gateway::wait_exit`].
    pub fn terminate(&self) -> anyhow::Result<()> {
        self.signal(libc::SIGTERM)
    }
    fn signal(&self, sig: libc::c_int) -> anyhow::Result<()> {
        // SAFETY: kill(2) on the PID of our own child process.
        if unsafe { libc::kill(self.pid() as libc::pid_t, sig) } != 0 {
            bail!("kill({}, {sig}): {}", self.pid(), std::io::Error::last_os_error());
        }
        Ok(())
    }
    /// Waits up to `timeout` for the process to exit; its exit status, or an error on timeout.
    pub fn wait_exit(&mut self, timeout: Duration) -> anyhow::Result<std::process::ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait()? {
                return Ok(status);
            }
            if Instant::now() > deadline {
                bail!("gateway still running {timeout:?} after SIGTERM; log:\n{}", self.log_tail(4000));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    /// Waits up to `timeout` until the log has `count` lines containing `needle`.
    pub fn wait_log(&self, needle: &str, count: usize, timeout: Duration) -> anyhow::Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            let log = std::fs::read_to_string(self.log_path()).unwrap_or_default();
            if log.lines().filter(|l| l.contains(needle)).count() >= count {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!("no {count} log line(s) with {needle:?} after {timeout:?}; log:\n{}", self.log_tail(4000));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    /// A `mysql://` URL for mysql_async.
    pub fn url(&self, user: &str, password: &str, db: Option<&str>) -> String {
        format!("mysql://{user}:{password}@127.0.0.1:{}/{}", self.port, db.unwrap_or(""))
    }
    /// The `mariadb` CLI against the gateway, as root.
    pub fn cli(&self) -> crate::clients::MariadbCli {
        crate::clients::MariadbCli::new(self.port)
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        process::terminate_child(&mut self.child, Duration::from_secs(10));
        process::unregister(self.child.id());
        if !std::thread::panicking() {
            process::remove_dir(&self.dir);
        }
    }
}

fn listen_port(config_toml: &str) -> anyhow::Result<u16> {
    let v: toml::Value = toml::from_str(config_toml).context("gateway config is not valid TOML")?;
    let addr = v
        .get("listen")
        .and_then(|l| l.get("address"))
        .and_then(|a| a.as_str())
        .context("gateway config has no [listen] address")?;
    let addr: SocketAddr = addr.parse().with_context(|| format!("bad [listen] address {addr}"))?;
    Ok(addr.port())
}

/// Path of the gateway binary; builds it once per process unless told not to (module docs).
pub fn gateway_bin() -> anyhow::Result<PathBuf> {
    if let Some(p) = std::env::var_os("GATEWAY_BIN") {
        return Ok(PathBuf::from(p));
    }
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BUILT.get_or_init(|| build_gateway().map_err(|e| format!("{e:#}"))).clone().map_err(|e| anyhow::anyhow!(e))
}

fn build_gateway() -> anyhow::Result<PathBuf> {
    let bin = crate::target_dir().join("debug").join("gateway");
    let skip = std::env::var_os("GATEWAY_NO_BUILD").is_some_and(|v| v != "0");
    if !skip {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let out = Command::new(cargo)
            .args(["build", "-p", "gateway", "--bin", "gateway"])
            .current_dir(crate::workspace_root())
            .stdin(Stdio::null())
            .output()
            .context("running cargo build -p gateway")?;
        if !out.status.success() {
            let start = out.stderr.len().saturating_sub(6000);
            bail!("cargo build -p gateway failed:\n{}", String::from_utf8_lossy(&out.stderr[start..]));
        }
    }
    if !bin.exists() {
        bail!("{} does not exist: run `cargo build -p gateway` (or set GATEWAY_BIN)", bin.display());
    }
    Ok(bin)
}
