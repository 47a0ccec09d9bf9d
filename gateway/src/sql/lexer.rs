//! The one SQL lexer: MySQL tokens of a text as byte spans, read under the client's SQL mode.
//!
//! Every reader of SQL text tokenizes with it: the fast analysis path ([`lex`]), the statement
//! splitter ([`super::split`]), the mode normaliser ([`super::mode`]), the `SET` parser
//! (`session::state`) and the partition-DDL reader (`partition::ddl`). It never fails: what it
//! cannot take apart becomes a token of its own kind ([`Kind::Odd`], [`Kind::Unterminated`],
//! [`Kind::Versioned`]), and each reader decides whether to decline on it. It is a loop over the
//! bytes with no recursion; a token is found in time linear in its length.

use std::borrow::Cow;

use smallvec::SmallVec;

use super::hint::Hints;

/// How a text is read: the SQL mode flags that change lexing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Mode {
    /// `NO_BACKSLASH_ESCAPES`: a backslash in a string is an ordinary character.
    pub nbe: bool,
    /// `ANSI_QUOTES`: `"…"` is an identifier, not a string.
    pub ansi_quotes: bool,
}

impl Mode {
    /// Every combination of the flags: the readings of a text whose session's mode is not known.
    pub const ALL: [Mode; 4] = [
        Mode { nbe: false, ansi_quotes: false },
        Mode { nbe: true, ansi_quotes: false },
        Mode { nbe: false, ansi_quotes: true },
        Mode { nbe: true, ansi_quotes: true },
    ];

    /// The flags implied by an `sql_mode` value (combination modes included).
    pub fn from_sql_mode(value: &str) -> Mode {
        let has = |m: &str| value.split(',').any(|w| w.trim().eq_ignore_ascii_case(m));
        let ansi = ["ANSI_QUOTES", "ANSI", "DB2", "MAXDB", "MSSQL", "ORACLE", "POSTGRESQL"].iter().any(|m| has(m));
        Mode { nbe: has("NO_BACKSLASH_ESCAPES"), ansi_quotes: ansi }
    }

    /// Whether a quote character opens a string with backslash escapes in this mode.
    pub fn escapes(self, quote: u8) -> bool {
        !self.nbe && (quote == b'\'' || (quote == b'"' && !self.ansi_quotes))
    }
}

/// Token kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Unquoted identifier or keyword (non-ASCII bytes included: names may be in any language).
    Word,
    /// Quoted identifier: back-quoted, or double-quoted under `ANSI_QUOTES` (quotes included).
    Quoted,
    /// String literal (quotes included; an introducer or `N` before it is a separate word).
    Str,
    /// Unsigned numeric literal: `1`, `1.`, `1.5`, `.5`, each with an optional exponent.
    Number,
    /// `0x…` or `X'…'` (the whole literal; [`hex_digits`] gives the digits).
    Hex,
    /// `?`.
    Placeholder,
    /// `@name`, `@'name'`, `@"name"`, `` @`name` `` (`@` included).
    UserVar,
    /// `@@name`, `@@scope.name` (`@@` included).
    SysVar,
    /// A single punctuation byte.
    Punct(u8),
    /// An operator of other bytes.
    Op(Op),
    /// A block comment `/* … */` (delimiters included; optimizer hints live in them).
    Comment,
    /// A versioned comment `/*! … */` or `/*M! … */`, whose body the server executes.
    Versioned,
    /// A literal-like token of an unusual form (`1abc`, `1e`, `0b1`, `0xZZ`, `X'zz'`, a lone
    /// `@`) or a control byte.
    Odd,
    /// An unterminated quote or comment: the rest of the text.
    Unterminated,
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
    /// Anything else (`||`, `&&`, `<<`, `->`, `!`, `|`, `{`, …): the recognisers decline on it.
    Other,
}

/// A token: its kind and byte span in the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    /// Kind.
    pub kind: Kind,
    /// Start offset.
    pub start: u32,
    /// End offset (exclusive).
    pub end: u32,
}

impl Token {
    /// The token's byte range.
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// The tokens of a text, whitespace and line comments skipped.
#[derive(Debug, Clone)]
pub struct Lexer<'a> {
    b: &'a [u8],
    i: usize,
    mode: Mode,
    /// Read the bodies of versioned comments as SQL (as the server does) instead of returning
    /// each as one [`Kind::Versioned`] token.
    enter_versioned: bool,
    /// Versioned comments entered and not yet closed.
    open_versioned: u32,
    /// A word or an unquoted variable name held a non-ASCII byte.
    non_ascii_word: bool,
    /// A `--` comment began with a control byte that is not whitespace (`--\0`): a comment to
    /// the server, two minus signs to the reference tokenizer.
    control_comment: bool,
}

impl<'a> Lexer<'a> {
    /// The tokens of `text` read under `mode`.
    pub fn new(text: &'a [u8], mode: Mode) -> Self {
        Lexer::at(text, 0, mode)
    }

    /// The tokens of `text` from byte `at` on.
    pub fn at(text: &'a [u8], at: usize, mode: Mode) -> Self {
        Lexer {
            b: text,
            i: at,
            mode,
            enter_versioned: false,
            open_versioned: 0,
            non_ascii_word: false,
            control_comment: false,
        }
    }

    /// Reads the bodies of `/*! … */` comments as SQL.
    pub fn entering_versioned(mut self) -> Self {
        self.enter_versioned = true;
        self
    }

    /// Whether a word or an unquoted variable name so far held a non-ASCII byte.
    pub fn saw_non_ascii_word(&self) -> bool {
        self.non_ascii_word
    }

    /// Whether a `--` comment so far began with a control byte that is not whitespace.
    pub fn saw_control_comment(&self) -> bool {
        self.control_comment
    }

    /// The next token's kind and end, or `None` for a skipped stretch (whitespace, a line
    /// comment, an entered versioned comment's delimiters) ending at `self.i`.
    #[inline(always)]
    fn token(&mut self, i: usize) -> Option<(Kind, usize)> {
        let b = self.b;
        let next = b.get(i + 1).copied();
        Some(match b[i] {
            b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c => return self.skip(i + 1),
            b'#' => return self.skip(line_end(b, i)),
            b'-' if next == Some(b'-')
                && b.get(i + 2).is_none_or(|c| c.is_ascii_whitespace() || c.is_ascii_control()) =>
            {
                self.control_comment |= b.get(i + 2).is_some_and(|&c| !(c as char).is_whitespace());
                return self.skip(line_end(b, i));
            }
            b'/' if next == Some(b'*') => return self.block_comment(i),
            b'*' if next == Some(b'/') && self.open_versioned > 0 => {
                self.open_versioned -= 1;
                return self.skip(i + 2);
            }
            b'`' => quoted(b, i, false, Kind::Quoted),
            b'"' if self.mode.ansi_quotes => quoted(b, i, false, Kind::Quoted),
            q @ (b'\'' | b'"') => quoted(b, i, self.mode.escapes(q), Kind::Str),
            b'0' if next == Some(b'x') => match hex_end(b, i + 2) {
                Some(end) => (Kind::Hex, end),
                None => (Kind::Odd, loose_end(b, i)),
            },
            b'0'..=b'9' => match number_end(b, i) {
                Some(end) => (Kind::Number, end),
                None => (Kind::Odd, loose_end(b, i)),
            },
            b'.' if next.is_some_and(|c| c.is_ascii_digit()) => match number_end(b, i) {
                Some(end) => (Kind::Number, end),
                None => (Kind::Odd, loose_end(b, i + 1)),
            },
            b'x' | b'X' if next == Some(b'\'') => hex_string(b, i),
            c if is_word(c) => self.word(i),
            b'?' => (Kind::Placeholder, i + 1),
            b'@' => {
                let (kind, end) = variable(b, i, self.mode);
                // An unquoted name with non-ASCII bytes (`@vé`, `@@vé`): `sqlparser` ends the
                // name at the first character it does not take.
                let quoted = matches!(b.get(i + 1), Some(b'\'' | b'"' | b'`'));
                self.non_ascii_word |= !quoted && b.get(i..end).is_some_and(|v| !v.is_ascii());
                (kind, end)
            }
            _ => punct(b, i),
        })
    }

    fn skip(&mut self, to: usize) -> Option<(Kind, usize)> {
        self.i = to;
        None
    }

    #[inline]
    fn word(&mut self, i: usize) -> (Kind, usize) {
        let rest = &self.b[i..];
        let len = rest.iter().position(|&c| !is_word(c)).unwrap_or(rest.len());
        self.non_ascii_word |= !rest[..len].is_ascii();
        (Kind::Word, i + len)
    }

    /// `/* … */`, `/*! … */` or `/*M! … */` at `i`.
    fn block_comment(&mut self, i: usize) -> Option<(Kind, usize)> {
        let b = self.b;
        let versioned = match b.get(i + 2) {
            Some(b'!') => Some(i + 3),
            Some(b'M') if b.get(i + 3) == Some(&b'!') => Some(i + 4),
            _ => None,
        };
        if let (Some(body), true) = (versioned, self.enter_versioned) {
            self.open_versioned += 1;
            return self.skip(body + b[body..].iter().take_while(|c| c.is_ascii_digit()).count());
        }
        let kind = if versioned.is_some() { Kind::Versioned } else { Kind::Comment };
        Some(match memchr::memmem::find(&b[i + 2..], b"*/") {
            Some(p) => (kind, i + 2 + p + 2),
            None => (Kind::Unterminated, b.len()),
        })
    }
}

impl Iterator for Lexer<'_> {
    type Item = Token;

    // Inlined into the fast path's loop ([`lex`]): a call per token costs a third more there.
    #[inline(always)]
    fn next(&mut self) -> Option<Token> {
        loop {
            let start = self.i;
            // Blanks between tokens, the most common bytes, without a call.
            if matches!(self.b.get(start)?, b' ' | b'\t' | b'\n' | b'\r') {
                self.i += 1;
                continue;
            }
            if let Some((kind, end)) = self.token(start) {
                self.i = end;
                return Some(Token { kind, start: start as u32, end: end as u32 });
            }
        }
    }
}

/// Tokens of one statement for the fast path (inline for typical statements).
pub type Tokens = SmallVec<[Token; 32]>;

/// Lexes one statement for the fast path, read in the default SQL mode (texts of other modes are
/// normalised first, [`super::mode`]), collecting optimizer hints from its comments. `None` when
/// it holds something the fast path does not handle: a versioned comment, an `N'…'` / `b'…'`
/// literal, an unusual literal, non-ASCII text outside strings and comments, an unterminated
/// quote or comment, a `--` comment opened by a control byte (`--\0`).
pub fn lex<'a>(sql: &'a str, hints: &mut Hints<'a>) -> Option<Tokens> {
    let mut lexer = Lexer::new(sql.as_bytes(), Mode::default());
    let mut out = Tokens::new();
    for t in &mut lexer {
        match t.kind {
            Kind::Comment => hints.scan(Cow::Borrowed(sql.get(t.start as usize + 2..t.end as usize - 2)?)),
            Kind::Versioned | Kind::Odd | Kind::Unterminated => return None,
            Kind::Str if prefixed(sql, out.last(), t) => return None,
            _ => out.push(t),
        }
    }
    (!lexer.saw_non_ascii_word() && !lexer.saw_control_comment()).then_some(out)
}

/// Whether the string `t` is a national or bit string (`N'…'`, `b'…'`): an adjacent one-letter
/// word before it.
fn prefixed(sql: &str, prev: Option<&Token>, t: Token) -> bool {
    prev.is_some_and(|p| {
        p.kind == Kind::Word && p.end == t.start && matches!(sql.get(p.range()), Some("n" | "N" | "b" | "B"))
    })
}

/// The digits of a [`Kind::Hex`] token's text (`0x1f` → `1f`, `X'1f'` → `1f`).
pub fn hex_digits(text: &str) -> &str {
    match text.as_bytes().get(1) {
        Some(b'\'') => text.get(2..text.len() - 1).unwrap_or(""),
        _ => text.get(2..).unwrap_or(""),
    }
}

/// `sql` after any leading whitespace and comments (`/* … */`, `-- …`, `# …`); executable
/// comments (`/*! … */`) are kept, they are statement text. Empty when an unterminated comment
/// is all there is.
pub fn skip_leading_comments(sql: &str) -> &str {
    for t in Lexer::new(sql.as_bytes(), Mode::default()) {
        let text = sql.get(t.range()).unwrap_or("");
        match t.kind {
            Kind::Comment => continue,
            Kind::Unterminated if text.starts_with("/*") && !text.starts_with("/*!") && !text.starts_with("/*M!") => {
                return ""
            }
            _ => return sql.get(t.start as usize..).unwrap_or(""),
        }
    }
    ""
}

/// The first word of a statement (after leading comments); empty when it starts otherwise.
pub fn first_word(sql: &str) -> &str {
    let t = skip_leading_comments(sql);
    let end = t.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(t.len());
    &t[..end]
}

/// The name of an unquoted user variable token (`@v` → `v`); `None` for a quoted name.
pub fn bare_user_var(text: &str) -> Option<&str> {
    text.strip_prefix('@').filter(|n| !n.starts_with(['\'', '"', '`', '@']))
}

/// Identifier bytes: ASCII letters and digits, `_`, `$`, and every non-ASCII byte.
#[inline]
fn is_word(c: u8) -> bool {
    WORD_BYTES[usize::from(c)]
}

/// [`is_word`] of each byte value.
const WORD_BYTES: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80;
        c += 1;
    }
    t
};

fn word_end(b: &[u8], i: usize) -> usize {
    i + b[i.min(b.len())..].iter().take_while(|&&c| is_word(c)).count()
}

/// Byte offset after a `#` / `--` comment.
fn line_end(b: &[u8], i: usize) -> usize {
    memchr::memchr(b'\n', &b[i..]).map_or(b.len(), |p| i + p + 1)
}

/// The quoted token at `i` (doubled quotes; backslash escapes when `escapes`).
fn quoted(b: &[u8], i: usize, escapes: bool, kind: Kind) -> (Kind, usize) {
    match quote_end(b, i, escapes) {
        Some(end) => (kind, end),
        None => (Kind::Unterminated, b.len()),
    }
}

/// End (exclusive) of the quoted text starting at `i`.
fn quote_end(b: &[u8], i: usize, escapes: bool) -> Option<usize> {
    let q = b[i];
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\\' if escapes => j += 2,
            c if c == q && b.get(j + 1) == Some(&q) => j += 2,
            c if c == q => return Some(j + 1),
            _ => j += 1,
        }
    }
    None
}

/// End of the hex digits of `0x…` starting at `i`, when there are some and no word follows.
fn hex_end(b: &[u8], i: usize) -> Option<usize> {
    let end = i + b[i..].iter().take_while(|c| c.is_ascii_hexdigit()).count();
    (end > i && b.get(end).is_none_or(|&c| !is_word(c))).then_some(end)
}

/// `X'…'` at `i`: hex digits only (`X''` is the empty string), else an odd literal.
fn hex_string(b: &[u8], i: usize) -> (Kind, usize) {
    let Some(end) = quote_end(b, i + 1, false) else {
        return (Kind::Unterminated, b.len());
    };
    let hex = b[i + 2..end - 1].iter().all(u8::is_ascii_hexdigit);
    (if hex { Kind::Hex } else { Kind::Odd }, end)
}

/// End of a numeric literal at `i`: `digits`, `digits.`, `digits.digits` or `.digits`, then an
/// optional exponent `e[±]digits`; `None` for other forms that start with a digit or a dot
/// (`1abc`, `1e`, `0b1`, `1.2.3`).
fn number_end(b: &[u8], i: usize) -> Option<usize> {
    let digits = |j: usize| j + b[j.min(b.len())..].iter().take_while(|c| c.is_ascii_digit()).count();
    let mut j = digits(i);
    let whole = j > i;
    if b.get(j) == Some(&b'.') {
        let k = digits(j + 1);
        if !whole && k == j + 1 {
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

/// End of a literal-like run at `start`: word bytes, dots and an exponent's sign.
fn loose_end(b: &[u8], start: usize) -> usize {
    let mut i = start;
    while let Some(&c) = b.get(i) {
        let exp_sign = matches!(c, b'+' | b'-') && i > start && matches!(b[i - 1], b'e' | b'E');
        if !(is_word(c) || c == b'.' || exp_sign) {
            break;
        }
        i += 1;
    }
    i
}

/// `@…` or `@@…` at `i`.
fn variable(b: &[u8], i: usize, mode: Mode) -> (Kind, usize) {
    if b.get(i + 1) == Some(&b'@') {
        let mut j = word_end(b, i + 2);
        if j > i + 2 && b.get(j) == Some(&b'.') && b.get(j + 1).is_some_and(|&c| is_word(c)) {
            j = word_end(b, j + 1);
        }
        return if j > i + 2 { (Kind::SysVar, j) } else { (Kind::Odd, i + 2) };
    }
    match b.get(i + 1) {
        Some(&q @ (b'\'' | b'"' | b'`')) => match quote_end(b, i + 1, q != b'`' && mode.escapes(q)) {
            Some(end) => (Kind::UserVar, end),
            None => (Kind::Unterminated, b.len()),
        },
        Some(&c) if is_word(c) || c == b'.' => {
            let end = i + 1 + b[i + 1..].iter().take_while(|&&c| is_word(c) || c == b'.').count();
            (Kind::UserVar, end)
        }
        _ => (Kind::Odd, i + 1),
    }
}

fn punct(b: &[u8], i: usize) -> (Kind, usize) {
    let two = |c: u8| b.get(i + 1) == Some(&c);
    match b[i] {
        b'<' if two(b'=') && b.get(i + 2) == Some(&b'>') => (Kind::Op(Op::NullSafeEq), i + 3),
        b'<' if two(b'=') => (Kind::Op(Op::Le), i + 2),
        b'<' if two(b'>') => (Kind::Op(Op::Ne), i + 2),
        b'!' if two(b'=') => (Kind::Op(Op::Ne), i + 2),
        b'>' if two(b'=') => (Kind::Op(Op::Ge), i + 2),
        b':' if two(b'=') => (Kind::Op(Op::Assign), i + 2),
        b'<' if two(b'<') => (Kind::Op(Op::Other), i + 2),
        b'>' if two(b'>') => (Kind::Op(Op::Other), i + 2),
        b'|' if two(b'|') => (Kind::Op(Op::Other), i + 2),
        b'&' if two(b'&') => (Kind::Op(Op::Other), i + 2),
        b'-' if two(b'>') => (Kind::Op(Op::Other), i + 2),
        c @ (b'(' | b')' | b',' | b'.' | b'=' | b'<' | b'>' | b'*' | b'+' | b'-' | b'/' | b'%' | b';') => {
            (Kind::Punct(c), i + 1)
        }
        b'!' | b'|' | b'&' | b'^' | b'~' | b':' | b'{' | b'}' | b'[' | b']' | b'\\' => (Kind::Op(Op::Other), i + 1),
        _ => (Kind::Odd, i + 1),
    }
}

#[cfg(test)]
#[path = "lexer_tests.rs"]
mod tests;
