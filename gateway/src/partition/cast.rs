//! Casting a `KeyValue` to a column's type the way the kernel stores it, rounding where the kernel
//! rounds (DECIMAL scale, fractional seconds); anything else lossy fails.

use super::collation::Collation;
use super::decimal::DecInt;
use super::scheme::{Column, ColumnType};
use super::temporal::{datetime_from_number, parse_datetime, parse_time, time_from_number, DateTime, TIMESTAMP_ZERO};

/// The last TIMESTAMP instant the kernel stores: 9999-12-31 23:59:59.999999 UTC.
pub const TIMESTAMP_MAX: i64 = 253_402_300_799_999_999;
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
            let n = match bytes {
                1 => "tinyint",
                2 => "smallint",
                3 => "mediumint",
                4 => "int",
                _ => "bigint",
            };
            if *unsigned {
                format!("{n} unsigned")
            } else {
                n.to_string()
            }
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
        ColumnType::Date => cast_date(v, col),
        ColumnType::DateTime { fsp } => Ok(Datum::DateTime(datetime(v, col, *fsp)?)),
        ColumnType::Timestamp { fsp } => {
            let dt = datetime(v, col, *fsp)?;
            if dt.is_zero() {
                return Ok(Datum::Timestamp(TIMESTAMP_ZERO));
            }
            // The kernel accepts any wall-clock DATETIME (years 1..=9999) in the session time zone,
            // also before 1970 and after 2038; an instant past 9999-12-31 23:59:59.999999 UTC is
            // stored as NULL (kernel-measured), which we refuse to guess.
            let utc = dt.epoch_micros() - i64::from(ctx.tz_offset_secs) * 1_000_000;
            if utc > TIMESTAMP_MAX {
                return Err(fail(v, col, "past the TIMESTAMP range in UTC"));
            }
            Ok(Datum::Timestamp(utc))
        }
        ColumnType::Time { fsp } => cast_time(v, col, *fsp),
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

/// A temporal literal: the text of a string, or a number's sign, integer and fraction digits.
enum TemporalInput<'a> {
    Text(String),
    Number { neg: bool, int: std::borrow::Cow<'a, str>, frac: &'a str },
}

/// Reads a literal for a DATE / DATETIME / TIMESTAMP / TIME column: strings, integers and exact
/// decimals; an approximate number only when it is integral (a double's fraction is not exact).
fn temporal_input<'a>(v: &'a KeyValue, col: &Column) -> Result<TemporalInput<'a>, PartitionError> {
    let number =
        |neg: bool, int: std::borrow::Cow<'a, str>, frac: &'a str| Ok(TemporalInput::Number { neg, int, frac });
    match v {
        KeyValue::Str { bytes, .. } => {
            String::from_utf8(bytes.clone()).map(TemporalInput::Text).map_err(|_| fail(v, col, "not UTF-8"))
        }
        KeyValue::Int(i) => number(*i < 0, i.unsigned_abs().to_string().into(), ""),
        KeyValue::UInt(u) => number(false, u.to_string().into(), ""),
        KeyValue::Decimal(d) => {
            let (neg, int, frac) = split_number(d).ok_or_else(|| fail(v, col, "not a number"))?;
            number(neg, int.into(), frac)
        }
        KeyValue::Float(f) if f.fract() == 0.0 && f.abs() < 1e15 => {
            number(*f < 0.0, (f.abs() as u64).to_string().into(), "")
        }
        _ => Err(fail(v, col, "not an exact date or time value")),
    }
}

/// DATETIME / TIMESTAMP wall-clock value of a literal (fraction rounded to `fsp`).
fn datetime(v: &KeyValue, col: &Column, fsp: u8) -> Result<DateTime, PartitionError> {
    match temporal_input(v, col)? {
        TemporalInput::Text(t) => parse_datetime(&t, fsp),
        TemporalInput::Number { neg: true, .. } => Err(fail(v, col, "negative datetime")),
        TemporalInput::Number { int, frac, .. } => datetime_from_number(&v.to_string(), &int, frac, fsp),
    }
}

/// DATE: the date of a datetime literal; its time part is dropped (not rounded), as the kernel
/// does. A number's fraction must be zero.
fn cast_date(v: &KeyValue, col: &Column) -> Result<Datum, PartitionError> {
    let dt = match temporal_input(v, col)? {
        TemporalInput::Text(t) => {
            let (head, frac) = without_fraction(t.trim());
            if frac.len() > 6 {
                return Err(fail(v, col, "more than 6 fraction digits"));
            }
            parse_datetime(head, 0)?
        }
        TemporalInput::Number { neg: true, .. } => return Err(fail(v, col, "negative date")),
        TemporalInput::Number { int, frac, .. } => {
            if frac.bytes().any(|b| b != b'0') {
                return Err(fail(v, col, "a date number with a fraction"));
            }
            datetime_from_number(&v.to_string(), &int, "", 0)?
        }
    };
    Ok(Datum::Date(dt.date))
}

/// A date or datetime string without its fraction of a second, and that fraction: the digits
/// after the last `.` when six fields come before it (`2024.01.02 03.04.05.5`) or only digits
/// (`20240102.5`); no fraction otherwise (`2024.01.02 03.04.05`: the `.05` is the seconds).
fn without_fraction(t: &str) -> (&str, &str) {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    match t.rsplit_once('.') {
        Some((head, frac))
            if digits(frac)
                && (digits(head)
                    || head.split(|c: char| c.is_ascii_punctuation() || c == ' ' || c == 'T').count() == 6) =>
        {
            (head, frac)
        }
        _ => (t, ""),
    }
}

fn cast_time(v: &KeyValue, col: &Column, fsp: u8) -> Result<Datum, PartitionError> {
    let us = match temporal_input(v, col)? {
        TemporalInput::Text(t) => parse_time(&t, fsp)?,
        TemporalInput::Number { neg, int, frac } => time_from_number(&v.to_string(), neg, &int, frac, fsp)?,
    };
    Ok(Datum::Time(us))
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
            // Spaces around the number are ignored (kernel-measured: `' 7'` and `'7 '` are 7).
            let s = std::str::from_utf8(bytes).map_err(|_| fail(v, col, "not a number"))?.trim_matches(' ');
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
        // A hexadecimal or bit value in a number's place is its bytes read as an unsigned number.
        KeyValue::Hex(b) if b.len() <= 8 => b.iter().fold(0i128, |n, &byte| n << 8 | i128::from(byte)),
        KeyValue::Hex(_) => return Err(fail(v, col, "out of range")),
        _ => {
            let t = numeric_text(v, col)?;
            let (neg, int, frac) = split_number(&t).ok_or_else(|| fail(v, col, "not a number"))?;
            // An exact number is rounded half away from zero; a string's fraction is refused.
            let round_up = match frac.as_bytes().first() {
                Some(_) if !matches!(v, KeyValue::Decimal(_)) && frac.bytes().any(|b| b != b'0') => {
                    return Err(fail(v, col, "fractional value would be rounded"));
                }
                Some(&d) => d >= b'5',
                None => false,
            };
            let m: i128 = if int.is_empty() {
                0
            } else if int.len() > 20 {
                i128::MAX
            } else {
                int.parse().map_err(|_| fail(v, col, "not a number"))?
            };
            let m = m.saturating_add(i128::from(round_up));
            if neg {
                -m
            } else {
                m
            }
        }
    };
    let bits = u32::from(bytes) * 8;
    let (lo, hi) =
        if unsigned { (0, (1i128 << bits) - 1) } else { (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1) };
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

/// DECIMAL(p,s): the exact value rounded half away from zero to `s` digits (kernel-measured:
/// `1.555` → 1.56, `-1.555` → -1.56, `2.5` → 3 at scale 0); an approximate number (`1.5e2`, a
/// bound double) by its shortest round-trip decimal text, as the kernel converts doubles
/// (`1.015e0` → 1.02, `2.675e0` → 2.68 although both doubles lie below the half); strings may
/// carry an exponent (`'1.5e2'`). More integer digits than `p - s` after rounding: out of range.
fn cast_decimal(v: &KeyValue, col: &Column, precision: u8, scale: u8) -> Result<Datum, PartitionError> {
    if precision > 65 || scale > 30 || scale > precision {
        return Err(PartitionError::Unsupported(format!("decimal({precision},{scale}) is not a MySQL DECIMAL")));
    }
    let text = match v {
        KeyValue::Float(f) if f.is_finite() => format!("{f:e}"),
        KeyValue::Str { bytes, .. } => {
            std::str::from_utf8(bytes).map_err(|_| fail(v, col, "not a number"))?.trim().to_string()
        }
        _ => numeric_text(v, col)?,
    };
    let (neg, int, frac) = scientific_digits(&text).ok_or_else(|| fail(v, col, "not a number"))?;
    let scale = usize::from(scale);
    let mut digits: Vec<u8> = int.bytes().chain(frac.bytes().chain(std::iter::repeat(b'0')).take(scale)).collect();
    if frac.as_bytes().get(scale).is_some_and(|&d| d >= b'5') && !increment(&mut digits) {
        digits.insert(0, b'1');
    }
    let first = digits.iter().position(|&d| d != b'0').unwrap_or(digits.len());
    if digits.len() - first > usize::from(precision) {
        return Err(fail(v, col, "out of range"));
    }
    let digits = String::from_utf8_lossy(&digits[first..]).into_owned();
    DecInt::from_digits(neg, &digits).map(Datum::Decimal).ok_or_else(|| fail(v, col, "not a number"))
}

/// Adds one to a decimal digit string in place; `false` if it carried out of the first digit.
fn increment(digits: &mut [u8]) -> bool {
    for d in digits.iter_mut().rev() {
        if *d == b'9' {
            *d = b'0';
        } else {
            *d += 1;
            return true;
        }
    }
    false
}

/// Most exponent magnitude read (a literal beyond it is refused rather than expanded).
const MAX_EXPONENT: i64 = 400;

/// Sign, integer digits (no leading zeros) and fraction digits of `[-+]digits[.digits][e[-+]n]`,
/// the exponent applied by moving the point.
fn scientific_digits(s: &str) -> Option<(bool, String, String)> {
    let (mantissa, exp) = match s.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.strip_prefix('+').unwrap_or(e).parse::<i64>().ok()?),
        None => (s, 0),
    };
    if exp.abs() > MAX_EXPONENT {
        return None;
    }
    let (neg, int, frac) = split_number(mantissa)?;
    let all: String = [int, frac].concat();
    let point = int.len() as i64 + exp;
    let (int, frac) = if point <= 0 {
        (String::new(), format!("{}{all}", "0".repeat(point.unsigned_abs() as usize)))
    } else if point as usize >= all.len() {
        (format!("{all}{}", "0".repeat(point as usize - all.len())), String::new())
    } else {
        (all[..point as usize].to_string(), all[point as usize..].to_string())
    };
    Some((neg, int.trim_start_matches('0').to_string(), frac))
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

#[cfg(test)]
#[path = "cast_tests.rs"]
mod tests;
