//! A multi-zone cluster of real MariaDB servers behind one routing gateway: each server plays a
//! full replica of every table (same schema, same rows), the gateway routes per statement with a
//! static topology written by the test, and every server keeps a general log, so a test can see
//! where each statement actually ran and compare it with the gateway's route log.
//!
//! * [`Topology`] — the layout (zones, servers, tables, placement) and the test's own routing
//!   oracle (partition of a key, leaders, weak-read target).
//! * [`Layout`] — the standard layout above, or the gateway's embedded demo topology.
//! * [`Servers`] — the servers started and provisioned, before the gateway (a test adds its tables
//!   and accounts, or puts a stand-in at a server's address).
//! * [`Cluster`] — the running servers and gateway; kill / restart a server by name.
//! * [`start_reference`] — one extra MariaDB with the same schema and rows, no gateway: what the
//!   workload's results are compared with.

pub mod route_log;
pub mod schema;
pub mod topology;

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context;

pub use route_log::RouteRecord;
pub use topology::{Partitioning, Placement, TableSpec, Topology};

use crate::general_log::{self, MarkerIndex};
use crate::workload::check::Evidence;
use crate::workload::Item;
use crate::{Gateway, GatewayConfig, MariaDb, MariaDbOptions, UserEntry};

/// The account the gateway and the tests log in with (created on every server with a password).
pub const APP_USER: &str = "app";
/// Its password.
pub const APP_PASSWORD: &str = "app-Pw.7";

/// What the servers play, and how the gateway learns the layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// [`Topology::standard`] with `sbtest_tables` sysbench tables `sbtest.sbtest1..n` (prepared on
    /// every server by the test): its schema and rows on every server, the topology written to a
    /// file, a route log, and the test's own oracle ([`Cluster::topology`]). Small servers
    /// ([`server_options`]).
    Standard {
        /// How many sysbench tables the topology declares.
        sbtest_tables: u32,
    },
    /// [`Topology::normal`]: the standard layout without read-only zones.
    Normal,
    /// The gateway's embedded demo topology (`topology = "demo"`, IDC idc1, seed 3): servers
    /// s1–s3, each with the HASH(c1) table `test.t0` (rows 0 and 123). Full-size servers
    /// ([`MariaDbOptions::default`]): the large-packet tests need their packet size.
    Demo,
}

/// What to start.
#[derive(Debug, Clone)]
pub struct ClusterOptions {
    /// Prefix of the servers' directory names.
    pub name: String,
    /// The layout.
    pub layout: Layout,
    /// General log on every server.
    pub general_log: bool,
    /// Native-password accounts created on every server (all privileges). The standard layout
    /// always has [`APP_USER`]; [`Cluster::start`] adds it to the demo layout.
    pub accounts: Vec<(String, String)>,
    /// Extra `mariadbd` arguments for every server (`--autocommit=0`).
    pub server_args: Vec<String>,
    /// TLS on every server (its certificate, key and CA); `None`: plain TCP.
    pub tls: Option<crate::tls::ServerTlsFiles>,
    /// Extra TOML appended to the gateway configuration by [`Cluster::start`] (pool size, timers).
    pub extra_toml: String,
    /// Extra keys of the gateway's `[routing]` table (`proxy_primary_zone_name = "zone3"`).
    pub routing_toml: String,
}

impl ClusterOptions {
    /// The standard layout without sysbench tables, general log on, no extra configuration.
    pub fn new(name: &str) -> Self {
        ClusterOptions {
            name: name.to_string(),
            layout: Layout::Standard { sbtest_tables: 0 },
            general_log: true,
            accounts: Vec::new(),
            server_args: Vec::new(),
            tls: None,
            extra_toml: String::new(),
            routing_toml: String::new(),
        }
    }

    /// The demo layout, general log on.
    pub fn demo(name: &str) -> Self {
        ClusterOptions { layout: Layout::Demo, ..Self::new(name) }
    }

    /// Adds a native-password account on every server.
    pub fn account(mut self, user: &str, password: &str) -> Self {
        self.accounts.push((user.to_string(), password.to_string()));
        self
    }
}

/// Servers started and provisioned, before a gateway routes over them: a test adds its own tables
/// and accounts ([`Servers::on_every_server`]), then [`Servers::route`] starts the gateway.
pub struct Servers {
    topology: Option<Topology>,
    servers: Vec<(String, MariaDb)>,
    /// What the gateway is told each server's address is (a test may put a stand-in there).
    addresses: Vec<(String, SocketAddr)>,
    name: String,
}

/// The running cluster.
pub struct Cluster {
    topology: Option<Topology>,
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

/// The demo layout's table.
fn provision_demo(db: &MariaDb) -> anyhow::Result<()> {
    db.sql(
        "CREATE TABLE t0 (c1 INT NOT NULL, c2 VARCHAR(64)) PARTITION BY HASH(c1) PARTITIONS 8; \
         INSERT INTO t0 VALUES (0,'a'),(123,'a'); COMMIT",
    )?;
    Ok(())
}

/// Starts one MariaDB per server name (in parallel), each provisioned by `provision`.
fn start_servers(
    prefix: &str,
    names: &[&str],
    options: &MariaDbOptions,
    provision: &(dyn Fn(&MariaDb) -> anyhow::Result<()> + Sync),
) -> anyhow::Result<Vec<(String, MariaDb)>> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = names
            .iter()
            .map(|name| {
                scope.spawn(move || -> anyhow::Result<(String, MariaDb)> {
                    let db = MariaDb::start_with(&format!("{prefix}-{name}"), options.clone())?;
                    provision(&db)?;
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

impl Servers {
    /// Starts and provisions the servers of `opts.layout`, with `opts.accounts` on each.
    pub fn start(opts: &ClusterOptions) -> anyhow::Result<Servers> {
        let accounts = |db: &MariaDb| -> anyhow::Result<()> {
            for (user, password) in &opts.accounts {
                db.create_user(user, password)?;
            }
            Ok(())
        };
        let (topology, servers) = match opts.layout {
            Layout::Standard { .. } | Layout::Normal => {
                let topology = match opts.layout {
                    Layout::Standard { sbtest_tables } => Topology::standard(sbtest_tables),
                    _ => Topology::normal(),
                };
                let names = topology.server_names();
                let provision = |db: &MariaDb| provision(db, &topology).and_then(|()| accounts(db));
                let mut options = server_options(opts.general_log);
                options.extra_args.extend(opts.server_args.iter().cloned());
                options.tls = opts.tls.clone();
                let servers = start_servers(&opts.name, &names, &options, &provision)?;
                (Some(topology), servers)
            }
            Layout::Demo => {
                let options = MariaDbOptions {
                    general_log: opts.general_log,
                    extra_args: opts.server_args.clone(),
                    tls: opts.tls.clone(),
                    ..MariaDbOptions::default()
                };
                let provision = |db: &MariaDb| provision_demo(db).and_then(|()| accounts(db));
                (None, start_servers(&opts.name, &["s1", "s2", "s3"], &options, &provision)?)
            }
        };
        let addresses = servers.iter().map(|(n, db)| (n.clone(), db.addr())).collect();
        Ok(Servers { topology, servers, addresses, name: opts.name.clone() })
    }

    /// The first server (s1): the gateway configuration's `[backend]`, and where the demo
    /// topology's primary zone runs statements without a table.
    pub fn first(&self) -> &MariaDb {
        &self.servers[0].1
    }

    /// Every server with its name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &MariaDb)> {
        self.servers.iter().map(|(n, db)| (n.as_str(), db))
    }

    /// Runs `sql` as root on every server.
    pub fn on_every_server(&self, sql: &str) -> anyhow::Result<()> {
        for (_, db) in &self.servers {
            db.sql(sql)?;
        }
        Ok(())
    }

    /// Stops server `name` and tells the gateway that `addr` is that server (a black hole, a
    /// proxy in between).
    pub fn stand_in(&mut self, name: &str, addr: SocketAddr) {
        self.servers.retain(|(n, _)| n != name);
        for (n, a) in &mut self.addresses {
            if n == name {
                *a = addr;
            }
        }
    }

    /// A gateway configuration whose `[backend]` is the first server, with no accounts.
    pub fn gateway_config(&self) -> anyhow::Result<GatewayConfig> {
        GatewayConfig::new(self.first().addr())
    }

    /// Starts the gateway with `gateway_toml` (everything but the `[routing]` table) and the
    /// `[routing]` table of the layout.
    pub fn route(self, gateway_toml: &str) -> anyhow::Result<Cluster> {
        self.route_with(gateway_toml, "")
    }

    /// [`Servers::route`] with `routing_toml` added to the `[routing]` table.
    pub fn route_with(self, gateway_toml: &str, routing_toml: &str) -> anyhow::Result<Cluster> {
        let addrs: Vec<String> = self.addresses.iter().map(|(n, a)| format!("{n} = \"{a}\"")).collect();
        let addrs = addrs.join(", ");
        let dir = crate::scratch_dir(&format!("{}-cluster", self.name))?;
        let route_log = dir.join("route.jsonl");
        let log = route_log.display().to_string();
        let routing = match &self.topology {
            Some(topology) => {
                let topo_path = dir.join("topology.toml");
                let addresses: HashMap<String, SocketAddr> = self.addresses.iter().cloned().collect();
                std::fs::write(&topo_path, topology.to_toml(&addresses))?;
                let topo = topo_path.display().to_string();
                format!("[routing]\ntopology = {topo:?}\nidc = {:?}\nseed = 11\nroute_log = {log:?}\n", topology.idc)
            }
            None => format!(
                "[routing]\ntopology = \"demo\"\nidc = \"idc1\"\nseed = 3\nroute_log = {log:?}\n\
                 server_addresses = {{ {addrs} }}\n"
            ),
        };
        let gw = Gateway::start(&format!("{gateway_toml}\n{routing}{routing_toml}\n"))?;
        Ok(Cluster { topology: self.topology, gw, servers: self.servers, route_log })
    }
}

impl Servers {
    /// [`Servers::route`] with the default configuration of [`Servers::gateway_config`].
    pub fn route_default(self) -> anyhow::Result<Cluster> {
        let toml = self.gateway_config()?.to_toml();
        self.route(&toml)
    }
}

impl Cluster {
    /// Starts the servers of `opts`, then the gateway routing over them with the app account and
    /// `opts.extra_toml`.
    pub fn start(mut opts: ClusterOptions) -> anyhow::Result<Cluster> {
        if opts.layout == Layout::Demo && !opts.accounts.iter().any(|(user, _)| user == APP_USER) {
            opts = opts.account(APP_USER, APP_PASSWORD);
        }
        let servers = Servers::start(&opts)?;
        let config = servers.gateway_config()?.user(UserEntry::native(APP_USER, APP_PASSWORD));
        servers.route_with(&format!("{}\n{}", config.to_toml(), opts.extra_toml), &opts.routing_toml)
    }

    /// The layout and the test's oracle (the standard layout only: the demo topology is the
    /// gateway's own).
    pub fn topology(&self) -> &Topology {
        self.topology.as_ref().unwrap_or_else(|| panic!("the demo layout has no oracle"))
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

    /// The first server (s1).
    pub fn first(&self) -> &MariaDb {
        &self.servers[0].1
    }

    /// The gateway's route log so far.
    pub fn route_log(&self) -> Vec<RouteRecord> {
        route_log::read(&self.route_log)
    }

    /// The gateway, the servers in name order (s1, s2, …) and the route log's path, for a test
    /// that keeps them in its own fixture.
    pub fn into_parts(self) -> (Gateway, Vec<MariaDb>, PathBuf) {
        (self.gw, self.servers.into_iter().map(|(_, db)| db).collect(), self.route_log)
    }

    /// Every server's general log so far, by server name.
    pub fn general_logs(&self) -> Vec<(String, Vec<general_log::Entry>)> {
        self.servers.iter().map(|(n, db)| (n.clone(), general_log::read(&db.general_log_path()))).collect()
    }

    /// The route log and every server's general log, once the route log (written in the
    /// background) has a record for every marker of `lists`, or has stopped growing for a second
    /// (a request that failed before it was routed has none), or after 15 s.
    pub fn evidence(&self, lists: &[Vec<Item>]) -> Evidence {
        let want: HashSet<u64> = lists.iter().flatten().map(|i| i.marker).filter(|&m| m != 0).collect();
        let deadline = Instant::now() + Duration::from_secs(15);
        let (mut seen_len, mut still_since) = (usize::MAX, Instant::now());
        let records = loop {
            let records = self.route_log();
            let found: HashSet<u64> = records.iter().flat_map(|r| markers(&r.sql)).collect();
            if records.len() != seen_len {
                (seen_len, still_since) = (records.len(), Instant::now());
            }
            let settled = still_since.elapsed() > Duration::from_secs(1);
            if want.is_subset(&found) || settled || Instant::now() > deadline {
                break records;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let names = self.servers().map(|(n, db)| (db.addr(), n.to_string())).collect();
        Evidence { records, logs: self.general_logs(), names }
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

/// The workload markers (`q:N`) in a statement's text.
fn markers(sql: &str) -> impl Iterator<Item = u64> + '_ {
    sql.match_indices("q:").filter_map(|(at, _)| {
        let digits: String = sql[at + 2..].chars().take_while(char::is_ascii_digit).collect();
        digits.parse().ok()
    })
}
