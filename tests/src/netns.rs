//! Test-owned network namespaces (`ip netns`), deleted on drop, and the `ip` (iproute2) runner.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Named network namespaces created by a test, deleted (in reverse order) on drop, which also
/// deletes the veths inside them.
pub struct Netns {
    names: Vec<String>,
}

impl Netns {
    /// Creates the namespaces `names`. Namespaces of these names left over by an earlier run
    /// (same PID in the name) belong to this test and are deleted first.
    pub fn create(names: &[String]) -> anyhow::Result<Self> {
        for ns in names {
            if Path::new("/run/netns").join(ns).exists() {
                ip(&["netns", "del", ns])?;
            }
        }
        let mut me = Self { names: Vec::new() };
        for ns in names {
            ip(&["netns", "add", ns])?;
            me.names.push(ns.clone());
        }
        Ok(me)
    }

    /// The name of the `i`-th namespace.
    pub fn name(&self, i: usize) -> &str {
        &self.names[i]
    }

    /// The `/run/netns/<name>` path of the `i`-th namespace (for `setns`).
    pub fn path(&self, i: usize) -> PathBuf {
        PathBuf::from("/run/netns").join(&self.names[i])
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        for ns in self.names.iter().rev() {
            if let Err(e) = ip(&["netns", "del", ns]) {
                eprintln!("cleanup: deleting netns {ns}: {e}");
            }
        }
    }
}

/// Runs `ip args` (iproute2); an error carries its stderr.
pub fn ip(args: &[&str]) -> anyhow::Result<()> {
    let out =
        Command::new("ip").args(args).output().map_err(|e| anyhow::anyhow!("running ip (iproute2) {args:?}: {e}"))?;
    if !out.status.success() {
        anyhow::bail!("ip {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(())
}

/// Runs `f` on a new thread that has entered network namespace `ns` (`/run/netns/<ns>`): sockets
/// it opens (e.g. a tokio runtime built inside `f`) live in that namespace.
pub fn run_in<T: Send + 'static>(ns: &str, f: impl FnOnce() -> T + Send + 'static) -> anyhow::Result<T> {
    use std::os::fd::AsRawFd;
    let path = PathBuf::from("/run/netns").join(ns);
    let handle = std::thread::spawn(move || -> anyhow::Result<T> {
        let file = std::fs::File::open(&path).map_err(|e| anyhow::anyhow!("opening {}: {e}", path.display()))?;
        // SAFETY: setns on a descriptor that is open for the whole call; it changes only this
        // thread's network namespace.
        if unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
            anyhow::bail!("setns {}: {}", path.display(), std::io::Error::last_os_error());
        }
        Ok(f())
    });
    handle.join().map_err(|_| anyhow::anyhow!("thread in netns panicked"))?
}
