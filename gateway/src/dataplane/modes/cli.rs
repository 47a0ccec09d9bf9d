//! `gateway dataplane …` subcommands: `status` asks a running daemon for its data-plane state
//! through its metrics endpoint and prints the report of [`DataplaneStatus::report`].

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use super::super::status::DataplaneStatus;
use super::super::DataplaneError;
use super::metrics;
use crate::config::Config;

/// `gateway dataplane` arguments.
#[derive(Debug, clap::Args)]
pub struct DataplaneArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: DataplaneCommand,
}

/// `gateway dataplane` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum DataplaneCommand {
    /// Show the running daemon's data plane: mode, attached programs, map sizes, steering events,
    /// spliced connections, bytes forwarded in the kernel, budget fallbacks.
    Status {
        /// Configuration of the daemon; its `[dataplane] metrics_address` is queried.
        #[arg(long, short = 'c')]
        config: Option<PathBuf>,
        /// Metrics endpoint to query (overrides the configuration's).
        #[arg(long)]
        address: Option<SocketAddr>,
        /// Print the raw Prometheus text instead of the report.
        #[arg(long)]
        raw: bool,
    },
}

/// How long the status command waits for the daemon.
const TIMEOUT: Duration = Duration::from_secs(5);

/// Runs a `gateway dataplane` subcommand, writing to `out`.
pub fn run(args: &DataplaneArgs, out: &mut impl Write) -> Result<(), DataplaneError> {
    match &args.command {
        DataplaneCommand::Status { config, address, raw } => status(config.as_ref(), *address, *raw, out),
    }
}

fn status(
    config: Option<&PathBuf>,
    address: Option<SocketAddr>,
    raw: bool,
    out: &mut impl Write,
) -> Result<(), DataplaneError> {
    let from_config = match config {
        Some(path) => {
            let cfg = Config::load(path).map_err(|e| DataplaneError::Config(e.to_string()))?;
            cfg.dataplane.and_then(|d| d.metrics_address)
        }
        None => None,
    };
    let addr = address.or(from_config).ok_or_else(|| {
        DataplaneError::Config(match config {
            Some(p) => format!("{} sets no [dataplane] metrics_address (and no --address was given)", p.display()),
            None => "give --config FILE (with [dataplane] metrics_address) or --address HOST:PORT".into(),
        })
    })?;
    let text = metrics::fetch(addr, TIMEOUT)?;
    let write_err = |e: std::io::Error| DataplaneError::Status(format!("writing the report: {e}"));
    if raw {
        return out.write_all(text.as_bytes()).map_err(write_err);
    }
    let status = DataplaneStatus::from_prometheus(&text).map_err(|e| DataplaneError::Status(format!("{addr}: {e}")))?;
    writeln!(out, "daemon:           http://{addr}/metrics").map_err(write_err)?;
    out.write_all(status.report().as_bytes()).map_err(write_err)
}
