//! Parser of `SET` statements into assignments with their values (the `sql` analysis tells that a
//! statement is a `SET`, not what it assigns):
//! `SET [GLOBAL|SESSION|LOCAL|PERSIST] name = expr`, `SET @@[global.|session.|local.]name = expr`,
//! `SET @user = expr` (`=` or `:=`), `SET NAMES cs [COLLATE co]`, `SET CHARACTER SET cs`,
//! `SET [GLOBAL|SESSION] TRANSACTION …`, comma-separated; expressions kept verbatim.

use super::value::{decode_string, SetValue};
use crate::sql::lexer::{Kind, Lexer, Mode, Op};

/// What one assignment of a `SET` statement sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A session system variable (name in lower case).
    System(String),
    /// A user variable (name in lower case: user variable names are case-insensitive).
    User(String),
    /// `SET NAMES` (value: the character set or `DEFAULT`), with its `COLLATE` clause.
    Names {
        /// Collation name, if given.
        collation: Option<String>,
    },
    /// `SET CHARACTER SET` / `SET CHARSET` (value: the character set or `DEFAULT`).
    Charset,
    /// `SET SESSION TRANSACTION …` (value: the characteristics, verbatim).
    SessionTransaction,
    /// `SET TRANSACTION …` without scope: only the next transaction (value: the characteristics).
    NextTransaction,
    /// A global or persisted variable: not session state, ignored.
    Global,
}

/// One assignment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    /// What is set.
    pub target: Target,
    /// The value.
    pub value: SetValue,
}

/// The assignments of a `SET` statement read under `mode`; `None` when the statement is not a
/// `SET` this parser understands (`SET ROLE`, `SET STATEMENT … FOR`, versioned comments, …).
/// `SET PASSWORD` sets no session state: an empty list.
pub fn parse_set(sql: &[u8], mode: Mode) -> Option<Vec<Assignment>> {
    let toks = tokens(sql, mode)?;
    let toks = strip_semicolon(&toks);
    let mut p = Parser { sql, toks, pos: 0, mode };
    if !p.kw("SET") {
        return None;
    }
    if p.is_kw("PASSWORD") {
        return Some(Vec::new());
    }
    if let Some(t) = p.transaction() {
        return Some(vec![t]);
    }
    let mut out = Vec::new();
    loop {
        out.push(p.item()?);
        if p.at_end() {
            return Some(out);
        }
        p.punct(b',').then_some(())?;
    }
}

/// Token kinds as this parser reads them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    /// Unquoted identifier, keyword or introducer (`_utf8mb4`).
    Word,
    /// Back-quoted identifier (or double-quoted under `ANSI_QUOTES`), quotes included.
    Ident,
    /// String literal, quotes included.
    Str,
    /// Any literal read as written: numbers, `0x…`, `X'…'`, unusual forms (`1e`, `.5`).
    Number,
    /// `@name`, `@'name'`, `@"name"`, `` @`name` `` (span includes `@`).
    UserVar,
    /// `@@name`, `@@scope.name` (span includes `@@`).
    SysVar,
    /// `:=`.
    Assign,
    /// Any other byte (the first byte of a multi-byte operator).
    Punct(u8),
}

/// A token and its span in the statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Token {
    tok: Tok,
    start: usize,
    end: usize,
}

/// The statement's tokens ([`crate::sql::lexer`]), comments left out; `None` when it holds a
/// versioned comment or an unterminated quote or comment, so nothing is ever guessed.
fn tokens(sql: &[u8], mode: Mode) -> Option<Vec<Token>> {
    let mut out = Vec::new();
    for t in Lexer::new(sql, mode) {
        let first = sql[t.start as usize];
        let tok = match t.kind {
            Kind::Comment => continue,
            Kind::Versioned | Kind::Unterminated => return None,
            Kind::Word => Tok::Word,
            Kind::Quoted => Tok::Ident,
            Kind::Str => Tok::Str,
            Kind::Number | Kind::Hex => Tok::Number,
            Kind::Odd if first.is_ascii_digit() || first == b'.' => Tok::Number,
            Kind::UserVar => Tok::UserVar,
            Kind::SysVar => Tok::SysVar,
            Kind::Op(Op::Assign) => Tok::Assign,
            Kind::Punct(c) => Tok::Punct(c),
            Kind::Placeholder | Kind::Op(_) | Kind::Odd => Tok::Punct(first),
        };
        out.push(Token { tok, start: t.start as usize, end: t.end as usize });
    }
    Some(out)
}

fn strip_semicolon(toks: &[Token]) -> &[Token] {
    match toks.split_last() {
        Some((last, rest)) if last.tok == Tok::Punct(b';') => rest,
        _ => toks,
    }
}

struct Parser<'s, 't> {
    sql: &'s [u8],
    toks: &'t [Token],
    pos: usize,
    mode: Mode,
}

impl Parser<'_, '_> {
    fn at_end(&self) -> bool {
        self.pos >= self.toks.len()
    }

    fn peek(&self) -> Option<Token> {
        self.toks.get(self.pos).copied()
    }

    fn text(&self, t: Token) -> &[u8] {
        &self.sql[t.start..t.end]
    }

    fn is_kw(&self, w: &str) -> bool {
        self.peek().is_some_and(|t| t.tok == Tok::Word && self.text(t).eq_ignore_ascii_case(w.as_bytes()))
    }

    fn kw(&mut self, w: &str) -> bool {
        let yes = self.is_kw(w);
        self.pos += usize::from(yes);
        yes
    }

    fn punct(&mut self, c: u8) -> bool {
        let yes = self.peek().is_some_and(|t| t.tok == Tok::Punct(c));
        self.pos += usize::from(yes);
        yes
    }

    /// `[GLOBAL|SESSION|LOCAL] TRANSACTION characteristics` (the whole rest of the statement).
    fn transaction(&mut self) -> Option<Assignment> {
        let save = self.pos;
        let target = if self.kw("GLOBAL") {
            Target::Global
        } else if self.kw("SESSION") || self.kw("LOCAL") {
            Target::SessionTransaction
        } else {
            Target::NextTransaction
        };
        if !self.kw("TRANSACTION") {
            self.pos = save;
            return None;
        }
        let value = SetValue::Expr(self.rest_text()?.to_vec());
        self.pos = self.toks.len();
        Some(Assignment { target, value })
    }

    fn rest_text(&self) -> Option<&[u8]> {
        let first = self.peek()?;
        let last = self.toks.last()?;
        Some(&self.sql[first.start..last.end])
    }

    fn item(&mut self) -> Option<Assignment> {
        let t = self.peek()?;
        match t.tok {
            Tok::UserVar => {
                self.pos += 1;
                let name = self.user_name(t);
                self.assigned(Target::User(name))
            }
            Tok::SysVar => {
                self.pos += 1;
                let target = sys_var(self.text(t))?;
                self.assigned(target)
            }
            Tok::Word => self.word_item(),
            _ => None,
        }
    }

    fn user_name(&self, t: Token) -> String {
        let raw = &self.sql[t.start + 1..t.end];
        let name = match raw.first() {
            Some(b'\'' | b'"' | b'`') => decode_string(raw, raw[0] == b'`' || self.mode.nbe),
            _ => raw.to_vec(),
        };
        String::from_utf8_lossy(&name).to_lowercase()
    }

    fn word_item(&mut self) -> Option<Assignment> {
        if self.kw("NAMES") {
            return self.names();
        }
        if self.kw("CHARSET") || (self.is_kw("CHARACTER") && self.kw("CHARACTER") && self.kw("SET")) {
            let value = self.charset_value()?;
            return Some(Assignment { target: Target::Charset, value });
        }
        let global = self.kw("GLOBAL") || self.kw("PERSIST") || self.kw("PERSIST_ONLY");
        if !global && !self.kw("SESSION") {
            self.kw("LOCAL");
        }
        let t = self.peek().filter(|t| t.tok == Tok::Word)?;
        self.pos += 1;
        if ["ROLE", "DEFAULT", "STATEMENT", "PASSWORD"].iter().any(|w| self.text(t).eq_ignore_ascii_case(w.as_bytes()))
        {
            return None;
        }
        let name = std::str::from_utf8(self.text(t)).ok().filter(|n| valid_name(n))?.to_ascii_lowercase();
        if self.peek().is_some_and(|t| t.tok == Tok::Punct(b'.')) {
            return None; // structured variables (`key_cache.x`)
        }
        self.assigned(if global { Target::Global } else { Target::System(name) })
    }

    fn names(&mut self) -> Option<Assignment> {
        let value = self.charset_value()?;
        let collation = if self.kw("COLLATE") { Some(self.name_token()?) } else { None };
        Some(Assignment { target: Target::Names { collation }, value })
    }

    /// A character set name (word, string or quoted identifier) or `DEFAULT`.
    fn charset_value(&mut self) -> Option<SetValue> {
        if self.kw("DEFAULT") {
            return Some(SetValue::Word("DEFAULT".into()));
        }
        Some(SetValue::Word(self.name_token()?))
    }

    fn name_token(&mut self) -> Option<String> {
        let t = self.peek()?;
        let text = match t.tok {
            Tok::Word => self.text(t).to_vec(),
            Tok::Str | Tok::Ident => decode_string(self.text(t), true),
            _ => return None,
        };
        self.pos += 1;
        let name = String::from_utf8(text).ok()?;
        name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_').then_some(name)
    }

    /// `= expr` or `:= expr` after the target.
    fn assigned(&mut self, target: Target) -> Option<Assignment> {
        let t = self.peek()?;
        if t.tok != Tok::Punct(b'=') && t.tok != Tok::Assign {
            return None;
        }
        self.pos += 1;
        let value = self.value()?;
        Some(Assignment { target, value })
    }

    /// The expression up to the next top-level comma.
    fn value(&mut self) -> Option<SetValue> {
        let start = self.pos;
        let mut depth = 0i32;
        while let Some(t) = self.peek() {
            match t.tok {
                Tok::Punct(b'(') => depth += 1,
                Tok::Punct(b')') => depth -= 1,
                Tok::Punct(b',') if depth == 0 => break,
                _ => {}
            }
            self.pos += 1;
        }
        let toks = &self.toks[start..self.pos];
        let (first, last) = (toks.first()?, toks.last()?);
        Some(self.classify(toks, &self.sql[first.start..last.end]))
    }

    fn classify(&self, toks: &[Token], text: &[u8]) -> SetValue {
        let word = |t: &Token| std::str::from_utf8(self.text(*t)).ok().map(str::to_string);
        match toks {
            [t] if t.tok == Tok::Str => SetValue::str(decode_string(text, self.mode.nbe)),
            [t] if t.tok == Tok::Word && text.eq_ignore_ascii_case(b"NULL") => SetValue::Null,
            [t] if matches!(t.tok, Tok::Word | Tok::Number) => {
                word(t).map_or(SetValue::Expr(text.to_vec()), SetValue::Word)
            }
            [s, n] if matches!(s.tok, Tok::Punct(b'-' | b'+')) && n.tok == Tok::Number => {
                std::str::from_utf8(text).map_or(SetValue::Expr(text.to_vec()), |w| SetValue::Word(w.replace(' ', "")))
            }
            [i, s] if i.tok == Tok::Word && s.tok == Tok::Str && self.text(*i).starts_with(b"_") => {
                SetValue::Str { introducer: word(i), bytes: decode_string(self.text(*s), self.mode.nbe) }
            }
            _ => SetValue::Expr(text.to_vec()),
        }
    }
}

/// `@@name`, `@@session.name`, `@@local.name` (session) or `@@global.name` (ignored).
fn sys_var(text: &[u8]) -> Option<Target> {
    let s = std::str::from_utf8(text.get(2..)?).ok()?.to_ascii_lowercase();
    match s.split_once('.') {
        None if valid_name(&s) => Some(Target::System(s)),
        Some(("session" | "local", name)) if valid_name(name) => Some(Target::System(name.to_string())),
        Some(("global", _)) => Some(Target::Global),
        _ => None,
    }
}

/// A system variable name: ASCII letters, digits, `_` and `$` (it is written back unquoted).
fn valid_name(n: &str) -> bool {
    !n.is_empty() && n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$')
}
