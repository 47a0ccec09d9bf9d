//! `gateway locate`: print the partition of rows of key values for a CREATE TABLE.

use std::io::{BufRead, Write};
use std::path::PathBuf;

use super::cast::CastContext;
use super::ddl::parse_create_table;
use super::locate::locate_traced;
use super::scheme::TableScheme;
use super::temporal::parse_offset;
use super::value::KeyValue;
use super::PartitionError;

/// Options of `gateway locate`.
#[derive(clap::Args, Debug)]
pub struct LocateArgs {
    /// The CREATE TABLE statement (as SHOW CREATE TABLE prints it on OceanBase, MySQL or MariaDB).
    #[arg(long, conflicts_with = "ddl_file", required_unless_present = "ddl_file")]
    pub ddl: Option<String>,
    /// A file holding the CREATE TABLE statement.
    #[arg(long)]
    pub ddl_file: Option<PathBuf>,
    /// Session time zone as `+HH:MM` / `-HH:MM`; TIMESTAMP keys are placed by their UTC instant.
    #[arg(long, default_value = "+00:00", allow_hyphen_values = true)]
    pub time_zone: String,
    /// Read rows from standard input, one per line, instead of VALUE arguments.
    #[arg(long)]
    pub batch: bool,
    /// After each result, print the trace (cast values, bytes hashed, hashes, moduli), indented.
    #[arg(long)]
    pub explain: bool,
    /// Each row is an SQL statement on the table (`SELECT … WHERE c >= '2024-01-01' AND c <
    /// '2024-02-01'`) instead of key values: prints the one partition the statement touches as
    /// the router computes it (equalities, IN lists, INSERT rows, ranges on RANGE tables).
    #[arg(long)]
    pub sql: bool,
    /// Rows of key values: SQL literals separated by commas, in the order the columns appear in
    /// the partition expression(s): the first level's, then the sub level's not already listed;
    /// for `KEY()` (no column list) the primary-key columns in `PRIMARY KEY (…)` order, although
    /// the kernel hashes them in table column order (e.g. `42, 'abc'`, `NULL`,
    /// `'2024-02-29 12:00:00'`, `X'00ff'`).
    #[arg(allow_hyphen_values = true)]
    pub values: Vec<String>,
}

/// Runs the command: one output line per row (`p1sp2 1 2`, `p3 3` or `unknown: <reason>`).
/// Fails only on an unreadable or unparsable DDL, a bad time zone, or I/O errors.
pub fn run(args: &LocateArgs, input: impl BufRead, out: &mut impl Write) -> Result<(), PartitionError> {
    let ddl = match (&args.ddl, &args.ddl_file) {
        (Some(d), _) => d.clone(),
        (None, Some(f)) => {
            std::fs::read_to_string(f).map_err(|e| PartitionError::Input(format!("reading {}: {e}", f.display())))?
        }
        (None, None) => return Err(PartitionError::Input("--ddl or --ddl-file is required".into())),
    };
    let scheme = parse_create_table(&ddl)?;
    let ctx = CastContext { tz_offset_secs: parse_offset(&args.time_zone)? };
    let io = |e: std::io::Error| PartitionError::Input(format!("output: {e}"));
    if args.batch {
        for line in input.lines() {
            let line = line.map_err(|e| PartitionError::Input(format!("reading rows: {e}")))?;
            if !line.trim().is_empty() {
                row(&scheme, &line, &ctx, args, out).map_err(io)?;
            }
        }
    } else {
        for v in &args.values {
            row(&scheme, v, &ctx, args, out).map_err(io)?;
        }
    }
    out.flush().map_err(io)
}

fn row(
    scheme: &TableScheme,
    text: &str,
    ctx: &CastContext,
    args: &LocateArgs,
    out: &mut impl Write,
) -> std::io::Result<()> {
    let explain = args.explain;
    let mut trace = Vec::new();
    let result = if args.sql {
        statement(scheme, text, ctx)
    } else {
        KeyValue::parse_row(text).and_then(|values| locate_traced(scheme, &values, ctx, &mut trace))
    };
    match result {
        Ok(loc) => writeln!(out, "{loc}")?,
        Err(e) => writeln!(out, "unknown: {e}")?,
    }
    if explain {
        for line in trace {
            writeln!(out, "  {line}")?;
        }
    }
    Ok(())
}

/// The partition an SQL statement touches in its first table.
fn statement(scheme: &TableScheme, sql: &str, ctx: &CastContext) -> Result<super::Location, PartitionError> {
    let analysis = crate::sql::analyze(sql);
    let table = analysis.table().ok_or_else(|| PartitionError::Input("the statement names no table".into()))?;
    super::locate_statement(scheme, &analysis, table, ctx)
}
