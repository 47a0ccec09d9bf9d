//! `CONNECTION_ID()` is the gateway's connection id: every call in a client statement is
//! replaced by that id before the statement reaches a server (whose thread id would otherwise
//! leak out, and name another client's session in a `KILL`).
//!
//! The rewrite is lexical: strings, quoted identifiers and comments are left alone (except in
//! `PREPARE … FROM '<text>'`, whose string is a statement), `db.connection_id()` (a stored
//! function) is not the built-in. A call that is a whole select-list item keeps its column name
//! (`CAST(7 AS UNSIGNED) AS `CONNECTION_ID()``); the value is a `BIGINT UNSIGNED` like the
//! built-in's.

use std::collections::VecDeque;

use crate::sql::lexer::{first_word, Kind, Lexer, Mode, Token};

/// Select-list tracking stops below this many nested parentheses (the value is still replaced).
const MAX_DEPTH: usize = 64;

/// The statement, read in `mode`, with every `CONNECTION_ID()` replaced by `id`; `None` when
/// it has none (by far the common case: one search of the bytes, no allocation).
pub fn rewrite(sql: &str, id: u32, mode: Mode) -> Option<String> {
    // Cheap filter first: no `connection_id` anywhere, nothing to do.
    if !contains_ignore_case(sql.as_bytes(), b"connection_id") {
        return None;
    }
    let first = first_word(sql);
    if first.eq_ignore_ascii_case("kill") {
        // `KILL CONNECTION_ID()` is the KILL parser's (`session::kill`).
        return None;
    }
    if STORED_DEFINITIONS.iter().any(|w| first.eq_ignore_ascii_case(w)) {
        // A routine, view, trigger or event body runs later, in whatever session calls it: a
        // literal id baked into its definition would be wrong for every other session.
        return None;
    }
    replace(sql, id, mode, first.eq_ignore_ascii_case("prepare"))
}

/// `sql` with its calls replaced by `id`; `None` when it has none.
fn replace(sql: &str, id: u32, mode: Mode, strings_are_code: bool) -> Option<String> {
    let mut edits = Vec::new();
    find_calls(sql, id, mode, strings_are_code, &mut edits);
    if edits.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(sql.len() + edits.len() * 40);
    let mut at = 0;
    for edit in edits {
        out.push_str(&sql[at..edit.start]);
        out.push_str(&edit.text);
        at = edit.end;
    }
    out.push_str(&sql[at..]);
    Some(out)
}

/// First words of statements that store SQL text for later (`CREATE PROCEDURE …`, `ALTER VIEW …`).
const STORED_DEFINITIONS: [&str; 2] = ["create", "alter"];

/// A span of the statement and its replacement.
#[derive(Debug, PartialEq, Eq)]
struct Edit {
    start: usize,
    end: usize,
    text: String,
}

/// What the previous significant token was (select-list items start after `SELECT` or `,`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Prev {
    ItemStart,
    Dot,
    Other,
}

/// The edits that replace the calls in `sql`, in order. Executable comments are read as code;
/// with `strings_are_code` (a `PREPARE`), so are the strings, which are then written anew.
fn find_calls(sql: &str, id: u32, mode: Mode, strings_are_code: bool, edits: &mut Vec<Edit>) {
    let b = sql.as_bytes();
    // Streamed with three tokens of look-ahead: a statement of millions of tokens is never
    // held as a list.
    let mut lexer = Lexer::new(b, mode).entering_versioned().filter(|t| t.kind != Kind::Comment);
    let mut ahead: VecDeque<Token> = VecDeque::with_capacity(4);
    // Per parenthesis depth: whether that level is in a select list.
    let mut select_list: Vec<bool> = vec![false];
    let mut prev = Prev::Other;
    loop {
        while ahead.len() < 4 {
            let Some(t) = lexer.next() else { break };
            ahead.push_back(t);
        }
        let Some(t) = ahead.pop_front() else { break };
        let word = &b[t.range()];
        prev = match t.kind {
            Kind::Str if strings_are_code => {
                if let Some(text) = prepared_text(&sql[t.range()], mode).and_then(|s| replace(&s, id, mode, false)) {
                    edits.push(Edit { start: t.start as usize, end: t.end as usize, text: literal(&text, mode) });
                }
                Prev::Other
            }
            Kind::Punct(b'(') => {
                if select_list.len() < MAX_DEPTH {
                    select_list.push(false);
                }
                Prev::Other
            }
            Kind::Punct(b')') => {
                if select_list.len() > 1 {
                    select_list.pop();
                }
                Prev::Other
            }
            Kind::Punct(b',') if select_list.last() == Some(&true) => Prev::ItemStart,
            Kind::Punct(b'.') => Prev::Dot,
            Kind::Word if word.eq_ignore_ascii_case(b"connection_id") && prev != Prev::Dot && empty_parens(&ahead) => {
                let item_start = prev == Prev::ItemStart && select_list.last() == Some(&true);
                let (start, end) = (t.start as usize, ahead[1].end as usize);
                let text = if item_start && ends_item(b, ahead.get(2)) {
                    format!("CAST({id} AS UNSIGNED) AS `{}`", &sql[start..end])
                } else {
                    format!("CAST({id} AS UNSIGNED)")
                };
                edits.push(Edit { start, end, text });
                ahead.drain(..2);
                Prev::Other
            }
            Kind::Word => {
                let select = word.eq_ignore_ascii_case(b"select");
                if let Some(top) = select_list.last_mut() {
                    if select {
                        *top = true;
                    } else if ends_select_list(word) {
                        *top = false;
                    }
                }
                if select {
                    Prev::ItemStart
                } else {
                    Prev::Other
                }
            }
            _ => Prev::Other,
        };
    }
}

/// The text a string literal (quotes included) stands for, read in `mode`.
fn prepared_text(literal: &str, mode: Mode) -> Option<String> {
    let quote = *literal.as_bytes().first()?;
    let body = literal.get(1..literal.len().checked_sub(1)?)?;
    let bytes = if mode.escapes(quote) {
        crate::sql::value::unescape(body.as_bytes(), quote).into_owned()
    } else {
        let q = char::from(quote).to_string();
        body.replace(&q.repeat(2), &q).into_bytes()
    };
    String::from_utf8(bytes).ok()
}

/// `text` as a single-quoted string literal that `mode` reads back as `text`.
fn literal(text: &str, mode: Mode) -> String {
    if mode.nbe {
        format!("'{}'", text.replace('\'', "''"))
    } else {
        format!("'{}'", text.replace('\\', "\\\\").replace('\'', "\\'"))
    }
}

/// Whether the tokens ahead start with `(` `)`.
fn empty_parens(ahead: &VecDeque<Token>) -> bool {
    ahead.front().is_some_and(|t| t.kind == Kind::Punct(b'('))
        && ahead.get(1).is_some_and(|t| t.kind == Kind::Punct(b')'))
}

/// Whether the token after a call ends a select-list item: `,`, `)`, `;`, the end, or a clause
/// word.
fn ends_item(b: &[u8], next: Option<&Token>) -> bool {
    match next.map(|t| t.kind) {
        None | Some(Kind::Punct(b',' | b')' | b';')) => true,
        Some(Kind::Word) => next.is_some_and(|t| ends_select_list(&b[t.range()])),
        _ => false,
    }
}

fn ends_select_list(word: &[u8]) -> bool {
    const WORDS: [&[u8]; 15] = [
        b"from",
        b"where",
        b"group",
        b"order",
        b"having",
        b"limit",
        b"into",
        b"window",
        b"for",
        b"lock",
        b"union",
        b"except",
        b"intersect",
        b"procedure",
        b"offset",
    ];
    WORDS.iter().any(|w| word.eq_ignore_ascii_case(w))
}

fn contains_ignore_case(b: &[u8], needle: &[u8]) -> bool {
    b.windows(needle.len()).any(|w| w.eq_ignore_ascii_case(needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rw(s: &str) -> Option<String> {
        rewrite(s, 42, Mode::default())
    }

    #[test]
    fn a_select_item_keeps_its_column_name() {
        assert_eq!(rw("SELECT CONNECTION_ID()").as_deref(), Some("SELECT CAST(42 AS UNSIGNED) AS `CONNECTION_ID()`"));
        assert_eq!(
            rw("select connection_id(), 1").as_deref(),
            Some("select CAST(42 AS UNSIGNED) AS `connection_id()`, 1")
        );
        assert_eq!(
            rw("SELECT 1, Connection_Id ( ) FROM t").as_deref(),
            Some("SELECT 1, CAST(42 AS UNSIGNED) AS `Connection_Id ( )` FROM t")
        );
        assert_eq!(
            rw("SELECT (SELECT CONNECTION_ID());").as_deref(),
            Some("SELECT (SELECT CAST(42 AS UNSIGNED) AS `CONNECTION_ID()`);")
        );
    }

    #[test]
    fn inside_expressions_and_other_clauses_it_is_a_value() {
        assert_eq!(rw("SELECT CONNECTION_ID() AS me").as_deref(), Some("SELECT CAST(42 AS UNSIGNED) AS me"));
        assert_eq!(rw("SELECT CONNECTION_ID() + 1").as_deref(), Some("SELECT CAST(42 AS UNSIGNED) + 1"));
        assert_eq!(rw("SELECT CONNECTION_ID() me").as_deref(), Some("SELECT CAST(42 AS UNSIGNED) me"));
        assert_eq!(rw("SELECT CONNECTION_ID() 'me'").as_deref(), Some("SELECT CAST(42 AS UNSIGNED) 'me'"));
        assert_eq!(
            rw("SELECT a FROM t WHERE id = connection_id() GROUP BY a, CONNECTION_ID()").as_deref(),
            Some("SELECT a FROM t WHERE id = CAST(42 AS UNSIGNED) GROUP BY a, CAST(42 AS UNSIGNED)")
        );
        assert_eq!(
            rw("INSERT INTO t VALUES (1, CONNECTION_ID())").as_deref(),
            Some("INSERT INTO t VALUES (1, CAST(42 AS UNSIGNED))")
        );
        assert_eq!(rw("KILL CONNECTION_ID()"), None);
        assert_eq!(
            rw("/* c */ SELECT CONNECTION_ID()").as_deref(),
            Some("/* c */ SELECT CAST(42 AS UNSIGNED) AS `CONNECTION_ID()`")
        );
        assert_eq!(
            rw("/*!50000 SELECT CONNECTION_ID() */").as_deref(),
            Some("/*!50000 SELECT CAST(42 AS UNSIGNED) AS `CONNECTION_ID()` */")
        );
    }

    #[test]
    fn strings_names_comments_and_stored_functions_are_left_alone() {
        for s in [
            "SELECT 'CONNECTION_ID()'",
            "SELECT \"connection_id()\"",
            "SELECT `connection_id()` FROM t",
            "SELECT 1 /* CONNECTION_ID() */",
            "SELECT 1 -- CONNECTION_ID()",
            "SELECT 1 # CONNECTION_ID()",
            "SELECT db.connection_id()",
            "SELECT connection_id FROM t",
            "SELECT connection_idx()",
            "SELECT 'it''s CONNECTION_ID()'",
            "SELECT 'a\\' CONNECTION_ID()'",
            "SELECT 1",
        ] {
            assert_eq!(rw(s), None, "{s}");
        }
    }

    #[test]
    fn stored_definitions_keep_the_call() {
        for sql in [
            "CREATE PROCEDURE p() SELECT CONNECTION_ID()",
            "create view v as select connection_id() as id",
            "/* c */ CREATE TRIGGER t BEFORE INSERT ON t0 FOR EACH ROW SET NEW.c1 = CONNECTION_ID()",
            "ALTER EVENT e DO INSERT INTO t VALUES (CONNECTION_ID())",
        ] {
            assert_eq!(rw(sql), None, "{sql}");
        }
    }

    #[test]
    fn prepare_text_is_rewritten() {
        assert_eq!(
            rw("PREPARE s FROM 'SELECT CONNECTION_ID()'").as_deref(),
            Some("PREPARE s FROM 'SELECT CAST(42 AS UNSIGNED) AS `CONNECTION_ID()`'")
        );
        // The string is the statement: its escapes are read, and it is written anew.
        assert_eq!(
            rw(r"PREPARE s FROM 'SELECT \'a\', CONNECTION_ID()'").as_deref(),
            Some(r"PREPARE s FROM 'SELECT \'a\', CAST(42 AS UNSIGNED) AS `CONNECTION_ID()`'")
        );
        assert_eq!(rw("PREPARE s FROM 'SELECT ''a'''"), None);
        let nbe = Mode { nbe: true, ansi_quotes: false };
        assert_eq!(
            rewrite(r"PREPARE s FROM 'SELECT ''a\'' x, CONNECTION_ID()'", 42, nbe).as_deref(),
            Some(r"PREPARE s FROM 'SELECT ''a\'' x, CAST(42 AS UNSIGNED) AS `CONNECTION_ID()`'")
        );
    }

    #[test]
    fn hostile_input_is_linear_and_safe() {
        let deep = format!("SELECT {}CONNECTION_ID(){}", "(".repeat(100_000), ")".repeat(100_000));
        let out = rw(&deep).expect("rewritten");
        assert!(out.contains("CAST(42 AS UNSIGNED)"));
        assert_eq!(rw("SELECT 'unterminated CONNECTION_ID()"), None);
        assert_eq!(rw("connection_id("), None);
        assert_eq!(rw("SELECT connection_id() /* open"), Some("SELECT CAST(42 AS UNSIGNED) /* open".into()));
    }

    #[test]
    fn the_sql_mode_decides_what_is_a_string() {
        let nbe = Mode { nbe: true, ansi_quotes: false };
        assert_eq!(
            rewrite(r"SELECT 'a\', CONNECTION_ID()", 42, nbe).as_deref(),
            Some(r"SELECT 'a\', CAST(42 AS UNSIGNED) AS `CONNECTION_ID()`")
        );
        let ansi = Mode { nbe: false, ansi_quotes: true };
        assert_eq!(rewrite(r#"SELECT "connection_id"()"#, 42, ansi), None);
        assert_eq!(
            rewrite("SELECT CONNECTION_ID() /* c */ FROM t", 42, ansi).as_deref(),
            Some("SELECT CAST(42 AS UNSIGNED) AS `CONNECTION_ID()` /* c */ FROM t")
        );
    }
}
