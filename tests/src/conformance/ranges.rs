//! Range predicates on RANGE tables (issue 14): generated `WHERE` ranges (`>= AND <`, `> AND <=`,
//! `BETWEEN`, one-sided, flipped operands) with ends on and next to the partition bounds; the
//! partition `gateway locate --sql` names for `SELECT * FROM t WHERE …` is checked against the
//! kernel: its `EXPLAIN` pruning (`partitions(p1)`, `partitions(p[1-2])`) must include it and
//! `SELECT count(*) … PARTITION (pN) WHERE …` must count every matching row; and where the kernel
//! prunes to one partition we must name that one (a missed placement is a failure too).
//!
//! The tables are loaded with rows as in the placement conformance ([`super::kernel::load`]),
//! boundary values included, so the count check sees rows on both sides of every bound.

use std::collections::BTreeSet;
use std::time::Instant;

use anyhow::{bail, Context};

use super::gen::{mix, pick, Rng};
use super::kernel::{self, KernelTable};
use super::locate::{self, Answer};
use super::model::Kind;
use super::spec::{table, TableSpec};
use super::tables::i;
use crate::seekdb::Seekdb;

/// Predicates per table.
const PREDICATES: usize = 300;

/// How a table's range ends are written: positions (integers, ordered like the column) and the
/// literal of a position.
#[derive(Clone, Copy)]
pub enum Axis {
    /// Integers as themselves.
    Int,
    /// Days since 1970-01-01 as `'YYYY-MM-DD'` (or `YYYYMMDD` numbers).
    Date,
    /// Seconds since 1970-01-01 as `'YYYY-MM-DD hh:mm:ss'` at a UTC offset (seconds east).
    DateTime(i64),
}

impl Axis {
    fn literal(self, pos: i64, rng: &mut Rng) -> String {
        match self {
            Axis::Int => pos.to_string(),
            Axis::Date => {
                let text = super::gen::local_datetime(pos * 86_400, 0)[..10].to_string();
                match rng.below(100) {
                    0..=14 => text.replace('-', ""),
                    // A time part the DATE comparison keeps (`d < '2024-02-01 12:00:00'` admits 02-01).
                    15..=24 => format!("'{text} {}'", rng.pick(&["12:00:00", "00:00:00.5", "23:59:59"])),
                    _ => format!("'{text}'"),
                }
            }
            // Sometimes a fraction the column rounds (the literal then is no exact open bound).
            Axis::DateTime(tz) => match rng.below(100) {
                0..=11 => format!("'{}.{}'", super::gen::local_datetime(pos, tz), rng.pick(&["5", "4", "999999"])),
                _ => format!("'{}'", super::gen::local_datetime(pos, tz)),
            },
        }
    }
}

/// A RANGE table and how to write ranges on its key column.
pub struct RangeTable {
    /// The table (one level, RANGE or RANGE COLUMNS on `column`).
    pub spec: TableSpec,
    /// The key column.
    pub column: &'static str,
    /// Literal form of positions.
    pub axis: Axis,
    /// Positions of the partition bounds (ends are drawn on and next to them).
    pub bounds: Vec<i64>,
    /// Lowest and highest position drawn at random.
    pub span: (i64, i64),
    /// The last bound's position when the table has no MAXVALUE partition: the low end of a
    /// range stays two units below it, because a range no partition can hold is empty and the
    /// kernel's EXPLAIN then shows an arbitrary partition (`p0`, or the last one).
    pub top: Option<i64>,
}

fn days(y: i64, m: i64, d: i64) -> i64 {
    // Days since 1970-01-01 (proleptic Gregorian).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468
}

/// The range-predicate tables.
pub fn tables() -> Vec<RangeTable> {
    let month_days: Vec<i64> = [(2024, 1), (2024, 2), (2024, 3)].iter().map(|&(y, m)| days(y, m, 1)).collect();
    let month_secs: Vec<i64> = month_days.iter().map(|d| d * 86_400).collect();
    let dates = || {
        mix(
            40,
            pick(&[
                "'2023-12-31'",
                "'2024-01-01'",
                "'2024-01-31'",
                "'2024-02-01'",
                "'2024-02-29'",
                "'2024-03-01'",
                "NULL",
            ]),
            super::gen::any(Kind::Date, true, 0),
        )
    };
    let month_parts = "(PARTITION p0 VALUES LESS THAN (739251), PARTITION p1 VALUES LESS THAN (739282), \
                       PARTITION p2 VALUES LESS THAN (739311), PARTITION pmax VALUES LESS THAN MAXVALUE)";
    let dt = Kind::DateTime { fsp: 0 };
    let dt_edges = pick(&[
        "'2023-12-31 23:59:59'",
        "'2024-01-01 00:00:00'",
        "'2024-01-31 23:59:59'",
        "'2024-02-01 00:00:00'",
        "'2024-03-01 00:00:00'",
        "'2024-02-29 12:00:00'",
    ]);
    let ts_edges = pick(&[
        "'2024-01-01 07:59:59'",
        "'2024-01-01 08:00:00'",
        "'2024-02-01 08:00:00'",
        "'2024-02-01 07:59:59'",
        "'2024-03-01 08:00:00'",
    ]);
    let year_range = (days(1990, 1, 1), days(2030, 12, 31));
    vec![
        RangeTable {
            spec: table("rp_rangec_datetime")
                .col_gen("created", dt, mix(40, dt_edges, super::gen::any(dt, true, 0)))
                .key(&["created"])
                .part(
                    "PARTITION BY RANGE COLUMNS(created) (PARTITION p0 VALUES LESS THAN ('2024-01-01'), \
                     PARTITION p1 VALUES LESS THAN ('2024-02-01'), PARTITION p2 VALUES LESS THAN ('2024-03-01'), \
                     PARTITION pmax VALUES LESS THAN (MAXVALUE))",
                )
                .build(),
            column: "created",
            axis: Axis::DateTime(0),
            bounds: month_secs.clone(),
            span: (year_range.0 * 86_400, year_range.1 * 86_400),
            top: None,
        },
        RangeTable {
            spec: table("rp_to_days_date").col_gen("d", Kind::Date, dates()).key(&["d"]).part(&format!("PARTITION BY RANGE(to_days(d)) {month_parts}")).build(),
            column: "d",
            axis: Axis::Date,
            bounds: month_days.clone(),
            span: year_range,
            top: None,
        },
        RangeTable {
            spec: table("rp_to_days_datetime")
                .col_gen("dt", dt, mix(40, pick(&["'2023-12-31 23:59:59'", "'2024-01-01 00:00:00'", "'2024-02-01 00:00:00'", "'2024-01-31 23:59:59'"]), super::gen::any(dt, true, 0)))
                .key(&["dt"])
                .part(&format!("PARTITION BY RANGE(to_days(dt)) {month_parts}"))
                .build(),
            column: "dt",
            axis: Axis::DateTime(0),
            bounds: month_secs.clone(),
            span: (year_range.0 * 86_400, year_range.1 * 86_400),
            top: None,
        },
        RangeTable {
            spec: table("rp_unix_timestamp")
                .col_gen("ts", Kind::Timestamp, mix(40, ts_edges, super::gen::any(Kind::Timestamp, true, 8 * 3600)))
                .key(&["ts"])
                .part(
                    "PARTITION BY RANGE(unix_timestamp(ts)) (PARTITION p0 VALUES LESS THAN (1704067200), \
                     PARTITION p1 VALUES LESS THAN (1706745600), PARTITION p2 VALUES LESS THAN (1709251200), \
                     PARTITION pmax VALUES LESS THAN MAXVALUE)",
                )
                .tz("+08:00")
                .build(),
            column: "ts",
            axis: Axis::DateTime(8 * 3600),
            bounds: month_secs.clone(),
            span: (1_600_000_000, 1_800_000_000),
            top: None,
        },
        RangeTable {
            spec: table("rp_year_date")
                .col_gen("d", Kind::Date, dates())
                .key(&["d"])
                .part(
                    "PARTITION BY RANGE(year(d)) (PARTITION p0 VALUES LESS THAN (2000), PARTITION p1 VALUES LESS THAN (2024), \
                     PARTITION p2 VALUES LESS THAN (2025), PARTITION p3 VALUES LESS THAN MAXVALUE)",
                )
                .build(),
            column: "d",
            axis: Axis::Date,
            bounds: vec![days(2000, 1, 1), days(2024, 1, 1), days(2025, 1, 1)],
            span: year_range,
            top: None,
        },
        RangeTable {
            spec: table("rp_int_nomax")
                .col_gen("c", i(32), mix(40, pick(&["-1", "0", "9", "10", "99", "100", "999"]), super::gen::ints(-500, 999, 3)))
                .key(&["c"])
                .part(
                    "PARTITION BY RANGE(c) (PARTITION p0 VALUES LESS THAN (0), PARTITION p1 VALUES LESS THAN (10), \
                     PARTITION p2 VALUES LESS THAN (100), PARTITION p3 VALUES LESS THAN (1000))",
                )
                .build(),
            column: "c",
            axis: Axis::Int,
            bounds: vec![0, 10, 100, 1000],
            span: (-600, 1200),
            top: Some(1000),
        },
        RangeTable {
            spec: table("rp_rangec_date_nomax")
                .col_gen("d", Kind::Date, mix(50, pick(&["'2023-12-31'", "'2024-01-01'", "'2024-01-31'", "'2024-02-01'", "'2024-02-29'"]), super::gen::filter(super::gen::any(Kind::Date, true, 0), |v| v < "'2024-03-01'" || v == "NULL")))
                .key(&["d"])
                .part(
                    "PARTITION BY RANGE COLUMNS(d) (PARTITION p0 VALUES LESS THAN ('2024-01-01'), \
                     PARTITION p1 VALUES LESS THAN ('2024-02-01'), PARTITION p2 VALUES LESS THAN ('2024-03-01'))",
                )
                .build(),
            column: "d",
            axis: Axis::Date,
            bounds: month_days.clone(),
            span: year_range,
            top: Some(days(2024, 3, 1)),
        },
        RangeTable {
            spec: table("rp_month_not_monotonic").col_gen("d", Kind::Date, dates()).key(&["d"]).part(
                "PARTITION BY RANGE(month(d)) (PARTITION p0 VALUES LESS THAN (2), PARTITION p1 VALUES LESS THAN (3), \
                 PARTITION pmax VALUES LESS THAN MAXVALUE)",
            ).build(),
            column: "d",
            axis: Axis::Date,
            bounds: month_days,
            span: year_range,
            top: None,
        },
    ]
}

/// A position: on or next to a bound, or anywhere in the span.
fn position(rng: &mut Rng, t: &RangeTable) -> i64 {
    if rng.chance(70) {
        let b = *rng.pick(&t.bounds);
        let unit = match t.axis {
            Axis::DateTime(_) => *rng.pick(&[1, 1, 86_400, 3600]),
            _ => 1,
        };
        b + unit * rng.range(-2, 2) as i64
    } else {
        rng.range(i128::from(t.span.0), i128::from(t.span.1)) as i64
    }
}

/// One `WHERE` condition with `lo <= hi` (no empty ranges: the kernel shows those as `p0`).
fn predicate(rng: &mut Rng, t: &RangeTable) -> String {
    let (mut a, mut b) = (position(rng, t), position(rng, t));
    if a > b {
        std::mem::swap(&mut a, &mut b);
    }
    if a == b {
        b += 1;
    }
    if let Some(top) = t.top {
        a = a.min(top - 2);
    }
    let (lo, hi) = (t.axis.literal(a, rng), t.axis.literal(b, rng));
    let c = t.column;
    match rng.below(9) {
        0 => format!("{c} >= {lo} AND {c} < {hi}"),
        1 => format!("{c} > {lo} AND {c} <= {hi}"),
        2 => format!("{c} BETWEEN {lo} AND {hi}"),
        3 => format!("{c} < {hi}"),
        4 => format!("{c} <= {hi}"),
        5 => format!("{c} > {lo}"),
        6 => format!("{c} >= {lo}"),
        7 => format!("{lo} < {c} AND {hi} >= {c}"),
        _ => format!("id >= 0 AND {c} >= {lo} AND {c} <= {hi}"),
    }
}

/// Partition indexes of an `EXPLAIN` `partitions(…)` list: `p1`, `p[1-3]`, `p0, p[2-3]`.
pub fn explain_partitions(list: &str) -> anyhow::Result<BTreeSet<usize>> {
    let mut out = BTreeSet::new();
    let mut rest = list.trim();
    while !rest.is_empty() {
        let item_end =
            if rest.starts_with("p[") { rest.find(']').map(|i| i + 1) } else { rest.find(',') }.unwrap_or(rest.len());
        let item = &rest[..item_end];
        if let Some(inner) = item.strip_prefix("p[").and_then(|s| s.strip_suffix(']')) {
            for part in inner.split(',') {
                let (a, b) = part.split_once('-').unwrap_or((part, part));
                let (a, b): (usize, usize) = (a.trim().parse()?, b.trim().parse()?);
                out.extend(a..=b);
            }
        } else {
            out.insert(
                item.trim()
                    .strip_prefix('p')
                    .context("partition name")?
                    .parse()
                    .with_context(|| format!("partition {item:?}"))?,
            );
        }
        rest = rest[item_end..].trim_start_matches([',', ' ']);
    }
    Ok(out)
}

/// The kernel's pruned partition set for each condition.
fn kernel_pruning(db: &Seekdb, t: &RangeTable, conds: &[String]) -> anyhow::Result<Vec<BTreeSet<usize>>> {
    let mut script = t.spec.time_zone.as_ref().map(|tz| format!("SET time_zone = '{tz}';\n")).unwrap_or_default();
    for (i, c) in conds.iter().enumerate() {
        script.push_str(&format!("SELECT 'Q{i}';\nEXPLAIN SELECT * FROM `{}` WHERE {c};\n", t.spec.name));
    }
    let out = db.sql(&script)?;
    let mut sets = Vec::new();
    let mut current: Option<String> = None;
    let flush = |text: Option<String>, sets: &mut Vec<BTreeSet<usize>>| -> anyhow::Result<()> {
        if let Some(text) = text {
            let start = text.find("partitions(").context("EXPLAIN without partitions(…)")? + "partitions(".len();
            let end = text[start..].find(')').context("unterminated partitions(…)")? + start;
            sets.push(explain_partitions(&text[start..end])?);
        }
        Ok(())
    };
    for line in out.lines() {
        if line.starts_with('Q') && line[1..].parse::<usize>().is_ok() {
            flush(current.take(), &mut sets)?;
            current = Some(String::new());
        } else if let Some(c) = &mut current {
            c.push_str(line);
            c.push('\n');
        }
    }
    flush(current.take(), &mut sets)?;
    if sets.len() != conds.len() {
        bail!("{}: {} EXPLAIN results for {} conditions", t.spec.name, sets.len(), conds.len());
    }
    Ok(sets)
}

/// Rows matching each condition outside the named partition (0 = all inside it).
fn rows_outside(db: &Seekdb, t: &RangeTable, checks: &[(usize, &str, &str)]) -> anyhow::Result<Vec<(usize, i64)>> {
    if checks.is_empty() {
        return Ok(Vec::new());
    }
    let mut script = t.spec.time_zone.as_ref().map(|tz| format!("SET time_zone = '{tz}';\n")).unwrap_or_default();
    let n = &t.spec.name;
    for (i, part, c) in checks {
        script.push_str(&format!(
            "SELECT {i}, (SELECT count(*) FROM `{n}` WHERE {c}) - (SELECT count(*) FROM `{n}` PARTITION (`{part}`) WHERE {c});\n"
        ));
    }
    let out = db.sql(&script)?;
    out.lines()
        .map(|l| {
            let (i, d) = l.split_once('\t').with_context(|| format!("count row {l:?}"))?;
            Ok((i.parse()?, d.parse()?))
        })
        .collect()
}

/// Outcome of one table.
#[derive(Debug, Default)]
pub struct RangeReport {
    /// Conditions tried.
    pub conditions: usize,
    /// Conditions we placed in one partition.
    pub placed: usize,
    /// Conditions the kernel pruned to one partition.
    pub kernel_single: usize,
    /// Conditions where we and the kernel agree.
    pub agreed: usize,
    /// Disagreements, described.
    pub failures: Vec<String>,
}

/// Runs the generated conditions of one table against the kernel and the locator.
pub fn check_table(
    db: &Seekdb,
    bin: &std::path::Path,
    t: &RangeTable,
    kt: &KernelTable,
    dir: &std::path::Path,
    seed: u64,
) -> anyhow::Result<RangeReport> {
    let mut rng = Rng::for_name(seed, &format!("{}-ranges", t.spec.name));
    let conds: Vec<String> = (0..PREDICATES).map(|_| predicate(&mut rng, t)).collect();
    let ddl_file = dir.join(format!("{}.ddl", t.spec.name));
    std::fs::write(&ddl_file, format!("{}\n", kt.ddl))?;
    let stmts: String = conds.iter().map(|c| format!("SELECT * FROM {} WHERE {c}\n", t.spec.name)).collect();
    std::fs::write(dir.join(format!("{}.sql", t.spec.name)), &stmts)?;
    let (answers, _) = locate::run_with(bin, &ddl_file, t.spec.time_zone.as_deref(), &stmts, &["--sql"])?;
    let pruned = kernel_pruning(db, t, &conds)?;
    let names: Vec<&str> = kt.leaves.iter().map(|l| l.name.as_str()).collect();
    let mut checks = Vec::new();
    for (i, a) in answers.iter().enumerate() {
        if let Answer::Located { name, .. } = a {
            checks.push((i, name.as_str(), conds[i].as_str()));
        }
    }
    let outside: std::collections::HashMap<usize, i64> = rows_outside(db, t, &checks)?.into_iter().collect();
    let mut r = RangeReport { conditions: conds.len(), ..Default::default() };
    for (i, (ours, kernel)) in answers.iter().zip(&pruned).enumerate() {
        let kernel_names: Vec<&str> = kernel.iter().map(|&k| names.get(k).copied().unwrap_or("?")).collect();
        r.kernel_single += usize::from(kernel.len() == 1);
        let verdict = match ours {
            Answer::Located { name, .. } => {
                r.placed += 1;
                let idx = names.iter().position(|n| n == name);
                match (idx.is_some_and(|k| kernel.contains(&k)), outside.get(&i)) {
                    (true, Some(0)) => None,
                    (false, _) => Some(format!("we name {name}, the kernel prunes to {kernel_names:?}")),
                    (true, d) => Some(format!("we name {name}, but {d:?} matching rows lie outside it")),
                }
            }
            Answer::Unknown(why) if kernel.len() == 1 => {
                Some(format!("we say unknown ({why}), the kernel prunes to {kernel_names:?}"))
            }
            Answer::Unknown(_) => None,
        };
        match verdict {
            None => r.agreed += 1,
            Some(v) => r.failures.push(format!("  WHERE {}: {v}", conds[i])),
        }
    }
    Ok(r)
}

/// Loads each table, runs its conditions, prints a line per table and panics on any disagreement.
pub fn run_ranges(group: &str, tables: Vec<RangeTable>) {
    if let Some(reason) = Seekdb::skip_reason() {
        crate::skip::skip(&format!("partition_conformance/{group}"), &reason);
        return;
    }
    let db = super::kernel().unwrap_or_else(|e| panic!("seekdb did not start: {e}"));
    let bin = crate::gateway::gateway_bin().unwrap_or_else(|e| panic!("gateway binary: {e:#}"));
    let dir = crate::scratch_dir(&format!("conformance-{group}")).expect("scratch dir");
    let seed = std::env::var("GATEWAY_CONFORMANCE_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(super::SEED);
    let mut failures = Vec::new();
    let (mut total, mut agreed, mut placed) = (0, 0, 0);
    for t in tables.iter().filter(|t| super::selected(&t.spec.name)) {
        let t0 = Instant::now();
        let result = kernel::load(db, &t.spec, seed).and_then(|kt| check_table(db, &bin, t, &kt, &dir, seed));
        match result {
            Ok(r) => {
                eprintln!(
                    "{:<28} conditions {:>4}  placed {:>4}  kernel single {:>4}  agreed {}/{}  {:.2} s",
                    t.spec.name,
                    r.conditions,
                    r.placed,
                    r.kernel_single,
                    r.agreed,
                    r.conditions,
                    t0.elapsed().as_secs_f64()
                );
                total += r.conditions;
                agreed += r.agreed;
                placed += r.placed;
                if !r.failures.is_empty() {
                    failures.push(format!(
                        "table {}: {} disagreements\n{}",
                        t.spec.name,
                        r.failures.len(),
                        r.failures[..r.failures.len().min(20)].join("\n")
                    ));
                }
            }
            Err(e) => failures.push(format!("{}: {e:#}", t.spec.name)),
        }
    }
    eprintln!("group {group}: {total} conditions, {placed} placed, {agreed} agreed, {} failing", failures.len());
    assert!(failures.is_empty(), "range predicates, group {group}:\n{}", failures.join("\n\n"));
}
