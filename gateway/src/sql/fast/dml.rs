//! Fast-path single-table `SELECT`, `UPDATE` and `DELETE`.

use super::expr::{self, Operand};
use super::Cursor;
use crate::sql::analysis::{Analysis, LockRead, LockStrength, LockWait, Path, StmtKind, TableRef};
use crate::sql::lexer::Kind;

/// `SELECT <list> [FROM tbl [WHERE …] [GROUP BY …] [ORDER BY …] [LIMIT …] [lock]]`.
pub(super) fn select<'a>(c: &mut Cursor<'_, 'a>) -> Option<Analysis<'a>> {
    let mut an = Analysis::new(StmtKind::Select, Path::Fast);
    if !skip_select_list(c)? {
        return Some(an);
    }
    an.tables.push(table(c)?);
    if c.kw("WHERE") {
        expr::conjunction(c, &mut an)?;
    }
    if c.kw("GROUP") {
        c.expect_kw("BY")?;
        order_list(c)?;
    }
    if c.kw("ORDER") {
        c.expect_kw("BY")?;
        order_list(c)?;
    }
    limit(c)?;
    an.lock = lock_clause(c)?;
    Some(an)
}

/// Skips the select list; `Some(true)` when `FROM` follows, `Some(false)` at the end.
fn skip_select_list(c: &mut Cursor<'_, '_>) -> Option<bool> {
    let start = c.pos;
    let mut depth = 0u32;
    while let Some(t) = c.peek() {
        match t.kind {
            Kind::Punct(b'(') => depth += 1,
            Kind::Punct(b')') => depth = depth.checked_sub(1)?,
            Kind::Word => {
                let w = c.text(t);
                let clause =
                    ["FROM", "WHERE", "FOR", "LOCK", "INTO", "UNION", "LIMIT", "ORDER", "GROUP", "HAVING", "WINDOW"];
                if w.eq_ignore_ascii_case("SELECT") || (depth == 0 && clause.iter().any(|k| k.eq_ignore_ascii_case(w)))
                {
                    let from = depth == 0 && w.eq_ignore_ascii_case("FROM") && ends_list(c, start);
                    c.pos += usize::from(from);
                    return from.then_some(true);
                }
            }
            _ => {}
        }
        c.bump();
    }
    (depth == 0).then_some(false)
}

/// Whether the select list from `start` to the cursor (at `FROM`) ends where an item may end:
/// not empty, not on an operator, a last `*` only as a wildcard (first, after `,` or `.`, or
/// after a select modifier). The server refuses the others (`FROM` is reserved); the reference
/// parser reads `FROM` as a column name in `SELECT a * FROM t` and finds no table.
fn ends_list(c: &Cursor<'_, '_>, start: usize) -> bool {
    let before = |n: usize| c.pos.checked_sub(n).filter(|&i| i >= start).and_then(|i| c.toks.get(i));
    let Some(last) = before(1) else {
        return false;
    };
    if mentions_case(c, start) {
        return false;
    }
    match last.kind {
        Kind::Punct(b'*') => before(2).is_none_or(|t| match t.kind {
            Kind::Punct(b',' | b'.') => true,
            Kind::Word => modifiers_only(c, start, c.pos - 1),
            _ => false,
        }),
        Kind::Punct(b')') => true,
        Kind::Punct(_) | Kind::Op(_) => false,
        Kind::Word => ends_operand(c.text(*last)),
        _ => true,
    }
}

/// Whether the select list's tokens from `start` to `end` are all select modifiers: a `*` after
/// them is the wildcard. After a modifier word elsewhere (`SELECT 0 + SQL_CALC_FOUND_ROWS * FROM t`)
/// the reference parser reads a product and `FROM` as its operand.
fn modifiers_only(c: &Cursor<'_, '_>, start: usize, end: usize) -> bool {
    let toks = c.toks.get(start..end).unwrap_or_default();
    !toks.is_empty() && toks.iter().all(|t| t.kind == Kind::Word && is_select_modifier(c.text(*t)))
}

/// Whether the select list (its tokens from `start` to the cursor) has a `CASE` or an `END`: the
/// fast path leaves those lists to the reference parser. A stray `END` (`SELECT a END FROM t`) and
/// a `CASE` the server refuses (`CASE END`, `CASE x END`, `CASE WHEN END`) are read differently by
/// the two paths; checking the whole grammar of `CASE` here would be a second parser.
fn mentions_case(c: &Cursor<'_, '_>, start: usize) -> bool {
    c.toks.get(start..c.pos).unwrap_or_default().iter().any(|t| {
        t.kind == Kind::Word && (c.text(*t).eq_ignore_ascii_case("CASE") || c.text(*t).eq_ignore_ascii_case("END"))
    })
}

/// Whether the word `w` may end a select item: a name, or a keyword that is an operand (`NULL`,
/// `END` of `CASE`, `CURRENT_DATE`, …), not one that wants an operand after it (`AND`, `AS`,
/// `DISTINCT`, …).
fn ends_operand(w: &str) -> bool {
    !super::is_reserved(w)
        || [
            "NULL",
            "TRUE",
            "FALSE",
            "UNKNOWN",
            "END",
            "DATE",
            "TIME",
            "TIMESTAMP",
            "CURRENT_DATE",
            "CURRENT_TIME",
            "CURRENT_TIMESTAMP",
            "CURRENT_USER",
            "LOCALTIME",
            "LOCALTIMESTAMP",
            "UTC_DATE",
            "UTC_TIME",
            "UTC_TIMESTAMP",
        ]
        .iter()
        .any(|k| k.eq_ignore_ascii_case(w))
}

/// The MySQL select modifiers the reference parser knows (`SQL_CACHE` is not among them).
fn is_select_modifier(w: &str) -> bool {
    [
        "ALL",
        "DISTINCT",
        "DISTINCTROW",
        "HIGH_PRIORITY",
        "STRAIGHT_JOIN",
        "SQL_SMALL_RESULT",
        "SQL_BIG_RESULT",
        "SQL_BUFFER_RESULT",
        "SQL_NO_CACHE",
        "SQL_CALC_FOUND_ROWS",
    ]
    .iter()
    .any(|m| m.eq_ignore_ascii_case(w))
}

/// `[db.]tbl [PARTITION (p, …)] [[AS] alias]`.
pub(super) fn table<'a>(c: &mut Cursor<'_, 'a>) -> Option<TableRef<'a>> {
    if c.is_kw("REPLACE") {
        // Reserved to the server; to the reference parser the conflict clause of SQLite's
        // `UPDATE [OR] REPLACE t`.
        return None;
    }
    let first = c.ident()?;
    let mut t = TableRef::default();
    if c.punct(b'.') {
        t.schema = Some(first);
        t.name = c.ident()?;
    } else {
        t.name = first;
    }
    if c.kw("PARTITION") {
        t.partitions = partition_names(c)?;
    }
    // An alias it cannot read (`` `` ``, a name ending in a space) makes the fast path decline,
    // with or without `AS`: the reference path decides.
    if c.kw("AS") {
        t.alias = Some(c.ident()?);
    } else if c.is_ident() {
        if c.peek().is_some_and(|w| w.kind == Kind::Word && not_an_alias(c.text(w))) {
            return None;
        }
        t.alias = Some(c.ident()?);
    }
    Some(t)
}

/// Words the server takes as a table alias without `AS` and the reference parser does not: it
/// keeps them for clauses of other dialects (`FROM t GLOBAL`, `FROM t SAMPLE`). The fast path
/// declines rather than answer for either reading. (The reserved words among `sqlparser`'s list
/// are never identifiers to the fast path anyway.)
fn not_an_alias(w: &str) -> bool {
    [
        "ANALYZE",
        "ANTI",
        "ASOF",
        "CLUSTER",
        "DISTRIBUTE",
        "EXPLAIN",
        "FETCH",
        "FORMAT",
        "FULL",
        "GLOBAL",
        "LATERAL",
        "MATCH_CONDITION",
        "MATCH_RECOGNIZE",
        "MINUS",
        "OPEN",
        "OUTPUT",
        "PIVOT",
        "PREWHERE",
        "QUALIFY",
        "SAMPLE",
        "SEMI",
        "SETTINGS",
        "SORT",
        "TABLESAMPLE",
        "TOP",
        "UNPIVOT",
        "VIEW",
    ]
    .iter()
    .any(|k| k.eq_ignore_ascii_case(w))
}

/// `(p0, p1)` after `PARTITION`.
pub(super) fn partition_names<'a>(c: &mut Cursor<'_, 'a>) -> Option<Vec<super::Name<'a>>> {
    c.expect_punct(b'(')?;
    let mut names = Vec::new();
    loop {
        names.push(c.ident()?);
        if c.punct(b')') {
            return Some(names);
        }
        c.expect_punct(b',')?;
    }
}

/// `expr [ASC|DESC], …`.
fn order_list(c: &mut Cursor<'_, '_>) -> Option<()> {
    loop {
        expr::expr(c)?;
        if !c.kw("ASC") {
            c.kw("DESC");
        }
        if !c.punct(b',') {
            return Some(());
        }
    }
}

/// `[LIMIT n [, m | OFFSET m]]`.
fn limit(c: &mut Cursor<'_, '_>) -> Option<()> {
    if !c.kw("LIMIT") {
        return Some(());
    }
    limit_value(c)?;
    if c.punct(b',') || c.kw("OFFSET") {
        limit_value(c)?;
    }
    Some(())
}

fn limit_value(c: &mut Cursor<'_, '_>) -> Option<()> {
    let t = c.bump()?;
    matches!(t.kind, Kind::Number | Kind::Placeholder).then_some(())
}

/// `FOR UPDATE | FOR SHARE | LOCK IN SHARE MODE` with `NOWAIT | WAIT n | SKIP LOCKED`.
fn lock_clause(c: &mut Cursor<'_, '_>) -> Option<Option<LockRead>> {
    let strength = if c.kw("FOR") {
        if c.kw("UPDATE") {
            LockStrength::Update
        } else {
            c.expect_kw("SHARE")?;
            LockStrength::Share
        }
    } else if c.kw("LOCK") {
        c.expect_kw("IN")?;
        c.expect_kw("SHARE")?;
        c.expect_kw("MODE")?;
        return Some(Some(LockRead { strength: LockStrength::Share, wait: LockWait::Block }));
    } else {
        return Some(None);
    };
    let wait = if c.kw("NOWAIT") {
        LockWait::NoWait
    } else if c.kw("SKIP") {
        c.expect_kw("LOCKED")?;
        LockWait::SkipLocked
    } else if c.kw("WAIT") {
        let t = c.bump().filter(|t| t.kind == Kind::Number)?;
        LockWait::Wait(c.text(t).parse().ok()?)
    } else {
        LockWait::Block
    };
    Some(Some(LockRead { strength, wait }))
}

/// `UPDATE [LOW_PRIORITY] [IGNORE] tbl SET c = e, … [WHERE …] [ORDER BY …] [LIMIT n]`.
pub(super) fn update<'a>(c: &mut Cursor<'_, 'a>) -> Option<Analysis<'a>> {
    let mut an = Analysis::new(StmtKind::Update, Path::Fast);
    c.kw("LOW_PRIORITY");
    c.kw("IGNORE");
    an.tables.push(table(c)?);
    c.expect_kw("SET")?;
    assignments(c)?;
    where_order_limit(c, &mut an)?;
    Some(an)
}

/// `DELETE [LOW_PRIORITY] [QUICK] [IGNORE] FROM tbl [WHERE …] [ORDER BY …] [LIMIT n]`.
pub(super) fn delete<'a>(c: &mut Cursor<'_, 'a>) -> Option<Analysis<'a>> {
    let mut an = Analysis::new(StmtKind::Delete, Path::Fast);
    c.kw("LOW_PRIORITY");
    c.kw("QUICK");
    c.kw("IGNORE");
    c.expect_kw("FROM")?;
    let t = table(c)?;
    if t.alias.is_some() {
        return None;
    }
    an.tables.push(t);
    where_order_limit(c, &mut an)?;
    Some(an)
}

fn where_order_limit<'a>(c: &mut Cursor<'_, 'a>, an: &mut Analysis<'a>) -> Option<()> {
    if c.kw("WHERE") {
        expr::conjunction(c, an)?;
    }
    if c.kw("ORDER") {
        c.expect_kw("BY")?;
        order_list(c)?;
    }
    if c.kw("LIMIT") {
        limit_value(c)?;
    }
    Some(())
}

/// `c = e, …` (values are not keys: the row is found by `WHERE`).
pub(super) fn assignments(c: &mut Cursor<'_, '_>) -> Option<()> {
    loop {
        let Operand::Column(..) = expr::column(c)? else {
            return None;
        };
        c.expect_punct(b'=')?;
        if c.kw("DEFAULT") {
            // `c = DEFAULT` is a valid assignment.
        } else {
            expr::expr(c)?;
        }
        if !c.punct(b',') {
            return Some(());
        }
    }
}
