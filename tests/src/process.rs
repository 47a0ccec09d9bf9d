//! Child processes owned by the harness: spawned so that they die with the test process, recorded
//! by PID, and stopped by that PID (never by name) on `Drop` or, for servers kept in statics, at exit.
//!
//! Three layers make sure no server outlives a test run:
//! * `Drop` of [`crate::MariaDb`] / [`crate::Gateway`] stops the process (runs on panic unwinding too);
//! * servers that live in a `static` fixture are never dropped, so they are also recorded in a
//!   registry that an `atexit` handler drains when the test binary exits;
//! * every child is started with `PR_SET_PDEATHSIG = SIGTERM` from one long-lived spawner thread, so
//!   even a test binary killed with SIGKILL takes its servers down (the death signal fires when the
//!   *thread* that forked the child ends, hence the dedicated thread).

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use anyhow::Context;

type SpawnRequest = (Command, mpsc::Sender<std::io::Result<Child>>);

static SPAWNER: OnceLock<Mutex<mpsc::Sender<SpawnRequest>>> = OnceLock::new();

/// Spawns `cmd` from the harness's spawner thread with a parent-death signal of SIGTERM.
pub fn spawn_owned(mut cmd: Command) -> anyhow::Result<Child> {
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: only async-signal-safe calls (prctl, getppid, _exit) between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
    let sender = SPAWNER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<SpawnRequest>();
        std::thread::Builder::new()
            .name("harness-spawner".into())
            .spawn(move || {
                for (mut cmd, reply) in rx {
                    let _ = reply.send(cmd.spawn());
                }
            })
            .expect("spawn the harness spawner thread");
        Mutex::new(tx)
    });
    let (reply_tx, reply_rx) = mpsc::channel();
    let program = format!("{:?}", cmd.get_program());
    sender
        .lock()
        .map_err(|_| anyhow::anyhow!("spawner lock poisoned"))?
        .send((cmd, reply_tx))
        .map_err(|_| anyhow::anyhow!("spawner thread is gone"))?;
    let child = reply_rx.recv().context("spawner thread did not answer")?;
    child.with_context(|| format!("spawning {program}"))
}

/// A process (and optionally a directory) to clean up if its owner is never dropped.
struct Entry {
    /// 0 for a directory without a process.
    pid: u32,
    dir: Option<PathBuf>,
}

static REGISTRY: Mutex<Vec<Entry>> = Mutex::new(Vec::new());
static ATEXIT: OnceLock<()> = OnceLock::new();

extern "C" fn cleanup_at_exit() {
    let entries = match REGISTRY.lock() {
        Ok(mut g) => std::mem::take(&mut *g),
        Err(p) => std::mem::take(&mut *p.into_inner()),
    };
    // Newest first: gateways before the servers behind them.
    for e in entries.into_iter().rev() {
        if e.pid != 0 {
            terminate_pid(e.pid, Duration::from_secs(20));
        }
        if let Some(dir) = e.dir {
            remove_dir(&dir);
        }
    }
}

/// Records `pid` (and the directory to delete afterwards) for clean-up at process exit.
pub fn register(pid: u32, dir: Option<PathBuf>) {
    ATEXIT.get_or_init(|| {
        // SAFETY: registering a plain extern "C" fn with no captured state.
        unsafe {
            libc::atexit(cleanup_at_exit);
        }
    });
    if let Ok(mut g) = REGISTRY.lock() {
        g.push(Entry { pid, dir });
    }
}

/// Records a directory (scratch files of a test) to delete at process exit.
pub fn register_dir(dir: PathBuf) {
    register(0, Some(dir));
}

/// Forgets `pid` (its owner stopped it).
pub fn unregister(pid: u32) {
    if pid == 0 {
        return;
    }
    if let Ok(mut g) = REGISTRY.lock() {
        g.retain(|e| e.pid != pid);
    }
}

/// Sends SIGTERM to `pid`, reaps it, and escalates to SIGKILL after `grace`.
///
/// Works on children of this process (they are reaped with `waitpid`); for anything else it only
/// polls until the PID is gone.
pub fn terminate_pid(pid: u32, grace: Duration) {
    let pid = pid as libc::pid_t;
    // SAFETY: plain syscalls on a PID this process started.
    unsafe {
        if libc::kill(pid, libc::SIGTERM) != 0 {
            let mut status = 0;
            libc::waitpid(pid, &mut status, libc::WNOHANG);
            return;
        }
    }
    let deadline = Instant::now() + grace;
    let mut killed = false;
    loop {
        let mut status = 0;
        // SAFETY: as above.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r == pid {
            return;
        }
        // Not our child (ECHILD): poll for existence instead.
        if r < 0 && unsafe { libc::kill(pid, 0) } != 0 {
            return;
        }
        if Instant::now() > deadline && !killed {
            // SAFETY: as above.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            killed = true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Stops an owned child: SIGTERM, wait (SIGKILL after `grace`).
pub fn terminate_child(child: &mut Child, grace: Duration) {
    if let Ok(Some(_)) = child.try_wait() {
        return;
    }
    terminate_pid(child.id(), grace);
    let _ = child.try_wait();
}

/// Whether the harness keeps server directories for post-mortem (`GATEWAY_KEEP_SERVERS=1`).
pub fn keep_dirs() -> bool {
    std::env::var_os("GATEWAY_KEEP_SERVERS").is_some_and(|v| v != "0")
}

/// Removes a server directory unless `GATEWAY_KEEP_SERVERS` is set.
pub fn remove_dir(dir: &std::path::Path) {
    if !keep_dirs() {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// Deletes directories under `root` named `<name>-<pid>-<n>` whose process is gone (left behind by
/// a test binary that was killed). Runs once per process.
pub fn sweep_stale(root: &std::path::Path) {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        let Ok(entries) = std::fs::read_dir(root) else { return };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let mut parts = name.rsplit('-');
            let (Some(n), Some(pid)) = (parts.next(), parts.next()) else { continue };
            if n.parse::<u32>().is_err() || parts.next().is_none() {
                continue;
            }
            let Ok(pid) = pid.parse::<u32>() else { continue };
            if !std::path::Path::new(&format!("/proc/{pid}")).exists() && e.path().is_dir() {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    });
}
