//! `cargo xtask bench --profile`: `perf record` of the gateway process for the length of one
//! sysbench run (CPU samples with call graphs from frame pointers where present). The `spliced`
//! gateway's daemon is idle while the kernel forwards (its work runs in softirq and kernel
//! workers), and `direct` has no proxy: those two record the whole machine (`perf record -a`), so
//! their profiles can be compared.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::sysbench::RunSpec;

/// A running `perf record` and the file it writes.
pub struct Profile {
    child: Option<Child>,
    out: PathBuf,
}

/// What one profile samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// One process (a userspace proxy).
    Process(u32),
    /// Every CPU (direct, and the spliced gateway whose forwarding is kernel work).
    Machine,
}

impl Scope {
    /// The scope for `target`, whose proxy process (if any) is `pid`.
    pub fn of(target: &str, pid: Option<u32>) -> Option<Scope> {
        match (target, pid) {
            ("direct" | "spliced", _) => Some(Scope::Machine),
            ("haproxy", _) | (_, None) => None,
            (_, Some(pid)) => Some(Scope::Process(pid)),
        }
    }

    fn args(self) -> Vec<String> {
        match self {
            Scope::Process(pid) => vec!["-p".into(), pid.to_string()],
            Scope::Machine => vec!["-a".into()],
        }
    }
}

/// Starts sampling `scope` for `spec.time` seconds plus one.
pub fn start(dir: &Path, spec: &RunSpec, (target, round): (&str, u32), scope: Scope) -> Profile {
    let out = dir.join(format!("perf-{target}-{}-{}-r{round}.data", spec.test, spec.ps_mode));
    let child = Command::new("perf")
        .args(["record", "-F", "999", "-g", "-o"])
        .arg(&out)
        .args(scope.args())
        .args(["--", "sleep", &(spec.time + 1).to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok();
    Profile { child, out }
}

/// Waits for `perf record` to finish; a line saying where the profile is (or why there is none).
pub fn finish(p: Profile) -> String {
    match p.child {
        None => "profile: perf could not be started (is it installed?)".to_string(),
        Some(mut c) => match c.wait() {
            Ok(s) if s.success() => format!("profile: perf report -i {}", p.out.display()),
            Ok(s) => format!("profile: perf record exited with {s}"),
            Err(e) => format!("profile: waiting for perf failed: {e}"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_forwarding_and_direct_are_profiled_machine_wide() {
        assert_eq!(Scope::of("spliced", Some(7)), Some(Scope::Machine));
        assert_eq!(Scope::of("direct", None), Some(Scope::Machine));
        assert_eq!(Scope::of("routed", Some(7)), Some(Scope::Process(7)));
        assert_eq!(Scope::of("haproxy", Some(7)), None);
        assert_eq!(Scope::of("gateway", None), None);
        assert_eq!(Scope::Machine.args(), ["-a"]);
        assert_eq!(Scope::Process(42).args(), ["-p", "42"]);
    }
}
