//! A multi-zone cluster of real MariaDB servers behind one routing gateway: each server plays a
//! full replica of every table (same schema, same rows), the gateway routes per statement with a
//! static topology written by the test, and every server keeps a general log, so a test can see
//! where each statement actually ran and compare it with the gateway's route log.
//!
//! * [`Topology`] — the layout (zones, servers, tables, placement) and the test's own routing
//!   oracle (partition of a key, leaders, weak-read target).
//! * [`Cluster`] — the running servers and gateway; kill / restart a server by name.
//! * [`start_reference`] — one extra MariaDB with the same schema and rows, no gateway: what the
//!   workload's results are compared with.

pub mod route_log;
pub mod schema;
pub mod topology;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;

pub use route_log::RouteRecord;
pub use topology::{Partitioning, Placement, TableSpec, Topology};

use crate::general_log::{self, MarkerIndex};
use crate::{Gateway, GatewayConfig, MariaDb, MariaDbOptions, UserEntry};

/// The account the gateway and the tests log in with (created on every server with a password).
pub const APP_USER: &str = "app";
/// Its password.
pub const APP_PASSWORD: &str = "app-Pw.7";

/// What to start.
#[derive(Debug, Clone)]
pub struct ClusterOptions {
    /// Prefix of the servers' directory names.
    pub name: &'static str,
    /// sysbench tables `sbtest.sbtest1..n` in the topology (prepared on every server by the test).
    pub sbtest_tables: u32,
    /// General log on every server.
    pub general_log: bool,
    /// Extra TOML appended to the gateway configuration (pool size, timers).
    pub extra_toml: String,
}

impl ClusterOptions {
    /// General log on, no sysbench tables, no extra configuration.
    pub fn new(name: &'static str) -> Self {
        ClusterOptions { name, sbtest_tables: 0, general_log: true, extra_toml: String::new() }
    }
}

/// The running cluster.
pub struct Cluster {
    /// Layout and oracle.
    pub topology: Topology,
    /// The gateway (dropped before the servers).
    pub gw: Gateway,
    servers: Vec<(String, MariaDb)>,
    route_log: PathBuf,
}

/// The small MariaDB variant of docs/architecture.md §3, with real grants.
pub fn server_options(general_log: bool) -> MariaDbOptions {
    MariaDbOptions {
        general_log,
        max_allowed_packet: "64M".into(),
        buffer_pool: "32M".into(),
        extra_args: [
            "--innodb-log-buffer-size=1M",
            "--key-buffer-size=1M",
            "--performance-schema=OFF",
            "--innodb-flush-log-at-trx-commit=2",
        ]
        .map(String::from)
        .to_vec(),
        tls: None,
    }
}

/// Loads the schema and rows of `topology` into `db` and creates the app account there.
fn provision(db: &MariaDb, topology: &Topology) -> anyhow::Result<()> {
    db.create_user(APP_USER, APP_PASSWORD)?;
    for script in schema::scripts(&schema::statements(topology)) {
        db.cli().sql(&script).with_context(|| format!("loading the schema on {}", db.name()))?;
    }
    Ok(())
}

/// Starts one MariaDB per topology server (in parallel), provisioned identically.
fn start_servers(opts: &ClusterOptions, topology: &Topology) -> anyhow::Result<Vec<(String, MariaDb)>> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = topology
            .server_names()
            .into_iter()
            .map(|name| {
                scope.spawn(move || -> anyhow::Result<(String, MariaDb)> {
                    let db = MariaDb::start_with(&format!("{}-{name}", opts.name), server_options(opts.general_log))?;
                    provision(&db, topology)?;
                    Ok((name.to_string(), db))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().map_err(|_| anyhow::anyhow!("server start panicked"))?).collect()
    })
}

/// One MariaDB with the same schema and initial rows as every cluster server, no gateway.
pub fn start_reference(name: &str, topology: &Topology) -> anyhow::Result<MariaDb> {
    let db = MariaDb::start_with(name, server_options(false))?;
    provision(&db, topology)?;
    Ok(db)
}

impl Cluster {
    /// Starts the servers, writes the topology, starts the gateway routing over them.
    pub fn start(opts: ClusterOptions) -> anyhow::Result<Cluster> {
        let topology = Topology::standard(opts.sbtest_tables);
        let servers = start_servers(&opts, &topology)?;
        let dir = crate::scratch_dir(&format!("{}-cluster", opts.name))?;
        let addrs: HashMap<String, SocketAddr> = servers.iter().map(|(n, db)| (n.clone(), db.addr())).collect();
        let topo_path = dir.join("topology.toml");
        std::fs::write(&topo_path, topology.to_toml(&addrs))?;
        let route_log = dir.join("route.jsonl");
        let backend = servers.first().map(|(_, db)| db.addr()).context("no servers")?;
        let mut toml = GatewayConfig::new(backend)?.user(UserEntry::native(APP_USER, APP_PASSWORD)).to_toml();
        toml += &format!(
            "\n[routing]\ntopology = {:?}\nidc = {:?}\nseed = 11\nroute_log = {:?}\n",
            topo_path.display().to_string(),
            topology.idc,
            route_log.display().to_string()
        );
        toml += &opts.extra_toml;
        let gw = Gateway::start(&toml)?;
        Ok(Cluster { topology, gw, servers, route_log })
    }

    /// The server named `name` (`s1` …).
    pub fn server(&self, name: &str) -> &MariaDb {
        self.servers.iter().find(|(n, _)| n == name).map(|(_, db)| db).unwrap_or_else(|| panic!("no server {name}"))
    }

    /// Every server with its name.
    pub fn servers(&self) -> impl Iterator<Item = (&str, &MariaDb)> {
        self.servers.iter().map(|(n, db)| (n.as_str(), db))
    }

    /// The topology name of the server at `addr`.
    pub fn name_of(&self, addr: SocketAddr) -> Option<&str> {
        self.servers.iter().find(|(_, db)| db.addr() == addr).map(|(n, _)| n.as_str())
    }

    /// A mysql_async URL through the gateway as the app account.
    pub fn gw_url(&self, db: Option<&str>) -> String {
        self.gw.url(APP_USER, APP_PASSWORD, db)
    }

    /// Runs `sql` as root on every server.
    pub fn on_every_server(&self, sql: &str) -> anyhow::Result<()> {
        for (_, db) in &self.servers {
            db.cli().sql(sql)?;
        }
        Ok(())
    }

    /// The gateway's route log so far.
    pub fn route_log(&self) -> Vec<RouteRecord> {
        route_log::read(&self.route_log)
    }

    /// Every server's general log so far, by server name.
    pub fn general_logs(&self) -> Vec<(String, Vec<general_log::Entry>)> {
        self.servers.iter().map(|(n, db)| (n.clone(), general_log::read(&db.general_log_path()))).collect()
    }

    /// Where each workload marker ran, over all servers' general logs.
    pub fn marker_index(&self) -> MarkerIndex {
        let logs = self.general_logs();
        MarkerIndex::build(logs.iter().map(|(n, e)| (n.as_str(), e.as_slice())))
    }

    /// SIGKILLs server `name` (a crash).
    pub fn kill(&mut self, name: &str) -> anyhow::Result<()> {
        self.server_mut(name).kill()
    }

    /// Restarts server `name` on its data directory and port.
    pub fn restart(&mut self, name: &str) -> anyhow::Result<()> {
        self.server_mut(name).restart()
    }

    fn server_mut(&mut self, name: &str) -> &mut MariaDb {
        self.servers.iter_mut().find(|(n, _)| n == name).map(|(_, db)| db).unwrap_or_else(|| panic!("no server {name}"))
    }

    /// Tail of the gateway log, for assertion messages.
    pub fn gw_log(&self) -> String {
        self.gw.log_tail(6000)
    }
}
