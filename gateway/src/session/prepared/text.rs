//! SQL-level prepared statements: `PREPARE s FROM '…' | @v`, `EXECUTE s [USING …]`,
//! `DEALLOCATE | DROP PREPARE s`; the values `USING` binds, from the session's user variables.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use super::PreparedError;
use crate::session::state::{ClientState, SetValue};
use crate::sql::lexer::{self, Kind, Token};
use crate::sql::{value, Hints, Value};

/// A text prepared-statement command.
#[derive(Debug, Clone, PartialEq)]
pub enum TextPs {
    /// `PREPARE name FROM source`.
    Prepare {
        /// Statement name, as written (names are case-insensitive).
        name: String,
        /// Where the statement text comes from.
        source: Source,
    },
    /// `EXECUTE name [USING arg, …]`.
    Execute {
        /// Statement name.
        name: String,
        /// The `USING` arguments.
        using: Vec<Arg>,
    },
    /// `DEALLOCATE PREPARE name` / `DROP PREPARE name`.
    Deallocate {
        /// Statement name.
        name: String,
    },
}

/// The text of a `PREPARE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A string literal, unescaped.
    Text(String),
    /// A user variable `@v` holding the text.
    UserVar(String),
}

/// One `USING` argument.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    /// `@v`.
    UserVar(String),
    /// A literal (number, string, hex, `NULL`, `TRUE`/`FALSE`).
    Value(Value<'static>),
    /// Anything else (the server evaluates it; routing cannot).
    Expr,
}

/// Parses a text prepared-statement command; `None` for anything else or a form the fast lexer
/// declines (the session then treats the statement as it would without this module).
pub fn parse(sql: &str) -> Option<TextPs> {
    let mut hints = Hints::default();
    let toks = lexer::lex(sql, &mut hints)?;
    let mut toks: &[Token] = &toks;
    while let [rest @ .., last] = toks {
        if last.kind != Kind::Punct(b';') {
            break;
        }
        toks = rest;
    }
    let text = |t: &Token| &sql[t.start as usize..t.end as usize];
    let is = |t: &Token, w: &str| t.kind == Kind::Word && text(t).eq_ignore_ascii_case(w);
    match toks {
        [p, n, from, src] if is(p, "PREPARE") && is(from, "FROM") => {
            let source = match src.kind {
                Kind::Str => Source::Text(string(text(src))?.into_owned()),
                Kind::UserVar => Source::UserVar(lexer::bare_user_var(text(src))?.to_string()),
                _ => return None,
            };
            Some(TextPs::Prepare { name: name(n, text(n))?, source })
        }
        [e, n] if is(e, "EXECUTE") => Some(TextPs::Execute { name: name(n, text(n))?, using: Vec::new() }),
        [e, n, u, args @ ..] if is(e, "EXECUTE") && is(u, "USING") && !args.is_empty() => {
            let using = args.split(|t| t.kind == Kind::Punct(b',')).map(|a| arg(a, sql)).collect();
            Some(TextPs::Execute { name: name(n, text(n))?, using })
        }
        [d, p, n] if (is(d, "DEALLOCATE") || is(d, "DROP")) && is(p, "PREPARE") => {
            Some(TextPs::Deallocate { name: name(n, text(n))? })
        }
        _ => None,
    }
}

fn name(t: &Token, text: &str) -> Option<String> {
    match t.kind {
        Kind::Word => Some(text.to_string()),
        Kind::Quoted => Some(text.get(1..text.len() - 1)?.replace("``", "`")),
        _ => None,
    }
}

/// A quoted string token (quotes included), unescaped.
fn string(tok: &str) -> Option<Cow<'_, str>> {
    let quote = *tok.as_bytes().first()?;
    let body = tok.get(1..tok.len().checked_sub(1)?)?;
    match value::unescape(body.as_bytes(), quote) {
        Cow::Borrowed(_) => Some(Cow::Borrowed(body)),
        Cow::Owned(v) => String::from_utf8(v).ok().map(Cow::Owned),
    }
}

fn arg(toks: &[Token], sql: &str) -> Arg {
    let text = |t: &Token| &sql[t.start as usize..t.end as usize];
    match toks {
        [t] if t.kind == Kind::UserVar => lexer::bare_user_var(text(t)).map_or(Arg::Expr, |n| Arg::UserVar(n.into())),
        [t] => literal(t.kind, text(t)).map_or(Arg::Expr, Arg::Value),
        [sign, t] if sign.kind == Kind::Punct(b'-') && t.kind == Kind::Number => {
            number(&format!("-{}", text(t))).map_or(Arg::Expr, Arg::Value)
        }
        _ => Arg::Expr,
    }
}

fn literal(kind: Kind, text: &str) -> Option<Value<'static>> {
    match kind {
        Kind::Number => number(text),
        Kind::Str => Some(Value::str(string(text)?.into_owned().into_bytes())),
        Kind::Hex => value::hex(lexer::hex_digits(text).as_bytes()).map(|b| Value::Hex(Cow::Owned(b))),
        Kind::Word => word(text),
        _ => None,
    }
}

fn word(w: &str) -> Option<Value<'static>> {
    [("NULL", Value::Null), ("TRUE", Value::Int(1)), ("FALSE", Value::Int(0))]
        .into_iter()
        .find(|(k, _)| w.eq_ignore_ascii_case(k))
        .map(|(_, v)| v)
}

/// A signed or unsigned numeric literal.
fn number(text: &str) -> Option<Value<'static>> {
    let (neg, body) = match text.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let v = match (value::number(body).into_owned(), neg) {
        (Value::Unknown, _) => return None,
        (v, false) => v,
        (Value::Int(i), true) => Value::Int(-i),
        (Value::Float(f), true) => Value::Float(-f),
        (Value::UInt(u), true) if u == 1 << 63 => Value::Int(i64::MIN),
        (_, true) => Value::Decimal(Cow::Owned(text.to_string())),
    };
    Some(v)
}

/// The routing value of a user variable as the session knows it. An unknown variable is
/// [`Value::Unknown`], not NULL: it may have been assigned in a way the gateway does not follow.
pub fn user_value(v: Option<&SetValue>) -> Value<'static> {
    match v {
        Some(SetValue::Null) => Value::Null,
        Some(SetValue::Str { introducer, bytes }) => Value::Str {
            bytes: Cow::Owned(bytes.clone()),
            charset: introducer.as_ref().map(|i| Cow::Owned(i.trim_start_matches('_').to_string())),
        },
        Some(SetValue::Word(w)) => {
            let hex = w.strip_prefix("0x").and_then(|h| value::hex(h.as_bytes())).map(|b| Value::Hex(Cow::Owned(b)));
            hex.or_else(|| number(w)).or_else(|| word(w)).unwrap_or(Value::Unknown)
        }
        Some(SetValue::Expr(_)) | None => Value::Unknown,
    }
}

/// The values an `EXECUTE … USING` binds, for routing, from the session's user variables.
pub fn bound_values(using: &[Arg], state: &ClientState) -> Vec<Value<'static>> {
    using
        .iter()
        .map(|a| match a {
            Arg::UserVar(name) => user_value(state.user(name)),
            Arg::Value(v) => v.clone(),
            Arg::Expr => Value::Unknown,
        })
        .collect()
}

impl Source {
    /// The statement text: the literal, or the string the user variable holds.
    pub fn resolve(&self, state: &ClientState) -> Option<String> {
        match self {
            Source::Text(t) => Some(t.clone()),
            Source::UserVar(v) => match state.user(v)? {
                SetValue::Str { bytes, .. } => String::from_utf8(bytes.clone()).ok(),
                _ => None,
            },
        }
    }
}

/// `PREPARE `name` FROM '<sql>'` for a connection lacking the statement; `nbe`: whether that
/// connection reads with NO_BACKSLASH_ESCAPES.
pub fn prepare_sql(name: &str, sql: &str, nbe: bool) -> Vec<u8> {
    let mut out = b"PREPARE `".to_vec();
    out.extend_from_slice(name.replace('`', "``").as_bytes());
    out.extend_from_slice(b"` FROM '");
    for &b in sql.as_bytes() {
        match b {
            b'\'' => out.extend_from_slice(b"''"),
            b'\\' if !nbe => out.extend_from_slice(b"\\\\"),
            0 if !nbe => out.extend_from_slice(b"\\0"),
            _ => out.push(b),
        }
    }
    out.push(b'\'');
    out
}

/// A text prepared statement of the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextStatement {
    /// Changes with every `PREPARE` of the name (what a connection's copy is compared with).
    pub generation: u64,
    /// The statement text.
    pub sql: Arc<str>,
}

/// The session's text prepared statements, by case-insensitive name.
#[derive(Debug, Clone, Default)]
pub struct TextStatements {
    next: u64,
    by_name: HashMap<String, TextStatement>,
    /// Bytes of statement text held ([`super::registry::MAX_TEXT_BYTES`]).
    text_bytes: usize,
}

impl TextStatements {
    /// Whether `PREPARE name FROM sql` may run: the session's text statements stay within
    /// [`super::registry::MAX_STATEMENTS`] and [`super::registry::MAX_TEXT_BYTES`] (ER 1461).
    pub fn admits(&self, name: &str, sql: &str) -> Result<(), PreparedError> {
        let old = self.by_name.get(&name.to_lowercase());
        let count = self.by_name.len() - usize::from(old.is_some());
        let bytes = self.text_bytes - old.map_or(0, |s| s.sql.len());
        super::registry::admits(count, bytes, sql)
    }

    /// A successful `PREPARE`: replaces any statement of that name; returns its generation.
    pub fn prepare(&mut self, name: &str, sql: &str) -> u64 {
        self.next += 1;
        let st = TextStatement { generation: self.next, sql: Arc::from(sql) };
        self.text_bytes += sql.len();
        if let Some(old) = self.by_name.insert(name.to_lowercase(), st) {
            self.text_bytes -= old.sql.len();
        }
        self.next
    }

    /// A failed `PREPARE`: the server dropped the old statement of that name too.
    pub fn failed_prepare(&mut self, name: &str) {
        if let Some(old) = self.by_name.remove(&name.to_lowercase()) {
            self.text_bytes -= old.sql.len();
        }
    }

    /// Whether the session has no text prepared statement.
    pub fn is_empty(&self) -> bool {
        self.by_name.is_empty()
    }

    /// The statement of name `name`, if prepared.
    pub fn get(&self, name: &str) -> Option<&TextStatement> {
        self.by_name.get(&name.to_lowercase())
    }

    /// The statement an `EXECUTE` names, or the server's error for an unknown name.
    pub fn execute(&self, name: &str) -> Result<&TextStatement, PreparedError> {
        self.by_name.get(&name.to_lowercase()).ok_or_else(|| unknown(name, "EXECUTE"))
    }

    /// `DEALLOCATE PREPARE`: forgets the statement, or the server's error for an unknown name.
    pub fn deallocate(&mut self, name: &str) -> Result<TextStatement, PreparedError> {
        let old = self.by_name.remove(&name.to_lowercase()).ok_or_else(|| unknown(name, "DEALLOCATE PREPARE"))?;
        self.text_bytes -= old.sql.len();
        Ok(old)
    }
}

fn unknown(name: &str, command: &'static str) -> PreparedError {
    PreparedError::UnknownStatement { handle: name.to_string(), command }
}

#[cfg(test)]
#[path = "text_tests.rs"]
mod tests;
