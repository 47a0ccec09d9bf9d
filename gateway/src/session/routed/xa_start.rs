//! Local syntax check of `XA {START|BEGIN} xid [JOIN|RESUME]` before it is deferred (docs/routing.md §8):
//! a start the server would refuse for its syntax is sent to it at once, so that its error answers
//! the `XA START` itself and not the statement that would have replayed it.

use crate::sql::hint::Hints;
use crate::sql::lexer::{self, Kind, Token};

/// What the local check says about an `XA START` / `XA BEGIN` text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XaStartSyntax {
    /// `XA {START|BEGIN} xid [JOIN|RESUME]` as MariaDB and OceanBase parse it: hold it.
    Valid,
    /// Not that shape: the server's syntax error must answer the statement itself.
    Invalid,
    /// Something the fast-path lexer does not handle (versioned comments, `b'…'` or `N'…'`
    /// literals, double quotes that `ANSI_QUOTES` would read as identifiers, adjacent string
    /// literals): deferred as before, a refusal at replay still fails on its own behalf.
    Unsure,
}

/// Checks one statement that starts with `XA START` / `XA BEGIN`. The grammar (MariaDB
/// `sql_yacc.yy`, OceanBase MySQL mode alike): `xid = text_string [, text_string [, number]]`,
/// `text_string = '…' | X'…' | 0x…`, optionally followed by `JOIN` or `RESUME`.
pub fn check(sql: &str) -> XaStartSyntax {
    let mut hints = Hints::default();
    let Some(tokens) = lexer::lex(sql, &mut hints) else {
        return XaStartSyntax::Unsure;
    };
    let word = |t: &Token| (t.kind == Kind::Word).then(|| &sql[t.start as usize..t.end as usize]);
    let is = |t: Option<&Token>, w: &str| t.and_then(word).is_some_and(|x| x.eq_ignore_ascii_case(w));
    let mut toks: &[Token] = &tokens;
    while let [rest @ .., last] = toks {
        if last.kind != Kind::Punct(b';') {
            break;
        }
        toks = rest;
    }
    let mut it = toks.iter().peekable();
    if !is(it.next(), "XA") || !(is(it.peek().copied(), "START") || is(it.peek().copied(), "BEGIN")) {
        return XaStartSyntax::Invalid;
    }
    it.next();
    let string = |t: Option<&Token>| match t {
        Some(t) if t.kind == Kind::Hex => Some(true),
        Some(t) if t.kind == Kind::Str => Some(sql.as_bytes()[t.start as usize] == b'\''),
        _ => None,
    };
    // gtrid [, bqual [, formatID]]
    let mut parts = 0;
    loop {
        let t = it.next();
        let ok =
            if parts < 2 { string(t) } else { t.filter(|t| matches!(t.kind, Kind::Number | Kind::Hex)).map(|_| true) };
        match ok {
            None => return XaStartSyntax::Invalid,
            Some(false) => return XaStartSyntax::Unsure,
            Some(true) => {}
        }
        parts += 1;
        match it.peek() {
            Some(t) if t.kind == Kind::Punct(b',') && parts < 3 => {
                it.next();
            }
            Some(t) if t.kind == Kind::Str => return XaStartSyntax::Unsure,
            _ => break,
        }
    }
    let tail = it.next();
    if tail.is_some() && !(is(tail, "JOIN") || is(tail, "RESUME")) {
        return XaStartSyntax::Invalid;
    }
    if it.next().is_some() {
        return XaStartSyntax::Invalid;
    }
    XaStartSyntax::Valid
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xa_start_shapes() {
        for ok in [
            "XA START 'x1'",
            "xa begin 'x1'",
            "XA START 'g','b'",
            "XA START 'g', 'b', 7;",
            "XA START X'6162', 0x63, 0x1",
            "/* c */ XA START 'x' JOIN",
            "XA START 'x' resume ;",
        ] {
            assert_eq!(check(ok), XaStartSyntax::Valid, "{ok}");
        }
        for bad in [
            "XA START 'z' ONE PHASE",
            "XA START 'y' garbage",
            "XA START",
            "XA START x1",
            "XA START 'a',",
            "XA START 'a', 'b', 'c'",
            "XA START 'a', 'b', 1, 2",
            "XA START 'a' JOIN RESUME",
            "XA START 1",
            "XA START 'a'; SELECT 1",
        ] {
            assert_eq!(check(bad), XaStartSyntax::Invalid, "{bad}");
        }
        for unsure in ["XA START \"x\"", "XA START b'01'", "XA START 'a' 'b'", "/*!XA START 'x' */"] {
            assert_eq!(check(unsure), XaStartSyntax::Unsure, "{unsure}");
        }
    }
}
