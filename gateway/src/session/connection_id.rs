//! `CONNECTION_ID()` is the gateway's connection id: every call in a client statement is
//! replaced by that id before the statement reaches a server (whose thread id would otherwise
//! leak out, and name another client's session in a `KILL`).
//!
//! The rewrite is lexical: strings, quoted identifiers and comments are left alone (except in
//! `PREPARE … FROM '<text>'`, whose string is a statement), `db.connection_id()` (a stored
//! function) is not the built-in. A call that is a whole select-list item keeps its column name
//! (`CAST(7 AS UNSIGNED) AS `CONNECTION_ID()``); the value is a `BIGINT UNSIGNED` like the
//! built-in's.

/// Select-list tracking stops below this many nested parentheses (the value is still replaced).
const MAX_DEPTH: usize = 64;

/// The statement with every `CONNECTION_ID()` replaced by `id`; `None` when it has none (by
/// far the common case: one pass over the bytes, no allocation).
pub fn rewrite(sql: &str, id: u32) -> Option<String> {
    let b = sql.as_bytes();
    // Cheap filter first: no `connection_id` anywhere, nothing to do.
    if !contains_ignore_case(b, b"connection_id") {
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
    let strings_are_code = first.eq_ignore_ascii_case("prepare");
    let calls = find_calls(b, strings_are_code);
    if calls.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(sql.len() + calls.len() * 40);
    let mut at = 0;
    for call in calls {
        out.push_str(&sql[at..call.start]);
        let text = &sql[call.start..call.end];
        if call.whole_item {
            out.push_str(&format!("CAST({id} AS UNSIGNED) AS `{text}`"));
        } else {
            out.push_str(&format!("CAST({id} AS UNSIGNED)"));
        }
        at = call.end;
    }
    out.push_str(&sql[at..]);
    Some(out)
}

/// First words of statements that store SQL text for later (`CREATE PROCEDURE …`, `ALTER VIEW …`).
const STORED_DEFINITIONS: [&str; 2] = ["create", "alter"];

/// `sql` after any leading whitespace and comments (`/* … */`, `-- …`, `# …`); executable
/// comments (`/*! … */`) are kept, they are statement text.
pub fn skip_leading_comments(sql: &str) -> &str {
    let mut t = sql;
    loop {
        t = t.trim_start();
        if t.starts_with("/*") && !t.starts_with("/*!") && !t.starts_with("/*M!") {
            match t[2..].find("*/") {
                Some(end) => t = &t[2 + end + 2..],
                None => return "",
            }
        } else if t.starts_with("-- ") || t.starts_with("--\t") || t == "--" || t.starts_with('#') {
            match t.find('\n') {
                Some(end) => t = &t[end + 1..],
                None => return "",
            }
        } else {
            return t;
        }
    }
}

/// The first word of a statement (after leading comments).
pub fn first_word(sql: &str) -> &str {
    let t = skip_leading_comments(sql);
    let end = t.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(t.len());
    &t[..end]
}

/// One `CONNECTION_ID()` call: its byte span and whether it is a whole select-list item.
#[derive(Debug, PartialEq, Eq)]
struct Call {
    start: usize,
    end: usize,
    whole_item: bool,
}

/// What the previous significant token was (select-list items start after `SELECT` or `,`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Prev {
    ItemStart,
    Dot,
    Other,
}

fn find_calls(b: &[u8], strings_are_code: bool) -> Vec<Call> {
    let mut calls = Vec::new();
    // Per parenthesis depth: whether that level is in a select list.
    let mut select_list: Vec<bool> = vec![false];
    let mut prev = Prev::Other;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'\'' | b'"' if !strings_are_code => i = skip_quoted(b, i, c),
            b'`' => i = skip_quoted(b, i, c),
            b'/' if b.get(i + 1) == Some(&b'*') => {
                if b.get(i + 2) == Some(&b'!') || b.get(i + 2..i + 4) == Some(b"M!") {
                    i += 2; // executable comment: its body is scanned as code
                } else {
                    i = find(b, i + 2, b"*/").map_or(b.len(), |e| e + 2);
                }
            }
            b'-' if b.get(i + 1) == Some(&b'-') && b.get(i + 2).is_none_or(|c| c.is_ascii_whitespace()) => {
                i = line_end(b, i)
            }
            b'#' => i = line_end(b, i),
            b'(' => {
                if select_list.len() < MAX_DEPTH {
                    select_list.push(false);
                }
                prev = Prev::Other;
                i += 1;
            }
            b')' => {
                if select_list.len() > 1 {
                    select_list.pop();
                }
                prev = Prev::Other;
                i += 1;
            }
            b',' => {
                prev = if select_list.last() == Some(&true) { Prev::ItemStart } else { Prev::Other };
                i += 1;
            }
            b'.' => {
                prev = Prev::Dot;
                i += 1;
            }
            c if is_word(c) => {
                let end = b[i..].iter().position(|&c| !is_word(c)).map_or(b.len(), |n| i + n);
                let word = &b[i..end];
                if word.eq_ignore_ascii_case(b"connection_id") && prev != Prev::Dot {
                    if let Some(call_end) = empty_parens(b, end) {
                        let item_start = prev == Prev::ItemStart && select_list.last() == Some(&true);
                        calls.push(Call {
                            start: i,
                            end: call_end,
                            whole_item: item_start && ends_item(b, call_end, strings_are_code),
                        });
                        prev = Prev::Other;
                        i = call_end;
                        continue;
                    }
                }
                if let Some(top) = select_list.last_mut() {
                    if word.eq_ignore_ascii_case(b"select") {
                        *top = true;
                    } else if ends_select_list(word) {
                        *top = false;
                    }
                }
                prev = if word.eq_ignore_ascii_case(b"select") { Prev::ItemStart } else { Prev::Other };
                i = end;
            }
            c if c.is_ascii_whitespace() => i += 1,
            _ => {
                prev = Prev::Other;
                i += 1;
            }
        }
    }
    calls
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80
}

/// `(` `)` with only whitespace around and between, right after a name: the end of the `)`.
fn empty_parens(b: &[u8], mut i: usize) -> Option<usize> {
    i = skip_ws(b, i);
    if b.get(i) != Some(&b'(') {
        return None;
    }
    i = skip_ws(b, i + 1);
    (b.get(i) == Some(&b')')).then_some(i + 1)
}

/// Whether what follows `i` ends a select-list item: `,`, `)`, `;`, the end, or a clause word
/// (or the closing quote of a `PREPARE` text).
fn ends_item(b: &[u8], i: usize, strings_are_code: bool) -> bool {
    let i = skip_ws(b, i);
    match b.get(i) {
        None | Some(b',') | Some(b')') | Some(b';') => true,
        Some(b'\'' | b'"') => strings_are_code,
        Some(&c) if is_word(c) => {
            let end = b[i..].iter().position(|&c| !is_word(c)).map_or(b.len(), |n| i + n);
            ends_select_list(&b[i..end])
        }
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

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(|c| c.is_ascii_whitespace()) {
        i += 1;
    }
    i
}

/// The index after the closing quote of the literal opened at `start` (backslash escapes and
/// doubled quotes; backquoted names have no backslash escapes).
fn skip_quoted(b: &[u8], start: usize, quote: u8) -> usize {
    let mut i = start + 1;
    while i < b.len() {
        match b[i] {
            b'\\' if quote != b'`' => i += 2,
            c if c == quote => {
                if b.get(i + 1) == Some(&quote) {
                    i += 2;
                } else {
                    return i + 1;
                }
            }
            _ => i += 1,
        }
    }
    b.len()
}

fn line_end(b: &[u8], i: usize) -> usize {
    b[i..].iter().position(|&c| c == b'\n').map_or(b.len(), |n| i + n + 1)
}

fn find(b: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    b.get(from..)?.windows(needle.len()).position(|w| w == needle).map(|n| from + n)
}

fn contains_ignore_case(b: &[u8], needle: &[u8]) -> bool {
    b.windows(needle.len()).any(|w| w.eq_ignore_ascii_case(needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rw(s: &str) -> Option<String> {
        rewrite(s, 42)
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
            Some("/*!50000 SELECT CAST(42 AS UNSIGNED) */")
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
    fn leading_comments_are_skipped() {
        assert_eq!(skip_leading_comments("/* a */ -- b\n # c\n SHOW PROCESSLIST"), "SHOW PROCESSLIST");
        assert_eq!(skip_leading_comments("/*!40101 SET x=1 */"), "/*!40101 SET x=1 */");
        assert_eq!(skip_leading_comments("/* open"), "");
        assert_eq!(first_word("/**/Kill 5"), "Kill");
    }
}
