//! The bpffs where the gateway pins its `fail_closed` connect links, for the steering tests:
//! the pins of a test's cgroup are removed on drop (and a bpffs the test mounted is unmounted).

use std::path::PathBuf;
use std::process::Command;

/// A bpffs for pinned links: the existing mount the gateway will pick, or one mounted by the test
/// (unmounted on drop). On drop the gateway's pins for the test cgroup are removed either way.
pub struct Bpffs {
    dir: PathBuf,
    mounted_here: bool,
    /// The gateway's pins for the test's application cgroup (connect4, connect6).
    pins: [PathBuf; 2],
}

impl Bpffs {
    /// The bpffs the gateway will pin in: `existing` (the mount the gateway detects, from
    /// `gateway::dataplane::steer::bpffs_mount`), or one mounted here. `cgroup_id` is the
    /// application cgroup's id (`gateway::dataplane::steer::cgroup_id`).
    pub fn ensure(existing: Option<PathBuf>, cgroup_id: u64) -> anyhow::Result<Self> {
        let id = cgroup_id;
        let pin = |kind: &str| PathBuf::from("gateway-steer").join(format!("{kind}-{id}"));
        let pins = [pin("connect4"), pin("connect6")];
        // The same detection the gateway uses, so both agree on where the pins go.
        if let Some(dir) = existing {
            return Ok(Bpffs { dir, mounted_here: false, pins });
        }
        let dir = crate::scratch_dir("steer-bpffs")?;
        let out = Command::new("mount").args(["-t", "bpf", "bpf"]).arg(&dir).output()?;
        if !out.status.success() {
            anyhow::bail!("mount -t bpf: {}", String::from_utf8_lossy(&out.stderr));
        }
        Ok(Bpffs { dir, mounted_here: true, pins })
    }

    /// Removes the gateway's pins for the cgroup (what its next start does).
    pub fn remove_pins(&self) {
        for pin in &self.pins {
            let pin = self.dir.join(pin);
            if pin.exists() {
                if let Err(e) = std::fs::remove_file(&pin) {
                    eprintln!("cleanup: removing {}: {e}", pin.display());
                }
            }
        }
    }
}

impl Drop for Bpffs {
    fn drop(&mut self) {
        self.remove_pins();
        if self.mounted_here {
            match Command::new("umount").arg(&self.dir).output() {
                Ok(o) if o.status.success() => {}
                Ok(o) => eprintln!("cleanup: umount {}: {}", self.dir.display(), String::from_utf8_lossy(&o.stderr)),
                Err(e) => eprintln!("cleanup: umount {}: {e}", self.dir.display()),
            }
        }
    }
}
