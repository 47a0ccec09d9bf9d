//! Key values as they come from SQL (`KeyValue`) and as cast to a column type (`Datum`).

use std::fmt;

use super::ddl::lexer::{tokenize, Tok, Token};
use super::decimal::DecInt;
use super::temporal::{Date, DateTime};
use super::PartitionError;

/// A value for a partitioning column, as written in SQL or bound to a placeholder.
#[derive(Debug, Clone, PartialEq)]
pub enum KeyValue {
    /// SQL `NULL`.
    Null,
    /// An integer literal that fits `i64`.
    Int(i64),
    /// An integer literal above `i64::MAX`.
    UInt(u64),
    /// An exact decimal literal as text (`-1.50`), sign included.
    Decimal(String),
    /// An approximate literal (`1e3`) or a binary-protocol double.
    Float(f64),
    /// A string: bytes and the introducer's character set if any (`_binary'…'`).
    Str { bytes: Vec<u8>, charset: Option<String> },
    /// A hex literal `X'00ff'` / `0x00ff`.
    Hex(Vec<u8>),
}

impl KeyValue {
    /// A plain string value (no introducer).
    pub fn str(s: &str) -> KeyValue {
        KeyValue::Str { bytes: s.as_bytes().to_vec(), charset: None }
    }

    /// Parses comma-separated SQL literals (`42, 'abc', NULL, -1.5, X'00', DATE '2024-01-02'`).
    pub fn parse_row(text: &str) -> Result<Vec<KeyValue>, PartitionError> {
        let toks = tokenize(text)?;
        let mut out = Vec::new();
        let mut i = 0;
        while i < toks.len() {
            let (v, used) = literal(&toks[i..])?;
            out.push(v);
            i += used;
            match toks.get(i) {
                None => break,
                Some(Token { tok: Tok::Punct(','), .. }) => i += 1,
                Some(t) => return Err(PartitionError::Ddl { pos: t.pos, msg: "expected ','".into() }),
            }
        }
        Ok(out)
    }
}

/// One literal at the start of `toks` and the number of tokens it used.
pub(super) fn literal(toks: &[Token]) -> Result<(KeyValue, usize), PartitionError> {
    let first = toks.first().ok_or(PartitionError::Ddl { pos: 0, msg: "expected a value".into() })?;
    let bad = |msg: &str| PartitionError::Ddl { pos: first.pos, msg: msg.into() };
    match &first.tok {
        Tok::Punct(sign @ ('-' | '+')) => match toks.get(1).map(|t| &t.tok) {
            Some(Tok::Number(n)) => Ok((number(n, *sign == '-').map_err(|m| bad(&m))?, 2)),
            _ => Err(bad("expected a number after the sign")),
        },
        Tok::Number(n) => Ok((number(n, false).map_err(|m| bad(&m))?, 1)),
        Tok::Str { bytes, charset } => Ok((KeyValue::Str { bytes: bytes.clone(), charset: charset.clone() }, 1)),
        Tok::Hex(b) => Ok((KeyValue::Hex(b.clone()), 1)),
        Tok::Word(w) if w.eq_ignore_ascii_case("null") => Ok((KeyValue::Null, 1)),
        Tok::Word(w) if ["date", "time", "timestamp"].iter().any(|k| w.eq_ignore_ascii_case(k)) => {
            match toks.get(1).map(|t| &t.tok) {
                Some(Tok::Str { bytes, .. }) => Ok((KeyValue::Str { bytes: bytes.clone(), charset: None }, 2)),
                _ => Err(bad("expected a string after DATE/TIME/TIMESTAMP")),
            }
        }
        Tok::Word(w) if w.eq_ignore_ascii_case("true") => Ok((KeyValue::Int(1), 1)),
        Tok::Word(w) if w.eq_ignore_ascii_case("false") => Ok((KeyValue::Int(0), 1)),
        _ => Err(bad("expected a literal value")),
    }
}

fn number(text: &str, negative: bool) -> Result<KeyValue, String> {
    if text.contains(['e', 'E']) {
        let v: f64 = text.parse().map_err(|_| format!("bad number {text}"))?;
        return Ok(KeyValue::Float(if negative { -v } else { v }));
    }
    if text.contains('.') {
        return Ok(KeyValue::Decimal(if negative { format!("-{text}") } else { text.to_string() }));
    }
    let digits = text.trim_start_matches('0');
    let magnitude: u128 = if digits.is_empty() {
        0
    } else if digits.len() > 20 {
        u128::MAX
    } else {
        digits.parse().map_err(|_| format!("bad number {text}"))?
    };
    if negative {
        match i64::try_from(magnitude).ok().map(|m| -m).or((magnitude == 1u128 << 63).then_some(i64::MIN)) {
            Some(v) => Ok(KeyValue::Int(v)),
            None => Ok(KeyValue::Decimal(format!("-{text}"))),
        }
    } else if let Ok(v) = i64::try_from(magnitude) {
        Ok(KeyValue::Int(v))
    } else if let Ok(v) = u64::try_from(magnitude) {
        Ok(KeyValue::UInt(v))
    } else {
        Ok(KeyValue::Decimal(text.to_string()))
    }
}

impl fmt::Display for KeyValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyValue::Null => write!(f, "NULL"),
            KeyValue::Int(v) => write!(f, "{v}"),
            KeyValue::UInt(v) => write!(f, "{v}"),
            KeyValue::Decimal(v) => write!(f, "{v}"),
            KeyValue::Float(v) => write!(f, "{v:e}"),
            KeyValue::Str { bytes, charset } => {
                if let Some(cs) = charset {
                    write!(f, "_{cs}")?;
                }
                write!(f, "'{}'", String::from_utf8_lossy(bytes).replace('\'', "''"))
            }
            KeyValue::Hex(b) => write!(f, "X'{}'", hex::encode(b)),
        }
    }
}

/// A value cast to a column's type: exactly what the server stores.
#[derive(Debug, Clone, PartialEq)]
pub enum Datum {
    /// NULL.
    Null,
    /// Signed integer column.
    Int(i64),
    /// Unsigned integer column.
    UInt(u64),
    /// FLOAT or DOUBLE column (FLOAT already rounded to `f32`).
    Double(f64),
    /// DECIMAL(p,s) as the scaled integer value × 10^s.
    Decimal(DecInt),
    /// DATE.
    Date(Date),
    /// DATETIME.
    DateTime(DateTime),
    /// TIMESTAMP: UTC microseconds since the epoch.
    Timestamp(i64),
    /// TIME: signed microseconds.
    Time(i64),
    /// YEAR: `year - 1900`, 0 for 0000.
    Year(u8),
    /// Character or binary string (BINARY(n) already zero-padded).
    Str(Vec<u8>),
}

impl fmt::Display for Datum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Datum::Null => write!(f, "NULL"),
            Datum::Int(v) => write!(f, "int {v}"),
            Datum::UInt(v) => write!(f, "uint {v}"),
            Datum::Double(v) => write!(f, "double {v:?}"),
            Datum::Decimal(v) => write!(f, "decimal-int {v}"),
            Datum::Date(d) => write!(f, "date {:04}-{:02}-{:02}", d.year, d.month, d.day),
            Datum::DateTime(d) => write!(
                f,
                "datetime {:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:06}",
                d.date.year,
                d.date.month,
                d.date.day,
                d.secs / 3600,
                d.secs / 60 % 60,
                d.secs % 60,
                d.usec
            ),
            Datum::Timestamp(v) => write!(f, "timestamp utc-usec {v}"),
            Datum::Time(v) => write!(f, "time usec {v}"),
            Datum::Year(v) => write!(f, "year {v}"),
            Datum::Str(b) => write!(f, "string {} (hex {})", String::from_utf8_lossy(b), hex::encode(b)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_rows() {
        let row = KeyValue::parse_row(
            "42, 'abc', NULL, -1.5, X'00ff', _utf8mb4'x', 18446744073709551615, -9223372036854775808, 1e3",
        )
        .unwrap();
        assert_eq!(
            row,
            vec![
                KeyValue::Int(42),
                KeyValue::str("abc"),
                KeyValue::Null,
                KeyValue::Decimal("-1.5".into()),
                KeyValue::Hex(vec![0, 255]),
                KeyValue::Str { bytes: b"x".to_vec(), charset: Some("utf8mb4".into()) },
                KeyValue::UInt(u64::MAX),
                KeyValue::Int(i64::MIN),
                KeyValue::Float(1000.0),
            ]
        );
        assert_eq!(KeyValue::parse_row("'2024-02-29 12:00:00'").unwrap(), vec![KeyValue::str("2024-02-29 12:00:00")]);
        assert!(KeyValue::parse_row("1 2").is_err());
        assert!(KeyValue::parse_row("abc").is_err());
    }
}
