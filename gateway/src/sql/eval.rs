//! Deterministic operators and functions the proxy evaluates on key values (docs/partition.md §2).
//!
//! Integer arithmetic, `ABS` and the string functions; everything else (time functions, casts,
//! placeholders inside expressions, arithmetic on strings or floats) gives `Value::Unknown`.

use std::borrow::Cow;

use super::value::Value;

/// A binary arithmetic operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arith {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (exact division, MySQL gives a DECIMAL with 4 more digits)
    Div,
    /// `DIV` (integer division)
    IntDiv,
    /// `%` / `MOD`
    Mod,
}

fn as_int(v: &Value<'_>) -> Option<i128> {
    match v {
        Value::Int(i) => Some(i128::from(*i)),
        Value::UInt(u) => Some(i128::from(*u)),
        _ => None,
    }
}

fn from_int(v: i128) -> Value<'static> {
    if let Ok(i) = i64::try_from(v) {
        Value::Int(i)
    } else if let Ok(u) = u64::try_from(v) {
        Value::UInt(u)
    } else {
        Value::Unknown
    }
}

/// Applies a binary operator; only integer operands are evaluated.
pub fn arith(op: Arith, a: &Value<'_>, b: &Value<'_>) -> Value<'static> {
    if matches!(a, Value::Null) || matches!(b, Value::Null) {
        return Value::Null;
    }
    let (Some(x), Some(y)) = (as_int(a), as_int(b)) else {
        return Value::Unknown;
    };
    match op {
        Arith::Add => from_int(x + y),
        Arith::Sub => from_int(x - y),
        Arith::Mul => x.checked_mul(y).map_or(Value::Unknown, from_int),
        Arith::Div => divide(x, y),
        Arith::IntDiv if y == 0 => Value::Null,
        Arith::IntDiv => from_int(x / y),
        Arith::Mod if y == 0 => Value::Null,
        Arith::Mod => from_int(x % y),
    }
}

/// `x / y` as MySQL prints it: four decimals, rounded half away from zero.
fn divide(x: i128, y: i128) -> Value<'static> {
    if y == 0 {
        return Value::Null;
    }
    let n = x * 10_000;
    let (mut q, r) = (n / y, n % y);
    if 2 * r.abs() >= y.abs() {
        q += if (n < 0) != (y < 0) { -1 } else { 1 };
    }
    let sign = if q < 0 { "-" } else { "" };
    let q = q.abs();
    Value::Decimal(Cow::Owned(format!("{sign}{}.{:04}", q / 10_000, q % 10_000)))
}

/// Unary minus.
pub fn negate<'a>(v: Value<'a>) -> Value<'a> {
    match v {
        Value::Int(i) => i.checked_neg().map_or(Value::UInt(i.unsigned_abs()), Value::Int),
        Value::UInt(u) => from_int(-i128::from(u)),
        Value::Decimal(t) => match t.strip_prefix('-') {
            Some(pos) => Value::Decimal(Cow::Owned(pos.to_owned())),
            None => Value::Decimal(Cow::Owned(format!("-{t}"))),
        },
        Value::Float(f) => Value::Float(-f),
        Value::Null => Value::Null,
        _ => Value::Unknown,
    }
}

/// The functions the proxy evaluates; `None` for any other name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Func {
    /// `ABS(x)`
    Abs,
    /// `CONCAT(a, …)`
    Concat,
    /// `SUBSTR(s, pos[, len])` / `SUBSTRING`
    Substr,
    /// `LOWER` / `LCASE`
    Lower,
    /// `UPPER` / `UCASE`
    Upper,
    /// `TRIM(s)` (spaces on both sides)
    Trim,
    /// `LTRIM(s)`
    Ltrim,
    /// `RTRIM(s)`
    Rtrim,
    /// `LENGTH(s)` in bytes
    Length,
}

impl Func {
    /// Looks a function name up, case-insensitively.
    pub fn by_name(name: &str) -> Option<Func> {
        const NAMES: [(&str, Func); 13] = [
            ("ABS", Func::Abs),
            ("CONCAT", Func::Concat),
            ("SUBSTR", Func::Substr),
            ("SUBSTRING", Func::Substr),
            ("LOWER", Func::Lower),
            ("LCASE", Func::Lower),
            ("UPPER", Func::Upper),
            ("UCASE", Func::Upper),
            ("TRIM", Func::Trim),
            ("LTRIM", Func::Ltrim),
            ("RTRIM", Func::Rtrim),
            ("LENGTH", Func::Length),
            ("OCTET_LENGTH", Func::Length),
        ];
        NAMES.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, f)| *f)
    }
}

/// The text form of a value used as a string argument.
fn text<'v>(v: &'v Value<'_>) -> Option<Cow<'v, [u8]>> {
    match v {
        Value::Str { bytes, charset } if charset.as_deref().is_none_or(|c| !c.eq_ignore_ascii_case("binary")) => {
            Some(Cow::Borrowed(bytes))
        }
        Value::Int(i) => Some(Cow::Owned(i.to_string().into_bytes())),
        Value::UInt(u) => Some(Cow::Owned(u.to_string().into_bytes())),
        Value::Decimal(t) => Some(Cow::Borrowed(t.as_bytes())),
        _ => None,
    }
}

/// Applies a function to evaluated arguments.
pub fn call(func: Func, args: &[Value<'_>]) -> Value<'static> {
    if args.iter().any(|a| matches!(a, Value::Null)) {
        return Value::Null;
    }
    match (func, args) {
        (Func::Abs, [a]) => abs(a),
        (Func::Concat, [_, ..]) => concat(args),
        (Func::Substr, [s, p]) => substr(s, p, None),
        (Func::Substr, [s, p, l]) => substr(s, p, Some(l)),
        (Func::Length, [s]) => text(s).map_or(Value::Unknown, |t| from_int(t.len() as i128)),
        (Func::Lower | Func::Upper | Func::Trim | Func::Ltrim | Func::Rtrim, [s]) => string_fn(func, s),
        _ => Value::Unknown,
    }
}

fn abs(a: &Value<'_>) -> Value<'static> {
    match a {
        Value::Int(_) | Value::UInt(_) => as_int(a).map_or(Value::Unknown, |i| from_int(i.abs())),
        Value::Decimal(t) => Value::Decimal(Cow::Owned(t.trim_start_matches('-').to_owned())),
        Value::Float(f) => Value::Float(f.abs()),
        _ => Value::Unknown,
    }
}

fn concat(args: &[Value<'_>]) -> Value<'static> {
    let mut out = Vec::new();
    for a in args {
        match text(a) {
            Some(t) => out.extend_from_slice(&t),
            None => return Value::Unknown,
        }
    }
    Value::Str { bytes: Cow::Owned(out), charset: None }
}

/// MySQL `SUBSTRING` on characters: 1-based, negative positions count from the end.
fn substr(s: &Value<'_>, pos: &Value<'_>, len: Option<&Value<'_>>) -> Value<'static> {
    let Some(Ok(s)) = text(s).map(|t| String::from_utf8(t.into_owned())) else {
        return Value::Unknown;
    };
    let (Some(pos), len) = (as_int(pos), len.map(as_int)) else {
        return Value::Unknown;
    };
    let chars: Vec<char> = s.chars().collect();
    let n = chars.len() as i128;
    let start = match pos {
        0 => n,
        p if p > 0 => p - 1,
        p => n + p,
    };
    let len = match len {
        None => n,
        Some(Some(l)) => l.max(0),
        Some(None) => return Value::Unknown,
    };
    let out: String = if start < 0 || start >= n {
        String::new()
    } else {
        chars.iter().skip(start as usize).take(len.min(n) as usize).collect()
    };
    Value::Str { bytes: Cow::Owned(out.into_bytes()), charset: None }
}

fn string_fn(func: Func, s: &Value<'_>) -> Value<'static> {
    let Some(t) = text(s) else {
        return Value::Unknown;
    };
    let out: Vec<u8> = match func {
        Func::Lower | Func::Upper if !t.is_ascii() => return Value::Unknown,
        Func::Lower => t.to_ascii_lowercase(),
        Func::Upper => t.to_ascii_uppercase(),
        Func::Trim => trim_end(trim_start(&t)).to_vec(),
        Func::Ltrim => trim_start(&t).to_vec(),
        _ => trim_end(&t).to_vec(),
    };
    Value::Str { bytes: Cow::Owned(out), charset: None }
}

fn trim_start(t: &[u8]) -> &[u8] {
    let i = t.iter().position(|&b| b != b' ').unwrap_or(t.len());
    &t[i..]
}

fn trim_end(t: &[u8]) -> &[u8] {
    let i = t.iter().rposition(|&b| b != b' ').map_or(0, |i| i + 1);
    &t[..i]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(t: &str) -> Value<'static> {
        Value::str(t.as_bytes().to_vec())
    }

    #[test]
    fn arithmetic() {
        assert_eq!(arith(Arith::Add, &Value::Int(1), &Value::Int(2)), Value::Int(3));
        assert_eq!(arith(Arith::Div, &Value::Int(7), &Value::Int(2)), Value::Decimal("3.5000".into()));
        assert_eq!(arith(Arith::Div, &Value::Int(-2), &Value::Int(3)), Value::Decimal("-0.6667".into()));
        assert_eq!(arith(Arith::IntDiv, &Value::Int(7), &Value::Int(0)), Value::Null);
        assert_eq!(arith(Arith::Mod, &Value::Int(-7), &Value::Int(3)), Value::Int(-1));
        assert_eq!(arith(Arith::Mul, &Value::Int(i64::MAX), &Value::Int(2)), Value::UInt(u64::MAX - 1));
        assert_eq!(arith(Arith::Add, &s("1"), &Value::Int(2)), Value::Unknown);
        assert_eq!(negate(Value::Int(i64::MIN)), Value::UInt(1 << 63));
    }

    #[test]
    fn functions() {
        assert_eq!(call(Func::Abs, &[Value::Int(-123)]), Value::Int(123));
        assert_eq!(call(Func::Concat, &[s("a"), Value::Int(1)]), s("a1"));
        assert_eq!(call(Func::Substr, &[s("héllo"), Value::Int(2), Value::Int(3)]), s("éll"));
        assert_eq!(call(Func::Substr, &[s("hello"), Value::Int(-3)]), s("llo"));
        assert_eq!(call(Func::Substr, &[s("hello"), Value::Int(0)]), s(""));
        assert_eq!(call(Func::Trim, &[s("  a ")]), s("a"));
        assert_eq!(call(Func::Length, &[s("héllo")]), Value::Int(6));
        assert_eq!(call(Func::Upper, &[s("abc")]), s("ABC"));
    }
}
