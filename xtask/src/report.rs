//! Benchmark results: medians over rounds, gateway ratios, and the table as text and markdown.

use crate::sysbench::Outcome;

/// One sysbench run in the matrix.
#[derive(Debug, Clone)]
pub struct Sample {
    /// Lua test name.
    pub test: &'static str,
    /// `--db-ps-mode`.
    pub ps_mode: &'static str,
    /// `direct`, `haproxy`, `gateway`, `routed`, `spliced` or (with `--tls`) `gateway-plain`.
    pub target: &'static str,
    /// 1-based round number.
    pub round: u32,
    /// What the run measured.
    pub outcome: Outcome,
}

/// Median of the values (mean of the middle two for an even count); `None` if empty.
pub fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    Some(if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 })
}

fn good(s: &Sample) -> bool {
    s.outcome.failure.is_none() && s.outcome.qps > 0.0
}

/// Targets compared with direct and haproxy: the gateways, and the least a relay can do
/// (`relay` and its kin, `cargo xtask relay`).
const COMPARED: [&str; 12] = [
    "gateway",
    "gateway-uring",
    "routed",
    "routed-uring",
    "spliced",
    "gateway-plain",
    "gateway-base",
    "routed-base",
    "relay",
    "relay-tokio",
    "relay-hybrid",
    "relay-uring",
];

/// The baseline target (`--baseline-bin`) of a gateway target, if it has one.
fn baseline_of(target: &str) -> Option<&'static str> {
    match target {
        "gateway-uring" => Some("gateway-base"),
        "routed-uring" => Some("routed-base"),
        _ => None,
    }
}

/// Median over rounds of `target QPS / other QPS`, pairing the runs of the same round.
fn ratio_of(samples: &[Sample], test: &str, ps: &str, target: &str, other: &str) -> Option<f64> {
    paired_ratio(samples, (test, ps), target, other, |o| Some(o.qps))
}

/// Median over rounds of `target CPU per statement / other CPU per statement`.
fn cpu_ratio(samples: &[Sample], test: &str, ps: &str, target: &str, other: &str) -> Option<f64> {
    paired_ratio(samples, (test, ps), target, other, |o| o.cpu_us)
}

/// Median over rounds of `target host CPU per statement - other host CPU per statement`.
fn host_added(samples: &[Sample], test: &str, ps: &str, target: &str, other: &str) -> Option<f64> {
    paired(samples, (test, ps), target, other, |o| o.host_us, |a, b| a - b)
}

/// Median over rounds of `value(target) / value(other)`, pairing the runs of the same round.
fn paired_ratio(
    samples: &[Sample],
    key: (&str, &str),
    target: &str,
    other: &str,
    value: impl Fn(&Outcome) -> Option<f64>,
) -> Option<f64> {
    paired(samples, key, target, other, value, |a, b| a / b)
}

/// Median over rounds of `combine(value(target), value(other))`, pairing the runs of the same
/// round (good runs only; `other`'s value positive, `target`'s not negative: a spliced daemon
/// that used no CPU tick in a run is 0, not missing).
fn paired(
    samples: &[Sample],
    (test, ps): (&str, &str),
    target: &str,
    other: &str,
    value: impl Fn(&Outcome) -> Option<f64>,
    combine: impl Fn(f64, f64) -> f64,
) -> Option<f64> {
    let pick = |target: &str, round: u32| {
        samples
            .iter()
            .find(|s| s.test == test && s.ps_mode == ps && s.target == target && s.round == round && good(s))
            .and_then(|s| value(&s.outcome))
    };
    let rounds = samples.iter().map(|s| s.round).max().unwrap_or(0);
    let values = (1..=rounds)
        .filter_map(|r| {
            let (t, o) = (pick(target, r).filter(|v| *v >= 0.0)?, pick(other, r).filter(|v| *v > 0.0)?);
            Some(combine(t, o))
        })
        .collect();
    median(values)
}

/// A rendered table: header and rows of cells.
pub struct Table {
    /// Column titles.
    pub header: Vec<String>,
    /// Cells, one `Vec` per row.
    pub rows: Vec<Vec<String>>,
}

/// Builds the summary table, one row per (test, ps mode, target), in first-seen order. The
/// `gw/plain` column (TLS gateway over plain gateway) only appears when `gateway-plain` ran.
pub fn summarize(samples: &[Sample]) -> Table {
    let header = [
        "test",
        "ps mode",
        "target",
        "QPS",
        "QPS min-max",
        "p95 ms",
        "errors",
        "gw/direct",
        "gw/haproxy",
        "gw/plain",
        "CPU us/stmt",
        "user us/stmt",
        "cpu/haproxy",
        "syscalls/stmt",
        "cs/stmt",
        "segs/stmt",
        "qps/base",
        "cpu/base",
        "user/base",
        "host us/stmt",
        "added us/stmt",
        "server us/stmt",
        "server sc/stmt",
        "server cs/stmt",
        "server q/stmt",
        "client us/stmt",
        "rest us/stmt",
        "failures",
    ];
    let mut keys: Vec<(&str, &str, &str)> = Vec::new();
    for s in samples {
        let k = (s.test, s.ps_mode, s.target);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let rows = keys
        .iter()
        .map(|&(test, ps, target)| {
            let runs: Vec<&Sample> =
                samples.iter().filter(|s| s.test == test && s.ps_mode == ps && s.target == target).collect();
            let ok: Vec<&Sample> = runs.iter().copied().filter(|s| good(s)).collect();
            let qps: Vec<f64> = ok.iter().map(|s| s.outcome.qps).collect();
            let lo = qps.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = qps.iter().copied().fold(0.0, f64::max);
            let p95 = median(ok.iter().map(|s| s.outcome.p95_ms).collect());
            let errors = errors_cell(runs.iter().map(|s| &s.outcome));
            let failed: Vec<&Sample> = runs.iter().copied().filter(|s| s.outcome.failure.is_some()).collect();
            let compared = COMPARED.contains(&target);
            let (r_direct, r_haproxy, r_plain) = if compared {
                (
                    fmt_ratio(ratio_of(samples, test, ps, target, "direct")),
                    fmt_ratio(ratio_of(samples, test, ps, target, "haproxy")),
                    if target == "gateway" {
                        fmt_ratio(ratio_of(samples, test, ps, target, "gateway-plain"))
                    } else {
                        String::new()
                    },
                )
            } else {
                (String::new(), String::new(), String::new())
            };
            let cpu = median(ok.iter().filter_map(|s| s.outcome.cpu_us).collect()).map(|c| format!("{c:.1}"));
            let user = median(ok.iter().filter_map(|s| s.outcome.cpu_user_us).collect()).map(|c| format!("{c:.1}"));
            let r_cpu =
                if compared { fmt_ratio(cpu_ratio(samples, test, ps, target, "haproxy")) } else { String::new() };
            let syscalls = median(ok.iter().filter_map(|s| s.outcome.syscalls).collect()).map(|c| format!("{c:.2}"));
            let switches = median(ok.iter().filter_map(|s| s.outcome.switches).collect()).map(|c| format!("{c:.2}"));
            let segments = median(ok.iter().filter_map(|s| s.outcome.segments).collect()).map(|c| format!("{c:.2}"));
            let base = baseline_of(target);
            let vs_base = |value: fn(&Outcome) -> Option<f64>| {
                base.map(|b| fmt_ratio(paired_ratio(samples, (test, ps), target, b, value))).unwrap_or_default()
            };
            let host = median(ok.iter().filter_map(|s| s.outcome.host_us).collect()).map(|c| format!("{c:.1}"));
            let added = if target == "direct" { None } else { host_added(samples, test, ps, target, "direct") };
            let us = |v: Vec<f64>| median(v).map(|c| format!("{c:.1}")).unwrap_or_default();
            let server = us(ok.iter().filter_map(|s| s.outcome.server_us).collect());
            let client = us(ok.iter().filter_map(|s| s.outcome.client_us).collect());
            let per = |v: Vec<f64>| median(v).map(|c| format!("{c:.2}")).unwrap_or_default();
            let server_calls = per(ok.iter().filter_map(|s| s.outcome.server_syscalls).collect());
            let server_switches = per(ok.iter().filter_map(|s| s.outcome.server_switches).collect());
            let questions = median(ok.iter().filter_map(|s| s.outcome.server_questions).collect())
                .map(|c| format!("{c:.3}"))
                .unwrap_or_default();
            let rest = us(ok.iter().filter_map(|s| rest_us(&s.outcome)).collect());
            let failures = match failed.first() {
                None => String::new(),
                Some(f) => format!(
                    "{}/{}: {}",
                    failed.len(),
                    runs.len(),
                    f.outcome.failure.as_deref().unwrap_or("").chars().take(70).collect::<String>()
                ),
            };
            vec![
                short_test(test).to_string(),
                ps.to_string(),
                target.to_string(),
                median(qps.clone()).map(|q| format!("{q:.0}")).unwrap_or_else(|| "-".into()),
                if qps.is_empty() { "-".into() } else { format!("{lo:.0}-{hi:.0}") },
                p95.map(|p| format!("{p:.2}")).unwrap_or_else(|| "-".into()),
                errors,
                r_direct,
                r_haproxy,
                r_plain,
                cpu.unwrap_or_else(|| "-".into()),
                user.unwrap_or_else(|| "-".into()),
                r_cpu,
                syscalls.unwrap_or_else(|| "-".into()),
                switches.unwrap_or_else(|| "-".into()),
                segments.unwrap_or_else(|| "-".into()),
                vs_base(|o| Some(o.qps)),
                vs_base(|o| o.cpu_us),
                vs_base(|o| o.cpu_user_us),
                host.unwrap_or_else(|| "-".into()),
                added.map(|c| format!("{c:.1}")).unwrap_or_default(),
                server,
                server_calls,
                server_switches,
                questions,
                client,
                rest,
                failures,
            ]
        })
        .collect();
    let mut table = Table { header: header.iter().map(|s| s.to_string()).collect(), rows };
    if samples.iter().all(|s| s.round == 1) {
        table.drop_column("QPS min-max");
    }
    if !samples.iter().any(|s| s.target == "gateway-plain") {
        table.drop_column("gw/plain");
    }
    if !samples.iter().any(|s| s.outcome.cpu_us.is_some()) {
        table.drop_column("CPU us/stmt");
        table.drop_column("user us/stmt");
        table.drop_column("cpu/haproxy");
    }
    if !samples.iter().any(|s| s.outcome.syscalls.is_some()) {
        table.drop_column("syscalls/stmt");
        table.drop_column("cs/stmt");
    }
    if !samples.iter().any(|s| s.outcome.segments.is_some()) {
        table.drop_column("segs/stmt");
    }
    if !samples.iter().any(|s| s.target.ends_with("-base")) {
        table.drop_column("qps/base");
        table.drop_column("cpu/base");
        table.drop_column("user/base");
    }
    if !samples.iter().any(|s| s.outcome.host_us.is_some()) {
        table.drop_column("host us/stmt");
        table.drop_column("added us/stmt");
    }
    if !samples.iter().any(|s| s.outcome.server_us.is_some()) {
        table.drop_column("server us/stmt");
        table.drop_column("client us/stmt");
        table.drop_column("rest us/stmt");
    }
    if !samples.iter().any(|s| s.outcome.server_syscalls.is_some()) {
        table.drop_column("server sc/stmt");
        table.drop_column("server cs/stmt");
    }
    if !samples.iter().any(|s| s.outcome.server_questions.is_some()) {
        table.drop_column("server q/stmt");
    }
    table
}

/// The machine's busy time per statement that no process of the run was charged with: host
/// minus the proxy (none for direct), the servers and sysbench. Kernel workers (a splice's
/// redirects), softirq and interrupts that ran outside those processes, and anything else on
/// the machine.
fn rest_us(o: &Outcome) -> Option<f64> {
    Some(o.host_us? - o.cpu_us.unwrap_or(0.0) - o.server_us? - o.client_us?)
}

/// Total ignored errors, with the InnoDB deadlocks behind them when there were any: `2 (2 deadlocks)`.
fn errors_cell<'a>(outcomes: impl IntoIterator<Item = &'a Outcome>) -> String {
    let (mut errors, mut deadlocks) = (0, 0);
    for o in outcomes {
        errors += o.errors;
        deadlocks += o.deadlocks.unwrap_or(0);
    }
    if errors > 0 && deadlocks > 0 {
        format!("{errors} ({deadlocks} deadlock{})", if deadlocks == 1 { "" } else { "s" })
    } else {
        errors.to_string()
    }
}

fn short_test(test: &str) -> &str {
    test.strip_prefix("oltp_").unwrap_or(test)
}

fn fmt_ratio(r: Option<f64>) -> String {
    r.map(|r| format!("{r:.2}")).unwrap_or_else(|| "-".into())
}

/// Columns of words (left-aligned); all others hold numbers (right-aligned).
const WORD_COLUMNS: [&str; 4] = ["test", "ps mode", "target", "failures"];

fn is_word_column(title: &str) -> bool {
    WORD_COLUMNS.contains(&title)
}

impl Table {
    /// Removes the column titled `title`, if present.
    pub fn drop_column(&mut self, title: &str) {
        if let Some(c) = self.header.iter().position(|h| h == title) {
            self.header.remove(c);
            for r in &mut self.rows {
                r.remove(c);
            }
        }
    }

    /// Aligned plain text: numbers right-aligned, words left-aligned.
    pub fn to_text(&self) -> String {
        let cols = self.header.len();
        let width: Vec<usize> = (0..cols)
            .map(|c| self.rows.iter().map(|r| r[c].len()).chain([self.header[c].len()]).max().unwrap_or(0))
            .collect();
        let line = |cells: &[String]| {
            let parts: Vec<String> = cells
                .iter()
                .enumerate()
                .map(|(c, s)| {
                    if is_word_column(&self.header[c]) {
                        format!("{s:<w$}", w = width[c])
                    } else {
                        format!("{s:>w$}", w = width[c])
                    }
                })
                .collect();
            parts.join("  ").trim_end().to_string()
        };
        let mut out = line(&self.header);
        out.push('\n');
        out.push_str(&"-".repeat(width.iter().sum::<usize>() + 2 * (cols - 1)));
        out.push('\n');
        for r in &self.rows {
            out.push_str(&line(r));
            out.push('\n');
        }
        out
    }

    /// A GitHub-flavoured markdown table.
    pub fn to_markdown(&self) -> String {
        let mut out = format!("| {} |\n", self.header.join(" | "));
        let seps: Vec<&str> = self.header.iter().map(|h| if is_word_column(h) { "---" } else { "---:" }).collect();
        out.push_str(&format!("| {} |\n", seps.join(" | ")));
        for r in &self.rows {
            let cells: Vec<String> = r.iter().map(|c| c.replace('|', "\\|")).collect();
            out.push_str(&format!("| {} |\n", cells.join(" | ")));
        }
        out
    }
}

/// Every run, one markdown row each (for result.md).
pub fn raw_markdown(samples: &[Sample]) -> String {
    let mut out = String::from(
        "| round | test | ps mode | target | QPS | p95 ms | errors | CPU us/stmt | user us/stmt | syscalls/stmt | cs/stmt | segs/stmt | host us/stmt | server us/stmt | client us/stmt | statements | servers | failure |\n\
         |---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n",
    );
    for s in samples {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {:.0} | {:.2} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            s.round,
            short_test(s.test),
            s.ps_mode,
            s.target,
            s.outcome.qps,
            s.outcome.p95_ms,
            errors_cell([&s.outcome]),
            s.outcome.cpu_us.map(|c| format!("{c:.1}")).unwrap_or_default(),
            s.outcome.cpu_user_us.map(|c| format!("{c:.1}")).unwrap_or_default(),
            s.outcome.syscalls.map(|c| format!("{c:.2}")).unwrap_or_default(),
            s.outcome.switches.map(|c| format!("{c:.2}")).unwrap_or_default(),
            s.outcome.segments.map(|c| format!("{c:.2}")).unwrap_or_default(),
            s.outcome.host_us.map(|c| format!("{c:.1}")).unwrap_or_default(),
            s.outcome.server_us.map(|c| format!("{c:.1}")).unwrap_or_default(),
            s.outcome.client_us.map(|c| format!("{c:.1}")).unwrap_or_default(),
            s.outcome.queries,
            s.outcome.spread.as_deref().unwrap_or(""),
            s.outcome.failure.as_deref().unwrap_or("").replace('|', "\\|")
        ));
    }
    out
}

#[cfg(test)]
mod tests;
