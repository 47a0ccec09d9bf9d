//! Range pruning on RANGE tables: `WHERE c >= lo AND c < hi` (or `BETWEEN`, one-sided bounds)
//! names one partition when every value the range admits lies in it.
//!
//! Only one-level `RANGE(expr)` / `RANGE COLUMNS(c)` tables keyed on one column, and only through
//! a non-decreasing expression (`c`, `TO_DAYS(c)`, `YEAR(c)`, `UNIX_TIMESTAMP(c)`, `c + k`, …;
//! not `MONTH(c)`). A closed bound is cast like a key value (rounding to the column's precision
//! keeps the set of storable values or widens it); an open bound `c < v` becomes `c <= pred(v)`
//! when `v` casts exactly to a type with a next-lower value (integers, DATE, DATETIME, TIMESTAMP,
//! TIME), else it is treated as closed, which only widens the range. The partitions of the two
//! ends must be the same; a missing lower end needs the first partition, a missing upper end the
//! last. Anything else is an error and the statement stays multi-partition.

use crate::sql::{Analysis, RangeOp, TableRef};

use super::cast::{cast, CastContext};
use super::locate::{locate_datums, Location};
use super::scheme::{Column, ColumnType, PartFunc, TableScheme};
use super::statement::{key_value, names_column};
use super::temporal::{date_from_days, days_since_epoch, DateTime};
use super::value::{Datum, KeyValue};
use super::PartitionError;

fn unsupported(msg: impl Into<String>) -> PartitionError {
    PartitionError::Unsupported(msg.into())
}

/// The one partition all rows matching the statement's range comparisons lie in.
pub fn locate_range(
    scheme: &TableScheme,
    analysis: &Analysis<'_>,
    table: &TableRef<'_>,
    ctx: &CastContext,
) -> Result<Location, PartitionError> {
    if scheme.level2.is_some() || !matches!(scheme.level1.func, PartFunc::Range | PartFunc::RangeColumns) {
        return Err(unsupported("range pruning needs a one-level RANGE table"));
    }
    let [c] = scheme.key_columns()?[..] else {
        return Err(unsupported("range pruning needs one key column"));
    };
    if scheme.expression(0).is_some_and(|(e, _)| !e.is_monotonic()) {
        return Err(unsupported("the partition expression is not monotonic"));
    }
    let col = &scheme.columns[c];
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
        (None, None) => return Err(unsupported("no range on the key column")),
        (Some(l), Some(h)) if l == h => l,
        (Some(l), None) if l == last => l,
        (None, Some(0)) => 0,
        _ => return Err(unsupported("the range spans several partitions")),
    };
    let part = &scheme.partitions[p];
    Ok(Location { part_idx: p, part_name: part.name.clone(), sub: None, tablet_id: part.tablet_id })
}

/// The closed end of `c op v`, as a value of `col`.
fn end_value(v: &KeyValue, op: RangeOp, col: &Column, ctx: &CastContext) -> Result<Datum, PartitionError> {
    let step = match op {
        RangeOp::Lt => -1,
        RangeOp::Gt => 1,
        RangeOp::Le | RangeOp::Ge => return cast(v, col, ctx),
    };
    match exact_cast(v, col, ctx).and_then(|d| neighbour(&d, &col.ty, step)) {
        Some(d) => Ok(d),
        None => cast(v, col, ctx),
    }
}

/// `v` cast to `col` only if no rounding or truncation happened (`None` otherwise, or for types
/// without a next value).
fn exact_cast(v: &KeyValue, col: &Column, ctx: &CastContext) -> Option<Datum> {
    let fine = |ty: ColumnType| Column { ty, ..col.clone() };
    match &col.ty {
        ColumnType::Int { .. } if matches!(v, KeyValue::Int(_) | KeyValue::UInt(_)) => cast(v, col, ctx).ok(),
        ColumnType::Date => match cast(v, &fine(ColumnType::DateTime { fsp: 6 }), ctx).ok()? {
            Datum::DateTime(dt) if dt.secs == 0 && dt.usec == 0 && !dt.date.is_zero() => Some(Datum::Date(dt.date)),
            _ => None,
        },
        ColumnType::DateTime { .. } => same(cast(v, col, ctx).ok()?, cast(v, &fine(ColumnType::DateTime { fsp: 6 }), ctx).ok()?),
        ColumnType::Timestamp { .. } => same(cast(v, col, ctx).ok()?, cast(v, &fine(ColumnType::Timestamp { fsp: 6 }), ctx).ok()?),
        ColumnType::Time { .. } => same(cast(v, col, ctx).ok()?, cast(v, &fine(ColumnType::Time { fsp: 6 }), ctx).ok()?),
        _ => None,
    }
}

fn same(a: Datum, b: Datum) -> Option<Datum> {
    (a == b).then_some(a)
}

/// The next value of the column's type above (`step` 1) or below (`step` -1) `d`.
fn neighbour(d: &Datum, ty: &ColumnType, step: i64) -> Option<Datum> {
    let unit = |fsp: u8| 10i64.pow(6 - u32::from(fsp.min(6)));
    match (d, ty) {
        (Datum::Int(i), _) => i.checked_add(step).map(Datum::Int),
        (Datum::UInt(u), _) => u.checked_add_signed(step).map(Datum::UInt),
        (Datum::Date(date), _) => date_from_days(days_since_epoch(*date) + step).map(Datum::Date),
        (Datum::DateTime(dt), ColumnType::DateTime { fsp }) if !dt.is_zero() => {
            DateTime::from_epoch_micros(dt.epoch_micros() + step * unit(*fsp)).map(Datum::DateTime)
        }
        (Datum::Timestamp(us), ColumnType::Timestamp { fsp }) => us.checked_add(step * unit(*fsp)).map(Datum::Timestamp),
        (Datum::Time(us), ColumnType::Time { fsp }) => us.checked_add(step * unit(*fsp)).map(Datum::Time),
        _ => None,
    }
}
