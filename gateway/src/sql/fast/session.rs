//! Fast-path transaction and session statements: `BEGIN`, `START TRANSACTION`, `COMMIT`,
//! `ROLLBACK`, `USE`, simple `SET`.

use super::expr::{self, Operand};
use super::Cursor;
use crate::sql::analysis::{Analysis, Path, SetFlags, StmtKind, TxnFlags};
use crate::sql::lexer::{Kind, Op};
use crate::sql::value::Value;

/// Recognises the statement starting with `first`, or declines.
pub(super) fn statement<'a>(c: &mut Cursor<'_, 'a>, first: &str) -> Option<Analysis<'a>> {
    let is = |w: &str| w.eq_ignore_ascii_case(first);
    if is("BEGIN") {
        c.kw("WORK");
        Some(Analysis::new(StmtKind::Begin, Path::Fast))
    } else if is("START") {
        start_transaction(c)
    } else if is("COMMIT") || is("ROLLBACK") {
        c.kw("WORK");
        Some(Analysis::new(if is("COMMIT") { StmtKind::Commit } else { StmtKind::Rollback }, Path::Fast))
    } else if is("USE") {
        let mut an = Analysis::new(StmtKind::Use, Path::Fast);
        an.database = Some(c.ident()?);
        Some(an)
    } else if is("SET") {
        set(c)
    } else {
        None
    }
}

/// `START TRANSACTION [READ ONLY | READ WRITE | WITH CONSISTENT SNAPSHOT] [, …]`.
fn start_transaction<'a>(c: &mut Cursor<'_, 'a>) -> Option<Analysis<'a>> {
    c.expect_kw("TRANSACTION")?;
    let mut an = Analysis::new(StmtKind::Begin, Path::Fast);
    if c.at_end() {
        return Some(an);
    }
    loop {
        if c.kw("READ") {
            if c.kw("ONLY") {
                an.txn.insert(TxnFlags::READ_ONLY);
            } else {
                c.expect_kw("WRITE")?;
                an.txn.insert(TxnFlags::READ_WRITE);
            }
        } else {
            c.expect_kw("WITH")?;
            c.expect_kw("CONSISTENT")?;
            c.expect_kw("SNAPSHOT")?;
            an.txn.insert(TxnFlags::CONSISTENT_SNAPSHOT);
        }
        if !c.punct(b',') {
            return Some(an);
        }
    }
}

/// `SET [GLOBAL|SESSION|LOCAL] v = e`, `SET @@[global.|session.]v = e`, `SET @u = e`, joined by
/// commas. `NAMES`, `CHARACTER SET` and `TRANSACTION` are left to the reference path.
fn set<'a>(c: &mut Cursor<'_, 'a>) -> Option<Analysis<'a>> {
    let mut an = Analysis::new(StmtKind::Set, Path::Fast);
    loop {
        set_item(c, &mut an)?;
        if !c.punct(b',') {
            return Some(an);
        }
    }
}

fn set_item<'a>(c: &mut Cursor<'_, 'a>, an: &mut Analysis<'a>) -> Option<()> {
    let t = c.peek()?;
    let (scope, name) = match t.kind {
        Kind::UserVar => {
            c.bump();
            (SetFlags::USER, "")
        }
        Kind::SysVar => {
            c.bump();
            sys_var(c.text(t))?
        }
        Kind::Word => {
            let global = c.kw("GLOBAL");
            let scope = if global { SetFlags::GLOBAL } else { SetFlags::SESSION };
            if !global && !c.kw("SESSION") {
                c.kw("LOCAL");
            }
            let name = c.next_word()?;
            let reserved = [
                "NAMES",
                "CHARACTER",
                "CHARSET",
                "TRANSACTION",
                "PASSWORD",
                "ROLE",
                "DEFAULT",
                "PERSIST",
                "PERSIST_ONLY",
            ];
            if reserved.iter().any(|r| r.eq_ignore_ascii_case(name)) || c.is_punct(b'.') {
                return None;
            }
            (scope, name)
        }
        _ => return None,
    };
    if !c.punct(b'=') {
        c.bump().filter(|t| t.kind == Kind::Op(Op::Assign))?;
    }
    let value = set_value(c)?;
    an.set.insert(scope);
    if scope != SetFlags::USER && name.eq_ignore_ascii_case("autocommit") {
        an.set.insert(SetFlags::AUTOCOMMIT);
        an.autocommit = autocommit(&value);
    }
    Some(())
}

/// `@@v`, `@@global.v`, `@@session.v`, `@@local.v` (the token's text).
fn sys_var(text: &str) -> Option<(SetFlags, &str)> {
    let name = text.strip_prefix("@@")?;
    let Some((scope, name)) = name.split_once('.') else {
        return Some((SetFlags::SESSION, name));
    };
    if scope.eq_ignore_ascii_case("global") {
        Some((SetFlags::GLOBAL, name))
    } else if scope.eq_ignore_ascii_case("session") || scope.eq_ignore_ascii_case("local") {
        Some((SetFlags::SESSION, name))
    } else {
        None
    }
}

/// The assigned value: `ON`, `OFF` or an expression.
fn set_value<'a>(c: &mut Cursor<'_, 'a>) -> Option<Operand<'a>> {
    for (word, v) in [("ON", 1), ("OFF", 0)] {
        if c.kw(word) {
            return Some(Operand::Value(Value::Int(v)));
        }
    }
    if c.is_kw("DEFAULT") {
        return None;
    }
    expr::expr(c)
}

fn autocommit(v: &Operand<'_>) -> Option<bool> {
    match v {
        Operand::Value(Value::Int(i)) => Some(*i != 0),
        Operand::Value(Value::Str { bytes, .. }) if bytes.eq_ignore_ascii_case(b"on") => Some(true),
        Operand::Value(Value::Str { bytes, .. }) if bytes.eq_ignore_ascii_case(b"off") => Some(false),
        _ => None,
    }
}
