//! A private MariaDB server for one test file: free loopback port, own data directory copied from a
//! cached template, general log on, stopped by PID on `Drop` (docs/architecture.md §3).

use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

use crate::clients::MariadbCli;
use crate::process;

/// What `mariadbd` writes to its error log once it listens.
const READY: &[u8] = b"ready for connections";

/// Options for [`MariaDb::start_with`].
#[derive(Debug, Clone)]
pub struct MariaDbOptions {
    /// Write every statement to `general.log` (what tests use to see where a statement ran).
    pub general_log: bool,
    /// `--max-allowed-packet`; large enough for the > 16 MiB packet tests by default.
    pub max_allowed_packet: String,
    /// `--innodb-buffer-pool-size`.
    pub buffer_pool: String,
    /// Extra `mariadbd` arguments, appended last.
    pub extra_args: Vec<String>,
    /// TLS: the server's certificate, key and CA (`--ssl-cert`, `--ssl-key`, `--ssl-ca`).
    /// `None` (default): no TLS.
    pub tls: Option<crate::tls::ServerTlsFiles>,
}

impl Default for MariaDbOptions {
    fn default() -> Self {
        MariaDbOptions {
            general_log: true,
            max_allowed_packet: "256M".into(),
            buffer_pool: "128M".into(),
            extra_args: Vec::new(),
            tls: None,
        }
    }
}

/// A running `mariadbd`; root logs in over TCP with an empty password; database `test` exists.
pub struct MariaDb {
    name: String,
    dir: PathBuf,
    port: u16,
    child: Child,
    opts: MariaDbOptions,
}

impl MariaDb {
    /// Starts a server with the default options (general log on, 256M max packet, local infile on).
    pub fn start(name: &str) -> anyhow::Result<MariaDb> {
        Self::start_with(name, MariaDbOptions::default())
    }

    /// Starts a server; retries with another port if the chosen one was taken meanwhile.
    pub fn start_with(name: &str, opts: MariaDbOptions) -> anyhow::Result<MariaDb> {
        let template = template_dir()?;
        process::sweep_stale(&crate::servers_dir());
        let mut last_err = None;
        for _ in 0..3 {
            let dir = crate::servers_dir().join(format!("{name}-{}", crate::unique_suffix()));
            std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
            copy_dir(&template.join("data"), &dir.join("data"))?;
            match Self::launch(name, dir.clone(), &opts) {
                Ok(db) => return Ok(db),
                Err(e) => {
                    let in_use = crate::tail_file(&dir.join("error.log"), 4000).contains("Address already in use");
                    process::remove_dir(&dir);
                    if !in_use {
                        return Err(e);
                    }
                    last_err = Some(e);
                }
            }
        }
        Err(last_err.unwrap_or_else(|| anyhow::anyhow!("could not start mariadbd")))
    }

    fn launch(name: &str, dir: PathBuf, opts: &MariaDbOptions) -> anyhow::Result<MariaDb> {
        let port = crate::free_port()?;
        let child = Self::spawn(&dir, port, opts)?;
        let mut db = MariaDb { name: name.to_string(), dir, port, child, opts: opts.clone() };
        db.wait_ready(Duration::from_secs(60), 0)?;
        db.cli().sql("CREATE DATABASE IF NOT EXISTS test").context("creating database test")?;
        Ok(db)
    }

    /// Kills `mariadbd` with SIGKILL (a crash, no shutdown) and reaps it; the data directory and
    /// the port stay reserved for [`MariaDb::restart`].
    pub fn kill(&mut self) -> anyhow::Result<()> {
        if self.child.try_wait()?.is_none() {
            self.child.kill().context("SIGKILL mariadbd")?;
            self.child.wait()?;
        }
        process::unregister(self.child.id());
        Ok(())
    }

    /// Starts `mariadbd` again on the same data directory and port (after [`MariaDb::kill`]) and
    /// waits until it accepts connections (InnoDB crash recovery included).
    pub fn restart(&mut self) -> anyhow::Result<()> {
        if self.child.try_wait()?.is_none() {
            bail!("mariadbd {} is still running", self.name);
        }
        let log_from = std::fs::metadata(self.error_log_path()).map_or(0, |m| m.len());
        self.child = Self::spawn(&self.dir, self.port, &self.opts)?;
        self.wait_ready(Duration::from_secs(60), log_from)
    }

    fn spawn(dir: &Path, port: u16, opts: &MariaDbOptions) -> anyhow::Result<Child> {
        let d = |f: &str| dir.join(f).display().to_string();
        // Private tmpdir (see `template_dir`).
        std::fs::create_dir_all(dir.join("tmp"))?;
        let mut cmd = Command::new("mariadbd");
        cmd.arg("--no-defaults")
            .arg("--user=root")
            .arg(format!("--datadir={}", d("data")))
            .arg(format!("--port={port}"))
            .arg("--bind-address=127.0.0.1")
            .arg(format!("--socket={}", d("mysqld.sock")))
            .arg(format!("--pid-file={}", d("mysqld.pid")))
            .arg(format!("--log-error={}", d("error.log")))
            .arg(format!("--tmpdir={}", d("tmp")))
            .arg("--skip-name-resolve")
            .arg(format!("--innodb-buffer-pool-size={}", opts.buffer_pool))
            .arg("--max-connections=500")
            .arg(format!("--max-allowed-packet={}", opts.max_allowed_packet))
            .arg("--local-infile=1");
        if opts.general_log {
            cmd.arg("--general-log=1").arg(format!("--general-log-file={}", d("general.log")));
        }
        if let Some(t) = &opts.tls {
            cmd.arg(format!("--ssl-cert={}", t.cert.display()))
                .arg(format!("--ssl-key={}", t.key.display()))
                .arg(format!("--ssl-ca={}", t.ca.display()));
        }
        cmd.args(&opts.extra_args);
        cmd.stdin(Stdio::null())
            .stdout(std::fs::File::create(dir.join("stdout.log"))?)
            .stderr(std::fs::File::create(dir.join("stderr.log"))?);
        let child =
            process::spawn_owned(cmd).context("starting mariadbd (is mariadb-server installed? scripts/setup.sh)")?;
        process::register(child.id(), Some(dir.to_path_buf()));
        Ok(child)
    }

    /// Waits until this `mariadbd` accepts connections: its own error log (written after byte
    /// `log_from`) says it is ready — the port may have been taken by another test's server
    /// between [`crate::free_port`] and the bind, and that server would greet too — and the port
    /// greets.
    fn wait_ready(&mut self, timeout: Duration, log_from: u64) -> anyhow::Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait()? {
                bail!(
                    "mariadbd {} exited with {status} before accepting connections; error.log:\n{}",
                    self.name,
                    crate::tail_file(&self.error_log_path(), 3000)
                );
            }
            if self.logged_ready(log_from) && greeting_ok(self.addr()) {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!(
                    "mariadbd {} not ready after {timeout:?}; error.log:\n{}",
                    self.name,
                    crate::tail_file(&self.error_log_path(), 3000)
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Whether the error log, past byte `from`, says the server is ready for connections (it
    /// writes that only once it has bound its port).
    fn logged_ready(&self, from: u64) -> bool {
        let log = std::fs::read(self.error_log_path()).unwrap_or_default();
        let from = usize::try_from(from).unwrap_or(usize::MAX).min(log.len());
        log[from..].windows(READY.len()).any(|w| w == READY)
    }

    /// Name given to [`MariaDb::start`].
    pub fn name(&self) -> &str {
        &self.name
    }
    /// TCP port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }
    /// `127.0.0.1:port`.
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }
    /// PID of `mariadbd`.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
    /// The server's own directory (data dir, logs, socket).
    pub fn dir(&self) -> &Path {
        &self.dir
    }
    /// The general query log (every statement the server received, with its thread id).
    pub fn general_log_path(&self) -> PathBuf {
        self.dir.join("general.log")
    }
    /// Contents of the general log so far.
    pub fn general_log(&self) -> String {
        std::fs::read_to_string(self.general_log_path()).unwrap_or_default()
    }
    /// The server's error log.
    pub fn error_log_path(&self) -> PathBuf {
        self.dir.join("error.log")
    }
    /// A `mysql://` URL for mysql_async.
    pub fn url(&self, user: &str, password: &str, db: Option<&str>) -> String {
        format!("mysql://{user}:{password}@127.0.0.1:{}/{}", self.port, db.unwrap_or(""))
    }
    /// The `mariadb` CLI as root against this server.
    pub fn cli(&self) -> MariadbCli {
        MariadbCli::new(self.port)
    }
    /// Runs SQL as root in database `test` (batch mode, no column names); returns stdout.
    pub fn sql(&self, sql: &str) -> anyhow::Result<String> {
        self.cli().database("test").sql(sql)
    }
    /// Creates an account on `127.0.0.1` and `localhost` with all privileges.
    pub fn create_user(&self, user: &str, password: &str) -> anyhow::Result<()> {
        let pw = password.replace('\'', "''");
        self.cli().sql(&format!(
            "CREATE USER IF NOT EXISTS '{user}'@'127.0.0.1' IDENTIFIED BY '{pw}'; \
             GRANT ALL ON *.* TO '{user}'@'127.0.0.1'; \
             CREATE USER IF NOT EXISTS '{user}'@'localhost' IDENTIFIED BY '{pw}'; \
             GRANT ALL ON *.* TO '{user}'@'localhost'"
        ))?;
        Ok(())
    }
}

impl Drop for MariaDb {
    fn drop(&mut self) {
        process::terminate_child(&mut self.child, Duration::from_secs(30));
        process::unregister(self.child.id());
        process::remove_dir(&self.dir);
    }
}

/// Whether something at `addr` accepts a TCP connection and sends a MySQL greeting (protocol 10).
pub fn greeting_ok(addr: SocketAddr) -> bool {
    use std::io::Read;
    let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_millis(500)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
    let mut head = [0u8; 5];
    s.read_exact(&mut head).is_ok() && head[4] == 10
}

/// The initialised template data directory, created once (guarded across processes by `flock`).
fn template_dir() -> anyhow::Result<PathBuf> {
    let root = crate::servers_dir();
    std::fs::create_dir_all(&root)?;
    let template = root.join("mariadb-template");
    let ready = template.join("ready");
    let lock = std::fs::File::create(root.join("mariadb-template.lock"))?;
    let _guard = FileLock::exclusive(&lock)?;
    if ready.exists() {
        return Ok(template);
    }
    let _ = std::fs::remove_dir_all(&template);
    let tmp = root.join(format!("mariadb-template.tmp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp)?;
    // A private tmpdir: a starting mariadbd deletes every `#sql*` file in its tmpdir, so servers
    // sharing /tmp break each other's temporary tables (seen in install-db under parallel tests).
    std::fs::create_dir_all(tmp.join("tmp"))?;
    let out = Command::new("mariadb-install-db")
        .arg("--no-defaults")
        .arg(format!("--datadir={}", tmp.join("data").display()))
        .arg(format!("--tmpdir={}", tmp.join("tmp").display()))
        .arg("--user=root")
        .arg("--auth-root-authentication-method=normal")
        .arg("--skip-test-db")
        .output()
        .context("running mariadb-install-db (is mariadb-server installed? scripts/setup.sh)")?;
    if !out.status.success() {
        bail!(
            "mariadb-install-db failed: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    std::fs::write(tmp.join("ready"), b"")?;
    std::fs::rename(&tmp, &template)?;
    Ok(template)
}

fn copy_dir(from: &Path, to: &Path) -> anyhow::Result<()> {
    let out = Command::new("cp").arg("-a").arg("--reflink=auto").arg(from).arg(to).output()?;
    if !out.status.success() {
        bail!("cp -a {} {}: {}", from.display(), to.display(), String::from_utf8_lossy(&out.stderr));
    }
    Ok(())
}

struct FileLock<'a>(&'a std::fs::File);

impl<'a> FileLock<'a> {
    fn exclusive(f: &'a std::fs::File) -> anyhow::Result<Self> {
        use std::os::fd::AsRawFd;
        // SAFETY: flock on a file descriptor we own for the guard's lifetime.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } != 0 {
            bail!("flock: {}", std::io::Error::last_os_error());
        }
        Ok(FileLock(f))
    }
}

impl Drop for FileLock<'_> {
    fn drop(&mut self) {
        use std::os::fd::AsRawFd;
        // SAFETY: as above.
        unsafe { libc::flock(self.0.as_raw_fd(), libc::LOCK_UN) };
    }
}
