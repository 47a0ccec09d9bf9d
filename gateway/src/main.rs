//! The `gateway` command line: run the daemon, check a config.

use std::path::PathBuf;

use anyhow::Context;
use clap::{Parser, Subcommand};

/// Transparent routing gateway for OceanBase and MySQL-protocol traffic.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the gateway: accept clients, authenticate them and proxy their commands to the backend.
    Run {
        /// Path of the TOML configuration file (every field is documented in README.md).
        #[arg(long, short = 'c')]
        config: PathBuf,
    },
    /// Validate a configuration file and exit: status 0 if it is usable, else a message and 1.
    CheckConfig {
        /// Path of the TOML configuration file to check.
        #[arg(long, short = 'c')]
        config: PathBuf,
    },
    /// Dry-run the routing of one statement against the configured topology and print the
    /// EXPLAIN ROUTE trace (no server is contacted).
    Route {
        /// Path of the TOML configuration file; its [routing] section gives the topology.
        #[arg(long, short = 'c')]
        config: PathBuf,
        /// Tenant of the session (default: routing.default_tenant).
        #[arg(long)]
        tenant: Option<String>,
        /// Current database of the session.
        #[arg(long, short = 'D')]
        database: Option<String>,
        /// The statement to route.
        sql: String,
    },
    /// Print the OceanBase partition of rows of key values for a CREATE TABLE statement.
    Locate(gateway::partition::cli::LocateArgs),
    /// Inspect the eBPF data plane of a running gateway (`status`).
    Dataplane(gateway::dataplane::modes::cli::DataplaneArgs),
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Locate(args) => {
            // A DDL that does not parse is a plain message and status 2 (no backtrace).
            let stdin = std::io::stdin();
            if let Err(e) = gateway::partition::cli::run(&args, stdin.lock(), &mut std::io::stdout().lock()) {
                eprintln!("gateway locate: {e}");
                std::process::exit(2);
            }
            Ok(())
        }
        Command::Dataplane(args) => {
            gateway::dataplane::modes::cli::run(&args, &mut std::io::stdout().lock())?;
            Ok(())
        }
        Command::Run { config } => {
            let config = gateway::config::Config::load(&config)?;
            init_logging(&config.log.level);
            let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("tokio runtime")?;
            rt.block_on(gateway::server::run(config))?;
            Ok(())
        }
        Command::Route { config, tenant, database, sql } => {
            let config = gateway::config::Config::load(&config)?;
            let routing = config.routing.as_ref().context("the config has no [routing] section")?;
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().context("tokio runtime")?;
            let text = rt.block_on(async {
                let planner = gateway::planner::Planner::from_config(routing).await?;
                let ctx = gateway::planner::StatementContext {
                    tenant: tenant.unwrap_or_else(|| routing.default_tenant.clone()),
                    database,
                    autocommit: true,
                    ..Default::default()
                };
                let planned = planner.plan(&sql, &ctx).await;
                anyhow::Ok(gateway::planner::render_explain(&sql, &planned))
            })?;
            print!("{text}");
            Ok(())
        }
        Command::CheckConfig { config } => {
            gateway::config::Config::load(&config)?;
            println!("{}: ok", config.display());
            Ok(())
        }
    }
}

fn init_logging(level: &str) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    use std::io::IsTerminal;
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr)
        .init();
}
