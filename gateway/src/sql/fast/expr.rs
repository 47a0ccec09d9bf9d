//! Fast-path value expressions and `WHERE` conjunctions of simple predicates.

use std::borrow::Cow;

use smallvec::SmallVec;

use super::Cursor;
use crate::sql::analysis::{Analysis, Column, Name, RangeOp};
use crate::sql::eval::{self, Arith, Func};
use crate::sql::lexer::{Kind, Op, Token};
use crate::sql::value::{self, Value};

/// An operand: a bare column reference or a value (possibly `Unknown`).
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Operand<'a> {
    /// `c` or `t.c`.
    Column(Option<Name<'a>>, Name<'a>),
    /// Anything else.
    Value(Value<'a>),
}

impl<'a> Operand<'a> {
    /// The value of the operand inside a larger expression.
    fn value(self) -> Value<'a> {
        match self {
            Operand::Column(..) | Operand::Value(Value::Placeholder(_)) => Value::Unknown,
            Operand::Value(v) => v,
        }
    }

    /// The value recorded for a key column (a bare placeholder stays a placeholder).
    pub(super) fn key_value(self) -> Value<'a> {
        match self {
            Operand::Column(..) => Value::Unknown,
            Operand::Value(v) => v,
        }
    }
}

/// `expr := term (('+' | '-') term)*`
pub(super) fn expr<'a>(c: &mut Cursor<'_, 'a>) -> Option<Operand<'a>> {
    let mut left = term(c)?;
    loop {
        let op = if c.punct(b'+') {
            Arith::Add
        } else if c.punct(b'-') {
            Arith::Sub
        } else {
            return Some(left);
        };
        let right = term(c)?;
        left = Operand::Value(eval::arith(op, &left.value(), &right.value()));
    }
}

fn term<'a>(c: &mut Cursor<'_, 'a>) -> Option<Operand<'a>> {
    let mut left = unary(c)?;
    loop {
        let op = if c.punct(b'*') {
            Arith::Mul
        } else if c.punct(b'/') {
            Arith::Div
        } else if c.punct(b'%') || c.kw("MOD") {
            Arith::Mod
        } else if c.kw("DIV") {
            Arith::IntDiv
        } else {
            return Some(left);
        };
        let right = unary(c)?;
        left = Operand::Value(eval::arith(op, &left.value(), &right.value()));
    }
}

/// Every recursion of the expression parser passes through here (parentheses, function
/// arguments, unary minus and plus), so this is where its depth is bounded: past
/// [`MAX_DEPTH`](super::MAX_DEPTH) the fast path declines.
fn unary<'a>(c: &mut Cursor<'_, 'a>) -> Option<Operand<'a>> {
    if c.depth >= super::MAX_DEPTH {
        return None;
    }
    c.depth += 1;
    let operand = if c.punct(b'-') {
        unary(c).map(|o| Operand::Value(eval::negate(o.value())))
    } else if c.punct(b'+') {
        // MySQL ignores a unary plus; a column under it is no longer a bare column.
        unary(c).map(|o| Operand::Value(o.value()))
    } else {
        primary(c)
    };
    c.depth -= 1;
    operand
}

/// The value of a literal token of `sql` (a number, a string without introducer, a hex
/// literal) as the parser reads it; `None` for any other token or an invalid hex literal.
pub(crate) fn literal(sql: &str, t: Token) -> Option<Value<'_>> {
    let text = super::span(sql, &t);
    Some(match t.kind {
        Kind::Number => value::number(text),
        Kind::Str => string(text, None),
        Kind::Hex => Value::Hex(Cow::Owned(value::hex(crate::sql::lexer::hex_digits(text).as_bytes())?)),
        _ => return None,
    })
}

fn primary<'a>(c: &mut Cursor<'_, 'a>) -> Option<Operand<'a>> {
    let t = c.peek()?;
    let v = match t.kind {
        Kind::Number | Kind::Str | Kind::Hex => literal(c.sql, t)?,
        Kind::Placeholder => {
            c.bump();
            return Some(Operand::Value(Value::Placeholder(c.placeholder_index())));
        }
        Kind::UserVar | Kind::SysVar => Value::Unknown,
        Kind::Punct(b'(') => return paren(c),
        Kind::Word | Kind::Quoted => return word(c),
        _ => return None,
    };
    c.bump();
    Some(Operand::Value(v))
}

fn paren<'a>(c: &mut Cursor<'_, 'a>) -> Option<Operand<'a>> {
    c.expect_punct(b'(')?;
    let inner = expr(c)?;
    c.expect_punct(b')')?;
    // Parentheses change nothing: `(c1)` is still the column, `(?)` the parameter.
    Some(inner)
}

/// Unescaped string literal with an optional introducer.
fn string<'a>(text: &'a str, charset: Option<&'a str>) -> Value<'a> {
    let quote = text.as_bytes()[0];
    let body = &text.as_bytes()[1..text.len() - 1];
    Value::Str { bytes: value::unescape(body, quote), charset: charset.map(Cow::Borrowed) }
}

/// Keyword literal, introducer + string, function call or column reference.
fn word<'a>(c: &mut Cursor<'_, 'a>) -> Option<Operand<'a>> {
    let t = c.peek()?;
    let text = c.text(t);
    if t.kind == Kind::Word {
        let lit = if text.eq_ignore_ascii_case("NULL") {
            Some(Value::Null)
        } else if text.eq_ignore_ascii_case("TRUE") {
            Some(Value::Int(1))
        } else if text.eq_ignore_ascii_case("FALSE") {
            Some(Value::Int(0))
        } else {
            None
        };
        if let Some(v) = lit {
            c.bump();
            return Some(Operand::Value(v));
        }
        if let Some(v) = introduced(c, text) {
            return Some(Operand::Value(v));
        }
        if c.peek_at(1).is_some_and(|n| n.kind == Kind::Punct(b'(')) && !super::is_reserved(text) {
            return call(c, text);
        }
    }
    column(c)
}

/// `_charset 'text'`.
fn introduced<'a>(c: &mut Cursor<'_, 'a>, text: &'a str) -> Option<Value<'a>> {
    let charset = text.strip_prefix('_').filter(|s| !s.is_empty())?;
    let s = c.peek_at(1).filter(|n| n.kind == Kind::Str)?;
    c.pos += 2;
    Some(string(c.text(s), Some(charset)))
}

fn call<'a>(c: &mut Cursor<'_, 'a>, name: &'a str) -> Option<Operand<'a>> {
    c.pos += 2;
    let mut args: SmallVec<[Value<'a>; 3]> = SmallVec::new();
    if !c.punct(b')') {
        loop {
            args.push(expr(c)?.value());
            if c.punct(b')') {
                break;
            }
            c.expect_punct(b',')?;
        }
    }
    let v = match Func::by_name(name) {
        Some(f) => eval::call(f, &args),
        None => Value::Unknown,
    };
    Some(Operand::Value(v))
}

/// `c` or `t.c`.
pub(super) fn column<'a>(c: &mut Cursor<'_, 'a>) -> Option<Operand<'a>> {
    let first = c.ident()?;
    if !c.punct(b'.') {
        return Some(Operand::Column(None, first));
    }
    let second = c.ident()?;
    if c.is_punct(b'.') {
        return None;
    }
    Some(Operand::Column(Some(first), second))
}

/// `pred (AND pred)*`, recording key values into `an`.
pub(super) fn conjunction<'a>(c: &mut Cursor<'_, 'a>, an: &mut Analysis<'a>) -> Option<()> {
    loop {
        predicate(c, an)?;
        if !c.kw("AND") {
            break;
        }
    }
    if c.is_kw("OR") || c.is_kw("XOR") {
        return None;
    }
    Some(())
}

fn predicate<'a>(c: &mut Cursor<'_, 'a>, an: &mut Analysis<'a>) -> Option<()> {
    if c.is_kw("NOT") {
        return None;
    }
    let left = expr(c)?;
    let t = c.peek()?;
    match t.kind {
        // `<=>` names the same rows as `=` for a value, and NULL's rows for NULL.
        Kind::Punct(b'=') | Kind::Op(Op::NullSafeEq) => {
            c.bump();
            let right = expr(c)?;
            equality(an, left, right);
            Some(())
        }
        Kind::Punct(b'<' | b'>') | Kind::Op(Op::Le | Op::Ge) => {
            let op = match t.kind {
                Kind::Punct(b'<') => RangeOp::Lt,
                Kind::Punct(b'>') => RangeOp::Gt,
                Kind::Op(Op::Le) => RangeOp::Le,
                _ => RangeOp::Ge,
            };
            c.bump();
            let right = expr(c)?;
            comparison(an, left, op, right);
            Some(())
        }
        Kind::Op(Op::Ne) => {
            c.bump();
            expr(c).map(drop)
        }
        Kind::Word => keyword_predicate(c, an, left),
        _ => None,
    }
}

fn keyword_predicate<'a>(c: &mut Cursor<'_, 'a>, an: &mut Analysis<'a>, left: Operand<'a>) -> Option<()> {
    let negated = c.kw("NOT");
    if c.kw("IN") {
        return in_list(c, an, left, negated);
    }
    if c.kw("BETWEEN") {
        let low = expr(c)?;
        c.expect_kw("AND")?;
        let high = expr(c)?;
        if !negated {
            between(an, left, low, high);
        }
        return Some(());
    }
    if c.kw("LIKE") {
        return expr(c).map(drop);
    }
    if !negated && c.kw("IS") {
        c.kw("NOT");
        return c.kw("NULL").then_some(());
    }
    None
}

fn in_list<'a>(c: &mut Cursor<'_, 'a>, an: &mut Analysis<'a>, left: Operand<'a>, negated: bool) -> Option<()> {
    c.expect_punct(b'(')?;
    let mut items: SmallVec<[Operand<'a>; 8]> = SmallVec::new();
    loop {
        items.push(expr(c)?);
        if c.punct(b')') {
            break;
        }
        c.expect_punct(b',')?;
    }
    let Operand::Column(q, name) = left else {
        return Some(());
    };
    if negated || items.iter().any(|i| matches!(i, Operand::Column(..))) {
        return Some(());
    }
    for item in items {
        an.key(Column::Named { qualifier: q.clone(), name: name.clone() }, item.key_value(), 0);
    }
    Some(())
}

/// `col = v` / `v = col`; column = column records nothing.
pub(super) fn equality<'a>(an: &mut Analysis<'a>, left: Operand<'a>, right: Operand<'a>) {
    match (left, right) {
        (Operand::Column(..), Operand::Column(..)) => {}
        (Operand::Column(qualifier, name), v) | (v, Operand::Column(qualifier, name)) => {
            an.key(Column::Named { qualifier, name }, v.key_value(), 0);
        }
        _ => {}
    }
}

/// `col op v` / `v op col` (flipped); column against column records nothing.
fn comparison<'a>(an: &mut Analysis<'a>, left: Operand<'a>, op: RangeOp, right: Operand<'a>) {
    match (left, right) {
        (Operand::Column(..), Operand::Column(..)) => {}
        (Operand::Column(qualifier, name), v) => an.range(Column::Named { qualifier, name }, op, v.key_value()),
        (v, Operand::Column(qualifier, name)) => {
            an.range(Column::Named { qualifier, name }, op.flipped(), v.key_value())
        }
        _ => {}
    }
}

/// `col BETWEEN low AND high`: `col >= low` and `col <= high`.
fn between<'a>(an: &mut Analysis<'a>, col: Operand<'a>, low: Operand<'a>, high: Operand<'a>) {
    let Operand::Column(qualifier, name) = col else { return };
    if matches!(low, Operand::Column(..)) || matches!(high, Operand::Column(..)) {
        return;
    }
    an.range(Column::Named { qualifier: qualifier.clone(), name: name.clone() }, RangeOp::Ge, low.key_value());
    an.range(Column::Named { qualifier, name }, RangeOp::Le, high.key_value());
}
