//! Partition bounds from the views' text column `high_bound_val` (docs/routing.md §12).
//!
//! The kernel fills `high_bound_val` with the same SQL-literal text as
//! `information_schema.PARTITIONS.PARTITION_DESCRIPTION` (`convert_rowkey_to_sql_literal` /
//! `convert_rows_to_sql_literal`): RANGE `10`, `'m',5`, `MAXVALUE`; LIST `1,2,3`, `NULL,4`,
//! `(1,'a'),(2,'b')`, `DEFAULT`. ODP decodes the binary `high_bound_val_bin` (a serialized
//! `ObRowkey` / `ObNewRow` list); the gateway reads the text with its SQL lexer instead, which
//! needs no OceanBase serialization code and casts through the same path as DDL-derived bounds.

use crate::partition::ddl::lexer::{tokenize, Tok};
use crate::partition::{BoundSpec, KeyValue, PartFunc, PartitionError};

fn bad(text: &str, why: &str) -> PartitionError {
    PartitionError::Unsupported(format!("partition bound `{text}`: {why}"))
}

/// `text` split at the commas outside quotes and parentheses, each piece trimmed.
fn split_top(text: &str) -> Result<Vec<&str>, PartitionError> {
    let mut pieces = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    for t in tokenize(text)? {
        match t.tok {
            Tok::Punct('(') => depth += 1,
            Tok::Punct(')') => depth -= 1,
            Tok::Punct(',') if depth == 0 => {
                pieces.push(text.get(start..t.pos).unwrap_or_default().trim());
                start = t.pos + 1;
            }
            _ => {}
        }
        if depth < 0 {
            return Err(bad(text, "unbalanced parentheses"));
        }
    }
    if depth != 0 {
        return Err(bad(text, "unbalanced parentheses"));
    }
    pieces.push(text.get(start..).unwrap_or_default().trim());
    if pieces.iter().any(|p| p.is_empty()) {
        return Err(bad(text, "empty value"));
    }
    Ok(pieces)
}

/// Exactly one literal.
fn one_value(text: &str) -> Result<KeyValue, PartitionError> {
    let mut row = KeyValue::parse_row(text)?;
    match (row.pop(), row.is_empty()) {
        (Some(v), true) => Ok(v),
        _ => Err(bad(text, "expected one value")),
    }
}

/// A RANGE bound: `LessThan` with `None` for each MAXVALUE.
pub fn range(text: &str) -> Result<BoundSpec, PartitionError> {
    let values = split_top(text)?
        .into_iter()
        .map(|p| if p.eq_ignore_ascii_case("maxvalue") { Ok(None) } else { one_value(p).map(Some) })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(BoundSpec::LessThan(values))
}

/// A LIST bound: `In` rows (a parenthesised piece is a multi-column row), or `Default`.
pub fn list(text: &str) -> Result<BoundSpec, PartitionError> {
    let pieces = split_top(text)?;
    if pieces.iter().any(|p| p.eq_ignore_ascii_case("default")) {
        return if pieces.len() == 1 { Ok(BoundSpec::Default) } else { Err(bad(text, "DEFAULT among values")) };
    }
    let rows = pieces
        .into_iter()
        .map(|p| match p.strip_prefix('(').and_then(|r| r.strip_suffix(')')) {
            Some(inner) => KeyValue::parse_row(inner),
            None => one_value(p).map(|v| vec![v]),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(BoundSpec::In(rows))
}

/// The bound of a partition of a level with function `func`; HASH/KEY partitions have none.
pub fn bound(func: PartFunc, text: Option<&str>) -> Result<BoundSpec, PartitionError> {
    if matches!(func, PartFunc::Hash | PartFunc::Key | PartFunc::KeyImplicit) {
        return Ok(BoundSpec::None);
    }
    let text = text.map(str::trim).filter(|t| !t.is_empty());
    let text = text.ok_or_else(|| PartitionError::Unsupported("partition without a bound".into()))?;
    if matches!(func, PartFunc::Range | PartFunc::RangeColumns) {
        range(text)
    } else {
        list(text)
    }
}
