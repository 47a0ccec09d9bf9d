//! From an analysed statement to one table's partition: the key values of every INSERT row and
//! every IN alternative are placed, and a single partition is claimed only when all agree.

use smallvec::SmallVec;

use crate::sql::{Analysis, Column as SqlColumn, TableRef, Value};

use super::cast::CastContext;
use super::locate::{locate, locate_by_name, Location};
use super::range::locate_range;
use super::scheme::TableScheme;
use super::value::KeyValue;
use super::PartitionError;

/// Most key-value combinations (IN alternatives × rows) tried before giving up.
const MAX_COMBINATIONS: usize = 256;

/// Inline capacities: the usual statement has one row, one or two key columns and one value
/// each, located without a heap allocation (this runs for every routed statement).
type Rows = SmallVec<[u32; 2]>;
/// The values of one key column in one row (several for an IN list).
type Alternatives = SmallVec<[KeyValue; 1]>;
/// One value per key column.
type KeyRow = SmallVec<[KeyValue; 2]>;

/// The partition a statement touches in `table` (described by `scheme`).
///
/// An explicit `PARTITION (p)` selection wins; otherwise every key column needs a value in every
/// row, or (one-level RANGE tables) the `WHERE` ranges on the key column must lie in one
/// partition (`range::locate_range`). Several partitions, a missing value, an unbound placeholder
/// or an unevaluated expression give an error that names the reason: the caller falls back, it
/// never guesses.
pub fn locate_statement(
    scheme: &TableScheme,
    analysis: &Analysis<'_>,
    table: &TableRef<'_>,
    ctx: &CastContext,
) -> Result<Location, PartitionError> {
    match table.partitions.as_slice() {
        [] => {}
        [one] => return locate_by_name(scheme, one),
        _ => return Err(PartitionError::Unsupported("several partitions selected".into())),
    }
    match locate_keys(scheme, analysis, table, ctx) {
        Err(e) if !analysis.ranges.is_empty() => match locate_range(scheme, analysis, table, ctx) {
            Ok(Some(loc)) => Ok(loc),
            Ok(None) => Err(e),
            Err(why) => Err(why),
        },
        other => other,
    }
}

/// Equalities, `IN` lists and `INSERT` rows: every combination of key values must agree.
fn locate_keys(
    scheme: &TableScheme,
    analysis: &Analysis<'_>,
    table: &TableRef<'_>,
    ctx: &CastContext,
) -> Result<Location, PartitionError> {
    let columns = scheme.key_columns()?;
    if let Some(loc) = single_key(scheme, analysis, table, columns, ctx) {
        return loc;
    }
    let rows = rows_of(analysis);
    let mut found: Option<Location> = None;
    let mut tried = 0usize;
    for row in rows {
        let alternatives: SmallVec<[Alternatives; 2]> =
            columns.iter().map(|&c| values_for(scheme, analysis, table, c, row)).collect::<Result<_, _>>()?;
        for combo in Combinations::new(&alternatives) {
            tried += 1;
            if tried > MAX_COMBINATIONS {
                return Err(PartitionError::Unsupported(format!("more than {MAX_COMBINATIONS} key combinations")));
            }
            let loc = locate(scheme, &combo, ctx)?;
            match &found {
                Some(prev) if prev.name() != loc.name() => {
                    return Err(PartitionError::Unsupported(format!(
                        "statement spans several partitions ({} and {})",
                        prev.name(),
                        loc.name()
                    )))
                }
                Some(_) => {}
                None => found = Some(loc),
            }
        }
    }
    found.ok_or_else(|| PartitionError::Unsupported("no key values in the statement".into()))
}

/// The usual point statement, without the general walk's vectors: one key column, every key
/// value in row 0 and exactly one of them for that column. `None` when the statement is not one:
/// [`locate_keys`] then walks rows and alternatives, and gives the same answer for it.
fn single_key(
    scheme: &TableScheme,
    analysis: &Analysis<'_>,
    table: &TableRef<'_>,
    columns: &[usize],
    ctx: &CastContext,
) -> Option<Result<Location, PartitionError>> {
    let [col] = *columns else { return None };
    if analysis.keys.iter().any(|k| k.row != 0) {
        return None;
    }
    let name = &scheme.columns[col].name;
    let mut values = analysis.keys.iter().filter(|k| names_column(&k.column, table, name, col));
    let (Some(only), None) = (values.next(), values.next()) else { return None };
    Some(key_value(&only.value, name).and_then(|v| locate(scheme, std::slice::from_ref(&v), ctx)))
}

/// The INSERT rows (or the single WHERE row 0) that carry key values.
fn rows_of(analysis: &Analysis<'_>) -> Rows {
    let mut rows: Rows = analysis.keys.iter().map(|k| k.row).collect();
    rows.sort_unstable();
    rows.dedup();
    if rows.is_empty() {
        rows.push(0);
    }
    rows
}

/// Every candidate value of column `col` in `row` (several for an IN list).
fn values_for(
    scheme: &TableScheme,
    analysis: &Analysis<'_>,
    table: &TableRef<'_>,
    col: usize,
    row: u32,
) -> Result<Alternatives, PartitionError> {
    let name = &scheme.columns[col].name;
    let values: Alternatives = analysis
        .keys
        .iter()
        .filter(|k| k.row == row && names_column(&k.column, table, name, col))
        .map(|k| key_value(&k.value, name))
        .collect::<Result<_, _>>()?;
    if values.is_empty() {
        return Err(PartitionError::Unsupported(format!("no value for key column {name}")));
    }
    Ok(values)
}

/// Whether the analysed column `c` is the scheme's column `name` (index `index`) of `table`.
pub(super) fn names_column(c: &SqlColumn<'_>, table: &TableRef<'_>, name: &str, index: usize) -> bool {
    match c {
        SqlColumn::Position(p) => usize::from(*p) == index,
        SqlColumn::Named { qualifier, name: n } => {
            n.eq_ignore_ascii_case(name)
                && qualifier.as_ref().is_none_or(|q| {
                    q.eq_ignore_ascii_case(&table.name)
                        || table.alias.as_ref().is_some_and(|a| q.eq_ignore_ascii_case(a))
                })
        }
    }
}

/// Maps an analysed literal to a partition key value.
pub fn key_value(v: &Value<'_>, column: &str) -> Result<KeyValue, PartitionError> {
    Ok(match v {
        Value::Null => KeyValue::Null,
        Value::Int(i) => KeyValue::Int(*i),
        Value::UInt(u) => KeyValue::UInt(*u),
        Value::Decimal(t) => KeyValue::Decimal(t.to_string()),
        Value::Float(f) => KeyValue::Float(*f),
        Value::Str { bytes, charset } => {
            KeyValue::Str { bytes: bytes.to_vec(), charset: charset.as_ref().map(|c| c.to_string()) }
        }
        Value::Hex(b) => KeyValue::Hex(b.to_vec()),
        Value::Placeholder(i) => {
            return Err(PartitionError::Unsupported(format!("key column {column} is parameter {i}, not bound")))
        }
        Value::Unknown => {
            return Err(PartitionError::Unsupported(format!(
                "key column {column} is an expression the gateway does not evaluate"
            )))
        }
    })
}

/// The cartesian product of per-column alternatives, one row of values at a time.
struct Combinations<'a> {
    alternatives: &'a [Alternatives],
    next: Option<SmallVec<[usize; 2]>>,
}

impl<'a> Combinations<'a> {
    fn new(alternatives: &'a [Alternatives]) -> Self {
        let next = alternatives.iter().all(|a| !a.is_empty()).then(|| SmallVec::from_elem(0, alternatives.len()));
        Combinations { alternatives, next }
    }
}

impl Iterator for Combinations<'_> {
    type Item = KeyRow;

    fn next(&mut self) -> Option<KeyRow> {
        let idx = self.next.take()?;
        let item = idx.iter().zip(self.alternatives).map(|(&i, alts)| alts[i].clone()).collect();
        let mut following = idx;
        for pos in (0..following.len()).rev() {
            following[pos] += 1;
            if following[pos] < self.alternatives[pos].len() {
                self.next = Some(following);
                return Some(item);
            }
            following[pos] = 0;
        }
        Some(item)
    }
}

#[cfg(test)]
#[path = "statement_tests.rs"]
mod tests;
