//! Mapping a `sqlparser` statement to kind, tables, key values and flags.

use std::borrow::Cow;

use sqlparser::ast::{
    AssignmentTarget, ContextModifier, Expr, FromTable, Insert, LockType, NonBlock, ObjectName, Query, Set, SetExpr,
    Statement, TableFactor, TableObject, TableWithJoins, TransactionAccessMode, TransactionMode, Use,
};

use super::expr::{self, Ctx, Operand};
use crate::sql::analysis::{
    Analysis, Column, LockRead, LockStrength, LockWait, Name, Pins, SetFlags, StmtKind, TableRef, TxnFlags,
};
use crate::sql::value::Value;

fn owned<'a>(s: &str) -> Name<'a> {
    Cow::Owned(s.to_owned())
}

/// Fills `an` from one parsed statement.
pub(super) fn statement<'a>(s: &Statement, ctx: &Ctx, an: &mut Analysis<'a>) {
    an.kind = match s {
        Statement::Query(q) => return query(q, ctx, an),
        Statement::Insert(ins) => return insert(ins, ctx, an),
        Statement::Update(u) => {
            an.kind = StmtKind::Update;
            tables_with_joins(std::slice::from_ref(&u.table), an);
            return where_clause(u.selection.as_ref(), ctx, an);
        }
        Statement::Delete(d) => {
            an.kind = StmtKind::Delete;
            let (FromTable::WithFromKeyword(from) | FromTable::WithoutKeyword(from)) = &d.from;
            tables_with_joins(from, an);
            return where_clause(d.selection.as_ref(), ctx, an);
        }
        Statement::StartTransaction { modes, .. } => {
            for m in modes {
                match m {
                    TransactionMode::AccessMode(TransactionAccessMode::ReadOnly) => an.txn.insert(TxnFlags::READ_ONLY),
                    TransactionMode::AccessMode(TransactionAccessMode::ReadWrite) => {
                        an.txn.insert(TxnFlags::READ_WRITE)
                    }
                    TransactionMode::IsolationLevel(_) => {}
                }
            }
            StmtKind::Begin
        }
        Statement::Commit { .. } => StmtKind::Commit,
        Statement::Rollback { .. } => StmtKind::Rollback,
        Statement::Set(set) => {
            set_flags(set, ctx, an);
            StmtKind::Set
        }
        Statement::Use(u) => {
            an.database = use_target(u);
            StmtKind::Use
        }
        Statement::CreateTable(ct) => {
            if ct.temporary {
                an.pins.insert(Pins::TEMP_TABLE);
            }
            StmtKind::Ddl
        }
        Statement::LockTables { .. } => {
            an.pins.insert(Pins::LOCK_TABLES);
            StmtKind::LockTables
        }
        Statement::UnlockTables => StmtKind::UnlockTables,
        Statement::Call(_) => StmtKind::Call,
        Statement::Explain { .. } | Statement::ExplainTable { .. } => StmtKind::Explain,
        Statement::Prepare { .. } => StmtKind::Prepare,
        Statement::Execute { .. } => StmtKind::Execute,
        Statement::Deallocate { .. } => StmtKind::Deallocate,
        other => classify_other(other),
    };
}

fn classify_other(s: &Statement) -> StmtKind {
    let text = format!("{s:?}");
    let variant = text.split(|c: char| !c.is_ascii_alphanumeric()).next().unwrap_or("");
    if variant.starts_with("Show") {
        StmtKind::Show
    } else if ["Create", "Alter", "Drop", "Truncate", "RenameTable", "Comment"].iter().any(|p| variant.starts_with(p)) {
        StmtKind::Ddl
    } else {
        StmtKind::Other
    }
}

fn use_target(u: &Use) -> Option<Name<'static>> {
    match u {
        Use::Object(name) | Use::Database(name) | Use::Schema(name) => {
            name.0.last()?.as_ident().map(|i| owned(&i.value))
        }
        _ => None,
    }
}

fn query<'a>(q: &Query, ctx: &Ctx, an: &mut Analysis<'a>) {
    an.kind = StmtKind::Select;
    if let Some(l) = q.locks.first() {
        an.lock = Some(LockRead {
            strength: if l.lock_type == LockType::Update { LockStrength::Update } else { LockStrength::Share },
            wait: match l.nonblock {
                Some(NonBlock::Nowait) => LockWait::NoWait,
                Some(NonBlock::SkipLocked) => LockWait::SkipLocked,
                None => LockWait::Block,
            },
        });
    }
    if let SetExpr::Select(sel) = q.body.as_ref() {
        tables_with_joins(&sel.from, an);
        where_clause(sel.selection.as_ref(), ctx, an);
    }
}

fn where_clause<'a>(selection: Option<&Expr>, ctx: &Ctx, an: &mut Analysis<'a>) {
    if let Some(e) = selection {
        expr::conjunction(e, ctx, an);
    }
}

fn tables_with_joins<'a>(from: &[TableWithJoins], an: &mut Analysis<'a>) {
    for twj in from {
        table_factor(&twj.relation, an);
        for j in &twj.joins {
            table_factor(&j.relation, an);
        }
    }
}

fn table_factor<'a>(f: &TableFactor, an: &mut Analysis<'a>) {
    if let TableFactor::Table { name, alias, partitions, .. } = f {
        let Some(mut t) = table_ref(name) else {
            return;
        };
        if t.schema.is_none() && t.name.eq_ignore_ascii_case("dual") {
            return;
        }
        t.alias = alias.as_ref().map(|a| owned(&a.name.value));
        t.partitions = partitions.iter().map(|p| owned(&p.value)).collect();
        an.tables.push(t);
    }
}

fn table_ref<'a>(name: &ObjectName) -> Option<TableRef<'a>> {
    let parts: Vec<&str> = name.0.iter().map(|p| p.as_ident().map(|i| i.value.as_str())).collect::<Option<_>>()?;
    let (schema, table) = match parts.as_slice() {
        [t] => (None, *t),
        [s, t] => (Some(owned(s)), *t),
        _ => return None,
    };
    Some(TableRef { schema, name: owned(table), ..TableRef::default() })
}

fn insert<'a>(ins: &Insert, ctx: &Ctx, an: &mut Analysis<'a>) {
    an.kind = if ins.replace_into { StmtKind::Replace } else { StmtKind::Insert };
    if let TableObject::TableName(name) = &ins.table {
        an.tables.extend(table_ref(name));
    }
    let columns: Vec<Name<'static>> =
        ins.columns.iter().filter_map(|c| c.0.last()?.as_ident().map(|i| owned(&i.value))).collect();
    for a in &ins.assignments {
        an.key(Column::Named { qualifier: None, name: assigned(&a.target) }, row_value(&a.value, ctx), 0);
    }
    let Some(SetExpr::Values(values)) = ins.source.as_ref().map(|s| s.body.as_ref()) else {
        return;
    };
    for (r, row) in values.rows.iter().enumerate() {
        for (n, e) in row.content.iter().enumerate() {
            let column = match columns.get(n) {
                Some(c) => Column::Named { qualifier: None, name: c.clone() },
                None => Column::Position(u16::try_from(n).unwrap_or(u16::MAX)),
            };
            an.key(column, row_value(e, ctx), r as u32);
        }
    }
}

/// The column an `INSERT … SET` assignment names: a bare column's name unquoted (`` `c` `` →
/// `c`), any other target as written.
fn assigned(target: &AssignmentTarget) -> Name<'static> {
    match target {
        AssignmentTarget::ColumnName(ObjectName(parts)) => match parts.as_slice() {
            [part] => part.as_ident().map_or_else(|| owned(&target.to_string()), |i| owned(&i.value)),
            _ => owned(&target.to_string()),
        },
        AssignmentTarget::Tuple(_) => owned(&target.to_string()),
    }
}

fn row_value(e: &Expr, ctx: &Ctx) -> Value<'static> {
    expr::operand(e, ctx).key_value()
}

fn set_flags<'a>(set: &Set, ctx: &Ctx, an: &mut Analysis<'a>) {
    match set {
        Set::SingleAssignment { scope, variable, values, .. } => {
            set_one(scope.as_ref(), variable, values.first(), ctx, an);
        }
        Set::MultipleAssignments { assignments } => {
            for a in assignments {
                set_one(a.scope.as_ref(), &a.name, Some(&a.value), ctx, an);
            }
        }
        Set::SetNames { .. } | Set::SetNamesDefault { .. } => an.set.insert(SetFlags::NAMES),
        Set::SetTransaction { .. } => an.set.insert(SetFlags::TRANSACTION),
        _ => an.set.insert(SetFlags::SESSION),
    }
}

fn set_one<'a>(
    scope: Option<&ContextModifier>,
    var: &ObjectName,
    value: Option<&Expr>,
    ctx: &Ctx,
    an: &mut Analysis<'a>,
) {
    let parts: Vec<String> = var.0.iter().map(|p| p.as_ident().map_or_else(String::new, |i| i.value.clone())).collect();
    let first = parts.first().map_or("", String::as_str);
    if first.starts_with('@') && !first.starts_with("@@") {
        an.set.insert(SetFlags::USER);
        return;
    }
    // `@@global.v` names a scope; `@@global` alone is a variable named `global`.
    let sys_scope = first.strip_prefix("@@").filter(|_| parts.len() > 1).map(str::to_ascii_lowercase);
    let global = matches!(scope, Some(ContextModifier::Global)) || sys_scope.as_deref() == Some("global");
    an.set.insert(if global { SetFlags::GLOBAL } else { SetFlags::SESSION });
    let name = parts.last().map_or("", |p| p.trim_start_matches('@'));
    if name.eq_ignore_ascii_case("autocommit") {
        an.set.insert(SetFlags::AUTOCOMMIT);
        an.autocommit = value.and_then(|v| autocommit(v, ctx));
    }
}

fn autocommit(e: &Expr, ctx: &Ctx) -> Option<bool> {
    match expr::operand(e, ctx) {
        Operand::Value(Value::Int(i)) => Some(i != 0),
        Operand::Column(None, n) if n.eq_ignore_ascii_case("on") => Some(true),
        Operand::Column(None, n) if n.eq_ignore_ascii_case("off") => Some(false),
        Operand::Value(Value::Str { bytes, .. }) if bytes.eq_ignore_ascii_case(b"on") => Some(true),
        Operand::Value(Value::Str { bytes, .. }) if bytes.eq_ignore_ascii_case(b"off") => Some(false),
        _ => None,
    }
}
