//! `__all_virtual_proxy_partition` / `…_sub_partition` rows (docs/routing.md §12) and the
//! `TableScheme` they make with the partitioning info, tablet ids filled in.
//!
//! Rows are matched explicitly, never by row order ([QUIRK] docs/routing.md §12): HASH/KEY partitions by their
//! position column (`part_position` / `sub_part_position` = the kernel's `part_idx`), RANGE
//! partitions by their upper bound (cast to the key types and sorted), LIST partitions by id
//! (their order does not change the result); sub-partitions join their parent by `part_id`.

use std::cmp::Ordering;

use crate::metadata::information_schema::TextRow;
use crate::metadata::MetadataError;
use crate::partition::cast::cast;
use crate::partition::locate::compare;
use crate::partition::{
    BoundSpec, CastContext, Column, Datum, Level, PartExpr, PartFunc, Partition, PartitionError, SubPartition,
    TableScheme,
};

use super::bounds::bound;
use super::cells::Cells;
use super::part_info::PartInfo;

/// One row of either partition view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartRow {
    /// `tablet_id`.
    pub tablet_id: u64,
    /// `ls_id` (−1 unknown).
    pub ls_id: i64,
    /// `part_id` (the parent's, for a sub-partition).
    pub part_id: i64,
    /// `sub_part_id` (sub-partitions only).
    pub sub_part_id: Option<i64>,
    /// `part_name`.
    pub name: String,
    /// `sub_part_num` (first level only).
    pub sub_part_num: u64,
    /// `high_bound_val` text.
    pub high_bound: Option<String>,
    /// `part_position` / `sub_part_position`.
    pub position: Option<i64>,
}

impl PartRow {
    /// A `__all_virtual_proxy_partition` row: tablet_id, ls_id, part_id, part_name,
    /// high_bound_val_bin, sub_part_num, high_bound_val, part_position.
    pub fn partition(row: &TextRow) -> Result<PartRow, MetadataError> {
        let c = Cells::new(row, "__all_virtual_proxy_partition", 8)?;
        Ok(PartRow {
            tablet_id: c.uint(0, "tablet_id")?,
            ls_id: c.int_or(1, "ls_id", -1)?,
            part_id: c.int(2, "part_id")?,
            sub_part_id: None,
            name: c.text(3, "part_name")?.to_string(),
            sub_part_num: u64::try_from(c.int_or(5, "sub_part_num", 0)?)
                .map_err(|_| c.invalid("sub_part_num", "negative"))?,
            high_bound: c.opt_text(6).map(str::to_string),
            position: c.opt_int(7, "part_position")?,
        })
    }

    /// A `__all_virtual_proxy_sub_partition` row: tablet_id, ls_id, part_id, sub_part_id,
    /// part_name, high_bound_val_bin, high_bound_val, sub_part_position.
    pub fn sub_partition(row: &TextRow) -> Result<PartRow, MetadataError> {
        let c = Cells::new(row, "__all_virtual_proxy_sub_partition", 8)?;
        Ok(PartRow {
            tablet_id: c.uint(0, "tablet_id")?,
            ls_id: c.int_or(1, "ls_id", -1)?,
            part_id: c.int(2, "part_id")?,
            sub_part_id: Some(c.int(3, "sub_part_id")?),
            name: c.text(4, "part_name")?.to_string(),
            sub_part_num: 0,
            high_bound: c.opt_text(6).map(str::to_string),
            position: c.opt_int(7, "sub_part_position")?,
        })
    }
}

/// A partition or sub-partition with its bound, before ordering.
struct Item<'a> {
    row: &'a PartRow,
    bound: BoundSpec,
}

fn invalid(table: &str, msg: String) -> MetadataError {
    MetadataError::Invalid(format!("partitions of {table}: {msg}"))
}

/// Builds the scheme of `table`. Malformed or inconsistent rows are `Invalid`; functions, types
/// or bounds the gateway does not calculate are `Partition(Unsupported)`.
pub fn scheme(table: &str, info: &PartInfo, parts: &[PartRow], subs: &[PartRow]) -> Result<TableScheme, MetadataError> {
    let columns = info.columns();
    let level1 = info.level1()?;
    let level2 = info.level2()?;
    if info.part_num > 0 && parts.len() as u64 != info.part_num {
        return Err(invalid(table, format!("{} partition rows for part_num {}", parts.len(), info.part_num)));
    }
    let ids: Vec<i64> = parts.iter().map(|p| p.part_id).collect();
    if let Some(dup) = ids.iter().enumerate().find(|(i, id)| ids[..*i].contains(id)) {
        return Err(invalid(table, format!("part_id {} appears twice", dup.1)));
    }
    if let Some(orphan) = subs.iter().find(|s| !ids.contains(&s.part_id)) {
        return Err(invalid(table, format!("sub-partition {} has no parent part_id {}", orphan.name, orphan.part_id)));
    }
    let items = ordered(table, &level1, &columns, parts.iter().collect())?;
    let mut partitions = Vec::with_capacity(items.len());
    for item in items {
        partitions.push(partition(table, item, level2.as_ref(), &columns, subs)?);
    }
    Ok(TableScheme::new(table.to_string(), columns, info.primary_key(), level1, level2, partitions))
}

/// One first-level partition with its sub-partitions (two-level tables).
fn partition(
    table: &str,
    item: Item<'_>,
    level2: Option<&Level>,
    columns: &[Column],
    subs: &[PartRow],
) -> Result<Partition, MetadataError> {
    let p = item.row;
    let Some(level2) = level2 else {
        return Ok(Partition {
            name: p.name.as_str().into(),
            bound: item.bound,
            tablet_id: Some(p.tablet_id),
            subs: Vec::new(),
        });
    };
    let own: Vec<&PartRow> = subs.iter().filter(|s| s.part_id == p.part_id).collect();
    if own.len() as u64 != p.sub_part_num {
        return Err(invalid(
            table,
            format!("partition {} has {} sub-partition rows for sub_part_num {}", p.name, own.len(), p.sub_part_num),
        ));
    }
    let subs = ordered(table, level2, columns, own)?
        .into_iter()
        .map(|s| SubPartition { name: s.row.name.as_str().into(), bound: s.bound, tablet_id: Some(s.row.tablet_id) })
        .collect();
    Ok(Partition { name: p.name.as_str().into(), bound: item.bound, tablet_id: None, subs })
}

/// The rows of one level with their bounds, in partition order.
fn ordered<'a>(
    table: &str,
    level: &Level,
    columns: &[Column],
    rows: Vec<&'a PartRow>,
) -> Result<Vec<Item<'a>>, MetadataError> {
    let mut items = rows
        .into_iter()
        .map(|row| Ok(Item { row, bound: bound(level.func, row.high_bound.as_deref())? }))
        .collect::<Result<Vec<_>, PartitionError>>()?;
    match level.func {
        PartFunc::Hash | PartFunc::Key | PartFunc::KeyImplicit => by_position(table, &mut items)?,
        PartFunc::Range | PartFunc::RangeColumns => by_upper_bound(level, columns, &mut items),
        PartFunc::List | PartFunc::ListColumns => items.sort_by_key(|i| (i.row.part_id, i.row.sub_part_id)),
    }
    Ok(items)
}

/// HASH/KEY: the position column must number the rows 0..n−1.
fn by_position(table: &str, items: &mut [Item<'_>]) -> Result<(), MetadataError> {
    items.sort_by_key(|i| i.row.position);
    for (want, item) in items.iter().enumerate() {
        if item.row.position != Some(want as i64) {
            let got = item.row.position.map_or_else(|| "NULL".to_string(), |p| p.to_string());
            return Err(invalid(
                table,
                format!("HASH/KEY partition {} has position {got}, expected {want}", item.row.name),
            ));
        }
    }
    Ok(())
}

/// RANGE: ascending upper bound (MAXVALUE last). Bounds that do not cast keep id order; the
/// scheme then marks them invalid and the level is not calculated.
fn by_upper_bound(level: &Level, columns: &[Column], items: &mut Vec<Item<'_>>) {
    items.sort_by_key(|i| (i.row.part_id, i.row.sub_part_id));
    let PartExpr::Columns(names) = &level.expr else {
        return;
    };
    let Some(cols) =
        names.iter().map(|n| columns.iter().find(|c| c.name.eq_ignore_ascii_case(n))).collect::<Option<Vec<_>>>()
    else {
        return;
    };
    let ctx = CastContext::default();
    let keyed: Option<Vec<Vec<Option<Datum>>>> = items.iter().map(|i| upper(&i.bound, &cols, &ctx)).collect();
    let Some(keys) = keyed else { return };
    let mut order: Vec<usize> = (0..items.len()).collect();
    let mut failed = false;
    order.sort_by(|&a, &b| {
        cmp_upper(&cols, &keys[a], &keys[b]).unwrap_or_else(|| {
            failed = true;
            Ordering::Equal
        })
    });
    if failed {
        return;
    }
    let mut taken: Vec<Option<Item<'_>>> = items.drain(..).map(Some).collect();
    items.extend(order.into_iter().filter_map(|i| taken.get_mut(i).and_then(Option::take)));
}

fn upper(bound: &BoundSpec, cols: &[&Column], ctx: &CastContext) -> Option<Vec<Option<Datum>>> {
    let BoundSpec::LessThan(vals) = bound else {
        return None;
    };
    if vals.len() != cols.len() {
        return None;
    }
    let mut out = Vec::with_capacity(vals.len());
    for (v, c) in vals.iter().zip(cols) {
        out.push(match v {
            None => None,
            Some(v) => Some(cast(v, c, ctx).ok()?),
        });
    }
    Some(out)
}

/// Compares two upper bounds column by column; `None` (MAXVALUE) is above everything.
fn cmp_upper(cols: &[&Column], a: &[Option<Datum>], b: &[Option<Datum>]) -> Option<Ordering> {
    for ((col, x), y) in cols.iter().zip(a).zip(b) {
        let o = match (x, y) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Greater,
            (Some(_), None) => Ordering::Less,
            (Some(x), Some(y)) => compare(col, x, y).ok()?,
        };
        if o != Ordering::Equal {
            return Some(o);
        }
    }
    Some(Ordering::Equal)
}
