//! Casting a `KeyValue` to a column's type the way the server stores it; anything lossy fails.

use super::collation::Collation;
use super::decimal::DecInt;
use super::scheme::{Column, ColumnType};
use super::temporal::{parse_datetime, parse_time, TIMESTAMP_ZERO};
use super::value::{Datum, KeyValue};
use super::PartitionError;

/// Session settings a cast depends on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CastContext {
    /// `time_zone` as seconds east of UTC (TIMESTAMP literals are read in it).
    pub tz_offset_secs: i32,
}

fn fail(v: &KeyValue, col: &Column, why: impl std::fmt::Display) -> PartitionError {
    PartitionError::Cast(format!("{v} to column {} ({}): {why}", col.name, type_name(&col.ty)))
}

/// A short SQL name of a column type, for messages.
pub fn type_name(ty: &ColumnType) -> String {
    match ty {
        ColumnType::Int { bytes, unsigned } => {
            let n = match bytes { 1 => "tinyint", 2 => "smallint", 3 => "mediumint", 4 => "int", _ => "bigint" };
            if *unsigned { format!("{n} unsigned") } else { n.to_string() }
        }
        ColumnType::Float => "float".into(),
        ColumnType::Double => "double".into(),
        ColumnType::Decimal { precision, scale } => format!("decimal({precision},{scale})"),
        ColumnType::Date => "date".into(),
        ColumnType::DateTime { fsp } => format!("datetime({fsp})"),
        ColumnType::Timestamp { fsp } => format!("timestamp({fsp})"),
        ColumnType::Time { fsp } => format!("time({fsp})"),
        ColumnType::Year => "year".into(),
        ColumnType::Char { len } => format!("char({len})"),
        ColumnType::VarChar { len } => format!("varchar({len})"),
        ColumnType::Binary { len } => format!("binary({len})"),
        ColumnType::VarBinary { len } => format!("varbinary({len})"),
        ColumnType::Other(t) => t.clone(),
    }
}

/// Casts `v` to `col`'s type: the exact stored value, or an error (never a guess).
pub fn cast(v: &KeyValue, col: &Column, ctx: &CastContext) -> Result<Datum, PartitionError> {
    if *v == KeyValue::Null {
        return Ok(Datum::Null);
    }
    match &col.ty {
        ColumnType::Int { bytes, unsigned } => cast_int(v, col, *bytes, *unsigned),
        ColumnType::Float => {
            let d = to_f64(v, col)?;
            let f = d as f32;
            if !f.is_finite() {
                return Err(fail(v, col, "out of range"));
            }
            Ok(Datum::Double(f64::from(f)))
        }
        ColumnType::Double => to_f64(v, col).map(Datum::Double),
        ColumnType::Decimal { precision, scale } => cast_decimal(v, col, *precision, *scale),
        ColumnType::Date => {
            let dt = parse_datetime(&text(v, col)?, 6)?;
            if dt.secs != 0 || dt.usec != 0 {
                return Err(fail(v, col, "time part would be truncated"));
            }
            Ok(Datum::Date(dt.date))
        }
        ColumnType::DateTime { fsp } => Ok(Datum::DateTime(parse_datetime(&text(v, col)?, *fsp)?)),
        ColumnType::Timestamp { fsp } => {
            let dt = parse_datetime(&text(v, col)?, *fsp)?;
            if dt.is_zero() {
                return Ok(Datum::Timestamp(TIMESTAMP_ZERO));
            }
            let utc = dt.epoch_micros() - i64::from(ctx.tz_offset_secs) * 1_000_000;
            if !(1_000_000..=2_147_483_647_999_999).contains(&utc) {
                return Err(fail(v, col, "outside the TIMESTAMP range"));
            }
            Ok(Datum::Timestamp(utc))
        }
        ColumnType::Time { fsp } => Ok(Datum::Time(parse_time(&text(v, col)?, *fsp)?)),
        ColumnType::Year => cast_year(v, col),
        ColumnType::Char { len } | ColumnType::VarChar { len } => cast_string(v, col, *len),
        ColumnType::Binary { len } | ColumnType::VarBinary { len } => {
            let mut b = bytes(v, col)?;
            if b.len() > *len as usize {
                return Err(fail(v, col, "longer than the column"));
            }
            if matches!(col.ty, ColumnType::Binary { .. }) {
                b.resize(*len as usize, 0);
            }
            Ok(Datum::Str(b))
        }
        ColumnType::Other(t) => Err(PartitionError::Unsupported(format!("column {} of type {t}", col.name))),
    }
}

/// The text of a string literal (for temporal columns).
fn text(v: &KeyValue, col: &Column) -> Result<String, PartitionError> {
    match v {
        KeyValue::Str { bytes, .. } => String::from_utf8(bytes.clone()).map_err(|_| fail(v, col, "not UTF-8")),
        _ => Err(fail(v, col, "only string literals are read as dates and times")),
    }
}

fn bytes(v: &KeyValue, col: &Column) -> Result<Vec<u8>, PartitionError> {
    match v {
        KeyValue::Str { bytes, charset } => {
            if let Some(cs) = charset {
                if !matches!(cs.as_str(), "utf8mb4" | "utf8" | "utf8mb3" | "binary") {
                    return Err(PartitionError::Unsupported(format!("character set introducer _{cs}")));
                }
            }
            Ok(bytes.clone())
        }
        KeyValue::Hex(b) => Ok(b.clone()),
        KeyValue::Int(i) => Ok(i.to_string().into_bytes()),
        KeyValue::UInt(u) => Ok(u.to_string().into_bytes()),
        KeyValue::Decimal(d) => Ok(d.clone().into_bytes()),
        KeyValue::Float(_) | KeyValue::Null => Err(fail(v, col, "no exact string form")),
    }
}

fn cast_string(v: &KeyValue, col: &Column, len: u32) -> Result<Datum, PartitionError> {
    let coll = Collation::from_name(&col.collation)?;
    let b = bytes(v, col)?;
    let chars = if coll.is_utf8() {
        let s = std::str::from_utf8(&b).map_err(|_| fail(v, col, "not valid utf8mb4"))?;
        s.trim_end_matches(' ').chars().count()
    } else {
        b.len()
    };
    if chars > len as usize {
        return Err(fail(v, col, "longer than the column"));
    }
    Ok(Datum::Str(b))
}

/// Sign, integer digits (no leading zeros) and fraction digits of exact numeric text.
fn split_number(s: &str) -> Option<(bool, &str, &str)> {
    let (neg, body) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    if (int.is_empty() && frac.is_empty()) || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((neg, int.trim_start_matches('0'), frac))
}

fn numeric_text(v: &KeyValue, col: &Column) -> Result<String, PartitionError> {
    match v {
        KeyValue::Int(i) => Ok(i.to_string()),
        KeyValue::UInt(u) => Ok(u.to_string()),
        KeyValue::Decimal(d) => Ok(d.clone()),
        KeyValue::Str { bytes, .. } => {
            let s = std::str::from_utf8(bytes).map_err(|_| fail(v, col, "not a number"))?;
            split_number(s).map(|_| s.to_string()).ok_or_else(|| fail(v, col, "not a number"))
        }
        _ => Err(fail(v, col, "not an exact number")),
    }
}

fn cast_int(v: &KeyValue, col: &Column, bytes: u8, unsigned: bool) -> Result<Datum, PartitionError> {
    let value: i128 = match v {
        KeyValue::Int(i) => i128::from(*i),
        KeyValue::UInt(u) => i128::from(*u),
        KeyValue::Float(f) if f.fract() == 0.0 && f.abs() < 1e20 => *f as i128,
        _ => {
            let t = numeric_text(v, col)?;
            let (neg, int, frac) = split_number(&t).ok_or_else(|| fail(v, col, "not a number"))?;
            if frac.bytes().any(|b| b != b'0') {
                return Err(fail(v, col, "fractional value would be rounded"));
            }
            let m: i128 = if int.is_empty() { 0 } else if int.len() > 20 { i128::MAX } else {
                int.parse().map_err(|_| fail(v, col, "not a number"))?
            };
            if neg { -m } else { m }
        }
    };
    let bits = u32::from(bytes) * 8;
    let (lo, hi) = if unsigned { (0, (1i128 << bits) - 1) } else { (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1) };
    if value < lo || value > hi {
        return Err(fail(v, col, "out of range"));
    }
    Ok(if unsigned { Datum::UInt(value as u64) } else { Datum::Int(value as i64) })
}

fn to_f64(v: &KeyValue, col: &Column) -> Result<f64, PartitionError> {
    let d = match v {
        KeyValue::Float(f) => *f,
        KeyValue::Int(i) => *i as f64,
        KeyValue::UInt(u) => *u as f64,
        _ => numeric_text(v, col)?.parse().map_err(|_| fail(v, col, "not a number"))?,
    };
    if !d.is_finite() {
        return Err(fail(v, col, "not finite"));
    }
    Ok(d)
}

fn cast_decimal(v: &KeyValue, col: &Column, precision: u8, scale: u8) -> Result<Datum, PartitionError> {
    if precision > 65 || scale > 30 || scale > precision {
        return Err(PartitionError::Unsupported(format!("decimal({precision},{scale}) is not a MySQL DECIMAL")));
    }
    let t = numeric_text(v, col)?;
    let (neg, int, frac) = split_number(&t).ok_or_else(|| fail(v, col, "not a number"))?;
    if frac.bytes().skip(usize::from(scale)).any(|b| b != b'0') {
        return Err(fail(v, col, "would be rounded to the column scale"));
    }
    if int.len() > usize::from(precision - scale) {
        return Err(fail(v, col, "out of range"));
    }
    let digits: String = int.chars().chain(frac.chars().chain(std::iter::repeat('0')).take(usize::from(scale))).collect();
    DecInt::from_digits(neg, &digits).map(Datum::Decimal).ok_or_else(|| fail(v, col, "not a number"))
}

fn cast_year(v: &KeyValue, col: &Column) -> Result<Datum, PartitionError> {
    let (y, from_string) = match v {
        KeyValue::Int(i) => (*i, false),
        KeyValue::Str { bytes, .. } => {
            let s = std::str::from_utf8(bytes).map_err(|_| fail(v, col, "not a year"))?;
            if s.is_empty() || s.len() > 4 || !s.bytes().all(|b| b.is_ascii_digit()) {
                return Err(fail(v, col, "not a year"));
            }
            (s.parse::<i64>().map_err(|_| fail(v, col, "not a year"))?, s.len() <= 2)
        }
        _ => return Err(fail(v, col, "not a year")),
    };
    let year = match y {
        0 if !from_string => 0,
        0..=69 => 2000 + y,
        70..=99 => 1900 + y,
        1901..=2155 => y,
        _ => return Err(fail(v, col, "out of range")),
    };
    Ok(Datum::Year(if year == 0 { 0 } else { (year - 1900) as u8 }))
}
