//! Binary-protocol parameter values of an EXECUTE, decoded into the analysis' [`Value`]s that
//! routing binds to `?` placeholders. Decoding follows MariaDB's `Item_param::set_param_*`:
//! what it refuses is an error here, what it accepts is accepted (strings cut to the packet,
//! temporal values shorter than 4 bytes read as zero); a value routing cannot use (geometry, bit)
//! is [`Value::Unknown`], which only makes routing fall back.

use std::borrow::Cow;

use super::execute::Execute;
use super::long_data::LongData;
use super::registry::ParamTypes;
use super::PreparedError;
use crate::protocol::buf::Reader;
use crate::sql::Value;

/// MySQL field type codes a client may bind.
pub mod ty {
    pub const DECIMAL: u8 = 0x00;
    pub const TINY: u8 = 0x01;
    pub const SHORT: u8 = 0x02;
    pub const LONG: u8 = 0x03;
    pub const FLOAT: u8 = 0x04;
    pub const DOUBLE: u8 = 0x05;
    pub const NULL: u8 = 0x06;
    pub const TIMESTAMP: u8 = 0x07;
    pub const LONGLONG: u8 = 0x08;
    pub const INT24: u8 = 0x09;
    pub const DATE: u8 = 0x0a;
    pub const TIME: u8 = 0x0b;
    pub const DATETIME: u8 = 0x0c;
    pub const YEAR: u8 = 0x0d;
    pub const NEWDATE: u8 = 0x0e;
    pub const VARCHAR: u8 = 0x0f;
    pub const BIT: u8 = 0x10;
    pub const JSON: u8 = 0xf5;
    pub const NEWDECIMAL: u8 = 0xf6;
    pub const ENUM: u8 = 0xf7;
    pub const SET: u8 = 0xf8;
    pub const TINY_BLOB: u8 = 0xf9;
    pub const MEDIUM_BLOB: u8 = 0xfa;
    pub const LONG_BLOB: u8 = 0xfb;
    pub const BLOB: u8 = 0xfc;
    pub const VAR_STRING: u8 = 0xfd;
    pub const STRING: u8 = 0xfe;
    pub const GEOMETRY: u8 = 0xff;
}

const WHO: &str = "mysqld_stmt_execute";
const WRONG: PreparedError = PreparedError::WrongArguments(WHO);

/// Whether MariaDB takes `(type, flags)` as a parameter type (`parameter_type_sanity_check`).
pub fn type_ok(ty_code: u8, flags: u8) -> bool {
    let known = matches!(ty_code, 0x00..=0x10 | 0xf5..=0xff) && ty_code != ty::JSON;
    known && flags & !0x80 == 0
}

/// The values of an EXECUTE's parameters, in order. `types` are the ones the packet carries or
/// else the ones bound last; without either nothing can be decoded and every value is
/// [`Value::Unknown`]. Parameters with long data take it as their value.
pub fn values<'a>(
    ex: &Execute<'a>,
    types: Option<&'a ParamTypes>,
    long: &'a LongData,
) -> Result<Vec<Value<'a>>, PreparedError> {
    let wire: &'a [u8] = match (ex.types, types) {
        (Some(t), _) => t,
        (None, Some(t)) => t.wire(),
        (None, None) => return Ok(vec![Value::Unknown; usize::from(ex.params())]),
    };
    let mut r = Reader::new(ex.values());
    let mut out = Vec::with_capacity(usize::from(ex.params()));
    for i in 0..ex.params() {
        let at = 2 * usize::from(i);
        let (code, flags) = match wire.get(at..at + 2) {
            Some(b) => (b[0], b[1]),
            None => return Err(WRONG),
        };
        if !type_ok(code, flags) {
            return Err(WRONG);
        }
        let unsigned = flags & 0x80 != 0;
        if matches!(code, ty::INT24 | ty::YEAR | ty::BIT) && !long.has(i) && !ex.is_null(i) {
            // MariaDB reads these (which no driver sends) in ways that do not follow the
            // protocol documentation: neither this value nor the ones after it are known.
            out.resize(usize::from(ex.params()), Value::Unknown);
            return Ok(out);
        }
        let v = if long.has(i) {
            if !takes_long_data(code) {
                return Err(WRONG);
            }
            string_value(code, Cow::Owned(long.value(i)))
        } else if ex.is_null(i) || code == ty::NULL {
            Value::Null
        } else {
            if r.remaining() == 0 {
                return Err(WRONG);
            }
            one(&mut r, code, unsigned)?
        };
        out.push(v);
    }
    Ok(out)
}

/// Types that accept COM_STMT_SEND_LONG_DATA (MariaDB's `is_param_long_data_type`: strings,
/// blobs, geometry).
fn takes_long_data(code: u8) -> bool {
    matches!(code, ty::VARCHAR | ty::ENUM | ty::SET | ty::TINY_BLOB..=ty::GEOMETRY)
}

fn one<'a>(r: &mut Reader<'a>, code: u8, unsigned: bool) -> Result<Value<'a>, PreparedError> {
    let v = match code {
        ty::TINY => int(r.take(1).map_err(|_| WRONG)?, unsigned),
        ty::SHORT => int(r.take(2).map_err(|_| WRONG)?, unsigned),
        ty::LONG => int(r.take(4).map_err(|_| WRONG)?, unsigned),
        ty::LONGLONG => int(r.take(8).map_err(|_| WRONG)?, unsigned),
        ty::FLOAT => {
            let b = r.take(4).map_err(|_| WRONG)?;
            Value::Float(f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]])))
        }
        ty::DOUBLE => {
            let b = r.take(8).map_err(|_| WRONG)?;
            let mut a = [0u8; 8];
            a.copy_from_slice(b);
            Value::Float(f64::from_le_bytes(a))
        }
        ty::DECIMAL | ty::NEWDECIMAL => decimal(lenenc_cut(r)?),
        ty::DATE | ty::NEWDATE => date(lenenc_cut(r)?, false),
        ty::DATETIME | ty::TIMESTAMP => date(lenenc_cut(r)?, true),
        ty::TIME => time(lenenc_cut(r)?),
        _ => string_value(code, Cow::Borrowed(lenenc_cut(r)?)),
    };
    Ok(v)
}

/// A length-prefixed value; a length past the end takes what is left (as the server does).
fn lenenc_cut<'a>(r: &mut Reader<'a>) -> Result<&'a [u8], PreparedError> {
    let n = r.lenenc().map_err(|_| WRONG)?;
    let n = usize::try_from(n).unwrap_or(usize::MAX).min(r.remaining());
    r.take(n).map_err(|_| WRONG)
}

fn int(b: &[u8], unsigned: bool) -> Value<'static> {
    let mut a = [0u8; 8];
    a[..b.len()].copy_from_slice(b);
    let negative = !unsigned && b.last().is_some_and(|x| x & 0x80 != 0);
    if negative {
        a[b.len()..].fill(0xff);
    }
    let raw = u64::from_le_bytes(a);
    match (unsigned, i64::try_from(raw)) {
        (true, Ok(v)) => Value::Int(v),
        (true, Err(_)) => Value::UInt(raw),
        (false, _) => Value::Int(raw as i64),
    }
}

/// String-like types: blobs are binary strings (MariaDB's `setup_conversion_blob`), the other
/// text types strings in the client character set; geometry is not a routing value.
fn string_value(code: u8, bytes: Cow<'_, [u8]>) -> Value<'_> {
    match code {
        ty::BIT | ty::GEOMETRY => Value::Unknown,
        ty::TINY_BLOB | ty::MEDIUM_BLOB | ty::LONG_BLOB | ty::BLOB => {
            Value::Str { bytes, charset: Some(Cow::Borrowed("binary")) }
        }
        _ => Value::Str { bytes, charset: None },
    }
}

/// DECIMAL text: kept as an exact number when it reads as one, otherwise left to the server.
fn decimal(b: &[u8]) -> Value<'_> {
    let Ok(t) = std::str::from_utf8(b) else { return Value::Unknown };
    let body = t.strip_prefix(['-', '+']).unwrap_or(t);
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let digits = int.bytes().chain(frac.bytes()).all(|c| c.is_ascii_digit());
    if digits && !(int.is_empty() && frac.is_empty()) {
        Value::Decimal(Cow::Borrowed(t))
    } else {
        Value::Unknown
    }
}

/// DATE / DATETIME / TIMESTAMP (length 0, 4, 7 or 11) as the literal text a temporal column
/// reads: `YYYY-MM-DD[ HH:MM:SS[.ffffff]]`.
fn date(b: &[u8], with_time: bool) -> Value<'static> {
    let (y, mo, d) = if b.len() >= 4 { (u16::from_le_bytes([b[0], b[1]]), b[2], b[3]) } else { (0, 0, 0) };
    let mut s = format!("{y:04}-{mo:02}-{d:02}");
    if with_time {
        let (h, mi, se) = if b.len() >= 7 { (b[4], b[5], b[6]) } else { (0, 0, 0) };
        s.push_str(&format!(" {h:02}:{mi:02}:{se:02}"));
        push_micros(&mut s, b.get(7..11));
    }
    Value::Str { bytes: Cow::Owned(s.into_bytes()), charset: None }
}

/// TIME (length 0, 8 or 12): sign, days, hours, minutes, seconds, microseconds, read as
/// `[-]H:MM:SS[.ffffff]` with days folded into hours and MariaDB's 838:59:59 cap.
fn time(b: &[u8]) -> Value<'static> {
    let mut s = String::new();
    if b.len() >= 8 {
        let days = u32::from_le_bytes([b[1], b[2], b[3], b[4]]);
        let hours = u64::from(days) * 24 + u64::from(b[5]);
        let (h, m, sec) = if hours > 838 { (838, 59, 59) } else { (hours, b[6], b[7]) };
        if b[0] != 0 {
            s.push('-');
        }
        s.push_str(&format!("{h:02}:{m:02}:{sec:02}"));
        push_micros(&mut s, b.get(8..12));
    } else {
        s.push_str("00:00:00");
    }
    Value::Str { bytes: Cow::Owned(s.into_bytes()), charset: None }
}

fn push_micros(s: &mut String, b: Option<&[u8]>) {
    if let Some(b) = b {
        let us = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        if us != 0 {
            s.push_str(&format!(".{us:06}"));
        }
    }
}

#[cfg(test)]
#[path = "binary_tests.rs"]
mod tests;
