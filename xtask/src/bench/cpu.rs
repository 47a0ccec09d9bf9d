//! `cargo xtask bench --cpu`: a proxy process's CPU time over one sysbench run, from its
//! `/proc/<pid>/stat` (user + system time of every thread, alive or exited), divided by the
//! statements sysbench carried. On a shared 2-core box this is steadier than QPS.

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
    fn reads_this_process() {
        let me = read(std::process::id()).expect("own /proc/<pid>/stat");
        let spin = std::time::Instant::now();
        while spin.elapsed() < Duration::from_millis(60) {
            std::hint::black_box(spin.elapsed());
        }
        assert!(read(std::process::id()).expect("again").user > me.user, "60 ms of spinning used no CPU time");
    }
}
