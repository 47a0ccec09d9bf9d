//! The hand-written fast path: recognisers for the common statement shapes over the fast lexer.
//!
//! Every recogniser returns `None` as soon as it meets something it does not fully understand;
//! the caller then falls back to the reference parser. It never guesses.

mod dml;
mod expr;
mod insert;
mod session;

pub(crate) use expr::literal;

use std::borrow::Cow;

use super::analysis::{Analysis, Name, Path, Pins, StmtKind};
use super::depth::{self, Class};
use super::hint::Hints;
use super::lexer::{self, Kind, Token};

/// Analyses one statement, or declines with `None`. A statement it declines whose tree would be
/// deeper than [`depth::MAX_TREE_DEPTH`] is not handed on: it is answered as unparsed here (its
/// hints and pins kept), which spares the reference path from tokenizing it.
pub fn analyze(sql: &str) -> Option<Analysis<'_>> {
    let mut hints = Hints::default();
    let toks = lexer::lex(sql, &mut hints)?;
    analyze_lexed(sql, &toks, hints)
}

/// [`analyze`] of a statement already lexed into `toks` (with the `hints` of its comments).
pub(crate) fn analyze_lexed<'a>(sql: &'a str, toks: &[Token], hints: Hints<'a>) -> Option<Analysis<'a>> {
    let (pins, glued) = scan_pins(sql, toks);
    if glued {
        return None;
    }
    let mut an = match recognise(sql, toks) {
        Some(an) => an,
        None if depth::within(toks.iter().map(|t| class(sql, t))) => return None,
        None => Analysis::new(StmtKind::Other, Path::Unparsed),
    };
    an.hints = hints;
    an.pins.insert(pins);
    an.placeholders = toks.iter().filter(|t| t.kind == Kind::Placeholder).count() as u32;
    Some(an)
}

/// The recognisers over the whole token list (a statement with tokens left over is declined).
fn recognise<'a>(sql: &'a str, toks: &[Token]) -> Option<Analysis<'a>> {
    let mut c = Cursor { sql, toks, pos: 0, depth: 0, counted: (0, 0) };
    let first = c.next_word()?;
    let mut an = dispatch(&mut c, first)?;
    an.path = Path::Fast;
    c.at_end().then_some(an)
}

/// The class of a token to the depth estimate ([`depth`]).
pub(crate) fn class(sql: &str, t: &Token) -> Class {
    match t.kind {
        Kind::Punct(c) => depth::punct_class(c),
        Kind::Op(_) => Class::Operator,
        Kind::Word if depth::is_operator_word(span(sql, t)) => Class::Operator,
        _ => Class::Operand,
    }
}

fn dispatch<'a>(c: &mut Cursor<'_, 'a>, first: &str) -> Option<Analysis<'a>> {
    let upper = |w: &str| w.eq_ignore_ascii_case(first);
    if upper("SELECT") {
        dml::select(c)
    } else if upper("UPDATE") {
        dml::update(c)
    } else if upper("DELETE") {
        dml::delete(c)
    } else if upper("INSERT") || upper("REPLACE") {
        insert::insert(c, upper("REPLACE"))
    } else {
        session::statement(c, first)
    }
}

/// Session pins visible in the tokens: user variables and session-dependent functions.
pub(super) fn pins(sql: &str, toks: &[Token]) -> Pins {
    scan_pins(sql, toks).0
}

/// [`pins`], and whether the tokens hold something the server and the reference tokenizer read
/// differently: a variable glued to an operand before it (`a@v`, `1@@x`, `@a@b`; `@` is a name
/// byte to it), a placeholder glued to a number after it (`?2` is its numbered placeholder), a
/// variable followed by `(`, or a user variable with a dot in its unquoted name. The server
/// refuses all but the last; the fast path declines rather than answer for either reading.
fn scan_pins(sql: &str, toks: &[Token]) -> (Pins, bool) {
    let mut pins = Pins::default();
    let mut glued = false;
    for (i, t) in toks.iter().enumerate() {
        match t.kind {
            Kind::UserVar | Kind::SysVar => {
                if t.kind == Kind::UserVar {
                    pins.insert(Pins::USER_VAR);
                }
                glued |= i.checked_sub(1).and_then(|p| toks.get(p)).is_some_and(|p| glued_operand(sql, p, t));
                // A variable called like a function (`@@session.GET_LOCK('a', 1)`): the server
                // refuses it; the reference tokenizer reads a call of its last name.
                glued |= toks.get(i + 1).is_some_and(|n| n.kind == Kind::Punct(b'('));
                // A dotted name (`@v.`, `@a.b`): one variable to the server, a variable and a
                // qualified name after it to the reference tokenizer (`@v. FROM t`).
                glued |= t.kind == Kind::UserVar
                    && span(sql, t).get(1..).is_some_and(|n| !n.starts_with(['`', '\'', '"']) && n.contains('.'));
            }
            Kind::Placeholder => {
                glued |=
                    toks.get(i + 1).is_some_and(|n| matches!(n.kind, Kind::Number | Kind::Hex) && n.start == t.end);
            }
            Kind::Word if toks.get(i + 1).is_some_and(|n| n.kind == Kind::Punct(b'(')) => {
                pins.insert(super::function_pin(span(sql, t)));
            }
            _ => {}
        }
    }
    (pins, glued)
}

/// Whether `prev` is a number, a variable, a quoted name or string (`'u'@'h'`, an account to
/// the server) or a name (not a keyword: `SELECT@a` is fine) ending where the variable `var`
/// starts.
fn glued_operand(sql: &str, prev: &Token, var: &Token) -> bool {
    prev.end == var.start
        && match prev.kind {
            Kind::Number | Kind::UserVar | Kind::SysVar | Kind::Quoted | Kind::Str => true,
            Kind::Word => !is_reserved(span(sql, prev)),
            _ => false,
        }
}

fn span<'a>(sql: &'a str, t: &Token) -> &'a str {
    sql.get(t.start as usize..t.end as usize).unwrap_or("")
}

/// Words that are never taken as identifiers by the fast path; sorted (byte order), for
/// [`is_reserved`]'s binary search.
const RESERVED: &[&str] = &[
    "ALL",
    "AND",
    "ANY",
    "ARRAY",
    "AS",
    "ASC",
    "BETWEEN",
    "BINARY",
    "BY",
    "CASE",
    "COLLATE",
    "CONNECT",
    "CROSS",
    "CURRENT_DATE",
    "CURRENT_TIME",
    "CURRENT_TIMESTAMP",
    "CURRENT_USER",
    "DATE",
    "DEFAULT",
    "DESC",
    "DISTINCT",
    "DIV",
    "DUAL",
    "DUPLICATE",
    "ELSE",
    "END",
    "ESCAPE",
    "EXCEPT",
    "EXISTS",
    "FALSE",
    "FOR",
    "FORCE",
    "FROM",
    "GROUP",
    "HAVING",
    "IGNORE",
    "IN",
    "INDEX",
    "INNER",
    "INTERSECT",
    "INTERVAL",
    "INTO",
    "IS",
    "JOIN",
    "KEY",
    "LEFT",
    "LIKE",
    "LIMIT",
    "LOCALTIME",
    "LOCALTIMESTAMP",
    "LOCK",
    "MAP",
    "MATCH",
    "MOD",
    "NATURAL",
    "NOT",
    "NULL",
    "OFFSET",
    "ON",
    "OR",
    "ORDER",
    "OUTER",
    "OVER",
    "PARTITION",
    "PRIOR",
    "REGEXP",
    "RETURNING",
    "RIGHT",
    "RLIKE",
    "ROW",
    "SELECT",
    "SET",
    "SOME",
    "SOUNDS",
    "START",
    "STRAIGHT_JOIN",
    "STRUCT",
    "TABLE",
    "THEN",
    "TIME",
    "TIMESTAMP",
    "TRUE",
    "UNION",
    "UNKNOWN",
    "UPDATE",
    "USE",
    "USING",
    "UTC_DATE",
    "UTC_TIME",
    "UTC_TIMESTAMP",
    "VALUE",
    "VALUES",
    "WHEN",
    "WHERE",
    "WINDOW",
    "WITH",
    "XOR",
];

/// How deep the fast path's expression parser may nest (parentheses, unary operators, function
/// arguments) before it declines: the parser recurses per level, and a statement is untrusted
/// input. Deeper statements go to the reference path, which has its own bounds.
pub const MAX_DEPTH: u32 = 64;

/// A position in the token list of one statement.
pub(super) struct Cursor<'t, 'a> {
    sql: &'a str,
    toks: &'t [Token],
    pos: usize,
    /// Current expression nesting ([`MAX_DEPTH`] bounds it).
    depth: u32,
    /// Placeholders among the first `.0` tokens: `.1` (the cursor only moves forward, so
    /// [`Cursor::placeholder_index`] counts each token once, not once per placeholder).
    counted: (usize, u32),
}

impl<'t, 'a> Cursor<'t, 'a> {
    fn peek(&self) -> Option<Token> {
        self.toks.get(self.pos).copied()
    }

    fn peek_at(&self, n: usize) -> Option<Token> {
        self.toks.get(self.pos + n).copied()
    }

    fn text(&self, t: Token) -> &'a str {
        span(self.sql, &t)
    }

    fn at_end(&self) -> bool {
        self.pos >= self.toks.len()
    }

    fn bump(&mut self) -> Option<Token> {
        let t = self.peek()?;
        self.pos += 1;
        Some(t)
    }

    /// The next token if it is an unquoted word.
    fn next_word(&mut self) -> Option<&'a str> {
        let t = self.peek().filter(|t| t.kind == Kind::Word)?;
        self.pos += 1;
        Some(self.text(t))
    }

    /// Whether the next token is the keyword `kw` (not consumed).
    fn is_kw(&self, kw: &str) -> bool {
        self.peek().is_some_and(|t| t.kind == Kind::Word && self.text(t).eq_ignore_ascii_case(kw))
    }

    /// Consumes the keyword `kw` if it is next.
    fn kw(&mut self, kw: &str) -> bool {
        let yes = self.is_kw(kw);
        self.pos += usize::from(yes);
        yes
    }

    /// Consumes the keyword `kw` or declines.
    fn expect_kw(&mut self, kw: &str) -> Option<()> {
        self.kw(kw).then_some(())
    }

    fn is_punct(&self, c: u8) -> bool {
        self.peek().is_some_and(|t| t.kind == Kind::Punct(c))
    }

    /// Consumes the punctuation `c` if it is next.
    fn punct(&mut self, c: u8) -> bool {
        let yes = self.is_punct(c);
        self.pos += usize::from(yes);
        yes
    }

    fn expect_punct(&mut self, c: u8) -> Option<()> {
        self.punct(c).then_some(())
    }

    /// Whether the next token can start an identifier.
    fn is_ident(&self) -> bool {
        self.peek().is_some_and(|t| match t.kind {
            Kind::Quoted => true,
            Kind::Word => !is_reserved(self.text(t)),
            _ => false,
        })
    }

    /// Consumes an identifier (unquoted non-reserved word or back-quoted name).
    fn ident(&mut self) -> Option<Name<'a>> {
        if !self.is_ident() {
            return None;
        }
        let t = self.bump()?;
        let text = self.text(t);
        Some(match t.kind {
            Kind::Quoted => unquote(text)?,
            _ => Cow::Borrowed(text),
        })
    }

    /// Zero-based index of the placeholder token just before the cursor.
    fn placeholder_index(&mut self) -> u32 {
        let end = self.pos.saturating_sub(1).min(self.toks.len());
        let (from, mut n) = if self.counted.0 <= end { self.counted } else { (0, 0) };
        n += self.toks[from..end].iter().filter(|t| t.kind == Kind::Placeholder).count() as u32;
        self.counted = (end, n);
        n
    }
}

/// Longest word [`is_reserved`] looks up, plus one.
const SHAPE_LENGTHS: usize = 25;

/// For each length, the first letters (bit `letter - 'A'`; bit 26 for any other byte) of the
/// reserved words of that length: most identifiers are told apart without a search.
static SHAPES: [u32; SHAPE_LENGTHS] = shapes();

const fn shapes() -> [u32; SHAPE_LENGTHS] {
    let mut out = [0u32; SHAPE_LENGTHS];
    let mut i = 0;
    while i < RESERVED.len() {
        let w = RESERVED[i].as_bytes();
        if w.len() < SHAPE_LENGTHS {
            out[w.len()] |= 1 << letter_bit(w[0]);
        }
        i += 1;
    }
    out
}

const fn letter_bit(c: u8) -> u32 {
    match c.to_ascii_uppercase() {
        u @ b'A'..=b'Z' => (u - b'A') as u32,
        _ => 26,
    }
}

fn is_reserved(word: &str) -> bool {
    // Asked for every identifier-shaped token of every statement: the length and first letter
    // first, then upper-cased on the stack and a binary search of the sorted list.
    let b = word.as_bytes();
    let Some(&first) = b.first() else { return false };
    if SHAPES.get(b.len()).is_none_or(|letters| letters & (1 << letter_bit(first)) == 0) {
        return false;
    }
    let mut buf = [0u8; SHAPE_LENGTHS];
    let Some(upper) = buf.get_mut(..b.len()) else { return false };
    upper.copy_from_slice(b);
    upper.make_ascii_uppercase();
    // Only the words of the same first letter: a tenth of the list.
    let (from, to) = LETTERS[letter_bit(first) as usize];
    let words = RESERVED.get(from as usize..to as usize).unwrap_or_default();
    words.binary_search_by(|r| r.as_bytes().cmp(upper)).is_ok()
}

/// For each first letter (as [`letter_bit`] numbers them), the range of [`RESERVED`] holding
/// the words that begin with it (the list is sorted, so they are consecutive).
static LETTERS: [(u16, u16); 27] = letters();

const fn letters() -> [(u16, u16); 27] {
    let mut out = [(0u16, 0u16); 27];
    let mut i = 0;
    while i < RESERVED.len() {
        let bit = letter_bit(RESERVED[i].as_bytes()[0]) as usize;
        if out[bit].1 == 0 {
            out[bit].0 = i as u16;
        }
        out[bit].1 = i as u16 + 1;
        i += 1;
    }
    out
}

/// Strips back-quotes and undoubles embedded ones; an empty name is declined.
fn unquote(text: &str) -> Option<Name<'_>> {
    let inner = text.get(1..text.len().checked_sub(1)?)?;
    if inner.is_empty() || inner.ends_with(' ') {
        return None;
    }
    Some(if inner.contains('`') { Cow::Owned(inner.replace("``", "`")) } else { Cow::Borrowed(inner) })
}

#[cfg(test)]
mod reserved_tests {
    use super::{is_reserved, RESERVED, SHAPE_LENGTHS};

    #[test]
    fn reserved_words_are_sorted_and_found_in_any_case() {
        assert!(RESERVED.windows(2).all(|w| w[0] < w[1]), "RESERVED must stay sorted for the binary search");
        for w in RESERVED {
            assert!(is_reserved(w) && is_reserved(&w.to_ascii_lowercase()), "{w}");
            assert!(w.len() < SHAPE_LENGTHS, "{w} is longer than is_reserved looks");
        }
        for w in ["c1", "c", "id", "sbtest1", "selects", "", "_", "1", "a_very_long_identifier_name_beyond_the_buffer"]
        {
            assert!(!is_reserved(w), "{w}");
        }
    }

    #[test]
    fn the_shape_filter_agrees_with_the_list() {
        // Near misses of every reserved word: one byte more, one less, another first byte.
        for w in RESERVED {
            for near in [format!("{w}S"), w[1..].to_string(), format!("Q{}", &w[1..]), format!("_{}", &w[1..])] {
                let listed = RESERVED.contains(&near.to_ascii_uppercase().as_str());
                assert_eq!(is_reserved(&near), listed, "{near}");
            }
        }
    }
}
