//! Values of session variables: the client's literals decoded, and re-quoted for sync statements.
//!
//! String literals are decoded when the client's `SET` is recorded (under the client's SQL mode at
//! that moment) and quoted again when a sync statement is built (under the SQL mode the target
//! connection parses it with), so a change of `NO_BACKSLASH_ESCAPES` or `ANSI_QUOTES` in between
//! never changes a value. Strings are always written single-quoted, which every SQL mode reads as
//! a string.

use std::borrow::Cow;

/// The value assigned to a variable, as the gateway replays it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetValue {
    /// SQL `NULL`.
    Null,
    /// A string literal, decoded; written back single-quoted, after its introducer if any.
    Str {
        /// Character set introducer as written (`_utf8mb4`), if any.
        introducer: Option<String>,
        /// The decoded bytes.
        bytes: Vec<u8>,
    },
    /// A number or a bare word (`ON`, `DEFAULT`, `SYSTEM`, `-1`, `0.5`), replayed as written.
    Word(String),
    /// Any other expression, replayed as written: it is evaluated again on each server.
    Expr(Vec<u8>),
}

impl SetValue {
    /// A plain string value.
    pub fn str(s: impl Into<Vec<u8>>) -> Self {
        SetValue::Str { introducer: None, bytes: s.into() }
    }

    /// Whether replaying the value gives the same value everywhere (everything but `Expr`).
    pub fn is_literal(&self) -> bool {
        !matches!(self, SetValue::Expr(_))
    }

    /// The value as text, for literals (a string's contents, a word as written).
    pub fn text(&self) -> Option<Cow<'_, str>> {
        match self {
            SetValue::Str { bytes, .. } => Some(String::from_utf8_lossy(bytes)),
            SetValue::Word(w) => Some(Cow::Borrowed(w)),
            SetValue::Null | SetValue::Expr(_) => None,
        }
    }

    /// The value read as a boolean system variable (`1`/`ON`/`TRUE`, `0`/`OFF`/`FALSE`).
    pub fn as_bool(&self) -> Option<bool> {
        let t = self.text()?;
        let t = t.trim();
        if ["1", "ON", "TRUE"].iter().any(|w| w.eq_ignore_ascii_case(t)) {
            Some(true)
        } else if ["0", "OFF", "FALSE"].iter().any(|w| w.eq_ignore_ascii_case(t)) {
            Some(false)
        } else {
            None
        }
    }

    /// Whether two values set a variable to the same thing (case-insensitive text, booleans by
    /// meaning). Used to ignore a server's report of a value the gateway already holds.
    pub fn same_as(&self, other: &SetValue) -> bool {
        if self == other {
            return true;
        }
        if let (Some(a), Some(b)) = (self.as_bool(), other.as_bool()) {
            return a == b;
        }
        match (self.text(), other.text()) {
            (Some(a), Some(b)) => a.eq_ignore_ascii_case(&b),
            _ => false,
        }
    }

    /// Appends the value as SQL text; `nbe` is whether the reader has `NO_BACKSLASH_ESCAPES`.
    pub fn render(&self, out: &mut Vec<u8>, nbe: bool) {
        match self {
            SetValue::Null => out.extend_from_slice(b"NULL"),
            SetValue::Str { introducer, bytes } => {
                if let Some(i) = introducer {
                    out.extend_from_slice(i.as_bytes());
                    out.push(b' ');
                }
                quote(out, bytes, nbe);
            }
            SetValue::Word(w) => out.extend_from_slice(w.as_bytes()),
            SetValue::Expr(e) => out.extend_from_slice(e),
        }
    }

    /// A value reported by the server in a session-state change (always text): numbers are kept
    /// bare (numeric variables refuse strings), an empty character set is `NULL`, the rest is a
    /// string.
    pub fn from_server(name: &str, value: &[u8]) -> SetValue {
        if value.is_empty() && (name.starts_with("character_set_") || name.starts_with("collation_")) {
            return SetValue::Null;
        }
        match std::str::from_utf8(value) {
            Ok(s) if is_number(s) => SetValue::Word(s.to_string()),
            _ => SetValue::str(value),
        }
    }
}

/// Whether `s` is a plain decimal number (optionally signed, with a fraction).
fn is_number(s: &str) -> bool {
    let digits = s.strip_prefix('-').unwrap_or(s);
    let mut parts = digits.splitn(2, '.');
    let int = parts.next().unwrap_or("");
    let frac = parts.next().unwrap_or("0");
    !int.is_empty()
        && int.bytes().all(|b| b.is_ascii_digit())
        && !frac.is_empty()
        && frac.bytes().all(|b| b.is_ascii_digit())
}

/// Appends `bytes` as a single-quoted SQL string: `'` doubled; backslash and NUL escaped unless
/// the reader has `NO_BACKSLASH_ESCAPES` (then a backslash is an ordinary character).
pub fn quote(out: &mut Vec<u8>, bytes: &[u8], nbe: bool) {
    out.reserve(bytes.len() + 2);
    out.push(b'\'');
    for &b in bytes {
        match b {
            b'\'' => out.extend_from_slice(b"''"),
            b'\\' if !nbe => out.extend_from_slice(b"\\\\"),
            0 if !nbe => out.extend_from_slice(b"\\0"),
            _ => out.push(b),
        }
    }
    out.push(b'\'');
}

/// Appends a user variable reference `@`name`` (back-quoted: any name, any SQL mode).
pub fn user_var(out: &mut Vec<u8>, name: &str) {
    out.extend_from_slice(b"@`");
    out.extend_from_slice(name.replace('`', "``").as_bytes());
    out.push(b'`');
}

/// Decodes a quoted string literal token (quotes included) read under `nbe`: MySQL's escapes
/// ([`crate::sql::value::unescape`], the analysis's own), or with `NO_BACKSLASH_ESCAPES` only a
/// doubled quote standing for one.
pub fn decode_string(token: &[u8], nbe: bool) -> Vec<u8> {
    let Some((&q, rest)) = token.split_first() else { return Vec::new() };
    let inner = rest.strip_suffix(&[q]).unwrap_or(rest);
    if !nbe {
        return crate::sql::value::unescape(inner, q).into_owned();
    }
    let mut out = Vec::with_capacity(inner.len());
    let mut i = 0;
    while i < inner.len() {
        out.push(inner[i]);
        i += if inner[i] == q && inner.get(i + 1) == Some(&q) { 2 } else { 1 };
    }
    out
}

/// Character set and collation names of common collation ids (the handshake's charset byte).
pub fn collation_names(id: u8) -> Option<(&'static str, &'static str)> {
    Some(match id {
        8 => ("latin1", "latin1_swedish_ci"),
        28 => ("gbk", "gbk_chinese_ci"),
        33 => ("utf8", "utf8_general_ci"),
        45 => ("utf8mb4", "utf8mb4_general_ci"),
        46 => ("utf8mb4", "utf8mb4_bin"),
        47 => ("latin1", "latin1_bin"),
        63 => ("binary", "binary"),
        83 => ("utf8", "utf8_bin"),
        87 => ("gbk", "gbk_bin"),
        192 => ("utf8", "utf8_unicode_ci"),
        224 => ("utf8mb4", "utf8mb4_unicode_ci"),
        248 => ("gb18030", "gb18030_chinese_ci"),
        255 => ("utf8mb4", "utf8mb4_0900_ai_ci"),
        _ => return None,
    })
}
