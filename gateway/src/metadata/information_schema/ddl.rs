//! From `information_schema` rows to a `CREATE TABLE` text that `partition::parse_create_table`
//! reads (docs/routing.md §12): columns with their types and collations, the primary key, and
//! the partition clause rebuilt from `PARTITIONS`.

use super::client::TextRow;
use crate::metadata::MetadataError;

/// One row of `information_schema.PARTITIONS` (columns in [`partitions_sql`] order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionRow {
    /// `PARTITION_NAME` (NULL for a non-partitioned table).
    pub name: Option<String>,
    /// `SUBPARTITION_NAME`.
    pub sub_name: Option<String>,
    /// `PARTITION_METHOD`.
    pub method: Option<String>,
    /// `SUBPARTITION_METHOD`.
    pub sub_method: Option<String>,
    /// `PARTITION_EXPRESSION`.
    pub expression: Option<String>,
    /// `SUBPARTITION_EXPRESSION`.
    pub sub_expression: Option<String>,
    /// `PARTITION_DESCRIPTION`.
    pub description: Option<String>,
    /// `PARTITION_ORDINAL_POSITION`.
    pub position: u64,
    /// `SUBPARTITION_ORDINAL_POSITION`.
    pub sub_position: u64,
}

/// One row of `information_schema.COLUMNS`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnRow {
    /// `COLUMN_NAME`.
    pub name: String,
    /// `COLUMN_TYPE` (`int(11) unsigned`, `varchar(32)`).
    pub column_type: String,
    /// `COLLATION_NAME` (NULL for non-strings).
    pub collation: Option<String>,
    /// `EXTRA` (`VIRTUAL GENERATED`, `STORED GENERATED`, …).
    pub extra: String,
}

/// A string literal with `'` doubled and `\` escaped.
pub fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "''"))
}

fn ident(s: &str) -> String {
    format!("`{}`", s.replace('`', "``"))
}

/// The PARTITIONS query of one table.
pub fn partitions_sql(db: &str, table: &str) -> String {
    format!(
        "SELECT PARTITION_NAME, SUBPARTITION_NAME, PARTITION_METHOD, SUBPARTITION_METHOD, PARTITION_EXPRESSION, \
         SUBPARTITION_EXPRESSION, PARTITION_DESCRIPTION, PARTITION_ORDINAL_POSITION, SUBPARTITION_ORDINAL_POSITION \
         FROM information_schema.PARTITIONS WHERE TABLE_SCHEMA = {} AND TABLE_NAME = {}",
        quote(db),
        quote(table)
    )
}

/// The COLUMNS query of one table.
pub fn columns_sql(db: &str, table: &str) -> String {
    format!(
        "SELECT COLUMN_NAME, COLUMN_TYPE, COLLATION_NAME, EXTRA FROM information_schema.COLUMNS \
         WHERE TABLE_SCHEMA = {} AND TABLE_NAME = {} ORDER BY ORDINAL_POSITION",
        quote(db),
        quote(table)
    )
}

/// The primary-key query of one table (`STATISTICS`, index `PRIMARY`, in index order).
pub fn primary_key_sql(db: &str, table: &str) -> String {
    format!(
        "SELECT COLUMN_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = {} AND TABLE_NAME = {} \
         AND INDEX_NAME = 'PRIMARY' ORDER BY SEQ_IN_INDEX",
        quote(db),
        quote(table)
    )
}

fn cell(row: &TextRow, i: usize) -> Option<String> {
    row.get(i).cloned().flatten()
}

fn position(row: &TextRow, i: usize) -> u64 {
    cell(row, i).and_then(|s| s.trim().parse().ok()).unwrap_or(0)
}

/// PARTITIONS rows, sorted by partition then sub-partition position.
pub fn partition_rows(rows: &[TextRow]) -> Vec<PartitionRow> {
    let mut out: Vec<PartitionRow> = rows
        .iter()
        .map(|r| PartitionRow {
            name: cell(r, 0),
            sub_name: cell(r, 1),
            method: cell(r, 2),
            sub_method: cell(r, 3),
            expression: cell(r, 4),
            sub_expression: cell(r, 5),
            description: cell(r, 6),
            position: position(r, 7),
            sub_position: position(r, 8),
        })
        .collect();
    out.sort_by_key(|p| (p.position, p.sub_position));
    out
}

/// COLUMNS rows.
pub fn column_rows(rows: &[TextRow]) -> Result<Vec<ColumnRow>, MetadataError> {
    rows.iter()
        .map(|r| {
            let name = cell(r, 0).ok_or_else(|| MetadataError::Invalid("COLUMNS row without a name".into()))?;
            let column_type = cell(r, 1).ok_or_else(|| MetadataError::Invalid(format!("column {name} has no type")))?;
            Ok(ColumnRow { name, column_type, collation: cell(r, 2), extra: cell(r, 3).unwrap_or_default() })
        })
        .collect()
}

/// The partition function keyword of a `PARTITION_METHOD` value, or why it is not supported.
fn method(m: &str) -> Result<&'static str, MetadataError> {
    match m.trim().to_ascii_uppercase().as_str() {
        "HASH" => Ok("HASH"),
        "KEY" => Ok("KEY"),
        "RANGE" => Ok("RANGE"),
        "RANGE COLUMNS" => Ok("RANGE COLUMNS"),
        "LIST" => Ok("LIST"),
        "LIST COLUMNS" => Ok("LIST COLUMNS"),
        other => Err(MetadataError::Invalid(format!("partition method {other} is not calculated"))),
    }
}

fn column_def(c: &ColumnRow) -> String {
    let mut s = format!("{} {}", ident(&c.name), c.column_type);
    if let Some(coll) = &c.collation {
        s.push_str(&format!(" COLLATE {coll}"));
    }
    let extra = c.extra.to_ascii_uppercase();
    if ["GENERATED", "VIRTUAL", "STORED", "PERSISTENT"].iter().any(|w| extra.contains(w)) {
        s.push_str(" GENERATED ALWAYS AS (0) VIRTUAL");
    }
    s
}

/// The bound clause of one partition; `defaults` names the partitions known to be `DEFAULT`.
fn bound(func: &str, row: &PartitionRow, defaults: &[String]) -> String {
    let desc = row.description.as_deref().unwrap_or("").trim();
    let is_default =
        |name: &Option<String>| name.as_ref().is_some_and(|n| defaults.iter().any(|d| d.eq_ignore_ascii_case(n)));
    match func {
        "RANGE" | "RANGE COLUMNS" => format!(" VALUES LESS THAN ({desc})"),
        "LIST" | "LIST COLUMNS" if desc.eq_ignore_ascii_case("default") || is_default(&row.name) => " DEFAULT".into(),
        "LIST" | "LIST COLUMNS" => format!(" VALUES IN ({desc})"),
        _ => String::new(),
    }
}

/// Whether the sub-level bounds are missing from PARTITIONS (RANGE/LIST sub-partitions: OceanBase
/// repeats the parent's description on sub rows), so the DDL must come from `SHOW CREATE TABLE`.
pub fn needs_show_create(parts: &[PartitionRow]) -> bool {
    parts.iter().filter_map(|p| p.sub_method.as_deref()).any(|m| {
        let m = m.trim().to_ascii_uppercase();
        m.starts_with("RANGE") || m.starts_with("LIST")
    })
}

/// Partition names declared `DEFAULT` in a `SHOW CREATE TABLE` text (MariaDB prints `0` as their
/// PARTITION_DESCRIPTION, docs/routing.md §12).
pub fn default_partitions(show_create: &str) -> Vec<String> {
    let flat = show_create.replace('`', " ").replace(['(', ')', ',', '\n', '\t'], " ");
    let words: Vec<&str> = flat.split_whitespace().collect();
    words
        .windows(3)
        .filter(|w| w[0].eq_ignore_ascii_case("partition") && w[2].eq_ignore_ascii_case("default"))
        .map(|w| w[1].to_string())
        .collect()
}

/// Rebuilds `CREATE TABLE` from the rows; `None` for a non-partitioned table.
pub fn create_table(
    table: &str,
    columns: &[ColumnRow],
    primary_key: &[String],
    parts: &[PartitionRow],
    defaults: &[String],
) -> Result<Option<String>, MetadataError> {
    let Some(first) = parts.first() else {
        return Err(MetadataError::NotFound(format!("table {table}")));
    };
    let Some(m) = first.method.as_deref() else { return Ok(None) };
    let func = method(m)?;
    let mut defs: Vec<String> = columns.iter().map(column_def).collect();
    if !primary_key.is_empty() {
        defs.push(format!("PRIMARY KEY ({})", primary_key.iter().map(|c| ident(c)).collect::<Vec<_>>().join(", ")));
    }
    let mut sql = format!(
        "CREATE TABLE {} ({}) PARTITION BY {func}({})",
        ident(table),
        defs.join(", "),
        expr(first.expression.as_deref())
    );
    let sub_func = first.sub_method.as_deref().map(method).transpose()?;
    if let Some(sf) = sub_func {
        sql.push_str(&format!(" SUBPARTITION BY {sf}({})", expr(first.sub_expression.as_deref())));
    }
    sql.push_str(&format!(" ({})", partition_list(func, sub_func.is_some(), parts, defaults)?));
    Ok(Some(sql))
}

fn expr(e: Option<&str>) -> &str {
    e.unwrap_or("").trim()
}

/// `PARTITION p0 VALUES … (SUBPARTITION p0sp0, …), …` in position order.
fn partition_list(
    func: &str,
    two_level: bool,
    parts: &[PartitionRow],
    defaults: &[String],
) -> Result<String, MetadataError> {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < parts.len() {
        let row = &parts[i];
        let name = row.name.as_deref().ok_or_else(|| MetadataError::Invalid("partition row without a name".into()))?;
        let mut def = format!("PARTITION {}{}", ident(name), bound(func, row, defaults));
        let same = parts[i..].iter().take_while(|r| r.position == row.position).count().max(1);
        if two_level {
            let subs: Vec<String> = parts[i..i + same]
                .iter()
                .filter_map(|r| r.sub_name.as_deref())
                .map(|s| format!("SUBPARTITION {}", ident(s)))
                .collect();
            def.push_str(&format!(" ({})", subs.join(", ")));
        }
        out.push(def);
        i += same;
    }
    Ok(out.join(", "))
}
