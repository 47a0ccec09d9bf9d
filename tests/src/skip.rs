//! Skipped tests: why a test cannot run here, said as `SKIP: <test>: <reason>` and recorded so the
//! test command's summary counts it as skipped, not passed.
//!
//! A test that cannot run calls [`skip`] (or the [`skip_if!`](crate::skip_if) macro) and returns.
//! The reason goes to stderr and, as one tab-separated line, to `target/test-skips.log`
//! (`GATEWAY_SKIP_LOG` overrides), which `scripts/test.sh` empties before the run and reads after.
//! Requirements shared by several tests are checked by [`unmet`]; the eBPF object and privilege
//! check needs the `gateway` library, so it is the [`ebpf_unmet!`](crate::ebpf_unmet) macro,
//! expanded in the test files that link it.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// Something a test needs from the machine.
#[derive(Debug, Clone, Copy)]
pub enum Need {
    /// Effective uid 0 (namespaces, cgroups, BPF).
    Root,
    /// A mounted cgroup2 hierarchy.
    Cgroup2,
    /// The PyMySQL venv's python (`scripts/setup.sh`).
    Python,
    /// IPv6 in this kernel (`/proc/net/if_inet6`).
    Ipv6,
    /// These programs on `PATH`.
    Tools(&'static [&'static str]),
}

impl Need {
    /// Why this need is not met here, or `None`.
    fn unmet(self) -> Option<String> {
        match self {
            Need::Root => {
                // SAFETY: geteuid has no preconditions.
                (unsafe { libc::geteuid() } != 0)
                    .then(|| "needs root (namespaces, cgroups, BPF); CI runs as root".into())
            }
            Need::Cgroup2 => {
                let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
                (!mounts.lines().any(|l| l.split_whitespace().nth(2) == Some("cgroup2")))
                    .then(|| "no cgroup2 hierarchy is mounted".into())
            }
            Need::Python => {
                let python = crate::clients::venv_python();
                (!python.exists()).then(|| format!("{} not found: run scripts/setup.sh", python.display()))
            }
            Need::Ipv6 => (!std::path::Path::new("/proc/net/if_inet6").exists())
                .then(|| "the kernel has no IPv6 (/proc/net/if_inet6 missing)".into()),
            Need::Tools(tools) => {
                tools.iter().find(|t| !on_path(t)).map(|t| format!("`{t}` is not on PATH: run scripts/setup.sh"))
            }
        }
    }
}

/// The first requirement in `needs` that this machine does not meet, as a reason, or `None`.
pub fn unmet(needs: &[Need]) -> Option<String> {
    needs.iter().find_map(|n| n.unmet())
}

/// Whether `tool` runs (found on `PATH`).
fn on_path(tool: &str) -> bool {
    Command::new(tool).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok()
}

/// Where skips are recorded for the summary: `GATEWAY_SKIP_LOG`, else `target/test-skips.log`.
pub fn log_path() -> PathBuf {
    std::env::var_os("GATEWAY_SKIP_LOG")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::target_dir().join("test-skips.log"))
}

/// Says that `test` is skipped and why, on stderr and in the skip log (one line per skip; a
/// failure to write the log is reported but does not fail the test).
pub fn skip(test: &str, reason: &str) {
    eprintln!("SKIP: {test}: {reason}");
    let line = format!("{test}\t{}\n", reason.replace(['\n', '\t'], " "));
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log_path())
        .and_then(|mut f| f.write_all(line.as_bytes()));
    if let Err(e) = written {
        eprintln!("(could not record the skip in {}: {e})", log_path().display());
    }
}

/// `skip_if!(test, reason)`: if `reason` (an `Option<String>`) is `Some`, records the skip and
/// returns from the calling test.
#[macro_export]
macro_rules! skip_if {
    ($test:expr, $reason:expr) => {
        if let Some(reason) = $reason {
            $crate::skip::skip($test, &reason);
            return;
        }
    };
}

/// Why the gateway's eBPF data plane cannot be loaded here (no eBPF object in the build, or no
/// privilege), or `None`. A macro because it calls the `gateway` library, which only the test
/// files that link it (dev-dependency) can reach.
#[macro_export]
macro_rules! ebpf_unmet {
    () => {
        if !gateway::dataplane::object_available() {
            Some(String::from("gateway was built without its eBPF object (AYA_BUILD_SKIP)"))
        } else {
            gateway::dataplane::check_permitted().err().map(|e| e.to_string())
        }
    };
}
