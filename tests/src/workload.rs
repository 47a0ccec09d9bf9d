//! The seeded mixed workload of the routing tests: per client, a deterministic list of statements
//! (point reads strong and weak, DML by key, transactions, IN lists, statements without a table,
//! prepared statements, multi-statements), each marked with a unique `/* q:N */` comment and
//! annotated with where the routing rules say it must run ([`Expect`]) and whether its result is
//! comparable with a single server holding the same data.
//!
//! * [`generate`] builds the lists; [`run`] executes them through any endpoint (gateway or a
//!   single server) and records every outcome; [`check`] confronts the route log, the servers'
//!   general logs and the expectations, and compares outcomes between two runs.
//!
//! Client `c` of `n` owns the keys `k` with `k % n == c` of the written tables: only it writes or
//! strongly reads them, so each client's results do not depend on how clients interleave and the
//! same lists run against a single server give the same results.

pub mod check;
pub mod generate;
pub mod run;
mod shapes;

use std::collections::BTreeSet;

pub use generate::{generate, WorkloadSpec};
pub use run::{run_clients, Outcome};

/// How a statement is sent.
#[derive(Debug, Clone)]
pub enum Stmt {
    /// COM_QUERY (possibly several statements).
    Text(String),
    /// COM_STMT_PREPARE + COM_STMT_EXECUTE (mysql_async `exec`, binary protocol; the driver's
    /// statement cache reuses the prepared statement for the same text).
    Prepared { sql: String, params: Vec<i64> },
}

impl Stmt {
    /// The statement text.
    pub fn sql(&self) -> &str {
        match self {
            Stmt::Text(s) | Stmt::Prepared { sql: s, .. } => s,
        }
    }
}

/// Where a statement must run, per docs/routing.md.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// Strong, the test computed the partition: that partition's leader (docs/routing.md §4).
    Leader(&'static str),
    /// One of these servers (strong on a table whose partition the test does not compute: the
    /// leader of some partition, docs/routing.md §12; weak on the KEY table: a local replica).
    OneOf(BTreeSet<&'static str>),
    /// Weak read: this replica (READONLY_ZONE_FIRST, see `Topology::weak_target`).
    Weak(&'static str),
    /// Inside a transaction: the server that ran the transaction's first statement (marker).
    SameAs(u64),
    /// A `BEGIN` held by the gateway: replayed on the server of the transaction's first statement.
    Begin { first: u64 },
    /// No table: any tenant server (only route log == general log is checked).
    Any,
    /// `SET` / `USE`: the gateway may absorb and replay it; placement not checked.
    Session,
}

/// One workload request.
#[derive(Debug, Clone)]
pub struct Item {
    /// The `q:N` marker in the text; 0 for executions of a reused prepared statement.
    pub marker: u64,
    pub stmt: Stmt,
    pub expect: Expect,
    /// The result must equal the reference run's.
    pub compare: bool,
    /// Executions of a reused prepared statement: its tag (`ps:c:k`), matched by order.
    pub hot: Option<String>,
}

/// A small deterministic generator (splitmix64).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// Seeded.
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }

    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// True with probability `pct` percent.
    pub fn chance(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }

    /// A random element.
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }
}
