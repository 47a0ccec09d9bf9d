//! The kernel side of a conformance table: create it, bulk-insert the generated rows, and read
//! back where the kernel put each one (`information_schema.PARTITIONS` for the names and ordinal
//! positions, then `SELECT … FROM t PARTITION (name)` per partition or sub-partition).

use std::collections::BTreeSet;
use std::time::Instant;

use anyhow::{bail, Context};

use super::gen::Rng;
use super::spec::TableSpec;
use crate::seekdb::Seekdb;

/// Rows per `INSERT` statement.
const ROWS_PER_INSERT: usize = 250;

/// A leaf partition as the kernel reports it.
#[derive(Debug, Clone)]
pub struct Leaf {
    /// The name `PARTITION (…)` takes: `SUBPARTITION_NAME` on two-level tables, else `PARTITION_NAME`.
    pub name: String,
    /// 0-based first-level index (`PARTITION_ORDINAL_POSITION - 1`).
    pub part_idx: usize,
    /// 0-based sub-partition index within its partition, on two-level tables.
    pub sub_idx: Option<usize>,
}

/// A row as the kernel stored it.
#[derive(Debug, Clone)]
pub struct Placed {
    /// Row id (generation order).
    pub id: u64,
    /// The key values as SQL literals, in locate input order, joined by `, `.
    pub line: String,
    /// Index into [`KernelTable::leaves`] of the partition the row was read from.
    pub leaf: usize,
}

/// Everything the kernel says about one table.
#[derive(Debug)]
pub struct KernelTable {
    /// `SHOW CREATE TABLE` text as the kernel prints it.
    pub ddl: String,
    /// Leaf partitions in partition order.
    pub leaves: Vec<Leaf>,
    /// Rows ordered by id.
    pub rows: Vec<Placed>,
    /// Seconds spent creating and inserting.
    pub insert_secs: f64,
    /// Seconds spent reading back.
    pub readback_secs: f64,
}

fn tz_prefix(spec: &TableSpec) -> String {
    match &spec.time_zone {
        Some(tz) => format!("SET time_zone = '{tz}';\n"),
        None => String::new(),
    }
}

/// Creates `spec`'s table (dropping an old one), inserts its rows, reads the placement back.
pub fn load(db: &Seekdb, spec: &TableSpec, seed: u64) -> anyhow::Result<KernelTable> {
    let t0 = Instant::now();
    let create = spec.create_sql();
    db.sql(&format!("DROP TABLE IF EXISTS `{}`;\n{create};", spec.name))
        .with_context(|| format!("creating {}:\n{create}", spec.name))?;
    let inserted = insert_rows(db, spec, seed)?;
    let insert_secs = t0.elapsed().as_secs_f64();

    let t1 = Instant::now();
    let ddl = show_create(db, &spec.name)?;
    let leaves = leaves(db, &spec.name)?;
    let mut rows = read_back(db, spec, &leaves)?;
    if spec.as_inserted {
        use_inserted_literals(spec, &inserted, &mut rows)?;
    }
    Ok(KernelTable { ddl, leaves, rows, insert_secs, readback_secs: t1.elapsed().as_secs_f64() })
}

/// Replaces each row's key values by the literals its INSERT used (in key order).
fn use_inserted_literals(spec: &TableSpec, inserted: &[Vec<String>], rows: &mut [Placed]) -> anyhow::Result<()> {
    let idx: Vec<usize> = spec
        .key
        .iter()
        .map(|k| spec.cols.iter().position(|c| &c.name == k).with_context(|| format!("key column {k}")))
        .collect::<anyhow::Result<_>>()?;
    for r in rows {
        let lits = inserted.get(r.id as usize).with_context(|| format!("row {} was not generated", r.id))?;
        r.line = idx.iter().map(|&i| lits[i].as_str()).collect::<Vec<_>>().join(", ");
    }
    Ok(())
}

/// Inserts the generated rows; returns each row's literals (by id).
fn insert_rows(db: &Seekdb, spec: &TableSpec, seed: u64) -> anyhow::Result<Vec<Vec<String>>> {
    let mut rng = Rng::for_name(seed, &spec.name);
    let cols: Vec<String> = spec.cols.iter().map(|c| format!("`{}`", c.name)).collect();
    let head = format!("INSERT INTO `{}` (`id`, {}) VALUES\n", spec.name, cols.join(", "));
    let mut stmts = Vec::new();
    let mut all = Vec::with_capacity(spec.rows);
    let mut id = 0u64;
    while (id as usize) < spec.rows {
        let n = ROWS_PER_INSERT.min(spec.rows - id as usize);
        let values: Vec<String> = (0..n)
            .map(|_| {
                let row = spec.gen_row(&mut rng, id);
                id += 1;
                let text = format!("({}, {})", id - 1, row.join(", "));
                all.push(row);
                text
            })
            .collect();
        stmts.push(format!("{head}{};", values.join(",\n")));
    }
    let script = format!("{}{}\n", tz_prefix(spec), stmts.join("\n"));
    db.sql(&script).map_err(|e| {
        // The CLI names the failing line; show the rows around it.
        let msg = format!("{e:#}");
        let line = msg
            .split("at line ")
            .nth(1)
            .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|n| n.parse::<usize>().ok());
        let context = line.and_then(|l| script.lines().nth(l.saturating_sub(1))).unwrap_or("");
        anyhow::anyhow!("inserting into {}: {msg}\nline: {context}", spec.name)
    })?;
    Ok(all)
}

/// `SHOW CREATE TABLE` text exactly as printed (`--raw`, so newlines are real).
pub fn show_create(db: &Seekdb, table: &str) -> anyhow::Result<String> {
    let out = db.sql_raw(&format!("SHOW CREATE TABLE `{table}`;"))?;
    let (_, ddl) = out.split_once('\t').with_context(|| format!("SHOW CREATE TABLE {table}: {out:?}"))?;
    Ok(ddl.trim_end_matches('\n').to_string())
}

fn leaves(db: &Seekdb, table: &str) -> anyhow::Result<Vec<Leaf>> {
    let out = db.sql(&format!(
        "SELECT PARTITION_NAME, SUBPARTITION_NAME, PARTITION_ORDINAL_POSITION, SUBPARTITION_ORDINAL_POSITION \
         FROM information_schema.PARTITIONS WHERE TABLE_SCHEMA = 'test' AND TABLE_NAME = '{table}' \
         ORDER BY PARTITION_ORDINAL_POSITION, SUBPARTITION_ORDINAL_POSITION;"
    ))?;
    let mut leaves = Vec::new();
    for line in out.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() != 4 {
            bail!("unexpected information_schema.PARTITIONS row {line:?}");
        }
        let pos = |s: &str| -> anyhow::Result<usize> {
            let n: usize = s.parse().with_context(|| format!("ordinal position {s:?} in {line:?}"))?;
            n.checked_sub(1).context("ordinal position 0")
        };
        let (name, sub_idx) = if f[1] == "NULL" { (f[0], None) } else { (f[1], Some(pos(f[3])?)) };
        leaves.push(Leaf { name: name.to_string(), part_idx: pos(f[2])?, sub_idx });
    }
    if leaves.is_empty() {
        bail!("information_schema.PARTITIONS has no rows for {table}");
    }
    Ok(leaves)
}

fn read_back(db: &Seekdb, spec: &TableSpec, leaves: &[Leaf]) -> anyhow::Result<Vec<Placed>> {
    let mut kinds = Vec::new();
    let mut exprs = Vec::new();
    for k in &spec.key {
        let col = spec.col(k).with_context(|| format!("{}: key column {k} is not a column", spec.name))?;
        kinds.push(col.kind);
        exprs.push(col.kind.readback_expr(k));
    }
    let mut script = tz_prefix(spec);
    for (i, leaf) in leaves.iter().enumerate() {
        script.push_str(&format!(
            "SELECT {i}, `id`, {} FROM `{}` PARTITION (`{}`);\n",
            exprs.join(", "),
            spec.name,
            leaf.name
        ));
    }
    let out = db.sql(&script).with_context(|| format!("reading back {}", spec.name))?;
    let mut rows = Vec::with_capacity(spec.rows);
    for line in out.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() != 2 + kinds.len() {
            bail!("{}: unexpected read-back row {line:?}", spec.name);
        }
        let leaf: usize = f[0].parse().with_context(|| format!("read-back row {line:?}"))?;
        let id: u64 = f[1].parse().with_context(|| format!("read-back row {line:?}"))?;
        let lits = kinds
            .iter()
            .zip(&f[2..])
            .map(|(k, v)| k.literal(v))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| anyhow::anyhow!("{}: row {id}: {e}", spec.name))?;
        rows.push(Placed { id, line: lits.join(", "), leaf });
    }
    rows.sort_by_key(|r| r.id);
    let ids: BTreeSet<u64> = rows.iter().map(|r| r.id).collect();
    if rows.len() != spec.rows || ids.len() != spec.rows {
        bail!(
            "{}: inserted {} rows, read back {} ({} distinct ids) from the partitions",
            spec.name,
            spec.rows,
            rows.len(),
            ids.len()
        );
    }
    Ok(rows)
}
