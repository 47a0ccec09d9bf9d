//! `cargo xtask bench --cpu`: a proxy process's CPU time over one sysbench run, from its
//! `/proc/<pid>/stat` (user + system time of every thread, alive or exited), divided by the
//! statements sysbench carried. On a shared 2-core box this is steadier than QPS.
//!
//! Also the whole machine's busy time (`/proc/stat`): work a proxy causes outside its own process
//! (kernel workers forwarding spliced bytes, softirq, the peers' wake-ups) is charged to no proxy
//! process, so a per-process figure alone understates it.

use std::time::Duration;

/// A reading of a process's consumed CPU time: user time and user + system time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuTime {
    user: Duration,
    total: Duration,
}

/// The CPU time process `pid` has used so far; `None` if it cannot be read.
pub fn read(pid: u32) -> Option<CpuTime> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (utime, stime) = parse_stat(&stat)?;
    let hz = clock_ticks_per_second()?;
    Some(CpuTime { user: ticks_to_duration(utime, hz), total: ticks_to_duration(utime + stime, hz) })
}

/// The CPU time of this process's waited-for children so far (`getrusage(RUSAGE_CHILDREN)`):
/// read around one sysbench run, the difference is that run's client CPU, as long as no other
/// child is reaped between the readings. `None` if it cannot be read.
pub fn children() -> Option<CpuTime> {
    // SAFETY: `rusage` is plain data, and getrusage writes it whole or fails.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer to a `rusage` the call may write.
    if unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) } != 0 {
        return None;
    }
    let time = |t: libc::timeval| Duration::new(t.tv_sec as u64, (t.tv_usec as u32).saturating_mul(1000));
    let user = time(usage.ru_utime);
    Some(CpuTime { user, total: user + time(usage.ru_stime) })
}

/// The summed CPU time of several processes (the servers); `None` if any cannot be read.
pub fn read_all(pids: &[u32]) -> Option<CpuTime> {
    pids.iter().try_fold(CpuTime { user: Duration::ZERO, total: Duration::ZERO }, |sum, &pid| {
        let t = read(pid)?;
        Some(CpuTime { user: sum.user + t.user, total: sum.total + t.total })
    })
}

/// Busy CPU time of the whole machine so far (every CPU: user, nice, system, irq, softirq, steal).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HostTime {
    busy: Duration,
}

/// The machine's busy CPU time so far; `None` if `/proc/stat` cannot be read.
pub fn host() -> Option<HostTime> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let hz = clock_ticks_per_second()?;
    Some(HostTime { busy: ticks_to_duration(parse_host_busy(&stat)?, hz) })
}

/// Busy ticks from the aggregate `cpu` line of `/proc/stat`: user, nice, system, idle, iowait,
/// irq, softirq, steal (guest time is already inside user and nice); everything but idle and
/// iowait.
fn parse_host_busy(stat: &str) -> Option<u64> {
    let line = stat.lines().find(|l| l.split_whitespace().next() == Some("cpu"))?;
    let v: Vec<u64> = line.split_whitespace().skip(1).take(8).map(|f| f.parse().ok()).collect::<Option<_>>()?;
    let [user, nice, system, _idle, _iowait, irq, softirq, steal] = v[..] else {
        return None;
    };
    Some(user + nice + system + irq + softirq + steal)
}

/// Microseconds of machine busy time per statement between two readings; `None` without
/// statements.
pub fn host_per_statement_us(before: HostTime, after: HostTime, statements: u64) -> Option<f64> {
    (statements > 0).then(|| after.busy.saturating_sub(before.busy).as_secs_f64() * 1e6 / statements as f64)
}

/// `(utime, stime)` in clock ticks from the text of `/proc/<pid>/stat`. The command name (field 2)
/// is in parentheses and may hold spaces or parentheses itself, so fields are counted from the last
/// `)`: after it come state (field 3), …, utime (14) and stime (15).
fn parse_stat(stat: &str) -> Option<(u64, u64)> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some((utime, stime))
}

fn ticks_to_duration(ticks: u64, per_second: u64) -> Duration {
    Duration::from_nanos(ticks.saturating_mul(1_000_000_000) / per_second.max(1))
}

fn clock_ticks_per_second() -> Option<u64> {
    // SAFETY: sysconf has no preconditions.
    let v = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    u64::try_from(v).ok().filter(|&v| v > 0)
}

/// Microseconds of CPU per statement between two readings, as (user + system, user); `None`
/// without statements.
pub fn per_statement_us(before: CpuTime, after: CpuTime, statements: u64) -> Option<(f64, f64)> {
    if statements == 0 {
        return None;
    }
    let per = |a: Duration, b: Duration| a.saturating_sub(b).as_secs_f64() * 1e6 / statements as f64;
    Some((per(after.total, before.total), per(after.user, before.user)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_count_from_the_last_parenthesis() {
        // A real line of `cat /proc/self/stat` with the name changed to hold spaces and parentheses.
        let line = "4242 (my (odd) name) S 1 4242 4242 0 -1 4194560 1095 0 0 0 37 12 0 0 20 0 9 0 123 1000 200";
        assert_eq!(parse_stat(line), Some((37, 12)));
        assert_eq!(parse_stat("4242 (x) S 1"), None);
    }

    #[test]
    fn per_statement_is_cpu_over_statements() {
        let at = |user, total| CpuTime { user: ticks_to_duration(user, 100), total: ticks_to_duration(total, 100) };
        // 0.5 s over 10,000 statements = 50 µs each, of which 0.1 s user = 10 µs.
        assert_eq!(per_statement_us(at(20, 100), at(30, 150), 10_000), Some((50.0, 10.0)));
        assert_eq!(per_statement_us(at(20, 100), at(30, 150), 0), None);
    }

    #[test]
    fn host_busy_is_everything_but_idle_and_iowait() {
        // The first lines of a real /proc/stat (10 columns since Linux 2.6.33).
        let stat = "cpu  100 2 30 900 7 4 5 1 50 0\ncpu0 50 1 15 450 3 2 2 0 25 0\nintr 1 2 3\n";
        assert_eq!(parse_host_busy(stat), Some(100 + 2 + 30 + 4 + 5 + 1));
        assert_eq!(parse_host_busy("cpu0 1 2 3 4 5 6 7 8\n"), None, "only the aggregate line counts");
        assert_eq!(parse_host_busy("cpu  1 2 3\n"), None, "too few columns");
        let at = |ticks| HostTime { busy: ticks_to_duration(ticks, 100) };
        // 2 s busy over 40,000 statements = 50 µs each.
        assert_eq!(host_per_statement_us(at(1_000), at(1_200), 40_000), Some(50.0));
        assert_eq!(host_per_statement_us(at(1_000), at(1_200), 0), None);
    }

    #[test]
    fn reads_the_machine() {
        let before = host().expect("/proc/stat");
        let spin = std::time::Instant::now();
        while spin.elapsed() < Duration::from_millis(60) {
            std::hint::black_box(spin.elapsed());
        }
        assert!(host().expect("again").busy > before.busy, "60 ms of spinning left the machine idle");
    }

    #[test]
    fn reads_a_reaped_child() {
        let before = children().expect("getrusage");
        let status = std::process::Command::new("sh")
            .args(["-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"])
            .status()
            .expect("sh");
        assert!(status.success());
        let after = children().expect("getrusage again");
        assert!(after.total > before.total, "a child that counted to 200,000 used no CPU time");
        let me = read_all(&[std::process::id(), std::process::id()]).expect("own stat twice");
        assert!(me.total >= read(std::process::id()).expect("own stat").total, "the sum is not below one part");
    }

    #[test]
    fn reads_this_process() {
        let me = read(std::process::id()).expect("own /proc/<pid>/stat");
        let spin = std::time::Instant::now();
        while spin.elapsed() < Duration::from_millis(60) {
            std::hint::black_box(spin.elapsed());
        }
        assert!(read(std::process::id()).expect("again").user > me.user, "60 ms of spinning used no CPU time");
    }
}
