//! `cargo xtask bench --cpu`: system calls and context switches of a proxy process over one
//! sysbench run, counted by `perf stat` (`raw_syscalls:sys_enter`, `context-switches`) and divided
//! by the statements. A relay's floor is one read and one write per direction, four per statement;
//! every call above that is overhead to explain.
//!
//! `perf stat` starts with its counters disabled (`--delay -1`) and is enabled through its control
//! FIFO, which acknowledges: counting starts before sysbench does, with no sleep standing in for
//! perf's start-up. Without perf (or without permission to trace), the columns stay empty.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// Events counted: system call entries and context switches.
const EVENTS: &str = "raw_syscalls:sys_enter,context-switches";

/// A `perf stat` counting one process, enabled and acknowledged.
pub struct Counting {
    child: Child,
    out: PathBuf,
}

/// What one run counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    /// System calls entered by the process's threads.
    pub syscalls: u64,
    /// Context switches of the process's threads.
    pub switches: u64,
}

/// Starts `perf stat` on process `pid`, writing its CSV to `<dir>/<name>.perfstat`, and returns
/// once the counters are enabled; `None` if perf is missing or cannot count that process.
pub fn start(dir: &Path, name: &str, pid: u32) -> Option<Counting> {
    let out = dir.join(format!("{name}.perfstat"));
    let (ctl_path, ack_path) = (dir.join(format!("{name}.ctl")), dir.join(format!("{name}.ack")));
    // Both FIFOs are opened read-write here before perf starts: such an open never blocks, and
    // perf's own opens (the ack end write-only) then find a peer at once.
    let fifos = [&ctl_path, &ack_path].map(|p| {
        let _ = std::fs::remove_file(p);
        make_fifo(p)?;
        File::options().read(true).write(true).open(p).ok()
    });
    let [Some(mut ctl), Some(ack)] = fifos else {
        return None;
    };
    let mut child = Command::new("perf")
        .args(["stat", "-x", ",", "--delay", "-1", "-e", EVENTS, "-p", &pid.to_string()])
        .arg(format!("--control=fifo:{},{}", ctl_path.display(), ack_path.display()))
        .arg("-o")
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok();
    let enabled = match child.as_mut() {
        Some(c) => ctl.write_all(b"enable\n").is_ok() && acknowledged(&ack, c),
        None => false,
    };
    // perf has opened both (or never will): the names can go.
    let _ = std::fs::remove_file(&ctl_path);
    let _ = std::fs::remove_file(&ack_path);
    let mut child = child?;
    if !enabled {
        let _ = child.kill();
        let _ = child.wait();
        return None;
    }
    Some(Counting { child, out })
}

/// Whether perf answers `ack` on its acknowledgement FIFO within [`ACK_LIMIT`]. It never does
/// if it exited (not allowed to trace the process, an unknown event): that ends the wait at once.
fn acknowledged(ack: &File, perf: &mut Child) -> bool {
    use std::os::fd::AsRawFd;
    let started = std::time::Instant::now();
    let mut pfd = libc::pollfd { fd: ack.as_raw_fd(), events: libc::POLLIN, revents: 0 };
    loop {
        // SAFETY: `pfd` is one valid pollfd for the duration of the call.
        match unsafe { libc::poll(&mut pfd, 1, 50) } {
            1 => break,
            0 if started.elapsed() < ACK_LIMIT && matches!(perf.try_wait(), Ok(None)) => continue,
            _ => return false,
        }
    }
    let mut line = String::new();
    BufReader::new(ack).read_line(&mut line).is_ok() && line.trim() == "ack"
}

/// How long perf may take to start and enable its counters.
const ACK_LIMIT: std::time::Duration = std::time::Duration::from_secs(10);

fn make_fifo(path: &Path) -> Option<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
    (unsafe { libc::mkfifo(c.as_ptr(), 0o600) } == 0).then_some(())
}

/// Stops counting (SIGINT makes perf print its totals) and reads them.
pub fn finish(mut c: Counting) -> Option<Counts> {
    // SAFETY: kill has no memory preconditions; the pid is our own child's, not yet reaped.
    unsafe { libc::kill(i32::try_from(c.child.id()).ok()?, libc::SIGINT) };
    c.child.wait().ok()?;
    parse(&std::fs::read_to_string(&c.out).ok()?)
}

/// Both counts from `perf stat -x ,` output (`value,unit,event,…` lines; `<not counted>` or
/// `<not supported>` in place of a value means no count).
fn parse(csv: &str) -> Option<Counts> {
    let count = |event: &str| {
        csv.lines().find_map(|l| {
            let mut f = l.split(',');
            let value = f.next()?;
            let name = f.nth(1)?;
            (name == event).then(|| value.parse::<u64>().ok()).flatten()
        })
    };
    Some(Counts { syscalls: count("raw_syscalls:sys_enter")?, switches: count("context-switches")? })
}

/// Per statement: `(system calls, context switches)`; `None` without statements.
pub fn per_statement(c: Counts, statements: u64) -> Option<(f64, f64)> {
    (statements > 0).then(|| (c.syscalls as f64 / statements as f64, c.switches as f64 / statements as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_come_from_perf_stat_csv() {
        // Real `perf stat -x , -e raw_syscalls:sys_enter,context-switches -p <pid>` output (perf 6.1).
        let csv = "# started on Thu Dec  3 14:50:12 2026\n\n\
                   1234567,,raw_syscalls:sys_enter,5004512345,100.00,,\n\
                   65432,,context-switches,5004498765,100.00,,\n";
        assert_eq!(parse(csv), Some(Counts { syscalls: 1_234_567, switches: 65_432 }));
        let not_counted = "<not counted>,,raw_syscalls:sys_enter,0,0.00,,\n12,,context-switches,1,100.00,,\n";
        assert_eq!(parse(not_counted), None, "an uncounted event is no figure");
        assert_eq!(per_statement(Counts { syscalls: 500, switches: 100 }, 100), Some((5.0, 1.0)));
        assert_eq!(per_statement(Counts { syscalls: 500, switches: 100 }, 0), None);
    }

    #[test]
    fn counts_the_system_calls_a_process_makes() {
        const TEST: &str = "xtask bench::syscalls::counts_the_system_calls_a_process_makes";
        if Command::new("perf").arg("--version").output().map_or(true, |o| !o.status.success()) {
            gateway_tests::skip::skip(TEST, "perf is not installed");
            return;
        }
        let dir = std::env::temp_dir().join(format!("xtask-syscalls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch dir");
        let Some(counting) = start(&dir, "self", std::process::id()) else {
            let _ = std::fs::remove_dir_all(&dir);
            gateway_tests::skip::skip(TEST, "perf stat cannot trace system calls here (not root?)");
            return;
        };
        const CALLS: u64 = 5_000;
        for _ in 0..CALLS {
            // SAFETY: getppid has no preconditions.
            std::hint::black_box(unsafe { libc::syscall(libc::SYS_getppid) });
        }
        let counts = finish(counting);
        let _ = std::fs::remove_dir_all(&dir);
        let counts = counts.expect("perf stat printed both counts");
        assert!(counts.syscalls >= CALLS, "{CALLS} getppid calls, {} counted", counts.syscalls);
    }
}
