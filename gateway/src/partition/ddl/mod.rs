//! A reader for `CREATE TABLE` as `SHOW CREATE TABLE` prints it (OceanBase, MySQL, MariaDB).

pub(crate) mod lexer;
mod parser;
mod partitions;
#[cfg(test)]
mod tests;

pub use parser::parse_create_table;
