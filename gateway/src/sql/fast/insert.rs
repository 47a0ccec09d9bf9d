//! Fast-path `INSERT` / `REPLACE` with `VALUES` rows or `SET` assignments.

use smallvec::SmallVec;

use super::expr::{self, Operand};
use super::{dml, Cursor, Name};
use crate::sql::analysis::{Analysis, Column, Path, StmtKind, TableRef};
use crate::sql::value::Value;

/// `INSERT [LOW_PRIORITY|DELAYED|HIGH_PRIORITY] [IGNORE] [INTO] tbl [PARTITION (…)] [(cols)]
/// VALUES (…), … [ON DUPLICATE KEY UPDATE …]` or `… tbl SET c = v, …`.
pub(super) fn insert<'a>(c: &mut Cursor<'_, 'a>, replace: bool) -> Option<Analysis<'a>> {
    let kind = if replace { StmtKind::Replace } else { StmtKind::Insert };
    let mut an = Analysis::new(kind, Path::Fast);
    if !c.kw("LOW_PRIORITY") && !c.kw("DELAYED") {
        c.kw("HIGH_PRIORITY");
    }
    c.kw("IGNORE");
    c.kw("INTO");
    an.tables.push(target(c)?);
    if c.kw("SET") {
        set_form(c, &mut an)?;
    } else {
        let columns = column_list(c)?;
        if !c.kw("VALUES") {
            c.expect_kw("VALUE")?;
        }
        rows(c, &mut an, &columns)?;
    }
    if !replace && c.kw("ON") {
        c.expect_kw("DUPLICATE")?;
        c.expect_kw("KEY")?;
        c.expect_kw("UPDATE")?;
        dml::assignments(c)?;
    }
    Some(an)
}

/// The target table: `[db.]tbl [PARTITION (…)]`, no alias.
fn target<'a>(c: &mut Cursor<'_, 'a>) -> Option<TableRef<'a>> {
    let first = c.ident()?;
    let mut t = TableRef::default();
    if c.punct(b'.') {
        t.schema = Some(first);
        t.name = c.ident()?;
    } else {
        t.name = first;
    }
    if c.kw("PARTITION") {
        t.partitions = dml::partition_names(c)?;
    }
    Some(t)
}

/// `[(c1, c2, …)]`; empty when absent.
fn column_list<'a>(c: &mut Cursor<'_, 'a>) -> Option<SmallVec<[Name<'a>; 8]>> {
    let mut cols = SmallVec::new();
    if !c.punct(b'(') {
        return Some(cols);
    }
    loop {
        cols.push(c.ident()?);
        if c.punct(b')') {
            return Some(cols);
        }
        c.expect_punct(b',')?;
    }
}

fn rows<'a>(c: &mut Cursor<'_, 'a>, an: &mut Analysis<'a>, columns: &[Name<'a>]) -> Option<()> {
    let mut row = 0u32;
    loop {
        c.expect_punct(b'(')?;
        let mut n = 0usize;
        loop {
            let column = match columns.get(n) {
                Some(name) => Column::Named { qualifier: None, name: name.clone() },
                None if columns.is_empty() => Column::Position(u16::try_from(n).ok()?),
                None => return None,
            };
            an.key(column, row_value(c)?, row);
            n += 1;
            if c.punct(b')') {
                break;
            }
            c.expect_punct(b',')?;
        }
        if !columns.is_empty() && n != columns.len() {
            return None;
        }
        row += 1;
        if !c.punct(b',') {
            return Some(());
        }
    }
}

/// A row item: an expression or `DEFAULT` (unknown).
fn row_value<'a>(c: &mut Cursor<'_, 'a>) -> Option<Value<'a>> {
    if c.kw("DEFAULT") {
        return Some(Value::Unknown);
    }
    Some(expr::expr(c)?.key_value())
}

/// `SET c = v, …` (every assignment is a key candidate of row 0).
fn set_form<'a>(c: &mut Cursor<'_, 'a>, an: &mut Analysis<'a>) -> Option<()> {
    loop {
        let Operand::Column(None, name) = expr::column(c)? else {
            return None;
        };
        c.expect_punct(b'=')?;
        let v = row_value(c)?;
        an.key(Column::Named { qualifier: None, name }, v, 0);
        if !c.punct(b',') {
            return Some(());
        }
    }
}
