//! Fast-path lexer: MySQL tokens of one statement as byte spans, hints collected on the way.
//!
//! It declines (returns `None`) whenever the text holds anything it is not sure about:
//! versioned comments, `N'…'` / `b'…'` literals, non-ASCII text outside strings and comments,
//! unterminated quotes or comments.

use std::borrow::Cow;

use smallvec::SmallVec;

use super::hint::Hints;

/// Token kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Unquoted identifier or keyword.
    Word,
    /// Back-quoted identifier (span includes the back-quotes).
    Quoted,
    /// Unsigned numeric literal.
    Number,
    /// String literal (span includes the quotes).
    Str,
    /// `X'…'` (span is the digits) or `0x…` (span is the digits).
    Hex,
    /// `?`.
    Placeholder,
    /// `@name` (span without `@`).
    UserVar,
    /// `@@name` (span without `@@`).
    SysVar,
    /// A single punctuation byte.
    Punct(u8),
    /// A multi-byte operator.
    Op(Op),
}

/// Multi-byte operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `<=`
    Le,
    /// `>=`
    Ge,
    /// `<>` / `!=`
    Ne,
    /// `<=>`
    NullSafeEq,
    /// `:=`
    Assign,
    /// Anything else (`||`, `&&`, `<<`, `->`, …): the recognisers decline on it.
    Other,
}

/// A token: its kind and byte span in the statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    /// Kind.
    pub kind: Kind,
    /// Start offset.
    pub start: u32,
    /// End offset (exclusive).
    pub end: u32,
}

/// Tokens of one statement (inline for typical statements).
pub type Tokens = SmallVec<[Token; 32]>;

/// Lexes one statement; `None` when it holds something the fast path does not handle.
pub fn lex<'a>(sql: &'a str, hints: &mut Hints<'a>) -> Option<Tokens> {
    let b = sql.as_bytes();
    let mut out = Tokens::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let start = i;
        let kind = match c {
            b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c => {
                i += 1;
                continue;
            }
            b'#' => {
                i = line_end(b, i);
                continue;
            }
            b'-' if b.get(i + 1) == Some(&b'-')
                && b.get(i + 2).is_none_or(|c| c.is_ascii_whitespace() || c.is_ascii_control()) =>
            {
                i = line_end(b, i);
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = comment(sql, i, hints)?;
                continue;
            }
            b'\'' | b'"' => {
                i = quoted(b, i)?;
                Kind::Str
            }
            b'`' => {
                i = quoted(b, i)?;
                Kind::Quoted
            }
            b'0' if matches!(b.get(i + 1), Some(b'x')) => {
                i = hex_digits(b, i + 2)?;
                return_span(&mut out, Kind::Hex, start + 2, i);
                continue;
            }
            b'0'..=b'9' => {
                i = number(b, i)?;
                Kind::Number
            }
            b'x' | b'X' if b.get(i + 1) == Some(&b'\'') => {
                let end = quoted(b, i + 1)?;
                hex_digits(&b[..end - 1], i + 2).filter(|&e| e == end - 1)?;
                return_span(&mut out, Kind::Hex, i + 2, end - 1);
                i = end;
                continue;
            }
            b'n' | b'N' | b'b' | b'B' if b.get(i + 1) == Some(&b'\'') => return None,
            c if is_word(c) => {
                i = word_end(b, i);
                Kind::Word
            }
            b'?' => {
                i += 1;
                Kind::Placeholder
            }
            b'@' => {
                i = variable(b, i, &mut out)?;
                continue;
            }
            _ => {
                let (kind, len) = punct(b, i)?;
                i += len;
                kind
            }
        };
        out.push(Token { kind, start: start as u32, end: i as u32 });
    }
    Some(out)
}

fn return_span(out: &mut Tokens, kind: Kind, start: usize, end: usize) {
    out.push(Token { kind, start: start as u32, end: end as u32 });
}

/// `@v` / `@@v`: pushes the variable token, returns its end.
fn variable(b: &[u8], i: usize, out: &mut Tokens) -> Option<usize> {
    let sys = b.get(i + 1) == Some(&b'@');
    let start = i + if sys { 2 } else { 1 };
    let end = word_end(b, start);
    if end == start {
        return None;
    }
    return_span(out, if sys { Kind::SysVar } else { Kind::UserVar }, start, end);
    Some(end)
}

/// Byte offset of the end of a `#` / `--` comment.
fn line_end(b: &[u8], i: usize) -> usize {
    b[i..].iter().position(|&c| c == b'\n').map_or(b.len(), |p| i + p + 1)
}

/// Skips a block comment, feeding its body to the hint scanner.
fn comment<'a>(sql: &'a str, i: usize, hints: &mut Hints<'a>) -> Option<usize> {
    let b = sql.as_bytes();
    if b.get(i + 2) == Some(&b'!') {
        return None;
    }
    let len = sql.get(i + 2..)?.find("*/")?;
    hints.scan(Cow::Borrowed(sql.get(i + 2..i + 2 + len)?));
    Some(i + 2 + len + 2)
}

/// End (exclusive) of a quoted token starting at `i`; backslash escapes only in strings.
fn quoted(b: &[u8], i: usize) -> Option<usize> {
    let q = b[i];
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\\' if q != b'`' => j += 2,
            c if c == q && b.get(j + 1) == Some(&q) => j += 2,
            c if c == q => return Some(j + 1),
            _ => j += 1,
        }
    }
    None
}

fn hex_digits(b: &[u8], i: usize) -> Option<usize> {
    let end = i + b[i..].iter().take_while(|c| c.is_ascii_hexdigit()).count();
    (end > i && b.get(end).is_none_or(|&c| !is_word(c))).then_some(end)
}

/// End of a numeric literal; declines on forms like `1abc`, `1.`, `.5`, `0b1`.
fn number(b: &[u8], i: usize) -> Option<usize> {
    let digits = |j: usize| j + b[j..].iter().take_while(|c| c.is_ascii_digit()).count();
    let mut j = digits(i);
    if b.get(j) == Some(&b'.') {
        let k = digits(j + 1);
        if k == j + 1 {
            return None;
        }
        j = k;
    }
    if matches!(b.get(j), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(b.get(j + 1), Some(b'+' | b'-')));
        let k = digits(j + 1 + sign);
        if k == j + 1 + sign {
            return None;
        }
        j = k;
    }
    b.get(j).is_none_or(|&c| !is_word(c) && c != b'.').then_some(j)
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$'
}

fn word_end(b: &[u8], i: usize) -> usize {
    i + b[i..].iter().take_while(|&&c| is_word(c)).count()
}

fn punct(b: &[u8], i: usize) -> Option<(Kind, usize)> {
    let two = |c: u8| b.get(i + 1) == Some(&c);
    Some(match b[i] {
        b'<' if two(b'=') && b.get(i + 2) == Some(&b'>') => (Kind::Op(Op::NullSafeEq), 3),
        b'<' if two(b'=') => (Kind::Op(Op::Le), 2),
        b'<' if two(b'>') => (Kind::Op(Op::Ne), 2),
        b'!' if two(b'=') => (Kind::Op(Op::Ne), 2),
        b'>' if two(b'=') => (Kind::Op(Op::Ge), 2),
        b':' if two(b'=') => (Kind::Op(Op::Assign), 2),
        b'<' if two(b'<') => (Kind::Op(Op::Other), 2),
        b'>' if two(b'>') => (Kind::Op(Op::Other), 2),
        b'|' if two(b'|') => (Kind::Op(Op::Other), 2),
        b'&' if two(b'&') => (Kind::Op(Op::Other), 2),
        b'-' if two(b'>') => (Kind::Op(Op::Other), 2),
        c @ (b'(' | b')' | b',' | b'.' | b'=' | b'<' | b'>' | b'*' | b'+' | b'-' | b'/' | b'%' | b';') => {
            (Kind::Punct(c), 1)
        }
        b'!' | b'|' | b'&' | b'^' | b'~' | b':' | b'{' | b'}' | b'[' | b']' | b'\\' => (Kind::Op(Op::Other), 1),
        _ => return None,
    })
}
