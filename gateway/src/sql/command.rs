//! Statements recognised by their leading words, the same way on both paths: `EXPLAIN ROUTE`,
//! `PREPARE` / `EXECUTE` / `DEALLOCATE`, `XA`, `LOCK` / `UNLOCK TABLES`.

use std::borrow::Cow;

use super::analysis::{Analysis, Path, Pins, StmtKind};
use super::value;

/// The statement kind when `sql` is one of these commands, with hints and pins filled in.
pub fn recognize(sql: &str) -> Option<Analysis<'_>> {
    let (w1, rest) = word(sql)?;
    // The first word rules out every other statement before a second word is read.
    const FIRST: [&str; 8] = ["EXPLAIN", "PREPARE", "EXECUTE", "DEALLOCATE", "DROP", "XA", "LOCK", "UNLOCK"];
    if !FIRST.iter().any(|f| w1.eq_ignore_ascii_case(f)) {
        return None;
    }
    let (w2, after2) = word(rest).unwrap_or(("", ""));
    let is = |w: &str, k: &str| w.eq_ignore_ascii_case(k);
    let (kind, inner) = if is(w1, "EXPLAIN") && is(w2, "ROUTE") {
        (StmtKind::ExplainRoute, Some(Cow::Borrowed(after2.trim())))
    } else if is(w1, "PREPARE") {
        (StmtKind::Prepare, prepared_text(after2))
    } else if is(w1, "EXECUTE") {
        (StmtKind::Execute, None)
    } else if (is(w1, "DEALLOCATE") || is(w1, "DROP")) && is(w2, "PREPARE") {
        (StmtKind::Deallocate, None)
    } else if is(w1, "XA") {
        (StmtKind::Xa, None)
    } else if is(w1, "LOCK") && (is(w2, "TABLES") || is(w2, "TABLE")) {
        (StmtKind::LockTables, None)
    } else if is(w1, "UNLOCK") && (is(w2, "TABLES") || is(w2, "TABLE")) {
        (StmtKind::UnlockTables, None)
    } else {
        return None;
    };
    let mut an = match kind {
        StmtKind::ExplainRoute => Analysis::new(kind, Path::Fast),
        _ => scan_only(sql, kind),
    };
    if kind == StmtKind::LockTables {
        an.pins.insert(Pins::LOCK_TABLES);
    }
    an.inner_sql = inner;
    Some(an)
}

/// Hints and pins of a command, from whichever lexer accepts it.
fn scan_only(sql: &str, kind: StmtKind) -> Analysis<'_> {
    let mut an: Analysis<'_> = Analysis::new(kind, Path::Fast);
    if let Some(toks) = super::lexer::lex(sql, &mut an.hints) {
        an.pins = super::fast::pins(sql, &toks);
    } else {
        let r = super::reference::analyze(sql);
        an.hints = r.hints;
        an.pins = r.pins;
    }
    an
}

/// The next word after blanks and comments, and the text after it.
fn word(text: &str) -> Option<(&str, &str)> {
    let text = skip_blank(text);
    // By bytes: a word is ASCII, so it ends at a char boundary (the first byte of any other char).
    let end = text.bytes().position(|b| !(b.is_ascii_alphanumeric() || b == b'_')).unwrap_or(text.len());
    (end > 0).then(|| text.split_at(end))
}

fn skip_blank(mut text: &str) -> &str {
    loop {
        let t = text.trim_start();
        if let Some(rest) = t.strip_prefix("/*").filter(|r| !r.starts_with('!')) {
            text = rest.find("*/").map_or("", |i| &rest[i + 2..]);
        } else if t.starts_with('#') || t.starts_with("-- ") {
            text = t.find('\n').map_or("", |i| &t[i + 1..]);
        } else {
            return t;
        }
    }
}

/// `name FROM 'text'` → the unescaped text.
fn prepared_text(rest: &str) -> Option<Cow<'_, str>> {
    let (_, rest) = word(rest)?;
    let (from, rest) = word(rest)?;
    if !from.eq_ignore_ascii_case("FROM") {
        return None;
    }
    let lit = rest.trim();
    let quote = *lit.as_bytes().first().filter(|q| matches!(q, b'\'' | b'"'))?;
    let body = lit.strip_suffix(quote as char)?.get(1..)?;
    match value::unescape(body.as_bytes(), quote) {
        Cow::Borrowed(_) => Some(Cow::Borrowed(body)),
        Cow::Owned(v) => String::from_utf8(v).ok().map(Cow::Owned),
    }
}
