//! A small tokenizer for `SET` statements: byte spans of words, strings, variables and
//! punctuation, comments skipped. It declines (`None`) on versioned comments `/*! … */` and on
//! unterminated quotes or comments, so nothing is ever guessed.

/// Token kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tok {
    /// Unquoted identifier, keyword or introducer (`_utf8mb4`).
    Word,
    /// Back-quoted identifier (or double-quoted under `ANSI_QUOTES`), quotes included.
    Ident,
    /// String literal, quotes included.
    Str,
    /// Number (digits, `.`, exponent, hex `0x…`).
    Number,
    /// `@name`, `@'name'`, `@"name"`, `` @`name` `` (span includes `@`).
    UserVar,
    /// `@@name`, `@@scope.name` (span includes `@@`).
    SysVar,
    /// `:=`.
    Assign,
    /// Any other single byte.
    Punct(u8),
}

/// A token and its span in the statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Token {
    pub tok: Tok,
    pub start: usize,
    pub end: usize,
}

/// How the statement is read: the client's SQL mode flags that change lexing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Mode {
    /// `NO_BACKSLASH_ESCAPES`: a backslash in a string is an ordinary character.
    pub nbe: bool,
    /// `ANSI_QUOTES`: `"…"` is an identifier, not a string.
    pub ansi_quotes: bool,
}

impl Mode {
    /// The flags implied by an `sql_mode` value (combination modes included).
    pub fn from_sql_mode(value: &str) -> Mode {
        let has = |m: &str| value.split(',').any(|w| w.trim().eq_ignore_ascii_case(m));
        let ansi = ["ANSI_QUOTES", "ANSI", "DB2", "MAXDB", "MSSQL", "ORACLE", "POSTGRESQL"].iter().any(|m| has(m));
        Mode { nbe: has("NO_BACKSLASH_ESCAPES"), ansi_quotes: ansi }
    }
}

/// Tokens of `sql`, or `None` when it holds something this scanner does not handle.
pub(super) fn scan(sql: &[u8], mode: Mode) -> Option<Vec<Token>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < sql.len() {
        let c = sql[i];
        let start = i;
        let tok = match c {
            b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c => {
                i += 1;
                continue;
            }
            b'#' => {
                i = line_end(sql, i);
                continue;
            }
            b'-' if sql.get(i + 1) == Some(&b'-')
                && sql.get(i + 2).is_none_or(|c| c.is_ascii_whitespace() || c.is_ascii_control()) =>
            {
                i = line_end(sql, i);
                continue;
            }
            b'/' if sql.get(i + 1) == Some(&b'*') => {
                if sql.get(i + 2) == Some(&b'!') {
                    return None;
                }
                i = comment_end(sql, i)?;
                continue;
            }
            b'\'' => {
                i = quoted(sql, i, !mode.nbe)?;
                Tok::Str
            }
            b'"' if !mode.ansi_quotes => {
                i = quoted(sql, i, !mode.nbe)?;
                Tok::Str
            }
            b'"' | b'`' => {
                i = quoted(sql, i, false)?;
                Tok::Ident
            }
            b'@' => {
                let (end, tok) = variable(sql, i, mode)?;
                i = end;
                tok
            }
            b':' if sql.get(i + 1) == Some(&b'=') => {
                i += 2;
                Tok::Assign
            }
            b'0'..=b'9' => {
                i = number_end(sql, i);
                Tok::Number
            }
            b'.' if sql.get(i + 1).is_some_and(u8::is_ascii_digit) => {
                i = number_end(sql, i + 1);
                Tok::Number
            }
            c if is_word(c) => {
                i = word_end(sql, i);
                Tok::Word
            }
            c => {
                i += 1;
                Tok::Punct(c)
            }
        };
        out.push(Token { tok, start, end: i });
    }
    Some(out)
}

/// Identifier bytes (non-ASCII bytes included: identifiers may be written in any language).
fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
}

fn word_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && is_word(b[i]) {
        i += 1;
    }
    i
}

fn line_end(b: &[u8], i: usize) -> usize {
    b[i..].iter().position(|&c| c == b'\n').map_or(b.len(), |p| i + p + 1)
}

fn comment_end(b: &[u8], i: usize) -> Option<usize> {
    b[i + 2..].windows(2).position(|w| w == b"*/").map(|p| i + 2 + p + 2)
}

/// End of the quoted token starting at `i` (doubled quotes; backslash escapes when `escapes`).
fn quoted(b: &[u8], i: usize, escapes: bool) -> Option<usize> {
    let q = b[i];
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            c if c == q && b.get(j + 1) == Some(&q) => j += 2,
            c if c == q => return Some(j + 1),
            b'\\' if escapes => j += 2,
            _ => j += 1,
        }
    }
    None
}

fn number_end(b: &[u8], start: usize) -> usize {
    let mut i = start;
    while i < b.len() {
        let c = b[i];
        let decimal = b[start..i].iter().all(|d| d.is_ascii_digit() || matches!(d, b'.' | b'e' | b'E'));
        let exp_sign = (c == b'+' || c == b'-') && i > start && matches!(b[i - 1], b'e' | b'E') && decimal;
        if c.is_ascii_alphanumeric() || c == b'.' || c == b'_' || exp_sign {
            i += 1;
        } else {
            break;
        }
    }
    i
}

/// `@…` or `@@…` starting at `i`.
fn variable(b: &[u8], i: usize, mode: Mode) -> Option<(usize, Tok)> {
    if b.get(i + 1) == Some(&b'@') {
        let mut j = word_end(b, i + 2);
        if b.get(j) == Some(&b'.') {
            j = word_end(b, j + 1);
        }
        return (j > i + 2).then_some((j, Tok::SysVar));
    }
    match b.get(i + 1)? {
        b'\'' => Some((quoted(b, i + 1, !mode.nbe)?, Tok::UserVar)),
        b'"' => Some((quoted(b, i + 1, !mode.nbe && !mode.ansi_quotes)?, Tok::UserVar)),
        b'`' => Some((quoted(b, i + 1, false)?, Tok::UserVar)),
        &c if is_word(c) || c == b'.' => {
            let mut j = i + 1;
            while j < b.len() && (is_word(b[j]) || b[j] == b'.') {
                j += 1;
            }
            Some((j, Tok::UserVar))
        }
        _ => None,
    }
}
