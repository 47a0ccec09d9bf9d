//! Reference-path values: literals, evaluable expressions and `WHERE` conjunctions from the AST.

use std::borrow::Cow;

use sqlparser::ast::{
    BinaryOperator, DataType, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, InTarget, UnaryOperator,
    Value as SqlValue, ValueWithSpan,
};
use sqlparser::tokenizer::Location;

use crate::sql::analysis::{Analysis, Column, Name, RangeOp};
use crate::sql::eval::{self, Arith, Func};
use crate::sql::value::{self, Value};

/// Placeholder locations in text order, to number `?` by position.
pub(super) struct Ctx {
    /// Start location of each `?` token.
    pub places: Vec<Location>,
}

/// An operand: bare column or value.
pub(super) enum Operand {
    Column(Option<Name<'static>>, Name<'static>),
    Value(Value<'static>),
}

impl Operand {
    fn value(self) -> Value<'static> {
        match self {
            Operand::Column(..) | Operand::Value(Value::Placeholder(_)) => Value::Unknown,
            Operand::Value(v) => v,
        }
    }

    /// The value recorded for a key column.
    pub(super) fn key_value(self) -> Value<'static> {
        match self {
            Operand::Column(..) => Value::Unknown,
            Operand::Value(v) => v,
        }
    }
}

fn owned<'a>(s: &str) -> Name<'a> {
    Cow::Owned(s.to_owned())
}

/// Classifies an expression.
pub(super) fn operand(e: &Expr, ctx: &Ctx) -> Operand {
    match e {
        Expr::Identifier(id) if !id.value.starts_with('@') || id.quote_style.is_some() => {
            Operand::Column(None, owned(&id.value))
        }
        Expr::CompoundIdentifier(ids) if ids.len() == 2 && ids.iter().all(|i| !i.value.starts_with('@')) => {
            Operand::Column(Some(owned(&ids[0].value)), owned(&ids[1].value))
        }
        // Parentheses change nothing: `(c1)` is still the column, `(?)` the parameter.
        Expr::Nested(inner) => operand(inner, ctx),
        _ => Operand::Value(eval_expr(e, ctx)),
    }
}

fn eval_expr(e: &Expr, ctx: &Ctx) -> Value<'static> {
    let v = |e: &Expr| operand(e, ctx).value();
    match e {
        Expr::Value(lit) => literal(lit, ctx),
        Expr::Prefixed { prefix, value } => match (prefix.value.strip_prefix('_'), value.as_ref()) {
            (Some(cs), Expr::Value(lit)) if !cs.is_empty() => match literal(lit, ctx) {
                Value::Str { bytes, .. } => Value::Str { bytes, charset: Some(owned(cs)) },
                _ => Value::Unknown,
            },
            _ => Value::Unknown,
        },
        Expr::UnaryOp { op: UnaryOperator::Minus, expr } => eval::negate(v(expr)),
        // MySQL ignores a unary plus.
        Expr::UnaryOp { op: UnaryOperator::Plus, expr } => v(expr),
        Expr::BinaryOp { left, op, right } => match arith_op(op) {
            Some(op) => eval::arith(op, &v(left), &v(right)),
            None => Value::Unknown,
        },
        Expr::Nested(inner) => v(inner),
        // `DATE '…'`, `TIME '…'`, `TIMESTAMP '…'` (and `{d '…'}`): the string, which the
        // column's type reads as the server does.
        Expr::TypedString(ts) if temporal_type(&ts.data_type) => match literal(&ts.value, ctx) {
            s @ Value::Str { .. } => s,
            _ => Value::Unknown,
        },
        Expr::Function(f) => function(f, ctx),
        Expr::Substring { expr, substring_from: Some(from), substring_for, .. } => {
            let mut args = vec![v(expr), v(from)];
            args.extend(substring_for.as_deref().map(v));
            eval::call(Func::Substr, &args)
        }
        Expr::Trim { expr, trim_where: None, trim_what: None, trim_characters: None } => {
            eval::call(Func::Trim, &[v(expr)])
        }
        _ => Value::Unknown,
    }
}

fn arith_op(op: &BinaryOperator) -> Option<Arith> {
    Some(match op {
        BinaryOperator::Plus => Arith::Add,
        BinaryOperator::Minus => Arith::Sub,
        BinaryOperator::Multiply => Arith::Mul,
        BinaryOperator::Divide => Arith::Div,
        BinaryOperator::Modulo => Arith::Mod,
        BinaryOperator::MyIntegerDivide => Arith::IntDiv,
        _ => return None,
    })
}

fn function(f: &sqlparser::ast::Function, ctx: &Ctx) -> Value<'static> {
    let [part] = f.name.0.as_slice() else {
        return Value::Unknown;
    };
    let (Some(id), FunctionArguments::List(list)) = (part.as_ident(), &f.args) else {
        return Value::Unknown;
    };
    let Some(func) = Func::by_name(&id.value) else {
        return Value::Unknown;
    };
    if list.duplicate_treatment.is_some() || !list.clauses.is_empty() {
        return Value::Unknown;
    }
    let mut args = Vec::with_capacity(list.args.len());
    for a in &list.args {
        match a {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => args.push(operand(e, ctx).value()),
            _ => return Value::Unknown,
        }
    }
    eval::call(func, &args)
}

/// Whether a typed literal's type is a temporal one.
fn temporal_type(t: &DataType) -> bool {
    matches!(t, DataType::Date | DataType::Time(..) | DataType::Timestamp(..) | DataType::Datetime(_))
}

/// A literal value.
fn literal(lit: &ValueWithSpan, ctx: &Ctx) -> Value<'static> {
    match &lit.value {
        SqlValue::Number(text, false) => value::number(text).into_owned(),
        SqlValue::SingleQuotedString(s) | SqlValue::DoubleQuotedString(s) => Value::str(s.clone().into_bytes()),
        // The national character set is utf8 (utf8mb3).
        SqlValue::NationalStringLiteral(s) => {
            Value::Str { bytes: Cow::Owned(s.clone().into_bytes()), charset: Some(Cow::Borrowed("utf8")) }
        }
        // A bit-value literal is, like a hexadecimal one, a binary string or a number by context.
        SqlValue::SingleQuotedByteStringLiteral(b) => {
            value::bits(b.as_bytes()).map_or(Value::Unknown, |b| Value::Hex(Cow::Owned(b)))
        }
        SqlValue::HexStringLiteral(h) => value::hex(h.as_bytes()).map_or(Value::Unknown, |b| Value::Hex(Cow::Owned(b))),
        SqlValue::Boolean(b) => Value::Int(i64::from(*b)),
        SqlValue::Null => Value::Null,
        SqlValue::Placeholder(p) if p == "?" => match ctx.places.iter().position(|l| *l == lit.span.start) {
            Some(i) => Value::Placeholder(i as u32),
            None => Value::Unknown,
        },
        _ => Value::Unknown,
    }
}

/// Records key values of a `WHERE` condition: equalities and `IN` lists under AND.
pub(super) fn conjunction<'a>(e: &Expr, ctx: &Ctx, an: &mut Analysis<'a>) {
    match e {
        Expr::BinaryOp { left, op: BinaryOperator::And, right } => {
            conjunction(left, ctx, an);
            conjunction(right, ctx, an);
        }
        Expr::Nested(inner) => conjunction(inner, ctx, an),
        // `<=>` names the same rows as `=` for a value, and NULL's rows for NULL.
        Expr::BinaryOp { left, op: BinaryOperator::Eq | BinaryOperator::Spaceship, right } => {
            equality(an, operand(left, ctx), operand(right, ctx));
        }
        Expr::BinaryOp { left, op, right } if range_op(op).is_some() => {
            let Some(op) = range_op(op) else { return };
            match (operand(left, ctx), operand(right, ctx)) {
                (Operand::Column(..), Operand::Column(..)) => {}
                (Operand::Column(qualifier, name), v) => an.range(Column::Named { qualifier, name }, op, v.key_value()),
                (v, Operand::Column(qualifier, name)) => {
                    an.range(Column::Named { qualifier, name }, op.flipped(), v.key_value())
                }
                _ => {}
            }
        }
        Expr::Between { expr, negated: false, low, high } => {
            let Operand::Column(q, name) = operand(expr, ctx) else { return };
            let (low, high) = (operand(low, ctx), operand(high, ctx));
            if matches!(low, Operand::Column(..)) || matches!(high, Operand::Column(..)) {
                return;
            }
            an.range(Column::Named { qualifier: q.clone(), name: name.clone() }, RangeOp::Ge, low.key_value());
            an.range(Column::Named { qualifier: q, name }, RangeOp::Le, high.key_value());
        }
        Expr::In { expr, target: InTarget::List(list), negated: false, .. } => {
            let Operand::Column(q, name) = operand(expr, ctx) else {
                return;
            };
            let items: Vec<Operand> = list.iter().map(|i| operand(i, ctx)).collect();
            if items.iter().any(|i| matches!(i, Operand::Column(..))) {
                return;
            }
            for item in items {
                an.key(Column::Named { qualifier: q.clone(), name: name.clone() }, item.key_value(), 0);
            }
        }
        _ => {}
    }
}

fn range_op(op: &BinaryOperator) -> Option<RangeOp> {
    Some(match op {
        BinaryOperator::Lt => RangeOp::Lt,
        BinaryOperator::LtEq => RangeOp::Le,
        BinaryOperator::Gt => RangeOp::Gt,
        BinaryOperator::GtEq => RangeOp::Ge,
        _ => return None,
    })
}

/// `col = v` / `v = col`.
pub(super) fn equality<'a>(an: &mut Analysis<'a>, left: Operand, right: Operand) {
    match (left, right) {
        (Operand::Column(..), Operand::Column(..)) => {}
        (Operand::Column(qualifier, name), v) | (v, Operand::Column(qualifier, name)) => {
            an.key(Column::Named { qualifier, name }, v.key_value(), 0);
        }
        _ => {}
    }
}
