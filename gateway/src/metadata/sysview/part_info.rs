//! `__all_virtual_proxy_partition_info` (docs/routing.md §12): partition functions, expressions and
//! key columns with their `ObObjType`, collation and accuracy, turned into scheme columns and levels.

use crate::metadata::information_schema::TextRow;
use crate::metadata::MetadataError;
use crate::partition::{Column, ColumnType, Level, PartExpr, PartFunc, PartitionError};

use super::cells::Cells;

/// One partition-key column (one row of the view).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartKey {
    /// `part_key_level`: 1 or 2.
    pub level: u8,
    /// `part_key_idx`: the column's index in the table.
    pub idx: i64,
    /// `part_key_name`.
    pub name: String,
    /// `part_key_type` (`ObObjType`).
    pub obj_type: i64,
    /// `part_key_collation_type`.
    pub collation: i64,
    /// `part_key_length`.
    pub length: i64,
    /// `part_key_precision`.
    pub precision: i64,
    /// `part_key_scale`.
    pub scale: i64,
    /// `part_key_extra` or `part_key_expr` is set: a generated column.
    pub generated: bool,
}

/// The table-level data (first row) and every key column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartInfo {
    /// `part_level`: 1 or 2.
    pub level: u8,
    /// `part_type` (`ObPartitionFuncTypeV4`).
    pub part_type: i64,
    /// `sub_part_type`.
    pub sub_part_type: i64,
    /// `part_expr`.
    pub part_expr: String,
    /// `sub_part_expr`.
    pub sub_part_expr: String,
    /// `part_num`: first-level partitions.
    pub part_num: u64,
    /// `all_part_num`: leaf partitions.
    pub all_part_num: u64,
    /// Key columns in `part_key_idx` order.
    pub keys: Vec<PartKey>,
}

fn part_key(c: &Cells<'_>) -> Result<PartKey, MetadataError> {
    let level = c.int(9, "part_key_level")?;
    let generated = [17, 18].iter().any(|&i| c.opt_text(i).is_some_and(|t| !t.trim().is_empty()));
    Ok(PartKey {
        level: u8::try_from(level)
            .ok()
            .filter(|l| (1..=2).contains(l))
            .ok_or_else(|| c.invalid("part_key_level", level))?,
        idx: c.int(10, "part_key_idx")?,
        name: c.text(11, "part_key_name")?.to_string(),
        obj_type: c.int(12, "part_key_type")?,
        collation: c.int_or(13, "part_key_collation_type", 0)?,
        length: c.int_or(14, "part_key_length", -1)?,
        precision: c.int_or(15, "part_key_precision", -1)?,
        scale: c.int_or(16, "part_key_scale", -1)?,
        generated,
    })
}

impl PartInfo {
    /// Parses the rows (columns as in [`super::sql::PART_INFO_COLUMNS`]); `None` if there are none.
    pub fn parse(rows: &[TextRow]) -> Result<Option<PartInfo>, MetadataError> {
        let Some(first) = rows.first() else {
            return Ok(None);
        };
        let c = Cells::new(first, "__all_virtual_proxy_partition_info", 19)?;
        let level = c.int(1, "part_level")?;
        let mut keys = rows
            .iter()
            .map(|r| Cells::new(r, "__all_virtual_proxy_partition_info", 19).and_then(|c| part_key(&c)))
            .collect::<Result<Vec<_>, _>>()?;
        keys.sort_by_key(|k| (k.idx, k.level));
        Ok(Some(PartInfo {
            level: u8::try_from(level)
                .ok()
                .filter(|l| (1..=2).contains(l))
                .ok_or_else(|| c.invalid("part_level", level))?,
            part_type: c.int(5, "part_type")?,
            sub_part_type: c.int_or(7, "sub_part_type", -1)?,
            part_expr: c.opt_text(3).unwrap_or_default().to_string(),
            sub_part_expr: c.opt_text(4).unwrap_or_default().to_string(),
            part_num: c.uint(6, "part_num")?,
            all_part_num: c.opt_int(8, "all_part_num")?.and_then(|v| u64::try_from(v).ok()).unwrap_or(0),
            keys,
        }))
    }

    /// The first level.
    pub fn level1(&self) -> Result<Level, PartitionError> {
        level(self.part_type, &self.part_expr)
    }

    /// The second level, for two-level tables.
    pub fn level2(&self) -> Result<Option<Level>, PartitionError> {
        if self.level < 2 {
            return Ok(None);
        }
        level(self.sub_part_type, &self.sub_part_expr).map(Some)
    }

    /// The key columns as scheme columns, one per name, in table column order.
    pub fn columns(&self) -> Vec<Column> {
        let mut out: Vec<Column> = Vec::new();
        for k in &self.keys {
            if out.iter().any(|c| c.name.eq_ignore_ascii_case(&k.name)) {
                continue;
            }
            let key_hashed = self.key_hashed(&k.name);
            out.push(Column {
                name: k.name.clone(),
                ty: column_type(k, key_hashed),
                collation: collation_name(k.collation),
                generated: k.generated,
            });
        }
        out
    }

    /// The primary key for `KEY()`: the first-level key columns (ODP takes the key rows as the
    /// primary-key columns when `part_expr` is empty).
    pub fn primary_key(&self) -> Vec<String> {
        if !self.part_expr.trim().is_empty() {
            return Vec::new();
        }
        self.keys.iter().filter(|k| k.level == 1).map(|k| k.name.clone()).collect()
    }

    /// Whether a KEY function hashes column `name` (at either level).
    fn key_hashed(&self, name: &str) -> bool {
        let is_key = |t: i64| t == 1 || t == 2;
        self.keys.iter().filter(|k| k.name.eq_ignore_ascii_case(name)).any(|k| match k.level {
            1 => is_key(self.part_type),
            _ => is_key(self.sub_part_type),
        })
    }
}

/// `ObPartitionFuncTypeV4` → the function (INTERVAL and unknown codes are not calculated).
pub fn part_func(code: i64) -> Result<PartFunc, PartitionError> {
    Ok(match code {
        0 => PartFunc::Hash,
        1 => PartFunc::Key,
        2 => PartFunc::KeyImplicit,
        3 => PartFunc::Range,
        4 => PartFunc::RangeColumns,
        5 => PartFunc::List,
        6 => PartFunc::ListColumns,
        7 => return Err(PartitionError::Unsupported("INTERVAL partitioning".into())),
        c => return Err(PartitionError::Unsupported(format!("partition function type {c}"))),
    })
}

/// One level from its function code and expression text (`c1`, `` `c1`, `c2` ``, `c1+1`, empty).
pub fn level(code: i64, expr: &str) -> Result<Level, PartitionError> {
    let func = part_func(code)?;
    let text = expr.trim();
    if text.is_empty() {
        if matches!(func, PartFunc::Key | PartFunc::KeyImplicit) {
            return Ok(Level { func: PartFunc::KeyImplicit, expr: PartExpr::Columns(Vec::new()) });
        }
        return Err(PartitionError::Unsupported("empty partition expression".into()));
    }
    let names: Vec<String> =
        text.split(',').map(|p| p.trim().trim_matches(|c| c == '`' || c == '"').trim().to_string()).collect();
    let plain = names
        .iter()
        .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80));
    let expr = if plain { PartExpr::Columns(names) } else { PartExpr::Expression(text.to_string()) };
    let func = match (&expr, func) {
        (PartExpr::Columns(c), PartFunc::Key) if c.is_empty() => PartFunc::KeyImplicit,
        (_, f) => f,
    };
    Ok(Level { func, expr })
}

/// Collation id → name (45, 46, 63; others are named by id and not calculated, docs/partition.md §4).
pub fn collation_name(id: i64) -> String {
    match id {
        45 => "utf8mb4_general_ci".into(),
        46 => "utf8mb4_bin".into(),
        63 => "binary".into(),
        other => format!("collation#{other}"),
    }
}

fn fsp(scale: i64) -> Option<u8> {
    u8::try_from(scale.max(0)).ok().filter(|s| *s <= 6)
}

/// `ObObjType` id → column type (docs/routing.md §12, docs/partition.md §4). The classic DATE/DATETIME
/// (19/17) and legacy NUMBER (15/16) hash differently from the types the scheme models (52/53,
/// DecimalInt); they are accepted for comparisons but not under a KEY function.
pub fn column_type(k: &PartKey, key_hashed: bool) -> ColumnType {
    let other = || ColumnType::Other(format!("ObObjType {}", k.obj_type));
    let len = u32::try_from(k.length.max(0)).unwrap_or(u32::MAX);
    let binary = k.collation == 63;
    let int = |bytes: u8, unsigned: bool| ColumnType::Int { bytes, unsigned };
    let decimal = || match (u8::try_from(k.precision), u8::try_from(k.scale.max(0))) {
        (Ok(precision), Ok(scale)) if precision > 0 => ColumnType::Decimal { precision, scale },
        _ => other(),
    };
    let legacy = |t: ColumnType| if key_hashed { other() } else { t };
    match k.obj_type {
        1 => int(1, false),
        2 => int(2, false),
        3 => int(3, false),
        4 => int(4, false),
        5 => int(8, false),
        6 => int(1, true),
        7 => int(2, true),
        8 => int(3, true),
        9 => int(4, true),
        10 => int(8, true),
        11 | 13 => ColumnType::Float,
        12 | 14 => ColumnType::Double,
        15 | 16 => legacy(decimal()),
        50 => decimal(),
        17 => fsp(k.scale).map_or_else(other, |fsp| legacy(ColumnType::DateTime { fsp })),
        53 => fsp(k.scale).map_or_else(other, |fsp| ColumnType::DateTime { fsp }),
        18 => fsp(k.scale).map_or_else(other, |fsp| ColumnType::Timestamp { fsp }),
        19 => legacy(ColumnType::Date),
        52 => ColumnType::Date,
        20 => fsp(k.scale).map_or_else(other, |fsp| ColumnType::Time { fsp }),
        21 => ColumnType::Year,
        22 if binary => ColumnType::VarBinary { len },
        22 => ColumnType::VarChar { len },
        23 if binary => ColumnType::Binary { len },
        23 => ColumnType::Char { len },
        _ => other(),
    }
}
