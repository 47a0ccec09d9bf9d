//! The partitioned-table model the calculation needs (docs/partition.md §1): columns, levels, partitions, bounds.

use super::cast::{cast, CastContext};
use super::expr::Expr;
use super::value::{Datum, KeyValue};
use super::PartitionError;

/// Partition function (OceanBase 4.x `ObPartitionFuncTypeV4`, docs/partition.md §1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartFunc {
    /// `HASH(expr)` (0).
    Hash,
    /// `KEY(cols)` (1).
    Key,
    /// `KEY()` on the primary key (2).
    KeyImplicit,
    /// `RANGE(expr)` (3).
    Range,
    /// `RANGE COLUMNS(cols)` (4).
    RangeColumns,
    /// `LIST(expr)` (5).
    List,
    /// `LIST COLUMNS(cols)` (6).
    ListColumns,
}

/// A column type as far as partitioning cares.
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnType {
    /// TINYINT (1) … BIGINT (8 bytes); MEDIUMINT is 3.
    Int { bytes: u8, unsigned: bool },
    /// FLOAT (stored as f32).
    Float,
    /// DOUBLE.
    Double,
    /// DECIMAL(p,s), stored as DecimalInt.
    Decimal { precision: u8, scale: u8 },
    /// DATE (packed MySQL DATE, type 52).
    Date,
    /// DATETIME(fsp) (packed MySQL DATETIME, type 53).
    DateTime { fsp: u8 },
    /// TIMESTAMP(fsp): UTC instant.
    Timestamp { fsp: u8 },
    /// TIME(fsp).
    Time { fsp: u8 },
    /// YEAR.
    Year,
    /// CHAR(n) (characters).
    Char { len: u32 },
    /// VARCHAR(n).
    VarChar { len: u32 },
    /// BINARY(n) (bytes, zero-padded).
    Binary { len: u32 },
    /// VARBINARY(n).
    VarBinary { len: u32 },
    /// Anything else (TEXT, BLOB, BIT, ENUM, JSON, …): no calculation.
    Other(String),
}

/// A table column.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// Name as declared.
    pub name: String,
    /// Type.
    pub ty: ColumnType,
    /// Collation name (lower case) for string columns; `binary` for BINARY/VARBINARY.
    pub collation: String,
    /// A generated column (its value is not calculated by the gateway).
    pub generated: bool,
}

/// The partitioning expression of one level.
#[derive(Debug, Clone, PartialEq)]
pub enum PartExpr {
    /// A plain column list (empty for `KEY()`).
    Columns(Vec<String>),
    /// Anything else (`c1 + 1`, `year(d)`): evaluated by `expr::Expr` for HASH, RANGE and LIST.
    Expression(String),
}

/// One partitioning level.
#[derive(Debug, Clone, PartialEq)]
pub struct Level {
    /// Function.
    pub func: PartFunc,
    /// Expression.
    pub expr: PartExpr,
}

/// A partition bound as declared, before casting.
#[derive(Debug, Clone, PartialEq)]
pub enum BoundSpec {
    /// HASH/KEY partitions have none.
    None,
    /// `VALUES LESS THAN (…)`; `None` = MAXVALUE.
    LessThan(Vec<Option<KeyValue>>),
    /// `VALUES IN (…)`: rows of values.
    In(Vec<Vec<KeyValue>>),
    /// `DEFAULT` / `VALUES IN (DEFAULT)`.
    Default,
}

/// A bound cast to the key column types.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Bound {
    None,
    LessThan(Vec<Option<Datum>>),
    In(Vec<Vec<Datum>>),
    Default,
    /// A bound value that does not cast to the column type (the level cannot be calculated).
    Invalid(PartitionError),
}

/// A sub-partition.
#[derive(Debug, Clone, PartialEq)]
pub struct SubPartition {
    /// Stored name (`p0sp1`, `p0ssa`, or as declared); shared with every [`super::Location`] in it.
    pub name: std::sync::Arc<str>,
    /// Bound.
    pub bound: BoundSpec,
    /// Tablet id when known (metadata); DDL-derived schemes have none.
    pub tablet_id: Option<u64>,
}

/// A first-level partition with its own sub-partition list (non-template, docs/partition.md §5).
#[derive(Debug, Clone, PartialEq)]
pub struct Partition {
    /// Name (`p0`, or as declared); shared with every [`super::Location`] in it (no copy per
    /// routed statement).
    pub name: std::sync::Arc<str>,
    /// Bound.
    pub bound: BoundSpec,
    /// Tablet id when known (one-level tables).
    pub tablet_id: Option<u64>,
    /// Sub-partitions in order (empty for one-level tables).
    pub subs: Vec<SubPartition>,
}

/// A partitioned table: everything `locate` needs.
#[derive(Debug, Clone, PartialEq)]
pub struct TableScheme {
    /// Table name.
    pub name: String,
    /// All columns of the table.
    pub columns: Vec<Column>,
    /// Primary-key column names (for `KEY()`).
    pub primary_key: Vec<String>,
    /// First level.
    pub level1: Level,
    /// Second level, if sub-partitioned.
    pub level2: Option<Level>,
    /// First-level partitions in partition order.
    pub partitions: Vec<Partition>,
    /// Column indexes of each level, resolved by `prepare`.
    pub(super) resolved: [Result<Vec<usize>, PartitionError>; 2],
    /// Bounds cast to the column types, per partition (and per sub-partition).
    pub(super) bounds: Vec<(Bound, Vec<Bound>)>,
    /// Each level's partition expression, parsed, with the BIGINT column its value is typed as.
    pub(super) exprs: [Option<(Expr, Column)>; 2],
    /// [`TableScheme::key_columns`], worked out once by `new` (it is asked for every statement).
    keys: Result<Vec<usize>, PartitionError>,
}

impl TableScheme {
    /// Builds a scheme, resolving column names and casting the bounds once.
    pub fn new(
        name: String,
        columns: Vec<Column>,
        primary_key: Vec<String>,
        level1: Level,
        level2: Option<Level>,
        partitions: Vec<Partition>,
    ) -> TableScheme {
        let mut t = TableScheme {
            name,
            columns,
            primary_key,
            level1,
            level2,
            partitions,
            resolved: [Ok(Vec::new()), Ok(Vec::new())],
            bounds: Vec::new(),
            exprs: [None, None],
            keys: Ok(Vec::new()),
        };
        let level1 = t.level1.clone();
        t.resolved[0] = t.resolve(&level1, 0);
        t.resolved[1] = match t.level2.clone() {
            Some(l) => t.resolve(&l, 1),
            None => Ok(Vec::new()),
        };
        let ctx = CastContext::default();
        let bounds = t
            .partitions
            .iter()
            .map(|p| {
                let own = t.cast_bound(0, &p.bound, &ctx);
                let subs = p.subs.iter().map(|s| t.cast_bound(1, &s.bound, &ctx)).collect();
                (own, subs)
            })
            .collect();
        t.bounds = bounds;
        t.keys = t.find_key_columns();
        t
    }

    /// Whether `level` is `KEY()` on the primary key.
    fn is_implicit_key(level: &Level) -> bool {
        matches!((&level.expr, level.func), (PartExpr::Columns(c), PartFunc::Key | PartFunc::KeyImplicit) if c.is_empty())
    }

    /// The level's key columns in the order its function uses them: the partition expression's
    /// order, except for `KEY()`, which the kernel hashes in table column order, not primary-key
    /// order (kernel-checked: `(k2 INT, k1 VARCHAR)`, `PRIMARY KEY (k1, k2)` hashes k2 first).
    fn resolve(&mut self, level: &Level, index: usize) -> Result<Vec<usize>, PartitionError> {
        if let PartExpr::Expression(text) = &level.expr {
            let (expr, column) = self.parse_expression(level.func, text)?;
            let cols = expr.columns();
            self.exprs[index] = Some((expr, column));
            return Ok(cols);
        }
        let mut cols = self.resolve_names(level, index)?;
        if Self::is_implicit_key(level) {
            cols.sort_unstable();
        }
        Ok(cols)
    }

    /// A HASH / RANGE / LIST expression and the BIGINT (UNSIGNED) column its value is typed as.
    fn parse_expression(&self, func: PartFunc, text: &str) -> Result<(Expr, Column), PartitionError> {
        if !matches!(func, PartFunc::Hash | PartFunc::Range | PartFunc::List) {
            return Err(PartitionError::Unsupported(format!(
                "partition expression `{text}` is not a plain column list"
            )));
        }
        let expr = Expr::parse(text, &|n: &str| self.column_index(n))?;
        if let Some(&c) = expr.columns().iter().find(|&&c| self.columns[c].generated) {
            return Err(PartitionError::Unsupported(format!(
                "key column {} is a generated column",
                self.columns[c].name
            )));
        }
        let unsigned = expr.is_unsigned(&self.columns);
        let column = Column {
            name: text.to_string(),
            ty: ColumnType::Int { bytes: 8, unsigned },
            collation: String::new(),
            generated: false,
        };
        Ok((expr, column))
    }

    /// The parsed expression of level 0 or 1, if it is one.
    pub fn expression(&self, level: usize) -> Option<&(Expr, Column)> {
        self.exprs.get(level).and_then(Option::as_ref)
    }

    /// Column indexes of the level's names as written (`KEY()`: primary-key order; an
    /// expression: its columns in order of appearance).
    fn resolve_names(&self, level: &Level, index: usize) -> Result<Vec<usize>, PartitionError> {
        let names: Vec<String> = match &level.expr {
            PartExpr::Expression(_) => {
                return match (self.expression(index), &self.resolved[index]) {
                    (Some((e, _)), _) => Ok(e.columns()),
                    (None, Err(e)) => Err(e.clone()),
                    (None, Ok(_)) => Err(PartitionError::Unsupported("partition expression not resolved".into())),
                };
            }
            PartExpr::Columns(_) if Self::is_implicit_key(level) => self.primary_key.clone(),
            PartExpr::Columns(c) => c.clone(),
        };
        if names.is_empty() {
            return Err(PartitionError::Unsupported("partition key has no columns".into()));
        }
        names
            .iter()
            .map(|n| {
                let i =
                    self.column_index(n).ok_or_else(|| PartitionError::Unsupported(format!("unknown column {n}")))?;
                if self.columns[i].generated {
                    return Err(PartitionError::Unsupported(format!("key column {n} is a generated column")));
                }
                Ok(i)
            })
            .collect()
    }

    /// Index of a column by name (case-insensitive).
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name.eq_ignore_ascii_case(name))
    }

    /// Casts a declared bound; a value that does not cast makes the bound `Invalid`.
    fn cast_bound(&self, level: usize, spec: &BoundSpec, ctx: &CastContext) -> Bound {
        let cols = match &self.resolved[level] {
            Ok(c) => c,
            Err(e) => return Bound::Invalid(e.clone()),
        };
        // An expression level's bounds are one BIGINT each, whatever columns the expression reads.
        let expr_col = self.expression(level).map(|(_, c)| c);
        let cols: Vec<&Column> = match expr_col {
            Some(c) => vec![c],
            None => cols.iter().map(|&c| &self.columns[c]).collect(),
        };
        let arity = |n: usize| {
            (n == cols.len()).then_some(()).ok_or_else(|| {
                PartitionError::Unsupported(format!("bound has {n} values for {} key columns", cols.len()))
            })
        };
        let row = |vals: &[KeyValue]| -> Result<Vec<Datum>, PartitionError> {
            arity(vals.len())?;
            vals.iter().zip(&cols).map(|(v, c)| cast(v, c, ctx)).collect()
        };
        let typed = match spec {
            BoundSpec::None => Ok(Bound::None),
            BoundSpec::Default => Ok(Bound::Default),
            BoundSpec::In(rows) => rows.iter().map(|r| row(r)).collect::<Result<_, _>>().map(Bound::In),
            BoundSpec::LessThan(vals) => arity(vals.len()).and_then(|()| {
                vals.iter()
                    .zip(&cols)
                    .map(|(v, c)| v.as_ref().map(|v| cast(v, c, ctx)).transpose())
                    .collect::<Result<_, _>>()
                    .map(Bound::LessThan)
            }),
        };
        typed.unwrap_or_else(|e| Bound::Invalid(PartitionError::Unsupported(format!("partition bound: {e}"))))
    }

    /// Column indexes of level 0 or 1 (an error if that level cannot be calculated).
    pub fn level_columns(&self, level: usize) -> Result<&[usize], PartitionError> {
        match self.resolved.get(level) {
            Some(Ok(v)) => Ok(v),
            Some(Err(e)) => Err(e.clone()),
            None => Err(PartitionError::Unsupported("no such level".into())),
        }
    }

    /// The key columns in input order: the first level's, then the sub level's not already
    /// listed; each level's in the order of its partition expression, and for `KEY()` in
    /// primary-key order (whatever order the hash uses, see `resolve`).
    pub fn key_columns(&self) -> Result<&[usize], PartitionError> {
        self.keys.as_deref().map_err(Clone::clone)
    }

    fn find_key_columns(&self) -> Result<Vec<usize>, PartitionError> {
        let mut out = Vec::new();
        let levels = std::iter::once(&self.level1).chain(self.level2.as_ref());
        for (i, level) in levels.enumerate() {
            self.level_columns(i)?;
            for c in self.resolve_names(level, i)? {
                if !out.contains(&c) {
                    out.push(c);
                }
            }
        }
        Ok(out)
    }
}
