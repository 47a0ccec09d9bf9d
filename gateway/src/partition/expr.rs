//! Partition expressions (`HASH(c1 + 1)`, `RANGE(TO_DAYS(d))`, `LIST(MONTH(d))`): parsed from the
//! DDL text and evaluated on cast key values the way the kernel does, to a BIGINT (or NULL).
//!
//! Accepted: integer literals, columns, unary `-`, `+ - * DIV MOD %`, `ABS`, `MOD`, `YEAR`,
//! `MONTH`, `DAY`/`DAYOFMONTH`, `TO_DAYS`, `TO_SECONDS`, `UNIX_TIMESTAMP`, `HOUR`, `MINUTE`,
//! `SECOND`, `MICROSECOND`, `DAYOFYEAR`, `DAYOFWEEK`, `WEEKDAY`, `QUARTER`, `TIME_TO_SEC`,
//! `EXTRACT(YEAR | QUARTER | MONTH | DAY | HOUR | MINUTE | SECOND | MICROSECOND | YEAR_MONTH FROM …)`. The kernel
//! refuses `/`, bit operators, string functions and time-zone dependent forms (`YEAR(ts)`,
//! `TO_DAYS(ts)`, `UNIX_TIMESTAMP(datetime)`) in DDL (kernel-checked); anything else is
//! `Unsupported` here, never guessed.

use super::ddl::lexer::{tokenize, Tok};
use super::scheme::{Column, ColumnType};
use super::temporal::{days_since_epoch, DateTime};
use super::value::Datum;
use super::PartitionError;

/// Deepest nesting of parentheses and operators read.
const MAX_DEPTH: usize = 32;
/// Most tokens in one partition expression.
const MAX_TOKENS: usize = 256;
/// TO_DAYS of 1970-01-01.
const EPOCH_DAYS: i64 = 719_528;

/// A binary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `DIV` (integer division, truncating toward zero; by zero → NULL).
    Div,
    /// `MOD`, `%`, `MOD(a, b)` (sign of the dividend; by zero → NULL).
    Mod,
}

/// A function of one argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Func {
    /// `ABS`
    Abs,
    /// `YEAR`
    Year,
    /// `MONTH`
    Month,
    /// `DAY`, `DAYOFMONTH`
    Day,
    /// `TO_DAYS`
    ToDays,
    /// `TO_SECONDS`
    ToSeconds,
    /// `UNIX_TIMESTAMP` (of a TIMESTAMP column)
    UnixTimestamp,
    /// `HOUR`
    Hour,
    /// `MINUTE`
    Minute,
    /// `SECOND`
    Second,
    /// `MICROSECOND`
    Microsecond,
    /// `DAYOFYEAR`
    DayOfYear,
    /// `DAYOFWEEK` (1 = Sunday)
    DayOfWeek,
    /// `WEEKDAY` (0 = Monday)
    WeekDay,
    /// `QUARTER`
    Quarter,
    /// `TIME_TO_SEC`
    TimeToSec,
    /// `EXTRACT(YEAR_MONTH FROM …)`: `year * 100 + month`
    YearMonth,
}

impl Func {
    fn by_name(name: &str) -> Option<Func> {
        Some(match name.to_ascii_lowercase().as_str() {
            "abs" => Func::Abs,
            "year" => Func::Year,
            "month" => Func::Month,
            "day" | "dayofmonth" => Func::Day,
            "to_days" => Func::ToDays,
            "to_seconds" => Func::ToSeconds,
            "unix_timestamp" => Func::UnixTimestamp,
            "hour" => Func::Hour,
            "minute" => Func::Minute,
            "second" => Func::Second,
            "microsecond" => Func::Microsecond,
            "dayofyear" => Func::DayOfYear,
            "dayofweek" => Func::DayOfWeek,
            "weekday" => Func::WeekDay,
            "quarter" => Func::Quarter,
            "time_to_sec" => Func::TimeToSec,
            _ => return None,
        })
    }

    /// The function `EXTRACT(unit FROM …)` computes.
    fn by_unit(unit: &str) -> Option<Func> {
        Some(match unit.to_ascii_lowercase().as_str() {
            "year" => Func::Year,
            "quarter" => Func::Quarter,
            "month" => Func::Month,
            "day" => Func::Day,
            "hour" => Func::Hour,
            "minute" => Func::Minute,
            "second" => Func::Second,
            "microsecond" => Func::Microsecond,
            "year_month" => Func::YearMonth,
            _ => return None,
        })
    }

    /// Non-decreasing in its argument (so a value range maps to a range of results).
    fn is_monotonic(self) -> bool {
        matches!(
            self,
            Func::Year | Func::YearMonth | Func::ToDays | Func::ToSeconds | Func::UnixTimestamp | Func::TimeToSec
        )
    }
}

/// A parsed partition expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// A table column (index into the scheme's columns).
    Col(usize),
    /// An integer literal.
    Int(i64),
    /// Unary minus.
    Neg(Box<Expr>),
    /// A binary operation.
    Bin(Op, Box<Expr>, Box<Expr>),
    /// A function call.
    Call(Func, Box<Expr>),
}

/// The value of an expression: NULL or an integer (`unsigned` when MySQL types it unsigned).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IntValue {
    /// The value; `None` = NULL.
    pub v: Option<i128>,
    /// Typed BIGINT UNSIGNED.
    pub unsigned: bool,
}

fn unsupported(msg: impl Into<String>) -> PartitionError {
    PartitionError::Unsupported(msg.into())
}

impl Expr {
    /// Parses the expression text of a partition level; `column` resolves names to indexes.
    pub fn parse(text: &str, column: &dyn Fn(&str) -> Option<usize>) -> Result<Expr, PartitionError> {
        let toks: Vec<Tok> = tokenize(text)?.into_iter().map(|t| t.tok).collect();
        if toks.len() > MAX_TOKENS {
            return Err(unsupported("partition expression too long"));
        }
        let mut p = ExprParser { toks, i: 0, column, depth: 0 };
        let e = p.sum()?;
        if p.i != p.toks.len() {
            return Err(unsupported(format!("partition expression `{text}`: unexpected token")));
        }
        Ok(e)
    }

    /// Columns in order of first appearance.
    pub fn columns(&self) -> Vec<usize> {
        let mut out = Vec::new();
        self.collect(&mut out);
        out
    }

    fn collect(&self, out: &mut Vec<usize>) {
        match self {
            Expr::Col(c) if !out.contains(c) => out.push(*c),
            Expr::Col(_) | Expr::Int(_) => {}
            Expr::Neg(e) | Expr::Call(_, e) => e.collect(out),
            Expr::Bin(_, a, b) => {
                a.collect(out);
                b.collect(out);
            }
        }
    }

    /// Whether the result is typed unsigned (an unsigned column in `+ - * DIV MOD ABS`).
    pub fn is_unsigned(&self, columns: &[Column]) -> bool {
        match self {
            Expr::Col(c) => matches!(columns.get(*c).map(|c| &c.ty), Some(ColumnType::Int { unsigned: true, .. })),
            Expr::Int(_) | Expr::Neg(_) => false,
            Expr::Call(Func::Abs, e) => e.is_unsigned(columns),
            Expr::Call(..) => false,
            Expr::Bin(Op::Mod, a, _) => a.is_unsigned(columns),
            Expr::Bin(_, a, b) => a.is_unsigned(columns) || b.is_unsigned(columns),
        }
    }

    /// Whether the result never decreases when its (single) column grows: the column itself,
    /// `+`/`-` a constant, `*`/`DIV` by a positive constant, monotonic functions of those.
    pub fn is_monotonic(&self) -> bool {
        match self {
            Expr::Col(_) => true,
            Expr::Call(f, e) => f.is_monotonic() && e.is_monotonic(),
            Expr::Bin(Op::Add, a, b) => {
                (a.is_monotonic() && matches!(**b, Expr::Int(_))) || (b.is_monotonic() && matches!(**a, Expr::Int(_)))
            }
            Expr::Bin(Op::Sub, a, b) => a.is_monotonic() && matches!(**b, Expr::Int(_)),
            Expr::Bin(Op::Mul | Op::Div, a, b) => a.is_monotonic() && matches!(**b, Expr::Int(k) if k > 0),
            Expr::Int(_) | Expr::Neg(_) | Expr::Bin(Op::Mod, ..) => false,
        }
    }

    /// Evaluates on the cast values of the expression's columns (`value(c)` for column `c`).
    pub fn eval(&self, columns: &[Column], value: &dyn Fn(usize) -> Option<Datum>) -> Result<IntValue, PartitionError> {
        let r = self.eval_raw(value)?;
        let unsigned = self.is_unsigned(columns);
        if let Some(v) = r {
            let fits = if unsigned { (0..=i128::from(u64::MAX)).contains(&v) } else { i64::try_from(v).is_ok() };
            if !fits {
                return Err(PartitionError::Cast(format!("partition expression value {v} is out of the BIGINT range")));
            }
        }
        Ok(IntValue { v: r, unsigned })
    }

    fn eval_raw(&self, value: &dyn Fn(usize) -> Option<Datum>) -> Result<Option<i128>, PartitionError> {
        let sub = |e: &Expr| e.eval_raw(value);
        Ok(match self {
            Expr::Int(i) => Some(i128::from(*i)),
            Expr::Col(c) => {
                let d = value(*c).ok_or_else(|| unsupported("partition expression column without a value"))?;
                match d {
                    Datum::Null => None,
                    Datum::Int(i) => Some(i128::from(i)),
                    Datum::UInt(u) => Some(i128::from(u)),
                    Datum::Year(y) => Some(if y == 0 { 0 } else { 1900 + i128::from(y) }),
                    other => return Err(unsupported(format!("partition expression on a bare {other}"))),
                }
            }
            Expr::Neg(e) => sub(e)?.map(|v| -v),
            Expr::Bin(op, a, b) => match (sub(a)?, sub(b)?) {
                (Some(x), Some(y)) => binary(*op, x, y)?,
                _ => None,
            },
            Expr::Call(Func::Abs, e) => sub(e)?.map(i128::abs),
            Expr::Call(f, e) => {
                let Expr::Col(c) = **e else {
                    return Err(unsupported("a date function of an expression"));
                };
                let d = value(c).ok_or_else(|| unsupported("partition expression column without a value"))?;
                temporal(*f, &d)?
            }
        })
    }
}

/// `x op y`; division by zero is NULL, an overflow an error (the kernel refuses the row).
fn binary(op: Op, x: i128, y: i128) -> Result<Option<i128>, PartitionError> {
    let v = match op {
        Op::Add => x.checked_add(y),
        Op::Sub => x.checked_sub(y),
        Op::Mul => x.checked_mul(y),
        Op::Div | Op::Mod if y == 0 => return Ok(None),
        Op::Div => x.checked_div(y),
        Op::Mod => x.checked_rem(y),
    };
    v.map(Some).ok_or_else(|| PartitionError::Cast("partition expression value is out of the BIGINT range".into()))
}

/// A date/time function of one column value (NULL in → NULL out).
fn temporal(f: Func, d: &Datum) -> Result<Option<i128>, PartitionError> {
    let dt = match d {
        Datum::Null => return Ok(None),
        Datum::Date(date) => DateTime { date: *date, secs: 0, usec: 0 },
        Datum::DateTime(dt) => *dt,
        Datum::Timestamp(us) if f == Func::UnixTimestamp => {
            return Ok(Some(if *us < 0 { 0 } else { i128::from(us / 1_000_000) }));
        }
        Datum::Time(us) => return time_func(f, *us),
        other => return Err(unsupported(format!("{f:?} of {other}"))),
    };
    let zero = dt.date.is_zero();
    let days = || i128::from(days_since_epoch(dt.date) + EPOCH_DAYS);
    let date = dt.date;
    Ok(match f {
        Func::Year => Some(i128::from(date.year)),
        Func::YearMonth => Some(i128::from(date.year) * 100 + i128::from(date.month)),
        Func::Month => Some(i128::from(date.month)),
        Func::Day => Some(i128::from(date.day)),
        Func::Hour => Some(i128::from(dt.secs / 3600)),
        Func::Minute => Some(i128::from(dt.secs / 60 % 60)),
        Func::Second => Some(i128::from(dt.secs % 60)),
        Func::Microsecond => Some(i128::from(dt.usec)),
        Func::Quarter => Some(i128::from(date.month.div_ceil(3))),
        _ if zero => None,
        Func::ToDays => Some(days()),
        Func::ToSeconds => Some(days() * 86_400 + i128::from(dt.secs)),
        Func::DayOfYear => Some(i128::from(
            days_since_epoch(date) - days_since_epoch(super::temporal::Date { month: 1, day: 1, ..date }) + 1,
        )),
        // 1970-01-01 was a Thursday: WEEKDAY 3, DAYOFWEEK 5.
        Func::WeekDay => Some(i128::from((days_since_epoch(date) + 3).rem_euclid(7))),
        Func::DayOfWeek => Some(i128::from((days_since_epoch(date) + 4).rem_euclid(7) + 1)),
        Func::TimeToSec => Some(i128::from(dt.secs)),
        Func::Abs | Func::UnixTimestamp => return Err(unsupported(format!("{f:?} of a date"))),
    })
}

fn time_func(f: Func, us: i64) -> Result<Option<i128>, PartitionError> {
    let a = i128::from(us.unsigned_abs());
    let sign = if us < 0 { -1 } else { 1 };
    Ok(Some(match f {
        Func::Hour => a / 3_600_000_000,
        Func::Minute => a / 60_000_000 % 60,
        Func::Second => a / 1_000_000 % 60,
        Func::Microsecond => a % 1_000_000,
        Func::TimeToSec => sign * (a / 1_000_000),
        _ => return Err(unsupported(format!("{f:?} of a TIME"))),
    }))
}

/// Recursive descent with a depth bound.
struct ExprParser<'c> {
    toks: Vec<Tok>,
    i: usize,
    column: &'c dyn Fn(&str) -> Option<usize>,
    depth: usize,
}

impl ExprParser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.i)
    }

    fn eat_punct(&mut self, c: char) -> bool {
        let yes = self.peek() == Some(&Tok::Punct(c));
        self.i += usize::from(yes);
        yes
    }

    fn eat_word(&mut self, w: &str) -> bool {
        let yes = matches!(self.peek(), Some(Tok::Word(x)) if x.eq_ignore_ascii_case(w));
        self.i += usize::from(yes);
        yes
    }

    fn enter(&mut self) -> Result<(), PartitionError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(unsupported("partition expression nested too deeply"));
        }
        Ok(())
    }

    /// `product (('+' | '-') product)*`; every operator deepens the tree (and counts as a level).
    fn sum(&mut self) -> Result<Expr, PartitionError> {
        self.enter()?;
        let entered = self.depth;
        let mut left = self.product()?;
        loop {
            let op = if self.eat_punct('+') {
                Op::Add
            } else if self.eat_punct('-') {
                Op::Sub
            } else {
                break;
            };
            self.enter()?;
            left = Expr::Bin(op, Box::new(left), Box::new(self.product()?));
        }
        self.depth = entered - 1;
        Ok(left)
    }

    fn product(&mut self) -> Result<Expr, PartitionError> {
        let entered = self.depth;
        let left = self.product_chain();
        self.depth = entered;
        left
    }

    fn product_chain(&mut self) -> Result<Expr, PartitionError> {
        let mut left = self.unary()?;
        loop {
            self.enter()?;
            let op = if self.eat_punct('*') {
                Op::Mul
            } else if self.eat_word("div") {
                Op::Div
            } else if self.eat_punct('%') || self.eat_word("mod") {
                Op::Mod
            } else if matches!(self.peek(), Some(Tok::Punct('/' | '&' | '|' | '^' | '<' | '>'))) {
                return Err(unsupported("partition expression operator"));
            } else {
                return Ok(left);
            };
            left = Expr::Bin(op, Box::new(left), Box::new(self.unary()?));
        }
    }

    fn unary(&mut self) -> Result<Expr, PartitionError> {
        if self.eat_punct('-') {
            self.enter()?;
            let e = self.unary()?;
            self.depth -= 1;
            return Ok(match e {
                Expr::Int(i) => Expr::Int(-i),
                e => Expr::Neg(Box::new(e)),
            });
        }
        if self.eat_punct('+') {
            return self.unary();
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Expr, PartitionError> {
        let tok = self.peek().cloned().ok_or_else(|| unsupported("partition expression ends early"))?;
        self.i += 1;
        match tok {
            Tok::Punct('(') => {
                let e = self.sum()?;
                self.expect(')')?;
                Ok(e)
            }
            Tok::Number(n) => {
                n.parse().map(Expr::Int).map_err(|_| unsupported(format!("partition expression literal {n}")))
            }
            Tok::Word(w) if self.peek() == Some(&Tok::Punct('(')) => self.call(&w),
            Tok::Word(w) | Tok::Quoted(w) => (self.column)(&w)
                .map(Expr::Col)
                .ok_or_else(|| unsupported(format!("unknown column {w} in partition expression"))),
            other => Err(unsupported(format!("partition expression token {other:?}"))),
        }
    }

    fn call(&mut self, name: &str) -> Result<Expr, PartitionError> {
        self.i += 1;
        if name.eq_ignore_ascii_case("extract") {
            let unit = match self.peek() {
                Some(Tok::Word(w)) => w.clone(),
                _ => return Err(unsupported("EXTRACT without a unit")),
            };
            self.i += 1;
            let f = Func::by_unit(&unit).ok_or_else(|| unsupported(format!("EXTRACT({unit} FROM …)")))?;
            if !self.eat_word("from") {
                return Err(unsupported("EXTRACT without FROM"));
            }
            let arg = self.sum()?;
            self.expect(')')?;
            return Ok(Expr::Call(f, Box::new(arg)));
        }
        if name.eq_ignore_ascii_case("mod") {
            let a = self.sum()?;
            self.expect(',')?;
            let b = self.sum()?;
            self.expect(')')?;
            return Ok(Expr::Bin(Op::Mod, Box::new(a), Box::new(b)));
        }
        let f = Func::by_name(name).ok_or_else(|| unsupported(format!("function {name} in a partition expression")))?;
        let arg = self.sum()?;
        self.expect(')')?;
        Ok(Expr::Call(f, Box::new(arg)))
    }

    fn expect(&mut self, c: char) -> Result<(), PartitionError> {
        if self.eat_punct(c) {
            Ok(())
        } else {
            Err(unsupported(format!("partition expression: expected '{c}'")))
        }
    }
}
