//! The `gateway` command line: run the daemon, check a config.

use std::path::PathBuf;

use anyhow::Context;
use clap::{Parser, Subcommand};

/// jemalloc, so that memory freed after a connection storm goes back to the system (why this
/// allocator: gateway/Cargo.toml).
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's options, read once at its start-up (the `MALLOC_CONF` of the prefixed build): a
/// background thread purges dirty pages after 1 s, with `MADV_DONTNEED` at once (no lazily
/// freed "muzzy" stage, whose pages would still count in RSS).
#[allow(non_upper_case_globals)]
#[export_name = "_rjem_malloc_conf"]
pub static malloc_conf: &[u8; 60] = b"background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0\0";

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
            let live = gateway::live_config::LiveConfig::load(&config)?;
            let start = live.get();
            if let Some(apply) = init_logging(&start.log.level) {
                live.set_log_filter(apply);
            }
            let rt = runtime(start.listen.worker_threads).context("tokio runtime")?;
            drop(start);
            rt.block_on(gateway::server::run(live))?;
            // Sessions cut at the end of the grace period must not hold the exit up.
            rt.shutdown_timeout(std::time::Duration::from_secs(1));
            Ok(())
        }
        Command::Route { config, tenant, database, sql } => {
            let config = gateway::config::Config::load(&config)?;
            let routing = config.routing.as_ref().context("the config has no [routing] section")?;
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().context("tokio runtime")?;
            let text = rt.block_on(async {
                let planner = gateway::planner::Planner::from_config(routing).await?;
                let ctx = gateway::planner::StatementContext {
                    tenant: tenant.unwrap_or_else(|| routing.default_tenant.clone()).into(),
                    database: database.map(Into::into),
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

/// The daemon's runtime (`[listen] worker_threads`, else [`default_workers`]): one thread runs
/// everything on the main thread (current-thread runtime), otherwise a work-stealing pool.
fn runtime(worker_threads: Option<usize>) -> std::io::Result<tokio::runtime::Runtime> {
    match worker_threads.unwrap_or_else(default_workers) {
        0 | 1 => tokio::runtime::Builder::new_current_thread().enable_all().build(),
        n => tokio::runtime::Builder::new_multi_thread().worker_threads(n).enable_all().build(),
    }
}

/// Worker threads when the configuration does not say: `TOKIO_WORKER_THREADS` if set, else one
/// per two CPUs, at least one. The gateway shares the application's host: each statement costs
/// two socket wake-ups, and on a small host a second worker mostly adds wake-ups across threads
/// (measured on 2 CPUs under sysbench: 1.7 vs 1.2 context switches and ~30 % more system time per
/// statement with two workers than with one).
fn default_workers() -> usize {
    if let Some(n) = std::env::var("TOKIO_WORKER_THREADS").ok().and_then(|v| v.trim().parse::<usize>().ok()) {
        return n.max(1);
    }
    let cpus = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    (cpus / 2).max(1)
}

/// Installs the log subscriber; returns how to change `log.level` at runtime (none when
/// `RUST_LOG` decides the filter).
fn init_logging(level: &str) -> Option<gateway::live_config::LogFilter> {
    use std::io::IsTerminal;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    use tracing_subscriber::EnvFilter;
    let from_env = EnvFilter::try_from_default_env().ok();
    let fixed = from_env.is_some();
    let filter = from_env.unwrap_or_else(|| EnvFilter::new(level));
    let (filter, handle) = tracing_subscriber::reload::Layer::new(filter);
    let fmt = tracing_subscriber::fmt::layer()
        .with_target(false)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    tracing_subscriber::registry().with(filter).with(fmt).init();
    (!fixed).then(|| -> gateway::live_config::LogFilter {
        Box::new(move |level: &str| {
            let f = EnvFilter::try_new(level).map_err(|e| e.to_string())?;
            handle.reload(f).map_err(|e| e.to_string())
        })
    })
}
