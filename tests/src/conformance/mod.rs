//! Partition-placement conformance: the OceanBase kernel is the oracle, `gateway locate` the
//! subject (docs/partition.md §10).
//!
//! For every table of the catalogue ([`tables`], [`tables_rl`], [`tables_sub`]) the run creates
//! the table in one shared kernel ([`crate::seekdb::Seekdb`]), bulk-inserts ≥ 1,000 deterministic
//! pseudo-random rows ([`gen`], fixed seed), reads back which (sub-)partition holds each row
//! ([`kernel`]), hands the kernel's `SHOW CREATE TABLE` and the rows' key values as SQL literals
//! to `gateway locate --ddl-file F --batch` ([`locate`]) and requires the same partition name and
//! indexes for every row.
//!
//! Environment: `GATEWAY_CONFORMANCE_SEED` (default [`SEED`]), `GATEWAY_CONFORMANCE_ROWS` (rows
//! per table), `GATEWAY_CONFORMANCE_ONLY` (comma-separated table names or prefixes),
//! `GATEWAY_CONFORMANCE_DUMP=DIR` (write `<table>.ddl`, `<table>.rows`, `<table>.expected` there,
//! for running the locator without a kernel), plus the harness's `GATEWAY_BIN` / `GATEWAY_NO_BUILD`.

pub mod gen;
pub mod kernel;
pub mod locate;
pub mod model;
pub mod ranges;
pub mod spec;
pub mod tables;
pub mod tables_conv;
pub mod tables_expr;
pub mod tables_rl;
pub mod tables_sub;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Instant;

use crate::seekdb::Seekdb;
use kernel::KernelTable;
use locate::Comparison;
use spec::TableSpec;

/// Base seed of the value generators.
pub const SEED: u64 = 0x0b5e_ed20_2405_0001;
/// Mismatches printed per failing table.
const SHOW_MISMATCHES: usize = 20;

fn seed() -> u64 {
    std::env::var("GATEWAY_CONFORMANCE_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(SEED)
}

/// The kernel shared by all groups of the test binary (started by the first that asks; stopped,
/// its namespace and directory removed, at process exit).
pub fn kernel() -> Result<&'static Seekdb, String> {
    static KERNEL: OnceLock<Result<Seekdb, String>> = OnceLock::new();
    KERNEL
        .get_or_init(|| {
            let t0 = Instant::now();
            let r = Seekdb::start("conformance").map_err(|e| format!("{e:#}"));
            if let Ok(db) = &r {
                eprintln!(
                    "seekdb ready in {:.2} s (netns {}, pid {}, select 1 after {:.2} s)",
                    t0.elapsed().as_secs_f64(),
                    db.netns(),
                    db.pid(),
                    db.started_in().as_secs_f64()
                );
            }
            r
        })
        .as_ref()
        .map_err(|e| e.clone())
}

/// Whether `GATEWAY_CONFORMANCE_ONLY` selects the table `name` (all when unset).
pub fn selected(name: &str) -> bool {
    match std::env::var("GATEWAY_CONFORMANCE_ONLY") {
        Ok(list) if !list.trim().is_empty() => list.split(',').any(|p| name.starts_with(p.trim())),
        _ => true,
    }
}

/// Runs one group of tables against the shared kernel and the locator; panics with a report if
/// any row of any table disagrees (or a side fails). Prints `SKIP: …` and returns if the kernel
/// cannot run here.
pub fn run_group(group: &str, specs: Vec<TableSpec>) {
    if let Some(reason) = Seekdb::skip_reason() {
        crate::skip::skip(&format!("partition_conformance/{group}"), &reason);
        return;
    }
    let db = kernel().unwrap_or_else(|e| panic!("seekdb did not start: {e}"));
    let dir = crate::scratch_dir(&format!("conformance-{group}")).expect("scratch dir");
    let locator: Result<PathBuf, String> = crate::gateway::gateway_bin()
        .map_err(|e| format!("{e:#}"))
        .and_then(|bin| locate::available(&bin).map(|_| bin));
    let dump = std::env::var_os("GATEWAY_CONFORMANCE_DUMP").map(PathBuf::from);
    let mut failures: Vec<String> = Vec::new();
    let (mut total_rows, mut total_agreed, mut tables) = (0usize, 0usize, 0usize);
    // Class → (tables, rows, agreed), in first-seen order.
    let mut classes: Vec<(String, usize, usize, usize)> = Vec::new();
    let t_group = Instant::now();
    for spec in specs.iter().filter(|s| selected(&s.name)) {
        tables += 1;
        let kt = match kernel::load(db, spec, seed()) {
            Ok(kt) => kt,
            Err(e) => {
                let msg = format!("{}: kernel side failed: {e:#}", spec.name);
                eprintln!("{msg}");
                failures.push(msg);
                continue;
            }
        };
        let rows: String = kt.rows.iter().map(|r| format!("{}\n", r.line)).collect();
        let ddl_file = dir.join(format!("{}.ddl", spec.name));
        if let Err(e) = write_files(&dir, spec, &kt, &rows).and_then(|_| match &dump {
            Some(d) => std::fs::create_dir_all(d).and_then(|_| write_files(d, spec, &kt, &rows)),
            None => Ok(()),
        }) {
            failures.push(format!("{}: writing input files: {e}", spec.name));
            continue;
        }
        let leaves_used = {
            let mut used: Vec<usize> = kt.rows.iter().map(|r| r.leaf).collect();
            used.sort_unstable();
            used.dedup();
            used.len()
        };
        let head = format!(
            "{:<28} rows {:>5}  partitions {:>2} ({:>2} with rows)  kernel {:.2}+{:.2} s",
            spec.name,
            kt.rows.len(),
            kt.leaves.len(),
            leaves_used,
            kt.insert_secs,
            kt.readback_secs
        );
        total_rows += kt.rows.len();
        let bin = match &locator {
            Ok(bin) => bin,
            Err(why) => {
                eprintln!("{head}  locate: not run");
                if !failures.iter().any(|f| f.starts_with("gateway locate unavailable")) {
                    failures.push(format!("gateway locate unavailable: {why}"));
                }
                continue;
            }
        };
        match locate::run(bin, &ddl_file, spec.time_zone.as_deref(), &rows) {
            Err(e) => {
                eprintln!("{head}  locate: FAILED");
                failures.push(format!("{}: gateway locate failed: {e:#}\nDDL:\n{}", spec.name, kt.ddl));
            }
            Ok((answers, secs)) => {
                let cmp = locate::compare(&kt, &answers);
                total_agreed += cmp.agreed;
                if let Some(class) = &spec.class {
                    match classes.iter_mut().find(|c| &c.0 == class) {
                        Some(c) => (c.1, c.2, c.3) = (c.1 + 1, c.2 + cmp.rows, c.3 + cmp.agreed),
                        None => classes.push((class.clone(), 1, cmp.rows, cmp.agreed)),
                    }
                }
                eprintln!("{head}  locate {secs:.2} s  agreed {}/{}", cmp.agreed, cmp.rows);
                if !cmp.mismatches.is_empty() {
                    failures.push(report(spec, &kt, &cmp));
                }
                statement_forms(bin, &ddl_file, spec, &kt, &mut failures);
            }
        }
    }
    for (class, n, rows, agreed) in &classes {
        eprintln!("class {class:<40} {n:>2} tables  agreed {agreed}/{rows}");
    }
    eprintln!(
        "group {group}: {tables} tables, {total_rows} rows, {total_agreed} agreed, {} failing, {:.1} s",
        failures.len(),
        t_group.elapsed().as_secs_f64()
    );
    if !failures.is_empty() {
        panic!("partition conformance, group {group}: {} failure(s)\n\n{}", failures.len(), failures.join("\n\n"));
    }
}

/// Locates each of the table's statement forms, one statement per row (`gateway locate --sql`),
/// and compares each answer with where the kernel stored the row.
fn statement_forms(bin: &Path, ddl_file: &Path, spec: &TableSpec, kt: &KernelTable, failures: &mut Vec<String>) {
    for form in &spec.statements {
        let named = form.replace("{t}", &spec.name);
        let sql: String = kt.rows.iter().map(|r| format!("{}\n", named.replace("{v}", &r.line))).collect();
        match locate::run_with(bin, ddl_file, spec.time_zone.as_deref(), &sql, &["--sql"]) {
            Err(e) => failures.push(format!("{} `{form}`: gateway locate --sql failed: {e:#}", spec.name)),
            Ok((answers, secs)) => {
                let cmp = locate::compare(kt, &answers);
                eprintln!("{:<28} `{form}`  locate --sql {secs:.2} s  agreed {}/{}", spec.name, cmp.agreed, cmp.rows);
                if !cmp.mismatches.is_empty() {
                    failures.push(format!("statement form `{form}`, {}", report(spec, kt, &cmp)));
                }
            }
        }
    }
}

fn write_files(dir: &Path, spec: &TableSpec, kt: &KernelTable, rows: &str) -> std::io::Result<()> {
    std::fs::write(dir.join(format!("{}.ddl", spec.name)), format!("{}\n", kt.ddl))?;
    std::fs::write(dir.join(format!("{}.rows", spec.name)), rows)?;
    let expected: String = kt
        .rows
        .iter()
        .map(|r| {
            let l = &kt.leaves[r.leaf];
            match l.sub_idx {
                Some(s) => format!("{} {} {s}\n", l.name, l.part_idx),
                None => format!("{} {}\n", l.name, l.part_idx),
            }
        })
        .collect();
    std::fs::write(dir.join(format!("{}.expected", spec.name)), expected)?;
    if let Some(tz) = &spec.time_zone {
        std::fs::write(dir.join(format!("{}.tz", spec.name)), format!("{tz}\n"))?;
    }
    Ok(())
}

fn report(spec: &TableSpec, kt: &KernelTable, c: &Comparison) -> String {
    let wrong = c.mismatches.len() - c.unknown - c.index_only;
    let mut s = format!(
        "table {}: {} rows, {} agreed, {} mismatched ({} wrong partition, {} unknown, {} right name but wrong indexes){}\n",
        spec.name,
        c.rows,
        c.agreed,
        c.mismatches.len(),
        wrong,
        c.unknown,
        c.index_only,
        spec.time_zone.as_deref().map(|tz| format!(", --time-zone={tz}")).unwrap_or_default()
    );
    s.push_str(&format!("DDL (as the kernel prints it):\n{}\n", kt.ddl));
    s.push_str(&format!(
        "first {} mismatches (id: key values => kernel | ours):\n",
        SHOW_MISMATCHES.min(c.mismatches.len())
    ));
    for m in c.mismatches.iter().take(SHOW_MISMATCHES) {
        s.push_str(&format!("  {}: {} => {} | {}\n", m.id, m.line, m.kernel, m.ours));
    }
    s
}
