//! Literal values the analysis extracts for partition keys, and how SQL literal text maps to them.

use std::borrow::Cow;

/// A candidate value of a column, as far as the proxy can know it without a server.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    /// `NULL`.
    Null,
    /// An integer that fits `i64` (also `TRUE` = 1, `FALSE` = 0).
    Int(i64),
    /// An integer above `i64::MAX` that fits `u64`.
    UInt(u64),
    /// An exact number kept as its text: `1.50`, `-3.0000`, integers beyond 64 bits.
    Decimal(Cow<'a, str>),
    /// An approximate number (`1e3`).
    Float(f64),
    /// A string literal, unescaped, with its charset introducer (`_utf8mb4`, `_binary`) if any.
    Str {
        /// The bytes after unescaping.
        bytes: Cow<'a, [u8]>,
        /// The introducer without its leading underscore, e.g. `binary`.
        charset: Option<Cow<'a, str>>,
    },
    /// A hexadecimal literal (`X'4142'`, `0x4142`), decoded.
    Hex(Cow<'a, [u8]>),
    /// A `?` placeholder: the zero-based index of the parameter bound at execution.
    Placeholder(u32),
    /// An expression the proxy does not evaluate (time functions, columns, subqueries, …).
    Unknown,
}

impl Value<'_> {
    /// A copy that owns all its data.
    pub fn into_owned(self) -> Value<'static> {
        match self {
            Value::Null => Value::Null,
            Value::Int(v) => Value::Int(v),
            Value::UInt(v) => Value::UInt(v),
            Value::Decimal(t) => Value::Decimal(Cow::Owned(t.into_owned())),
            Value::Float(f) => Value::Float(f),
            Value::Str { bytes, charset } => Value::Str {
                bytes: Cow::Owned(bytes.into_owned()),
                charset: charset.map(|c| Cow::Owned(c.into_owned())),
            },
            Value::Hex(b) => Value::Hex(Cow::Owned(b.into_owned())),
            Value::Placeholder(i) => Value::Placeholder(i),
            Value::Unknown => Value::Unknown,
        }
    }

    /// A plain string value without introducer.
    pub fn str(bytes: impl Into<Cow<'static, [u8]>>) -> Value<'static> {
        Value::Str { bytes: bytes.into(), charset: None }
    }
}

/// Classifies the text of an unsigned numeric literal (`42`, `1.5`, `1e3`, `.5`).
pub fn number(text: &str) -> Value<'_> {
    if text.bytes().all(|b| b.is_ascii_digit()) && !text.is_empty() {
        if let Ok(v) = text.parse::<i64>() {
            return Value::Int(v);
        }
        if let Ok(v) = text.parse::<u64>() {
            return Value::UInt(v);
        }
        return Value::Decimal(Cow::Borrowed(text));
    }
    if text.bytes().any(|b| b == b'e' || b == b'E') {
        return text.parse::<f64>().map_or(Value::Unknown, Value::Float);
    }
    let digits = text.bytes().filter(|b| b.is_ascii_digit()).count();
    let dots = text.bytes().filter(|&b| b == b'.').count();
    if dots == 1 && digits + 1 == text.len() {
        return Value::Decimal(Cow::Borrowed(text));
    }
    Value::Unknown
}

/// Unescapes the body of a quoted string (without its quotes) the way MySQL does without
/// `NO_BACKSLASH_ESCAPES`: `\n`, `\0`, `\Z`, …; `\%` and `\_` keep their backslash; a doubled
/// quote character stands for one.
pub fn unescape(body: &[u8], quote: u8) -> Cow<'_, [u8]> {
    if !body.iter().any(|&b| b == b'\\' || b == quote) {
        return Cow::Borrowed(body);
    }
    let mut out = Vec::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        let b = body[i];
        if b == b'\\' && i + 1 < body.len() {
            i += 1;
            match body[i] {
                b'0' => out.push(0),
                b'b' => out.push(8),
                b'n' => out.push(b'\n'),
                b'r' => out.push(b'\r'),
                b't' => out.push(b'\t'),
                b'Z' => out.push(26),
                c @ (b'%' | b'_') => out.extend_from_slice(&[b'\\', c]),
                c => out.push(c),
            }
        } else if b == quote && body.get(i + 1) == Some(&quote) {
            out.push(quote);
            i += 1;
        } else {
            out.push(b);
        }
        i += 1;
    }
    Cow::Owned(out)
}

/// Decodes hexadecimal digits; an odd count gets a leading zero, as MySQL does.
pub fn hex(digits: &[u8]) -> Option<Vec<u8>> {
    let nib = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(digits.len() / 2 + 1);
    let mut rest = digits;
    if digits.len() % 2 == 1 {
        out.push(nib(digits[0])?);
        rest = &digits[1..];
    }
    for pair in rest.chunks(2) {
        out.push(nib(pair[0])? << 4 | nib(pair[1])?);
    }
    Some(out)
}

/// Decodes the digits of a bit-value literal (`b'1000001'`): the bits right-aligned in as few
/// whole bytes as hold them, as MySQL does (`b'1'` is one byte 0x01, `b''` no bytes).
pub fn bits(digits: &[u8]) -> Option<Vec<u8>> {
    let n = digits.len().div_ceil(8);
    let mut out = vec![0u8; n];
    for (k, &d) in digits.iter().rev().enumerate() {
        let bit = match d {
            b'0' => 0,
            b'1' => 1,
            _ => return None,
        };
        out[n - 1 - k / 8] |= bit << (k % 8);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(number("42"), Value::Int(42));
        assert_eq!(number("18446744073709551615"), Value::UInt(u64::MAX));
        assert_eq!(number("184467440737095516150"), Value::Decimal("184467440737095516150".into()));
        assert_eq!(number("1.50"), Value::Decimal("1.50".into()));
        assert_eq!(number("1e3"), Value::Float(1000.0));
        assert_eq!(number("1.2.3"), Value::Unknown);
    }

    #[test]
    fn escapes() {
        assert_eq!(&*unescape(br"a\nb''c\%", b'\''), b"a\nb'c\\%");
        assert!(matches!(unescape(b"plain", b'\''), Cow::Borrowed(_)));
        assert_eq!(hex(b"414"), Some(vec![4, 0x14]));
    }

    #[test]
    fn bit_values() {
        assert_eq!(bits(b"1"), Some(vec![1]));
        assert_eq!(bits(b"1000001"), Some(vec![0x41]));
        assert_eq!(bits(b"100000001"), Some(vec![1, 1]));
        assert_eq!(bits(b"0000000001000010"), Some(vec![0, 0x42]));
        assert_eq!(bits(b""), Some(vec![]));
        assert_eq!(bits(b"12"), None);
    }
}
