//! From key values to a partition (docs/partition.md §2): cast, compute each level's index, name the result.

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

use smallvec::SmallVec;

use super::cast::{cast, CastContext};
use super::collation::Collation;
use super::hash::{hash_index, hash_input, key_hash_step, key_index};
use super::scheme::{Bound, Column, PartFunc, TableScheme};
use super::value::{Datum, KeyValue};
use super::PartitionError;

/// Where a row lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// First-level index in partition order.
    pub part_idx: usize,
    /// First-level partition name.
    pub part_name: Arc<str>,
    /// Sub-partition index within the partition and its name, for two-level tables.
    pub sub: Option<(usize, Arc<str>)>,
    /// Tablet id of the partition (or sub-partition) when the scheme carries it.
    pub tablet_id: Option<u64>,
}

impl Location {
    /// The name the server gives the row's (sub-)partition: `p3`, `p1sp2`, `p0ssa`.
    pub fn name(&self) -> &str {
        self.sub.as_ref().map_or(&self.part_name, |(_, n)| n)
    }
}

impl fmt::Display for Location {
    /// `p3 3` or `p1sp2 1 2`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.name(), self.part_idx)?;
        if let Some((i, _)) = &self.sub {
            write!(f, " {i}")?;
        }
        Ok(())
    }
}

/// The partition of a row; `values` follow `TableScheme::key_columns` order.
pub fn locate(scheme: &TableScheme, values: &[KeyValue], ctx: &CastContext) -> Result<Location, PartitionError> {
    locate_with(scheme, values, ctx, Notes(None))
}

/// `locate`, appending a human-readable trace (casts, bytes hashed, hashes, moduli) to `trace`.
pub fn locate_traced(
    scheme: &TableScheme,
    values: &[KeyValue],
    ctx: &CastContext,
    trace: &mut Vec<String>,
) -> Result<Location, PartitionError> {
    locate_with(scheme, values, ctx, Notes(Some(trace)))
}

/// Trace lines, formatted only when someone keeps them (the per-statement path does not).
struct Notes<'a>(Option<&'a mut Vec<String>>);

impl Notes<'_> {
    fn push(&mut self, line: impl FnOnce() -> String) {
        if let Some(t) = &mut self.0 {
            t.push(line());
        }
    }
}

fn locate_with(
    scheme: &TableScheme,
    values: &[KeyValue],
    ctx: &CastContext,
    mut trace: Notes<'_>,
) -> Result<Location, PartitionError> {
    let keys = scheme.key_columns()?;
    if values.len() != keys.len() {
        return Err(PartitionError::Arity { expected: keys.len(), got: values.len() });
    }
    let mut datums: SmallVec<[(usize, Datum); 2]> = SmallVec::with_capacity(keys.len());
    for (v, &c) in values.iter().zip(keys) {
        let col = &scheme.columns[c];
        let d = cast(v, col, ctx)?;
        trace.push(|| format!("{} = {v} -> {d}", col.name));
        datums.push((c, d));
    }
    place(scheme, &datums, &mut trace)
}

/// The partition of cast key values: `(column index, value)` for every key column.
pub(super) fn locate_datums(scheme: &TableScheme, datums: &[(usize, Datum)]) -> Result<Location, PartitionError> {
    place(scheme, datums, &mut Notes(None))
}

fn place(scheme: &TableScheme, datums: &[(usize, Datum)], trace: &mut Notes<'_>) -> Result<Location, PartitionError> {
    let row = |level: usize, trace: &mut Notes<'_>| -> Result<SmallVec<[(&Column, Datum); 2]>, PartitionError> {
        let cols = scheme.level_columns(level)?;
        let value = |c: usize| datums.iter().find(|(k, _)| *k == c).map(|(_, d)| d.clone());
        if let Some((expr, col)) = scheme.expression(level) {
            let v = expr.eval(&scheme.columns, &value)?;
            let d = match (v.v, v.unsigned) {
                (None, _) => Datum::Null,
                (Some(x), true) => Datum::UInt(x as u64),
                (Some(x), false) => Datum::Int(x as i64),
            };
            trace.push(|| format!("{} = {d}", col.name));
            return Ok(smallvec::smallvec![(col, d)]);
        }
        Ok(cols.iter().filter_map(|&c| value(c).map(|d| (&scheme.columns[c], d))).collect())
    };
    let key = row(0, trace)?;
    let p = level_index(scheme.level1.func, &key, scheme.bounds.iter().map(|(b, _)| b), trace)?;
    let part = scheme.partitions.get(p).ok_or(PartitionError::NoPartition)?;
    let Some(level2) = &scheme.level2 else {
        return Ok(Location { part_idx: p, part_name: part.name.clone(), sub: None, tablet_id: part.tablet_id });
    };
    let sub_bounds = scheme.bounds.get(p).map(|(_, s)| s.as_slice()).unwrap_or_default();
    let key = row(1, trace)?;
    let s = level_index(level2.func, &key, sub_bounds.iter(), trace)?;
    let sub = part.subs.get(s).ok_or(PartitionError::NoPartition)?;
    Ok(Location {
        part_idx: p,
        part_name: part.name.clone(),
        sub: Some((s, sub.name.clone())),
        tablet_id: sub.tablet_id,
    })
}

/// Index within one level's list of `bounds.len()` partitions (the bounds are walked, never
/// collected: this runs for every routed statement).
fn level_index<'b>(
    func: PartFunc,
    row: &[(&Column, Datum)],
    bounds: impl ExactSizeIterator<Item = &'b Bound> + Clone,
    trace: &mut Notes<'_>,
) -> Result<usize, PartitionError> {
    let n = bounds.len();
    if n == 0 {
        return Err(PartitionError::NoPartition);
    }
    if let Some(Bound::Invalid(e)) = bounds.clone().find(|b| matches!(b, Bound::Invalid(_))) {
        return Err(e.clone());
    }
    match func {
        PartFunc::Hash => {
            let [(col, d)] = row else {
                return Err(PartitionError::Unsupported("HASH over several columns".into()));
            };
            let v = hash_input(d, col)?;
            let idx = hash_index(v, n);
            trace.push(|| format!("hash: value {v:?} -> abs % {n} = {idx}"));
            Ok(idx)
        }
        PartFunc::Key | PartFunc::KeyImplicit => {
            let mut h = 0u64;
            for (col, d) in row {
                let (next, line) = key_hash_step(d, col, h)?;
                trace.push(|| format!("key: {line}"));
                h = next;
            }
            let idx = key_index(h, n);
            trace.push(|| format!("key: hash {} -> abs % {n} = {idx}", h as i64));
            Ok(idx)
        }
        PartFunc::Range | PartFunc::RangeColumns => {
            for (i, b) in bounds.enumerate() {
                let Bound::LessThan(upper) = b else {
                    return Err(PartitionError::Unsupported("RANGE partition without a bound".into()));
                };
                if row_less_than(row, upper)? {
                    trace.push(|| format!("range: first bound above the key is #{i}"));
                    return Ok(i);
                }
            }
            Err(PartitionError::NoPartition)
        }
        PartFunc::List | PartFunc::ListColumns => {
            let mut default = None;
            for (i, b) in bounds.enumerate() {
                match b {
                    Bound::Default => default = default.or(Some(i)),
                    Bound::In(rows) => {
                        for r in rows {
                            if rows_equal(row, r)? {
                                trace.push(|| format!("list: value listed in #{i}"));
                                return Ok(i);
                            }
                        }
                    }
                    _ => return Err(PartitionError::Unsupported("LIST partition without values".into())),
                }
            }
            trace.push(|| format!("list: not listed, default partition {default:?}"));
            default.ok_or(PartitionError::NoPartition)
        }
    }
}

/// True if the key row sorts strictly below the bound row (`None` = MAXVALUE).
fn row_less_than(row: &[(&Column, Datum)], upper: &[Option<Datum>]) -> Result<bool, PartitionError> {
    for ((col, d), b) in row.iter().zip(upper) {
        let Some(b) = b else { return Ok(true) };
        match compare(col, d, b)? {
            Ordering::Less => return Ok(true),
            Ordering::Greater => return Ok(false),
            Ordering::Equal => {}
        }
    }
    Ok(false)
}

fn rows_equal(row: &[(&Column, Datum)], listed: &[Datum]) -> Result<bool, PartitionError> {
    for ((col, d), b) in row.iter().zip(listed) {
        if compare(col, d, b)? != Ordering::Equal {
            return Ok(false);
        }
    }
    Ok(row.len() == listed.len())
}

/// Orders two values of one column; NULL is below everything.
pub fn compare(col: &Column, a: &Datum, b: &Datum) -> Result<Ordering, PartitionError> {
    let o = match (a, b) {
        (Datum::Null, Datum::Null) => Some(Ordering::Equal),
        (Datum::Null, _) => Some(Ordering::Less),
        (_, Datum::Null) => Some(Ordering::Greater),
        (Datum::Int(x), Datum::Int(y)) => Some(x.cmp(y)),
        (Datum::UInt(x), Datum::UInt(y)) => Some(x.cmp(y)),
        (Datum::Int(x), Datum::UInt(y)) => Some(i128::from(*x).cmp(&i128::from(*y))),
        (Datum::UInt(x), Datum::Int(y)) => Some(i128::from(*x).cmp(&i128::from(*y))),
        (Datum::Double(x), Datum::Double(y)) => x.partial_cmp(y),
        (Datum::Decimal(x), Datum::Decimal(y)) => Some(x.cmp(y)),
        (Datum::Date(x), Datum::Date(y)) => Some(x.cmp(y)),
        (Datum::DateTime(x), Datum::DateTime(y)) => Some(x.cmp(y)),
        (Datum::Timestamp(x), Datum::Timestamp(y)) | (Datum::Time(x), Datum::Time(y)) => Some(x.cmp(y)),
        (Datum::Year(x), Datum::Year(y)) => Some(x.cmp(y)),
        (Datum::Str(x), Datum::Str(y)) => Some(Collation::from_name(&col.collation)?.compare(x, y)),
        _ => None,
    };
    o.ok_or_else(|| PartitionError::Unsupported(format!("cannot compare {a} with {b}")))
}

/// The partition (or sub-partition) named `name`, case-insensitively (docs/partition.md §1).
pub fn locate_by_name(scheme: &TableScheme, name: &str) -> Result<Location, PartitionError> {
    for (i, p) in scheme.partitions.iter().enumerate() {
        if p.name.eq_ignore_ascii_case(name) {
            return Ok(Location { part_idx: i, part_name: p.name.clone(), sub: None, tablet_id: p.tablet_id });
        }
    }
    for (i, p) in scheme.partitions.iter().enumerate() {
        if let Some((j, s)) = p.subs.iter().enumerate().find(|(_, s)| s.name.eq_ignore_ascii_case(name)) {
            return Ok(Location {
                part_idx: i,
                part_name: p.name.clone(),
                sub: Some((j, s.name.clone())),
                tablet_id: s.tablet_id,
            });
        }
    }
    Err(PartitionError::UnknownName(name.to_string()))
}
