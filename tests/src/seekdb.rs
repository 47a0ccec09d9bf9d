//! The real OceanBase kernel (`seekdb`, docs/architecture.md §3) in a private network namespace.
//!
//! [`Seekdb::start`] creates a test-owned namespace `gwt-ob-<pid>-<n>` with `lo` up and a veth
//! pair whose both ends live inside it (127.0.0.2/32 on one end: the kernel refuses to start
//! without a non-loopback interface that has an IPv4 address and a MAC, docs/architecture.md §3), starts the server
//! there with `ip netns exec` (it binds 0.0.0.0 and must never run in the host namespace, docs/architecture.md §3), and
//! polls `select 1` through the `mariadb` CLI until it answers. Every client runs inside the
//! namespace and reaches the server at `127.0.0.1:2881`.
//!
//! Clean-up, including on panic: `Drop` stops the server by PID (SIGTERM, SIGKILL after a bound),
//! deletes the namespace and the data directory (`GATEWAY_KEEP_SERVERS=1` keeps the directory).
//! A `Seekdb` kept in a `static` is never dropped, so every instance is also recorded in a registry
//! that an `atexit` handler drains; the server is spawned with a parent-death signal
//! ([`crate::process::spawn_owned`]); namespaces and directories left by a killed test binary
//! (their PID is gone) are swept when the next instance starts.
//!
//! Preconditions (see [`Seekdb::skip_reason`]): root, `ip`, `mariadb`, and the binary installed by
//! `scripts/setup.sh` at `$GATEWAY_TOOLS/seekdb/pylibseekdb/seekdb` (default `~/.cache/gateway`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

use crate::process;

/// SQL port inside the namespace.
pub const SQL_PORT: u16 = 2881;
/// RPC port inside the namespace.
pub const RPC_PORT: u16 = 2882;
/// Namespace name prefix owned by this harness.
pub const NS_PREFIX: &str = "gwt-ob-";
const READY_TIMEOUT: Duration = Duration::from_secs(90);
const STOP_GRACE: Duration = Duration::from_secs(30);

/// A running OceanBase kernel in its own network namespace; root, no password, database `test`.
pub struct Seekdb {
    name: String,
    ns: String,
    dir: PathBuf,
    child: Child,
    started_in: Duration,
}

impl Seekdb {
    /// Path of the `seekdb` binary: `$GATEWAY_TOOLS/seekdb/pylibseekdb/seekdb`, default
    /// `~/.cache/gateway/...`.
    pub fn binary() -> PathBuf {
        let tools = match std::env::var_os("GATEWAY_TOOLS") {
            Some(t) => PathBuf::from(t),
            None => {
                let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/root"));
                home.join(".cache/gateway")
            }
        };
        tools.join("seekdb/pylibseekdb/seekdb")
    }

    /// Why kernel tests cannot run here (not root, binary or tools missing), or `None`.
    /// Tests record it with [`crate::skip::skip`] and return.
    pub fn skip_reason() -> Option<String> {
        use crate::skip::{unmet, Need};
        let bin = Self::binary();
        unmet(&[Need::Root, Need::Tools(&["ip", "mariadb"])]).or_else(|| {
            (!bin.is_file())
                .then(|| format!("{} not found: run scripts/setup.sh (or set GATEWAY_TOOLS)", bin.display()))
        })
    }

    /// Creates the namespace, starts the kernel in it and waits until `select 1` answers
    /// (up to 90 s; earlier failure if the process exits). `name` labels the data directory.
    pub fn start(name: &str) -> anyhow::Result<Seekdb> {
        let bin = Self::binary();
        if !bin.is_file() {
            bail!("{} not found: run scripts/setup.sh (or set GATEWAY_TOOLS)", bin.display());
        }
        process::sweep_stale(&crate::servers_dir());
        sweep_stale_namespaces();
        let suffix = crate::unique_suffix();
        let ns = format!("{NS_PREFIX}{suffix}");
        let dir = crate::servers_dir().join(format!("seekdb-{name}-{suffix}"));
        create_namespace(&ns)?;
        // From here on the namespace must be deleted on any failure.
        let guard = NsGuard(Some(ns.clone()));
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &ns])
            .arg(&bin)
            .arg("--nodaemon")
            .arg("--base-dir")
            .arg(&dir)
            .args(["--port", &SQL_PORT.to_string()])
            .args(["--parameter", &format!("rpc_port={RPC_PORT}")])
            .args(["--parameter", "memory_limit=2G"])
            .args(["--parameter", "datafile_size=1G"])
            .args(["--parameter", "log_disk_size=2G"])
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(dir.join("seekdb.stdout"))?)
            .stderr(std::fs::File::create(dir.join("seekdb.stderr"))?);
        let t0 = Instant::now();
        let child = match process::spawn_owned(cmd) {
            Ok(c) => c,
            Err(e) => {
                process::remove_dir(&dir);
                return Err(e.context(format!("starting {}", bin.display())));
            }
        };
        register(child.id(), &ns, &dir);
        std::mem::forget(guard); // the Seekdb (or the registry) owns the namespace now
        let mut db = Seekdb { name: name.to_string(), ns, dir, child, started_in: Duration::ZERO };
        db.wait_ready(READY_TIMEOUT)?;
        db.started_in = t0.elapsed();
        Ok(db)
    }

    fn wait_ready(&mut self, timeout: Duration) -> anyhow::Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait()? {
                bail!("seekdb {} exited with {status} during start-up; log tail:\n{}", self.name, self.log_tail(4000));
            }
            let probe = self.cli(&["-e", "select 1"]).stdin(Stdio::null()).output();
            if matches!(&probe, Ok(o) if o.status.success()) {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!("seekdb {} not ready after {timeout:?}; log tail:\n{}", self.name, self.log_tail(4000));
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// The namespace the server runs in.
    pub fn netns(&self) -> &str {
        &self.ns
    }
    /// The server's base directory (`log/seekdb.log` holds its log).
    pub fn dir(&self) -> &Path {
        &self.dir
    }
    /// PID of the server process.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
    /// Time from spawn to the first successful `select 1`.
    pub fn started_in(&self) -> Duration {
        self.started_in
    }

    /// The last `max` bytes of the server log (`log/seekdb.log`) and of its stdout/stderr.
    pub fn log_tail(&self, max: usize) -> String {
        let mut s = crate::tail_file(&self.dir.join("log/seekdb.log"), max);
        for f in ["seekdb.stdout", "seekdb.stderr"] {
            let t = crate::tail_file(&self.dir.join(f), max / 4);
            if !t.trim().is_empty() {
                s.push_str(&format!("\n--- {f} ---\n{t}"));
            }
        }
        s
    }

    /// A command that runs `program` inside the namespace (`ip netns exec NS program`).
    pub fn command_in_ns(&self, program: &str) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.ns, program]);
        c
    }

    /// `mariadb --no-defaults -h127.0.0.1 -P2881 -uroot -D test --batch --skip-column-names
    /// --default-character-set=utf8mb4` inside the namespace, plus `extra` arguments.
    pub fn cli(&self, extra: &[&str]) -> Command {
        let mut c = self.command_in_ns("mariadb");
        c.args(["--no-defaults", "--protocol=TCP", "-h127.0.0.1"])
            .arg(format!("-P{SQL_PORT}"))
            .args(["-uroot", "-Dtest", "--batch", "--skip-column-names"])
            .args(["--default-character-set=utf8mb4", "--connect-timeout=10"])
            .args(extra);
        c
    }

    /// Runs `sql` (any number of `;`-separated statements, fed on stdin) as root in `test`;
    /// returns stdout (tab-separated, no column names, NULL as `NULL`, special characters escaped).
    pub fn sql(&self, sql: &str) -> anyhow::Result<String> {
        self.sql_with(&[], sql)
    }

    /// [`Seekdb::sql`] with `--raw` (no escaping of tabs, newlines, backslashes in the output),
    /// e.g. for `SHOW CREATE TABLE`.
    pub fn sql_raw(&self, sql: &str) -> anyhow::Result<String> {
        self.sql_with(&["--raw"], sql)
    }

    /// [`Seekdb::sql`] with extra CLI arguments.
    pub fn sql_with(&self, extra: &[&str], sql: &str) -> anyhow::Result<String> {
        let mut child = self
            .cli(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .context("running the mariadb CLI in the seekdb namespace")?;
        let mut stdin = child.stdin.take().context("mariadb stdin")?;
        let input = sql.as_bytes().to_vec();
        // Write from a thread so a large script cannot deadlock against a full stdout pipe.
        let writer = std::thread::spawn(move || stdin.write_all(&input));
        let out = child.wait_with_output().context("waiting for the mariadb CLI")?;
        let written = writer.join().map_err(|_| anyhow::anyhow!("stdin writer panicked"))?;
        if !out.status.success() {
            bail!(
                "mariadb (seekdb {}) exited with {}: {}\nSQL: {}",
                self.name,
                out.status,
                String::from_utf8_lossy(&out.stderr).trim(),
                short(sql)
            );
        }
        written.context("writing SQL to the mariadb CLI")?;
        String::from_utf8(out.stdout).context("mariadb output is not UTF-8")
    }
}

impl Drop for Seekdb {
    fn drop(&mut self) {
        process::terminate_child(&mut self.child, STOP_GRACE);
        unregister(self.child.id());
        delete_namespace(&self.ns);
        process::remove_dir(&self.dir);
    }
}

fn short(s: &str) -> String {
    match s.char_indices().nth(300) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

fn ip(args: &[&str]) -> anyhow::Result<()> {
    let out = Command::new("ip").args(args).stdin(Stdio::null()).output().context("running `ip`")?;
    if !out.status.success() {
        bail!("ip {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(())
}

/// `ip netns add`, `lo` up, a veth pair with both ends inside, 127.0.0.2/32 on one end
/// (docs/architecture.md §3). Deletes the namespace again if a later step fails.
fn create_namespace(ns: &str) -> anyhow::Result<()> {
    ip(&["netns", "add", ns])?;
    let guard = NsGuard(Some(ns.to_string()));
    ip(&["-n", ns, "link", "set", "lo", "up"])?;
    ip(&["-n", ns, "link", "add", "veth-a", "type", "veth", "peer", "name", "veth-b"])?;
    ip(&["-n", ns, "addr", "add", "127.0.0.2/32", "dev", "veth-a"])?;
    ip(&["-n", ns, "link", "set", "veth-a", "up"])?;
    ip(&["-n", ns, "link", "set", "veth-b", "up"])?;
    std::mem::forget(guard);
    Ok(())
}

fn delete_namespace(ns: &str) {
    let _ = Command::new("ip")
        .args(["netns", "del", ns])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

/// Deletes the namespace when dropped unless forgotten.
struct NsGuard(Option<String>);

impl Drop for NsGuard {
    fn drop(&mut self) {
        if let Some(ns) = self.0.take() {
            delete_namespace(&ns);
        }
    }
}

/// Deletes `gwt-ob-<pid>-<n>` namespaces whose test process is gone (a killed test binary).
/// Runs once per process. Processes inside were stopped by their parent-death signal.
fn sweep_stale_namespaces() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        let Ok(out) = Command::new("ip").args(["netns", "list"]).stderr(Stdio::null()).output() else { return };
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let Some(name) = line.split_whitespace().next() else { continue };
            let Some(rest) = name.strip_prefix(NS_PREFIX) else { continue };
            let Some((pid, n)) = rest.split_once('-') else { continue };
            let (Ok(pid), true) = (pid.parse::<u32>(), n.parse::<u32>().is_ok()) else { continue };
            if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
                delete_namespace(name);
            }
        }
    });
}

/// An instance to clean up at exit if it is never dropped.
struct Entry {
    pid: u32,
    ns: String,
    dir: PathBuf,
}

static REGISTRY: Mutex<Vec<Entry>> = Mutex::new(Vec::new());
static ATEXIT: OnceLock<()> = OnceLock::new();

extern "C" fn cleanup_at_exit() {
    let entries = match REGISTRY.lock() {
        Ok(mut g) => std::mem::take(&mut *g),
        Err(p) => std::mem::take(&mut *p.into_inner()),
    };
    for e in entries {
        process::terminate_pid(e.pid, STOP_GRACE);
        delete_namespace(&e.ns);
        process::remove_dir(&e.dir);
    }
}

fn register(pid: u32, ns: &str, dir: &Path) {
    ATEXIT.get_or_init(|| {
        // SAFETY: registering a plain extern "C" fn with no captured state.
        unsafe {
            libc::atexit(cleanup_at_exit);
        }
    });
    if let Ok(mut g) = REGISTRY.lock() {
        g.push(Entry { pid, ns: ns.to_string(), dir: dir.to_path_buf() });
    }
}

fn unregister(pid: u32) {
    if let Ok(mut g) = REGISTRY.lock() {
        g.retain(|e| e.pid != pid);
    }
}
