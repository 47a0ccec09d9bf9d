//! `cargo xtask bench --profile`: `perf record` of the gateway process for the length of one
//! sysbench run (CPU samples with call graphs from frame pointers where present).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::sysbench::RunSpec;

/// A running `perf record` and the file it writes.
pub struct Profile {
    child: Option<Child>,
    out: PathBuf,
}

/// Starts sampling process `pid` (the gateway of `target`) for `spec.time` seconds plus one.
pub fn start(dir: &Path, spec: &RunSpec, (target, round): (&str, u32), pid: u32) -> Profile {
    let out = dir.join(format!("perf-{target}-{}-{}-r{round}.data", spec.test, spec.ps_mode));
    let child = Command::new("perf")
        .args(["record", "-F", "999", "-g", "-o"])
        .arg(&out)
        .args(["-p", &pid.to_string(), "--", "sleep", &(spec.time + 1).to_string()])
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
