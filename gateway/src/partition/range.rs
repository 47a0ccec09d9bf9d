//! Range pruning on RANGE tables: `WHERE c >= lo AND c < hi` (or `BETWEEN`, one-sided bounds)
//! names one partition when every value the range admits lies in it.
//!
//! Only one-level `RANGE(expr)` / `RANGE COLUMNS(c)` tables keyed on one column, and only through
//! a non-decreasing expression (`c`, `TO_DAYS(c)`, `YEAR(c)`, `UNIX_TIMESTAMP(c)`, `c + k`, …;
//! not `MONTH(c)`). Each end becomes the closed end of the storable values it admits (see
//! `end_value`); the partitions of the two ends must be the same; a missing lower end needs the
//! first partition, a missing upper end the last. Anything else is an error and the statement
//! stays multi-partition.

use crate::sql::{Analysis, RangeOp, TableRef};

use super::cast::{cast, CastContext};
use super::locate::{locate_datums, Location};
use super::scheme::{Column, ColumnType, PartFunc, TableScheme};
use super::statement::{key_value, names_column};
use super::temporal::DateTime;
use super::value::{Datum, KeyValue};
use super::PartitionError;

fn unsupported(msg: impl Into<String>) -> PartitionError {
    PartitionError::Unsupported(msg.into())
}

/// The one partition all rows matching the statement's range comparisons lie in: `Ok(None)` when
/// range pruning does not apply (not a one-level RANGE table on one column, no comparison on
/// that column), an error naming why the range cannot be placed.
pub fn locate_range(
    scheme: &TableScheme,
    analysis: &Analysis<'_>,
    table: &TableRef<'_>,
    ctx: &CastContext,
) -> Result<Option<Location>, PartitionError> {
    if scheme.level2.is_some() || !matches!(scheme.level1.func, PartFunc::Range | PartFunc::RangeColumns) {
        return Ok(None);
    }
    let [c] = scheme.key_columns()?[..] else { return Ok(None) };
    let col = &scheme.columns[c];
    if !analysis.ranges.iter().any(|r| names_column(&r.column, table, &col.name, c)) {
        return Ok(None);
    }
    if scheme.expression(0).is_some_and(|(e, _)| !e.is_monotonic()) {
        return Err(unsupported("range on a column of a partition expression that is not monotonic"));
    }
    let (mut low, mut high): (Option<usize>, Option<usize>) = (None, None);
    for r in analysis.ranges.iter().filter(|r| names_column(&r.column, table, &col.name, c)) {
        let v = key_value(&r.value, &col.name)?;
        if v == KeyValue::Null {
            return Err(unsupported("comparison with NULL"));
        }
        let end = end_value(&v, r.op, col, ctx)?;
        match r.op {
            RangeOp::Gt | RangeOp::Ge => {
                let p = locate_datums(scheme, &[(c, end)])?.part_idx;
                low = Some(low.map_or(p, |q| q.max(p)));
            }
            RangeOp::Lt | RangeOp::Le => {
                let p = match locate_datums(scheme, &[(c, end)]) {
                    Ok(l) => l.part_idx,
                    // Above the last bound: no stored row is, so the range ends in the last partition.
                    Err(PartitionError::NoPartition) => scheme.partitions.len().saturating_sub(1),
                    Err(e) => return Err(e),
                };
                high = Some(high.map_or(p, |q| q.min(p)));
            }
        }
    }
    let last = scheme.partitions.len().checked_sub(1).ok_or(PartitionError::NoPartition)?;
    let p = match (low, high) {
        (Some(l), Some(h)) if l == h => l,
        (Some(l), None) if l == last => l,
        (None, Some(0)) => 0,
        _ => return Err(unsupported("the range spans several partitions")),
    };
    let part = &scheme.partitions[p];
    Ok(Some(Location { part_idx: p, part_name: part.name.clone(), sub: None, tablet_id: part.tablet_id }))
}

/// The closed end of `c op v`, as a value of `col`: the comparison is exact on the literal (the
/// kernel compares `created <= '2024-01-31 23:59:59.5'` without rounding the constant), so an end
/// between two storable values moves to the one inside the range, and an open end on a storable
/// value to its neighbour. Types without such a grid (strings, DECIMAL, floats, YEAR) keep the
/// cast value as a closed end, which can only widen the range.
fn end_value(v: &KeyValue, op: RangeOp, col: &Column, ctx: &CastContext) -> Result<Datum, PartitionError> {
    let Some(fine) = fine_micros(v, col, ctx) else { return cast(v, col, ctx) };
    let unit = grid(&col.ty);
    let floor = fine - fine.rem_euclid(unit);
    let on_grid = floor == fine;
    let end = match op {
        RangeOp::Le => floor,
        RangeOp::Ge if on_grid => fine,
        RangeOp::Ge => floor + unit,
        RangeOp::Lt if on_grid => fine - unit,
        RangeOp::Lt => floor,
        RangeOp::Gt => floor + unit,
    };
    from_micros(end, &col.ty).ok_or_else(|| unsupported("range end outside the column's range"))
}

/// Spacing of the column's values in [`fine_micros`] units.
fn grid(ty: &ColumnType) -> i64 {
    let fsp_unit = |fsp: u8| 10i64.pow(6 - u32::from(fsp.min(6)));
    match ty {
        ColumnType::Date => 86_400_000_000,
        ColumnType::DateTime { fsp } | ColumnType::Timestamp { fsp } | ColumnType::Time { fsp } => fsp_unit(*fsp),
        _ => 1,
    }
}

/// The literal on a fine integer scale of the column's type, without rounding to the column:
/// integers as themselves, DATE / DATETIME as microseconds since the epoch (wall clock),
/// TIMESTAMP as UTC microseconds, TIME as microseconds. `None` for other types and for literals
/// that need more than microsecond precision or are zero dates.
fn fine_micros(v: &KeyValue, col: &Column, ctx: &CastContext) -> Option<i64> {
    let at = |ty: ColumnType| cast(v, &Column { ty, ..col.clone() }, ctx).ok();
    let fraction_digits = match v {
        KeyValue::Str { bytes, .. } => {
            bytes.rsplit(|&b| b == b'.').next().filter(|_| bytes.contains(&b'.')).map_or(0, <[u8]>::len)
        }
        KeyValue::Decimal(d) => d.rsplit('.').next().map_or(0, str::len),
        _ => 0,
    };
    if fraction_digits > 6 {
        return None;
    }
    match (&col.ty, v) {
        (ColumnType::Int { .. }, KeyValue::Int(_) | KeyValue::UInt(_)) => match cast(v, col, ctx).ok()? {
            Datum::Int(i) => Some(i),
            Datum::UInt(u) => i64::try_from(u).ok(),
            _ => None,
        },
        (ColumnType::Date | ColumnType::DateTime { .. }, _) => match at(ColumnType::DateTime { fsp: 6 })? {
            Datum::DateTime(dt) if !dt.is_zero() => Some(dt.epoch_micros()),
            _ => None,
        },
        (ColumnType::Timestamp { .. }, _) => match at(ColumnType::Timestamp { fsp: 6 })? {
            Datum::Timestamp(us) if us != super::temporal::TIMESTAMP_ZERO => Some(us),
            _ => None,
        },
        (ColumnType::Time { .. }, _) => match at(ColumnType::Time { fsp: 6 })? {
            Datum::Time(us) => Some(us),
            _ => None,
        },
        _ => None,
    }
}

/// A value of the column's type from its [`fine_micros`] scale (on the column's grid).
fn from_micros(us: i64, ty: &ColumnType) -> Option<Datum> {
    match ty {
        ColumnType::Int { unsigned: false, .. } => Some(Datum::Int(us)),
        ColumnType::Int { unsigned: true, .. } => u64::try_from(us).ok().map(Datum::UInt),
        ColumnType::Date => DateTime::from_epoch_micros(us).map(|dt| Datum::Date(dt.date)),
        ColumnType::DateTime { .. } => DateTime::from_epoch_micros(us).map(Datum::DateTime),
        ColumnType::Timestamp { .. } => Some(Datum::Timestamp(us)),
        ColumnType::Time { .. } => Some(Datum::Time(us)),
        _ => None,
    }
}
