//! A conformance table: columns with their value generators, the partition clause, the key columns
//! in the order `gateway locate` takes them, and the session time zone of its TIMESTAMP values.

use super::gen::{self, ValueGen};
use super::model::{Col, Kind};

/// Rows inserted per table unless a table says otherwise (`GATEWAY_CONFORMANCE_ROWS` overrides).
pub const DEFAULT_ROWS: usize = 1000;

/// A generator of whole rows: `(rng, row id) → one INSERT literal per column`.
pub type RowGen = Box<dyn Fn(&mut gen::Rng, u64) -> Vec<String>>;

/// One table of the conformance run.
pub struct TableSpec {
    /// Table name (lower case; the kernel runs with `lower_case_table_names=1`).
    pub name: String,
    /// Columns after the implicit `id INT NOT NULL` (row number, not part of any key).
    pub cols: Vec<Col>,
    /// Value generator per column, parallel to `cols`.
    pub gens: Vec<ValueGen>,
    /// Optional generator of whole rows (overrides `gens`), for correlated values.
    pub row_gen: Option<RowGen>,
    /// Partitioning columns in locate input order: first level's, then the sub level's not
    /// already listed (for `KEY()` the primary-key columns).
    pub key: Vec<String>,
    /// `PARTITION BY …` clause.
    pub partition: String,
    /// `PRIMARY KEY (…)` column list, if any.
    pub primary_key: Option<String>,
    /// Session time zone for inserts and read-back (and `--time-zone` for locate).
    pub time_zone: Option<String>,
    /// Rows to insert.
    pub rows: usize,
    /// Hand `gateway locate` the literals as inserted (`1.555`, `20240115`, `'1 02:03:04'`)
    /// instead of the values read back, so the kernel's conversion of each literal is checked too.
    pub as_inserted: bool,
    /// The class of behaviour the table covers (summed per class at the end of a group).
    pub class: Option<String>,
    /// Statement forms also located per row (`gateway locate --sql`): `{t}` is replaced by the
    /// table's name and `{v}` by the row's key literal (single-key tables); each statement must
    /// land in the partition the kernel stored the row in.
    pub statements: Vec<&'static str>,
}

impl TableSpec {
    /// The `CREATE TABLE` statement.
    pub fn create_sql(&self) -> String {
        let mut defs = vec!["`id` INT NOT NULL".to_string()];
        defs.extend(self.cols.iter().map(Col::ddl));
        if let Some(pk) = &self.primary_key {
            defs.push(format!("PRIMARY KEY ({pk})"));
        }
        format!("CREATE TABLE `{}` (\n  {}\n) {}", self.name, defs.join(",\n  "), self.partition)
    }

    /// The column of a key name.
    pub fn col(&self, name: &str) -> Option<&Col> {
        self.cols.iter().find(|c| c.name == name)
    }

    /// The row with id `id`: one INSERT literal per column.
    pub fn gen_row(&self, rng: &mut gen::Rng, id: u64) -> Vec<String> {
        match &self.row_gen {
            Some(g) => g(rng, id),
            None => self.gens.iter().map(|g| g(rng, id)).collect(),
        }
    }
}

/// Builder: `table("t").col("c1", kind).key(&["c1"]).part("PARTITION BY …").build()`.
pub struct TableBuilder {
    name: String,
    cols: Vec<(Col, Option<ValueGen>)>,
    row_gen: Option<RowGen>,
    key: Vec<String>,
    partition: String,
    primary_key: Option<String>,
    time_zone: Option<String>,
    rows: usize,
    as_inserted: bool,
    class: Option<String>,
    statements: Vec<&'static str>,
}

/// Starts a table.
pub fn table(name: &str) -> TableBuilder {
    let rows = std::env::var("GATEWAY_CONFORMANCE_ROWS").ok().and_then(|v| v.parse().ok()).unwrap_or(DEFAULT_ROWS);
    TableBuilder {
        name: name.to_string(),
        cols: Vec::new(),
        row_gen: None,
        key: Vec::new(),
        partition: String::new(),
        primary_key: None,
        time_zone: None,
        rows,
        as_inserted: false,
        class: None,
        statements: Vec::new(),
    }
}

impl TableBuilder {
    /// A NULL-able column with the type's default generator.
    pub fn col(self, name: &str, kind: Kind) -> Self {
        self.col_with(name, kind, true, None)
    }
    /// A NOT NULL column with the type's default generator (no NULLs).
    pub fn col_nn(self, name: &str, kind: Kind) -> Self {
        self.col_with(name, kind, false, None)
    }
    /// A NULL-able column with its own generator.
    pub fn col_gen(self, name: &str, kind: Kind, g: ValueGen) -> Self {
        self.col_with(name, kind, true, Some(g))
    }
    /// A column with explicit nullability and optional generator.
    pub fn col_with(mut self, name: &str, kind: Kind, nullable: bool, g: Option<ValueGen>) -> Self {
        self.cols.push((Col { name: name.into(), kind, nullable }, g));
        self
    }
    /// Whole-row generator (one literal per column, in column order).
    pub fn rows_from(mut self, g: impl Fn(&mut gen::Rng, u64) -> Vec<String> + 'static) -> Self {
        self.row_gen = Some(Box::new(g));
        self
    }
    /// Key columns in locate input order.
    pub fn key(mut self, cols: &[&str]) -> Self {
        self.key = cols.iter().map(|c| c.to_string()).collect();
        self
    }
    /// The `PARTITION BY …` clause.
    pub fn part(mut self, clause: &str) -> Self {
        self.partition = clause.to_string();
        self
    }
    /// `PRIMARY KEY (cols)`.
    pub fn pk(mut self, cols: &str) -> Self {
        self.primary_key = Some(cols.to_string());
        self
    }
    /// Session time zone (`+08:00`, `-03:30`).
    pub fn tz(mut self, tz: &str) -> Self {
        self.time_zone = Some(tz.to_string());
        self
    }
    /// Locate the inserted literals rather than the stored values (conversion classes).
    pub fn as_inserted(mut self) -> Self {
        self.as_inserted = true;
        self
    }
    /// The class of behaviour the table covers (`"DECIMAL rounding"`).
    pub fn class(mut self, class: &str) -> Self {
        self.class = Some(class.to_string());
        self
    }
    /// Statement forms located per row as well (see [`TableSpec::statements`]).
    pub fn statements(mut self, forms: &[&'static str]) -> Self {
        self.statements = forms.to_vec();
        self
    }
    /// Finishes the table; columns without a generator get the type's default one.
    pub fn build(self) -> TableSpec {
        let tz_secs = self.time_zone.as_deref().map(tz_offset_secs).unwrap_or(8 * 3600);
        let mut cols = Vec::new();
        let mut gens = Vec::new();
        for (c, g) in self.cols {
            gens.push(g.unwrap_or_else(|| gen::any(c.kind, c.nullable, tz_secs)));
            cols.push(c);
        }
        TableSpec {
            name: self.name,
            cols,
            gens,
            row_gen: self.row_gen,
            key: self.key,
            partition: self.partition,
            primary_key: self.primary_key,
            time_zone: self.time_zone,
            rows: self.rows,
            as_inserted: self.as_inserted,
            class: self.class,
            statements: self.statements,
        }
    }
}

/// Seconds east of UTC of `+hh:mm` / `-hh:mm`.
pub fn tz_offset_secs(tz: &str) -> i64 {
    let (sign, rest) = match tz.as_bytes().first() {
        Some(b'-') => (-1, &tz[1..]),
        Some(b'+') => (1, &tz[1..]),
        _ => (1, tz),
    };
    let (h, m) = rest.split_once(':').unwrap_or((rest, "0"));
    sign * (h.parse::<i64>().unwrap_or(0) * 3600 + m.parse::<i64>().unwrap_or(0) * 60)
}
