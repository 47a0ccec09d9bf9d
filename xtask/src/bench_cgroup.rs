//! cgroups of `cargo xtask bench-dataplane`: one for the measuring client (the "application"),
//! one for the steering gateway, both under the detected cgroup2 mount and removed on drop.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

/// The two benchmark cgroups; dropping moves leftover processes to the root and removes them.
pub struct BenchCgroups {
    mount: PathBuf,
    /// Where the direct-route client runs.
    pub app: PathBuf,
    /// Where the steering gateway runs.
    pub gateway: PathBuf,
}

impl BenchCgroups {
    /// Creates `xtask-dp-<pid>-app` and `xtask-dp-<pid>-gw` under the cgroup2 mount.
    pub fn create() -> anyhow::Result<Self> {
        let mount = cgroup2_mount()?;
        let pid = std::process::id();
        let app = mount.join(format!("xtask-dp-{pid}-app"));
        let gateway = mount.join(format!("xtask-dp-{pid}-gw"));
        for dir in [&app, &gateway] {
            if !dir.exists() {
                std::fs::create_dir(dir).with_context(|| format!("creating cgroup {}", dir.display()))?;
            }
        }
        Ok(BenchCgroups { mount, app, gateway })
    }

    fn empty(&self, dir: &Path) {
        let procs = std::fs::read_to_string(dir.join("cgroup.procs")).unwrap_or_default();
        for pid in procs.split_whitespace() {
            let _ = std::fs::write(self.mount.join("cgroup.procs"), pid);
        }
    }
}

impl Drop for BenchCgroups {
    fn drop(&mut self) {
        for dir in [self.app.clone(), self.gateway.clone()] {
            let deadline = Instant::now() + Duration::from_secs(5);
            loop {
                self.empty(&dir);
                match std::fs::remove_dir(&dir) {
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

/// The cgroup2 mount point, from `/proc/self/mountinfo` (docs/dataplane.md §2: never hard-coded).
pub fn cgroup2_mount() -> anyhow::Result<PathBuf> {
    let info = std::fs::read_to_string("/proc/self/mountinfo").context("reading /proc/self/mountinfo")?;
    for line in info.lines() {
        let Some((pre, post)) = line.split_once(" - ") else { continue };
        if post.split_whitespace().next() == Some("cgroup2") {
            if let Some(mp) = pre.split_whitespace().nth(4) {
                return Ok(PathBuf::from(mp));
            }
        }
    }
    bail!("no cgroup2 file system is mounted")
}

/// A script in `dir` that moves itself into `cgroup` and execs `bin` (same PID).
pub fn wrapper(dir: &Path, cgroup: &Path, bin: &Path) -> anyhow::Result<PathBuf> {
    use std::os::unix::fs::PermissionsExt as _;
    let script = dir.join("gateway-in-cgroup.sh");
    let text = format!(
        "#!/bin/sh\necho $$ > '{}' || exit 97\nexec '{}' \"$@\"\n",
        cgroup.join("cgroup.procs").display(),
        bin.display()
    );
    std::fs::write(&script, text).with_context(|| format!("writing {}", script.display()))?;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))?;
    Ok(script)
}
