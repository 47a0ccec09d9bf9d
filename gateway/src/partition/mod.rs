//! OceanBase 4.x MySQL-mode partition calculation, bit for bit (docs/partition.md).
//!
//! `ddl::parse_create_table` (or a metadata source) builds a `TableScheme`; `locate` turns the key
//! values of a row into a `Location` (partition index, name, tablet); `locate_by_name` resolves an
//! explicit `PARTITION (p3)`. Anything that cannot be calculated exactly is a `PartitionError`.

pub mod cast;
pub mod cli;
pub(crate) mod collation;
pub(crate) mod ddl;
pub(crate) mod decimal;
pub(crate) mod expr;
mod general_ci_table;
pub(crate) mod hash;
pub mod locate;
pub(crate) mod murmur;
pub(crate) mod range;
pub(crate) mod scheme;
pub(crate) mod statement;
pub(crate) mod temporal;
pub(crate) mod value;

#[cfg(test)]
mod tests;

pub use cast::CastContext;
pub use collation::Collation;
pub use ddl::parse_create_table;
pub use locate::{locate, locate_by_name, locate_traced, Location};
pub use scheme::{BoundSpec, Column, ColumnType, Level, PartExpr, PartFunc, Partition, SubPartition, TableScheme};
pub use statement::locate_statement;
pub use value::{Datum, KeyValue};

/// Why a partition cannot be calculated (the row is "unknown", never guessed).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PartitionError {
    /// The CREATE TABLE text (or a literal) does not parse.
    #[error("cannot parse at byte {pos}: {msg}")]
    Ddl {
        /// Byte offset in the input.
        pos: usize,
        /// What was expected.
        msg: String,
    },
    /// A table feature outside what the gateway calculates (collation, type, expression …).
    #[error("cannot calculate: {0}")]
    Unsupported(String),
    /// A value that does not cast exactly to its column.
    #[error("cannot cast {0}")]
    Cast(String),
    /// Wrong number of key values.
    #[error("expected {expected} key values, got {got}")]
    Arity {
        /// Key columns of the table.
        expected: usize,
        /// Values given.
        got: usize,
    },
    /// RANGE above the last bound, LIST value not listed and no DEFAULT.
    #[error("no partition for value")]
    NoPartition,
    /// `PARTITION (name)` names no partition of the table.
    #[error("unknown partition '{0}'")]
    UnknownName(String),
    /// Command-line input that cannot be read.
    #[error("{0}")]
    Input(String),
}
