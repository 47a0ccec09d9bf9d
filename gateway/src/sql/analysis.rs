//! The result of analysing one statement: kind, tables, hints, locks, key values, session pins.

use std::borrow::Cow;

use smallvec::SmallVec;

use super::hint::Hints;
use super::value::Value;

/// An identifier as written, without quotes (borrowed unless unquoting changed it).
pub type Name<'a> = Cow<'a, str>;

/// What kind of statement it is, as far as routing cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StmtKind {
    /// `SELECT` (also `WITH … SELECT`, `TABLE`, `VALUES`).
    Select,
    /// `INSERT`.
    Insert,
    /// `REPLACE`.
    Replace,
    /// `UPDATE`.
    Update,
    /// `DELETE`.
    Delete,
    /// `BEGIN` / `START TRANSACTION` (see [`Analysis::txn`]).
    Begin,
    /// `COMMIT`.
    Commit,
    /// `ROLLBACK` (also `ROLLBACK TO SAVEPOINT`).
    Rollback,
    /// `SET …` (see [`Analysis::set`]).
    Set,
    /// `USE db`.
    Use,
    /// `SHOW …`.
    Show,
    /// `CREATE` / `ALTER` / `DROP` / `TRUNCATE` / `RENAME` ….
    Ddl,
    /// `CALL proc(…)`.
    Call,
    /// `LOCK TABLES` / `LOCK TABLE`.
    LockTables,
    /// `UNLOCK TABLES`.
    UnlockTables,
    /// `XA …`.
    Xa,
    /// `EXPLAIN` / `DESCRIBE` of a statement or table.
    Explain,
    /// `EXPLAIN ROUTE <sql>` (the gateway answers it; body in [`Analysis::inner_sql`]).
    ExplainRoute,
    /// `PREPARE name FROM …` (body in [`Analysis::inner_sql`] when a literal).
    Prepare,
    /// `EXECUTE name [USING …]`.
    Execute,
    /// `DEALLOCATE PREPARE name` / `DROP PREPARE name`.
    Deallocate,
    /// Anything else, or a statement neither path could parse.
    #[default]
    Other,
}

/// Which analyser produced the result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Path {
    /// The hand-written fast path.
    Fast,
    /// `sqlparser` (the reference).
    Reference,
    /// Neither could parse it; only hints and pins are known.
    #[default]
    Unparsed,
}

/// A table named by the statement.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TableRef<'a> {
    /// The database qualifier, if written.
    pub schema: Option<Name<'a>>,
    /// The table name.
    pub name: Name<'a>,
    /// The alias, if any.
    pub alias: Option<Name<'a>>,
    /// Explicit `PARTITION (p0, p1)` selection.
    pub partitions: Vec<Name<'a>>,
}

/// The column a key value belongs to.
#[derive(Debug, Clone, PartialEq)]
pub enum Column<'a> {
    /// A named column, with the table name or alias that qualified it.
    Named {
        /// `t` in `t.c = 5`.
        qualifier: Option<Name<'a>>,
        /// The column name.
        name: Name<'a>,
    },
    /// The n-th column of the table (0-based): `INSERT … VALUES` without a column list.
    Position(u16),
}

/// One candidate value of one column. Entries with the same `row` and column are alternatives
/// (an `IN` list); for `INSERT` each row of `VALUES` has its own `row` number.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyValue<'a> {
    /// The column.
    pub column: Column<'a>,
    /// The value.
    pub value: Value<'a>,
    /// The `VALUES` row (0 for `WHERE` and `INSERT … SET`).
    pub row: u32,
}

/// The comparison of a [`RangeKey`]: the column's value is `<`, `<=`, `>`, `>=` the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeOp {
    /// `c < v`
    Lt,
    /// `c <= v` (and the upper end of `BETWEEN`)
    Le,
    /// `c > v`
    Gt,
    /// `c >= v` (and the lower end of `BETWEEN`)
    Ge,
}

impl RangeOp {
    /// The operator seen from the other side (`5 < c` is `c > 5`).
    pub fn flipped(self) -> RangeOp {
        match self {
            RangeOp::Lt => RangeOp::Gt,
            RangeOp::Le => RangeOp::Ge,
            RangeOp::Gt => RangeOp::Lt,
            RangeOp::Ge => RangeOp::Le,
        }
    }
}

/// One comparison of a column with a value under the top-level AND of a `WHERE` (range
/// pruning on RANGE tables).
#[derive(Debug, Clone, PartialEq)]
pub struct RangeKey<'a> {
    /// The column.
    pub column: Column<'a>,
    /// How the column compares with the value.
    pub op: RangeOp,
    /// The value.
    pub value: Value<'a>,
}

/// Strength of a locking read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockStrength {
    /// `FOR UPDATE`.
    Update,
    /// `FOR SHARE` / `LOCK IN SHARE MODE`.
    Share,
}

/// What a locking read does when a row is locked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockWait {
    /// Wait (the default).
    Block,
    /// `NOWAIT`.
    NoWait,
    /// `WAIT n` (seconds).
    Wait(u64),
    /// `SKIP LOCKED`.
    SkipLocked,
}

/// A locking read (`SELECT … FOR UPDATE` and friends): always routed STRONG.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LockRead {
    /// Exclusive or shared.
    pub strength: LockStrength,
    /// Waiting behaviour.
    pub wait: LockWait,
}

/// Small set of flags stored in one byte.
macro_rules! flags {
    ($(#[$doc:meta])* $name:ident { $($(#[$fdoc:meta])* $flag:ident = $bit:expr),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
        pub struct $name(pub u8);
        impl $name {
            $($(#[$fdoc])* pub const $flag: $name = $name(1 << $bit);)*
            /// Whether every flag of `other` is set.
            pub fn contains(self, other: $name) -> bool {
                self.0 & other.0 == other.0
            }
            /// Sets the flags of `other`.
            pub fn insert(&mut self, other: $name) {
                self.0 |= other.0;
            }
            /// Whether no flag is set.
            pub fn is_empty(self) -> bool {
                self.0 == 0
            }
        }
    };
}

flags! {
    /// Reasons the session must stay on its current server connection.
    Pins {
        /// `CREATE TEMPORARY TABLE`.
        TEMP_TABLE = 0,
        /// `LOCK TABLES`.
        LOCK_TABLES = 1,
        /// `GET_LOCK()`, `RELEASE_LOCK()`, `RELEASE_ALL_LOCKS()`, `IS_USED_LOCK()`, `IS_FREE_LOCK()`.
        USER_LOCK = 2,
        /// Reads or assigns a user variable `@v`.
        USER_VAR = 3,
        /// `LAST_INSERT_ID()`.
        LAST_INSERT_ID = 4,
        /// `FOUND_ROWS()`.
        FOUND_ROWS = 5,
        /// `ROW_COUNT()`.
        ROW_COUNT = 6,
    }
}

flags! {
    /// Modifiers of `START TRANSACTION`.
    TxnFlags {
        /// `READ ONLY`.
        READ_ONLY = 0,
        /// `READ WRITE`.
        READ_WRITE = 1,
        /// `WITH CONSISTENT SNAPSHOT`.
        CONSISTENT_SNAPSHOT = 2,
    }
}

flags! {
    /// What a `SET` statement sets.
    SetFlags {
        /// A session (or unqualified) system variable.
        SESSION = 0,
        /// A global system variable.
        GLOBAL = 1,
        /// A user variable `@v`.
        USER = 2,
        /// `SET NAMES`.
        NAMES = 3,
        /// `SET CHARACTER SET` / `SET CHARSET`.
        CHARSET = 4,
        /// `autocommit` (value in [`Analysis::autocommit`]).
        AUTOCOMMIT = 5,
        /// `SET [GLOBAL|SESSION] TRANSACTION …` (isolation level, access mode).
        TRANSACTION = 6,
    }
}

/// Everything routing needs to know about one statement.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Analysis<'a> {
    /// Statement kind.
    pub kind: StmtKind,
    /// Which analyser produced this.
    pub path: Path,
    /// Tables in the order written (the first is the routing table).
    pub tables: SmallVec<[TableRef<'a>; 1]>,
    /// Candidate key values (equalities and `IN` lists under AND, `INSERT` rows).
    pub keys: SmallVec<[KeyValue<'a>; 2]>,
    /// Range comparisons under AND (`<`, `<=`, `>`, `>=`, `BETWEEN`).
    pub ranges: Vec<RangeKey<'a>>,
    /// Routing hints from comments.
    pub hints: Hints<'a>,
    /// Locking read, if any.
    pub lock: Option<LockRead>,
    /// Session pins.
    pub pins: Pins,
    /// `START TRANSACTION` modifiers.
    pub txn: TxnFlags,
    /// What a `SET` sets.
    pub set: SetFlags,
    /// The database of `USE db`.
    pub database: Option<Name<'a>>,
    /// The value of `SET autocommit = …`, when literal.
    pub autocommit: Option<bool>,
    /// Number of `?` placeholders.
    pub placeholders: u32,
    /// Body of `EXPLAIN ROUTE <sql>` or of `PREPARE s FROM '<sql>'`.
    pub inner_sql: Option<Cow<'a, str>>,
    /// Statements in the COM_QUERY text (more than 1: a multi-statement, always STRONG).
    pub statements: u32,
}

impl<'a> Analysis<'a> {
    /// An analysis of the given kind from the given path, everything else empty.
    pub fn new(kind: StmtKind, path: Path) -> Self {
        Analysis { kind, path, statements: 1, ..Analysis::default() }
    }

    /// The first table (the one ODP routes by).
    pub fn table(&self) -> Option<&TableRef<'a>> {
        self.tables.first()
    }

    /// Records a key value.
    pub(crate) fn key(&mut self, column: Column<'a>, value: Value<'a>, row: u32) {
        self.keys.push(KeyValue { column, value, row });
    }

    /// Records `column op value` from a `WHERE` conjunction.
    pub(crate) fn range(&mut self, column: Column<'a>, op: RangeOp, value: Value<'a>) {
        self.ranges.push(RangeKey { column, op, value });
    }

    /// Replaces every `Placeholder(i)` key value by `params[i]` (`Unknown` when missing).
    pub fn bind(&self, params: &[Value<'a>]) -> Analysis<'a> {
        let mut out = self.clone();
        let bound = |v: &mut Value<'a>| {
            if let Value::Placeholder(i) = *v {
                *v = params.get(i as usize).cloned().unwrap_or(Value::Unknown);
            }
        };
        out.keys.iter_mut().for_each(|k| bound(&mut k.value));
        out.ranges.iter_mut().for_each(|r| bound(&mut r.value));
        out
    }
}
