//! Test-owned cgroup2 directories and running processes inside them (for the eBPF steering tests).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::gateway::gateway_bin;

/// Test-owned cgroups under the cgroup2 mount; on drop, any process left inside is moved to the
/// root cgroup and the directories are removed.
pub struct TestCgroups {
    mount: PathBuf,
    dirs: Vec<PathBuf>,
}

impl TestCgroups {
    /// Creates `mount/<name>` for each of `names`. A directory left over by an earlier run (same
    /// PID in the name) is emptied and removed first: it belongs to this test.
    pub fn create(mount: &Path, names: &[String]) -> anyhow::Result<Self> {
        let mut me = TestCgroups { mount: mount.to_path_buf(), dirs: Vec::new() };
        for name in names {
            let dir = mount.join(name);
            if dir.exists() {
                // Left over by an earlier run with the same PID: it belongs to this test.
                me.dirs.push(dir.clone());
                me.empty(&dir);
                std::fs::remove_dir(&dir)?;
                me.dirs.pop();
            }
            std::fs::create_dir(&dir)?;
            me.dirs.push(dir);
        }
        Ok(me)
    }

    /// The directory of the `i`-th cgroup, in the order of the names given to [`Self::create`].
    pub fn dir(&self, i: usize) -> &Path {
        &self.dirs[i]
    }

    fn empty(&self, dir: &Path) {
        let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
        for pid in procs.split_whitespace() {
            if let Err(e) = std::fs::write(self.mount.join("cgroup.procs"), pid) {
                eprintln!("cleanup: moving pid {pid} out of {}: {e}", dir.display());
            }
        }
    }
}

impl Drop for TestCgroups {
    fn drop(&mut self) {
        for dir in self.dirs.iter().rev() {
            let deadline = Instant::now() + Duration::from_secs(5);
            loop {
                self.empty(dir);
                match std::fs::remove_dir(dir) {
                    Ok(()) => break,
                    Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
                    Err(e) => {
                        eprintln!("cleanup: removing cgroup {}: {e}", dir.display());
                        break;
                    }
                }
            }
        }
    }
}

/// A `sh` command that moves itself into `cgroup` and then execs `program` (same PID), so the
/// program's sockets are created inside the cgroup. Append the program's arguments with `.args`.
pub fn command_in(cgroup: &Path, program: impl AsRef<OsStr>) -> Command {
    let mut c = Command::new("sh");
    c.arg("-c").arg(r#"echo $$ > "$0" && exec "$@""#).arg(cgroup.join("cgroup.procs")).arg(program);
    c
}

/// A script that moves itself into `cgroup` and execs the gateway binary (same PID), so the
/// gateway starts inside its own cgroup and attaches cgroup/getsockopt there. The script lives in
/// a fresh [`crate::scratch_dir`] named `scratch_name`.
pub fn in_cgroup_wrapper(cgroup: &Path, scratch_name: &str) -> anyhow::Result<PathBuf> {
    use std::os::unix::fs::PermissionsExt as _;
    let bin = gateway_bin()?;
    let dir = crate::scratch_dir(scratch_name)?;
    let script = dir.join("gateway-in-cgroup.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho $$ > '{}' || exit 97\nexec '{}' \"$@\"\n",
            cgroup.join("cgroup.procs").display(),
            bin.display()
        ),
    )?;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))?;
    Ok(script)
}

/// The port part of an `ip:port` string (the whole string if it has no `:`).
pub fn port_of(addr: &str) -> &str {
    addr.rsplit_once(':').map_or(addr, |(_, p)| p)
}
