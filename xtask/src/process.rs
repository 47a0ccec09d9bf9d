//! Child processes stopped by recorded PID, free ports, readiness polling and the Ctrl-C flag.

use std::fs::File;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

/// A child process started by xtask, with its output in a log file. Dropping it stops it by PID:
/// SIGTERM, then SIGKILL if it has not exited after a grace period.
pub struct Proc {
    name: String,
    child: Child,
    log: PathBuf,
    stopped: bool,
}

impl Proc {
    /// Starts `cmd` in its own process group (so a terminal Ctrl-C reaches only xtask, which then
    /// stops it), stdout and stderr appended to `log`.
    pub fn spawn(name: &str, mut cmd: Command, log: &Path) -> anyhow::Result<Proc> {
        let out = File::create(log).with_context(|| format!("creating {}", log.display()))?;
        let err = out.try_clone().context("duplicating log file handle")?;
        cmd.stdin(Stdio::null()).stdout(out).stderr(err).process_group(0);
        let child = cmd.spawn().with_context(|| format!("starting {name} ({cmd:?})"))?;
        Ok(Proc { name: name.to_string(), child, log: log.to_path_buf(), stopped: false })
    }

    /// The operating-system process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The log file holding the child's stdout and stderr.
    pub fn log(&self) -> &Path {
        &self.log
    }

    /// `Some(status)` if the process has exited.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Polls until `addr` accepts TCP connections; fails early if the process exits.
    pub fn wait_for_port(&mut self, addr: SocketAddr, timeout: Duration) -> anyhow::Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.exited() {
                bail!(
                    "{} exited ({status}) before listening on {addr}; log {}:\n{}",
                    self.name,
                    self.log.display(),
                    tail(&self.log, 20)
                );
            }
            if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!(
                    "{} not listening on {addr} after {timeout:?}; log {}:\n{}",
                    self.name,
                    self.log.display(),
                    tail(&self.log, 20)
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Stops the process by PID: SIGTERM, wait up to 5 s, then SIGKILL.
    pub fn stop(&mut self) {
        if self.stopped {
            return;
        }
        self.stopped = true;
        if self.exited().is_some() {
            return;
        }
        let pid = self.child.id() as libc::pid_t;
        // SAFETY: kill(2) on the PID of our own unreaped child; it cannot be recycled before wait.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if self.exited().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The last `n` lines of a log file (empty if unreadable).
pub fn tail(path: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// A loopback port nobody listens on right now (bind to port 0, read it back, release it).
pub fn free_port() -> anyhow::Result<u16> {
    let l = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).context("binding 127.0.0.1:0")?;
    Ok(l.local_addr()?.port())
}

/// `preferred` if it can be bound on 127.0.0.1, else a free port.
pub fn port_or_free(preferred: u16) -> anyhow::Result<u16> {
    match TcpListener::bind((Ipv4Addr::LOCALHOST, preferred)) {
        Ok(_) => Ok(preferred),
        Err(_) => free_port(),
    }
}

/// `127.0.0.1:port`.
pub fn loopback(port: u16) -> SocketAddr {
    SocketAddr::from((Ipv4Addr::LOCALHOST, port))
}

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Installs SIGINT and SIGTERM handlers that only set a flag, read by [`interrupted`].
pub fn trap_interrupts() {
    let handler = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, handler);
        libc::signal(libc::SIGTERM, handler);
    }
}

/// Whether Ctrl-C (SIGINT) or SIGTERM arrived since [`trap_interrupts`].
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Runs `cmd` to completion with stdout/stderr captured, killing it (by PID) after `timeout`.
/// Returns the exit status (`None` on timeout), stdout and stderr.
pub fn run_with_timeout(mut cmd: Command, timeout: Duration) -> anyhow::Result<(Option<ExitStatus>, String, String)> {
    use std::io::Read;
    cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
    let mut child = cmd.spawn().with_context(|| format!("starting {cmd:?}"))?;
    let mut out_pipe = child.stdout.take().context("stdout pipe")?;
    let mut err_pipe = child.stderr.take().context("stderr pipe")?;
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out_pipe.read_to_string(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err_pipe.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if Instant::now() > deadline || interrupted() {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = out_reader.join().unwrap_or_default();
    let err = err_reader.join().unwrap_or_default();
    Ok((status, out, err))
}
