//! Gateway configuration: the TOML file, its documented fields and start-up validation.

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

mod dataplane;
mod routing;
mod users;

pub use dataplane::{DataplaneConfig, SteeringMode};
pub use routing::RoutingConfig;
use users::validate_user;
pub use users::{AuthPlugin, UserConfig};

/// Errors found while loading or validating the configuration.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config file {path}: {source}")]
    Read {
        /// Path given on the command line.
        path: String,
        /// Underlying I/O error.
        source: std::io::Error,
    },
    /// The file is not valid TOML or has unknown / mistyped fields.
    #[error("invalid config file {path}: {message}")]
    Parse {
        /// Path given on the command line.
        path: String,
        /// Parser message, with line and column.
        message: String,
    },
    /// The file parsed but a value is unusable.
    #[error("invalid config: {0}")]
    Invalid(String),
}

/// The whole configuration file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Where the gateway accepts client connections.
    pub listen: ListenConfig,
    /// The database server the gateway forwards to (one server until routing lands).
    pub backend: BackendConfig,
    /// Accounts clients may log in with. The gateway authenticates each client itself, then logs in
    /// to the backend with the same user name and password.
    #[serde(default)]
    pub users: Vec<UserConfig>,
    /// Where logins are checked (`[auth]`): `accounts = "config"` (default, only `[[users]]`) or
    /// `"servers"` (also the servers' own accounts, read through a metadata account; see
    /// `accounts::AuthConfig` for each field and its default). Restart-only.
    #[serde(default)]
    pub auth: crate::accounts::AuthConfig,
    /// Logging settings.
    #[serde(default)]
    pub log: LogConfig,
    /// Where topology comes from and how statements are routed. Without it the gateway is a plain
    /// proxy to `[backend]` and EXPLAIN ROUTE answers that no topology is configured.
    #[serde(default)]
    pub routing: Option<RoutingConfig>,
    /// The eBPF data plane: steering of application connections, kernel splice, direct route.
    /// Absent: userspace-only operation (clients connect to `[listen]` themselves).
    #[serde(default)]
    pub dataplane: Option<DataplaneConfig>,
    /// Server connection pools of routed sessions (used only with `[routing]`): size per
    /// (server, tenant, user), connect limits, idle timeout, health checks. See
    /// `session::pool::PoolConfig` for each field and its default.
    #[serde(default)]
    pub pool: crate::session::pool::PoolConfig,
    /// Login names (docs/routing.md §14): separators of the `cluster:tenant:user` form,
    /// `enable_full_username`, the tenant and cluster of logins that name neither. See
    /// `login_name::LoginConfig` for each field and its default.
    #[serde(default)]
    pub login: crate::login_name::LoginConfig,
    /// The Prometheus metrics endpoint (`[metrics] address`). Default: none.
    #[serde(default)]
    pub metrics: MetricsConfig,
    /// The certificate the gateway presents to clients that switch to TLS (`cert`, `key`: PEM
    /// files, re-read on reload). Absent: no TLS on the client leg. See `[listen] tls`.
    #[serde(default)]
    pub tls: Option<crate::tls::TlsConfig>,
    /// The TLS material read from the files of `[tls]` and `[backend] tls` when the
    /// configuration was loaded (not a file setting).
    #[serde(skip)]
    pub(crate) tls_loaded: crate::tls::Loaded,
    /// OceanBase clusters routed through their sys tenant (`[[clusters]]`: name, `rslist` or
    /// `config_server_url`, `sys_user`, `sys_password`, `refresh_ms`; see
    /// `clusters::ClusterConfig`). Each is set up at the first login to it. Needs `[routing]`,
    /// whose settings (default tenant, policy, IDC, cache) all clusters share. Restart-only.
    #[serde(default)]
    pub clusters: Vec<crate::clusters::ClusterConfig>,
}

/// The gateway's metrics endpoint.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetricsConfig {
    /// Address of the endpoint answering `GET /metrics` with every gateway family in the
    /// Prometheus text format (statements, routes, latency histograms, pools, congestion, location
    /// cache, client connections, and the data-plane families), e.g. `127.0.0.1:9100`. Must differ
    /// from `[dataplane] metrics_address`, which keeps serving the data-plane families alone.
    /// Unset (default): no endpoint.
    #[serde(default)]
    pub address: Option<SocketAddr>,
}

/// How sessions wait for their sockets (`[listen] session_io`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionIo {
    /// tokio's readiness reactor on the worker threads.
    Epoll,
    /// Session threads waiting for completions in io_uring.
    #[default]
    IoUring,
}

impl SessionIo {
    /// The config-file spelling.
    pub const fn name(self) -> &'static str {
        match self {
            SessionIo::Epoll => "epoll",
            SessionIo::IoUring => "io_uring",
        }
    }
}

/// Client-facing listener settings.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListenConfig {
    /// Address and port to listen on, for example `127.0.0.1:2883`.
    pub address: SocketAddr,
    /// Largest logical packet (after joining 16 MiB frames) accepted from a client, in bytes.
    /// Larger packets get MySQL error 1153 and the connection is closed. Default 64 MiB.
    #[serde(default = "default_max_packet")]
    pub max_packet_size: usize,
    /// Seconds a client may take to finish the handshake and authentication. Default 10.
    #[serde(default = "default_handshake_timeout")]
    pub handshake_timeout_secs: u64,
    /// Server version string announced to clients. Default: the backend's own version string.
    #[serde(default)]
    pub server_version: Option<String>,
    /// On SIGTERM the gateway stops accepting, closes idle sessions and lets running statements
    /// finish for at most this many seconds, then exits (remaining sessions are cut). Default 10.
    #[serde(default = "default_shutdown_grace")]
    pub shutdown_grace_secs: u64,
    /// Threads that run sessions. `1` runs everything on one thread (no wake-ups across
    /// threads: the least CPU per statement, for a gateway sharing a small host with its clients
    /// or servers); more spread sessions over that many threads. Default: one per two CPUs, at
    /// least one (or the `TOKIO_WORKER_THREADS` environment variable). Read at start only.
    #[serde(default)]
    pub worker_threads: Option<usize>,
    /// How sessions wait for their sockets once logged in: `"epoll"` (tokio's reactor, on the
    /// worker threads) or `"io_uring"` (session threads of their own, as many as
    /// `worker_threads`, that submit every session's receives and sends in one call and wait for
    /// their completions; docs/performance.md §3). Where io_uring is not available the gateway
    /// logs it and uses epoll. TLS sessions, and routed sessions where `[dataplane] splice` may
    /// take them once pinned, always use epoll. Default `"io_uring"`. Read at start only.
    #[serde(default)]
    pub session_io: SessionIo,
    /// TLS for clients: `"off"` (the greeting does not offer it), `"optional"` (clients choose)
    /// or `"required"` (a client that does not switch to TLS gets ERROR 3159). Default:
    /// `"optional"` when `[tls]` has a certificate, else `"off"`; `"optional"` and `"required"`
    /// need `[tls]`. Applies to new sessions after a reload.
    #[serde(default)]
    pub tls: Option<crate::tls::TlsMode>,
    /// More addresses to accept clients on, besides `address`, e.g. one per application or
    /// per tenant; give each a `[[listen.dialled]]` entry for its own default cluster, tenant and
    /// TLS mode. The data plane steers to `address` only. Default none. Read at start only.
    #[serde(default)]
    pub extra_addresses: Vec<SocketAddr>,
    /// Defaults by dialled address (`[[listen.dialled]]` entries `{ address, cluster, tenant }`):
    /// a login through `address` (the listener itself, or a steered server or VIP address) that
    /// names no cluster or no tenant gets these (docs/routing.md §14: after the account's tenant and
    /// `[login]`, before `[routing] default_tenant` and the default cluster). For new sessions.
    #[serde(default)]
    pub dialled: Vec<crate::clusters::DialledDefault>,
}

/// The backend server.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackendConfig {
    /// SQL address of the server, for example `127.0.0.1:3306`.
    pub address: SocketAddr,
    /// Milliseconds allowed for the TCP connect and the server's greeting. Default 5000.
    #[serde(default = "default_connect_timeout")]
    pub connect_timeout_ms: u64,
    /// TLS to the servers, for 1:1 sessions and every pooled connection of routed sessions:
    /// `{ mode = "off" | "preferred" | "required" | "verify_ca" | "verify_identity", ca = "path",
    /// server_name = "name" }` (MySQL's `--ssl-mode` meanings: `preferred` uses TLS when the
    /// server offers it, `required` insists, neither checks the certificate; `verify_ca` checks
    /// the chain against `ca`, `verify_identity` also the name, `server_name` or else the
    /// server's IP address). Default `off`. Applies to new server connections after a reload.
    #[serde(default)]
    pub tls: crate::tls::BackendTls,
    /// Tell OceanBase servers the application's address and the gateway's session id, as ODP
    /// does: logins to OceanBase servers carry ODP's proxy-login connection attributes
    /// (`__mysql_client_type = __ob_proxy`, `__client_ip`, `__proxy_connection_id`;
    /// `session::identity`), which an OceanBase observer reads into
    /// `V$OB_PROCESSLIST.USER_CLIENT_IP`, its IP allow-list check and its login log. The seekdb
    /// kernel has no proxy login mode and ignores them. A proxy login also changes what the
    /// observer sends (session tracking), so this is off by default. MySQL/MariaDB servers are
    /// never told. Default false.
    #[serde(default)]
    pub client_identity: bool,
}

/// Logging settings.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogConfig {
    /// `tracing` filter, e.g. `info` or `gateway=debug`. `RUST_LOG` overrides it.
    #[serde(default = "default_log_level")]
    pub level: String,
    /// Route diagnosis log of routed sessions, at target `gateway::route` (INFO): `off`
    /// (default), `route` (one line per routed request: what the route log has) or `trace`
    /// (that line and the full EXPLAIN ROUTE trace of each planned statement; planning with
    /// the trace costs more). Runtime-changeable.
    #[serde(default)]
    pub route_diagnosis: RouteDiagnosis,
    /// Slow-statement log: a routed request whose end-to-end time (request read to last byte
    /// relayed) exceeds this many milliseconds logs one WARN line at target `gateway::slow`
    /// (connection id, user, database, server, elapsed ms, route outcome, first 200 bytes of
    /// the SQL). 0 (default) turns it off. Runtime-changeable.
    #[serde(default)]
    pub slow_statement_ms: u64,
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig { level: default_log_level(), route_diagnosis: RouteDiagnosis::Off, slow_statement_ms: 0 }
    }
}

/// Levels of the route diagnosis log (`[log] route_diagnosis`), each including the previous.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RouteDiagnosis {
    /// No diagnosis lines.
    #[default]
    Off,
    /// One line per routed request.
    Route,
    /// Also the EXPLAIN ROUTE trace of each planned statement.
    Trace,
}

impl RouteDiagnosis {
    /// The config-file spelling.
    pub const fn name(self) -> &'static str {
        match self {
            RouteDiagnosis::Off => "off",
            RouteDiagnosis::Route => "route",
            RouteDiagnosis::Trace => "trace",
        }
    }

    /// Parses the config-file spelling (case-insensitive).
    pub fn parse(v: &str) -> Option<RouteDiagnosis> {
        [RouteDiagnosis::Off, RouteDiagnosis::Route, RouteDiagnosis::Trace]
            .into_iter()
            .find(|l| l.name().eq_ignore_ascii_case(v.trim()))
    }
}

fn default_max_packet() -> usize {
    64 * 1024 * 1024
}
fn default_handshake_timeout() -> u64 {
    10
}
fn default_shutdown_grace() -> u64 {
    10
}
fn default_connect_timeout() -> u64 {
    5000
}
fn default_log_level() -> String {
    "info".into()
}

impl Config {
    /// Reads, parses and validates a configuration file.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read { path: shown.clone(), source })?;
        Config::parse(&text, &shown)
    }

    /// Parses and validates configuration text; `origin` names it in messages.
    pub fn parse(text: &str, origin: &str) -> Result<Config, ConfigError> {
        let mut config: Config = toml::from_str(text)
            .map_err(|e| ConfigError::Parse { path: origin.to_string(), message: e.to_string() })?;
        config.validate()?;
        // Certificate, key and CA files: read now, so that a reload with a bad file is refused.
        config.tls_loaded = crate::tls::Loaded::load(&config).map_err(|e| ConfigError::Invalid(format!("TLS: {e}")))?;
        Ok(config)
    }

    /// Checks values that TOML types alone cannot express.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.listen.max_packet_size < 1024 {
            return Err(ConfigError::Invalid("listen.max_packet_size must be at least 1024 bytes".into()));
        }
        if self.listen.max_packet_size > 1 << 30 {
            return Err(ConfigError::Invalid("listen.max_packet_size must be at most 1 GiB (MySQL's limit)".into()));
        }
        if self.listen.worker_threads == Some(0) {
            return Err(ConfigError::Invalid("listen.worker_threads must be at least 1".into()));
        }
        if self.users.is_empty() && !self.auth.from_servers() {
            return Err(ConfigError::Invalid(
                "no [[users]] configured and [auth] accounts is not \"servers\": nobody could log in".into(),
            ));
        }
        self.auth.validate().map_err(ConfigError::Invalid)?;
        self.login.validate().map_err(ConfigError::Invalid)?;
        crate::tls::validate(self).map_err(ConfigError::Invalid)?;
        self.validate_metrics()?;
        self.validate_clusters()?;
        let mut seen = std::collections::HashSet::new();
        for u in &self.users {
            validate_user(u)?;
            if !seen.insert(u.name.as_str()) {
                return Err(ConfigError::Invalid(format!("user {:?} is configured twice", u.name)));
            }
        }
        Ok(())
    }

    /// `[routing]` needs a topology or clusters; cluster names are unique and complete.
    fn validate_clusters(&self) -> Result<(), ConfigError> {
        let invalid = ConfigError::Invalid;
        let Some(routing) = &self.routing else {
            if !self.clusters.is_empty() {
                return Err(invalid(
                    "[[clusters]] needs a [routing] section (its settings apply to every cluster)".into(),
                ));
            }
            return Ok(());
        };
        if routing.topology.is_none() && self.clusters.is_empty() && routing.config_server_url.is_none() {
            return Err(invalid("[routing] needs topology, [[clusters]] or config_server_url".into()));
        }
        if let Some(t) = &routing.target_db_server {
            crate::route::TargetDbServer::parse(t, crate::route::TargetSource::Config)
                .map_err(|_| invalid(format!("routing.target_db_server {t:?}: not a list of ip:port addresses")))?;
        }
        if let Some(url) = &routing.config_server_url {
            crate::clusters::check_url(url).map_err(|e| invalid(format!("routing.config_server_url: {e}")))?;
        }
        let mut seen = std::collections::HashSet::new();
        for c in &self.clusters {
            c.validate().map_err(invalid)?;
            if !seen.insert(c.name.as_str()) {
                return Err(invalid(format!("cluster {:?} is configured twice", c.name)));
            }
        }
        let mut dialled = std::collections::HashSet::new();
        for d in &self.listen.dialled {
            if !dialled.insert(d.address) {
                return Err(invalid(format!("[[listen.dialled]] address {} is listed twice", d.address)));
            }
        }
        Ok(())
    }

    /// One endpoint per address: `[metrics]` already serves the data-plane families.
    fn validate_metrics(&self) -> Result<(), ConfigError> {
        let dataplane_metrics = self.dataplane.as_ref().and_then(|d| d.metrics_address);
        if self.metrics.address.is_some_and(|a| a.port() != 0 && Some(a) == dataplane_metrics) {
            return Err(ConfigError::Invalid(
                "[metrics] address and [dataplane] metrics_address are the same: one endpoint per address \
                 ([metrics] serves the data-plane families too)"
                    .into(),
            ));
        }
        Ok(())
    }

    /// The account with this login name.
    pub fn user(&self, name: &str) -> Option<&UserConfig> {
        self.users.iter().find(|u| u.name == name)
    }

    /// Backend connect timeout.
    pub fn connect_timeout(&self) -> Duration {
        Duration::from_millis(self.backend.connect_timeout_ms)
    }
}

/// Configurations for unit tests: a listener and a backend that nothing dials, plus the rest.
#[cfg(test)]
pub(crate) mod testing {
    use super::Config;

    /// `[listen]` and `[backend]` on loopback (the rest of a test's configuration follows).
    pub const BASE: &str = "[listen]\naddress = \"127.0.0.1:2883\"\n[backend]\naddress = \"127.0.0.1:3306\"\n";

    /// [`BASE`] and `rest` (users, other sections), parsed; panics on an invalid configuration.
    pub fn config(rest: &str) -> Config {
        Config::parse(&format!("{BASE}{rest}"), "test").unwrap_or_else(|e| panic!("test configuration: {e}"))
    }

    /// One user `name` without a password.
    pub fn user(name: &str) -> String {
        format!("[[users]]\nname = \"{name}\"\npassword = \"\"\n")
    }
}

#[cfg(test)]
mod tests {
    use super::testing::BASE;
    use super::*;

    #[test]
    fn parses_minimal_config() {
        let text = format!("{BASE}\n[[users]]\nname = \"root\"\npassword = \"\"\n");
        let c = Config::parse(&text, "t").unwrap();
        assert_eq!(c.listen.max_packet_size, 64 << 20);
        assert_eq!(c.user("root").unwrap().auth_plugin, AuthPlugin::NativePassword);
    }

    #[test]
    fn diagnosis_levels_parse_and_default_off() {
        let users = "[[users]]\nname = \"r\"\npassword = \"\"\n";
        let c = Config::parse(&format!("{BASE}\n{users}"), "t").unwrap();
        assert_eq!((c.log.route_diagnosis, c.log.slow_statement_ms), (RouteDiagnosis::Off, 0));
        let text = format!("{BASE}\n[log]\nroute_diagnosis = \"trace\"\nslow_statement_ms = 100\n{users}");
        let c = Config::parse(&text, "t").unwrap();
        assert_eq!((c.log.route_diagnosis, c.log.slow_statement_ms), (RouteDiagnosis::Trace, 100));
        let bad = format!("{BASE}\n[log]\nroute_diagnosis = \"full\"\n{users}");
        assert!(Config::parse(&bad, "t").is_err());
        assert_eq!(RouteDiagnosis::parse(" Route "), Some(RouteDiagnosis::Route));
        assert!(RouteDiagnosis::Off < RouteDiagnosis::Route && RouteDiagnosis::Route < RouteDiagnosis::Trace);
    }

    #[test]
    fn rejects_unknown_field_with_its_name() {
        let text = format!("{BASE}\nbogus = 1\n[[users]]\nname = \"r\"\npassword = \"\"\n");
        let e = Config::parse(&text, "t").unwrap_err().to_string();
        assert!(e.contains("bogus"), "{e}");
    }

    #[test]
    fn rejects_hash_with_sha2() {
        let text = format!(
            "{BASE}\n[[users]]\nname = \"r\"\nauth_plugin = \"caching_sha2_password\"\n\
             password_hash = \"*0000000000000000000000000000000000000000\"\n"
        );
        let e = Config::parse(&text, "t").unwrap_err().to_string();
        assert!(e.contains("password_hash needs"), "{e}");
    }

    #[test]
    fn parses_direct_route_targets() {
        let text = format!(
            "{BASE}\n[[users]]\nname = \"r\"\npassword = \"\"\n[dataplane]\nmode = \"cgroup\"\n\
             direct_route = true\ndirect_route_targets = {{ \"10.0.0.5:2881\" = \"127.0.0.1:3307\" }}\n"
        );
        let c = Config::parse(&text, "t").unwrap();
        let dp = c.dataplane.unwrap();
        assert!(dp.direct_route);
        let to = dp.direct_route_targets.get(&"10.0.0.5:2881".parse().unwrap());
        assert_eq!(to, Some(&"127.0.0.1:3307".parse().unwrap()));
    }

    #[test]
    fn rejects_bad_hash_and_duplicates() {
        let bad = format!("{BASE}\n[[users]]\nname = \"r\"\npassword_hash = \"*12\"\n");
        assert!(Config::parse(&bad, "t").is_err());
        let dup =
            format!("{BASE}\n[[users]]\nname = \"r\"\npassword = \"\"\n[[users]]\nname = \"r\"\npassword = \"x\"\n");
        assert!(Config::parse(&dup, "t").unwrap_err().to_string().contains("twice"));
    }

    #[test]
    fn server_accounts_need_no_users_but_a_metadata_user() {
        assert!(Config::parse(BASE, "t").unwrap_err().to_string().contains("nobody could log in"));
        let servers = format!("{BASE}\n[auth]\naccounts = \"servers\"\nuser = \"meta\"\n");
        let c = Config::parse(&servers, "t").unwrap();
        assert!(c.users.is_empty() && c.auth.from_servers());
        assert_eq!((c.auth.refresh_secs, c.auth.negative_cache_secs, c.auth.server), (30, 5, None));
        let no_user = format!("{BASE}\n[auth]\naccounts = \"servers\"\n");
        assert!(Config::parse(&no_user, "t").unwrap_err().to_string().contains("needs user"));
        let bad = format!("{BASE}\n[auth]\naccounts = \"server\"\nuser = \"meta\"\n");
        assert!(Config::parse(&bad, "t").is_err());
    }
}
