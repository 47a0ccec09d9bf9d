//! State shared by all sessions: the live config, the shutdown signal, connection ids, the caching_sha2 cache, the backend's
//! profile, pools, congestion and metrics.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use crate::config::Config;
use crate::protocol::auth::RsaKeys;
use crate::protocol::caps;
use crate::protocol::handshake::Greeting;

/// What the gateway announces to clients, learnt from the backend's own greeting.
#[derive(Debug, Clone)]
pub struct BackendProfile {
    /// Version string the backend announces.
    pub server_version: String,
    /// The backend's capability flags.
    pub capabilities: u32,
    /// The backend's default collation.
    pub charset: u8,
    /// The status a new server session starts with: SERVER_STATUS_AUTOCOMMIT when the server's
    /// global autocommit is on (the only flag a greeting carries that clients act on).
    pub status: u16,
    /// The backend's MariaDB extended capabilities (when it clears CLIENT_MYSQL).
    pub ext_capabilities: u32,
}

impl Default for BackendProfile {
    fn default() -> Self {
        BackendProfile {
            server_version: "5.7.25-gateway".into(),
            capabilities: caps::SUPPORTED,
            charset: 45, // utf8mb4_general_ci
            status: crate::protocol::status::AUTOCOMMIT,
            ext_capabilities: 0,
        }
    }
}

/// The first gateway connection id (ids run up to `2 * FIRST_CONNECTION_ID - 1`, then wrap).
pub const FIRST_CONNECTION_ID: u32 = 1 << 30;

/// Process-wide session state.
pub struct Shared {
    /// The running configuration, swapped by reloads and ALTER PROXYCONFIG; read it with
    /// [`Shared::config`].
    pub live: crate::live_config::LiveConfig,
    /// Graceful shutdown: the stop signal sessions watch and the count of open sessions.
    pub drain: crate::server::drain::Drain,
    /// The static topology's planner (`[routing] topology`): the default cluster. Sessions
    /// route with their own cluster's planner ([`Shared::clusters`]).
    pub planner: Option<crate::planner::Planner>,
    /// Every cluster a login may name (static topology, `[[clusters]]`, the config server's).
    pub clusters: crate::clusters::Clusters,
    next_id: AtomicU32,
    sha2_cache: Mutex<HashSet<String>>,
    rsa: tokio::sync::OnceCell<Arc<RsaKeys>>,
    profile: RwLock<BackendProfile>,
    /// Server connection pools of routed sessions (`[pool]`).
    pub pool: super::pool::Pool,
    /// Per-server congestion state (docs/routing.md §6), fed by the pool's connect outcomes and the
    /// routed sessions' failures, read when ordering a request's candidates.
    pub congestion: Arc<Mutex<crate::route::CongestionManager>>,
    /// `congestion`'s [`crate::route::Calm`] flag: whether every server is alive, without its lock.
    pub congestion_calm: crate::route::Calm,
    /// The routed sessions, for SHOW PROCESSLIST and KILL (docs/routing.md §13).
    pub sessions: super::routed::registry::Registry,
    /// `[routing] route_log`, when configured and writable.
    pub route_log: Option<super::routed::route_log::RouteLog>,
    /// Counters and histograms the sessions record into (`crate::metrics`).
    pub metrics: crate::metrics::Metrics,
    /// Analyses of the routed sessions' statement shapes (`crate::sql::shape`).
    pub shapes: crate::sql::shape::ShapeCache,
    /// The servers' accounts (`[auth] accounts = "servers"`), `None` otherwise.
    pub accounts: Option<crate::accounts::ServerAccounts>,
    /// The io_uring session threads 1:1 sessions run on (`[listen] session_io = "io_uring"`, the default),
    /// once started.
    pub session_threads: std::sync::OnceLock<crate::dataplane::ring::Spawner>,
}

impl Shared {
    /// The congestion manager with its [`crate::route::Calm`] flag ([`crate::session::routed`]'s
    /// attempt order).
    pub fn congestion(&self) -> (&Mutex<crate::route::CongestionManager>, &crate::route::Calm) {
        (&self.congestion, &self.congestion_calm)
    }

    /// New state for a configuration that is not reloadable.
    pub fn new(config: Config, planner: Option<crate::planner::Planner>) -> Self {
        Self::with_live(crate::live_config::LiveConfig::new(config, None), planner)
    }

    /// New state for a running configuration.
    pub fn with_live(live: crate::live_config::LiveConfig, planner: Option<crate::planner::Planner>) -> Self {
        let config = live.get();
        let mut profile = BackendProfile::default();
        if let Some(v) = &config.listen.server_version {
            profile.server_version = v.clone();
        }
        let manager = crate::route::CongestionManager::default();
        let congestion_calm = manager.calm();
        let congestion = Arc::new(Mutex::new(manager));
        let pool = super::pool::Pool::new(config.pool.clone(), congestion.clone());
        let route_log = config.routing.as_ref().and_then(|r| r.route_log.as_deref()).and_then(|path| {
            super::routed::route_log::RouteLog::open(path)
                .map_err(|e| tracing::error!(path = %path.display(), error = %e, "cannot open the route log; not logging routes"))
                .ok()
        });
        let clusters = crate::clusters::Clusters::new(&config, planner.clone());
        let accounts = crate::accounts::ServerAccounts::from_config(
            &config.auth,
            config.backend.address,
            config.connect_timeout(),
        );
        Shared {
            accounts,
            clusters,
            pool,
            congestion,
            congestion_calm,
            sessions: Default::default(),
            route_log,
            metrics: crate::metrics::Metrics::default(),
            shapes: crate::sql::shape::ShapeCache::default(),
            live,
            drain: Default::default(),
            planner,
            next_id: AtomicU32::new(0),
            sha2_cache: Mutex::new(HashSet::new()),
            rsa: tokio::sync::OnceCell::new(),
            profile: RwLock::new(profile),
            session_threads: std::sync::OnceLock::new(),
        }
    }

    /// The configuration in force now (a snapshot: hold it for one use or one session start,
    /// not for the session's life, so that reloads reach the session).
    pub fn config(&self) -> Arc<Config> {
        self.live.get()
    }

    /// Server-leg TLS for connections to servers of `cluster` (`None`: the default cluster):
    /// its `[[clusters]] tls`, else `[backend] tls`; `None` when that is off.
    pub fn server_tls(&self, cluster: Option<&str>) -> Option<Arc<crate::tls::ServerTls>> {
        self.config().tls_loaded.server_for(cluster)
    }

    /// The identity OceanBase servers are told for client `peer`, gateway session `id`
    /// (`[backend] client_identity`); `None` when that is off.
    pub fn client_identity(&self, peer: std::net::SocketAddr, id: u32) -> Option<super::identity::ClientIdentity> {
        self.config().backend.client_identity.then_some(super::identity::ClientIdentity { addr: peer, conn_id: id })
    }

    /// A fresh gateway connection id, from [`FIRST_CONNECTION_ID`] on: a range no server's
    /// thread ids reach (MariaDB/MySQL count from 1, OceanBase's session ids lie above 3 << 30),
    /// so a server thread id a client learns elsewhere (`@@pseudo_thread_id`,
    /// `information_schema.PROCESSLIST`) names no gateway session in a KILL.
    pub fn next_connection_id(&self) -> u32 {
        let n = self.next_id.fetch_add(1, Ordering::Relaxed);
        FIRST_CONNECTION_ID + n % FIRST_CONNECTION_ID
    }

    /// Whether `user` completed caching_sha2 full authentication with this password since start.
    pub fn sha2_cached(&self, key: &str) -> bool {
        self.sha2_cache.lock().map(|c| c.contains(key)).unwrap_or(false)
    }

    /// Remembers a caching_sha2 full authentication.
    pub fn sha2_remember(&self, key: String) {
        if let Ok(mut c) = self.sha2_cache.lock() {
            c.insert(key);
        }
    }

    /// The RSA key pair, generated on first use (in a blocking thread: it takes a moment).
    pub async fn rsa_keys(&self) -> Option<Arc<RsaKeys>> {
        self.rsa
            .get_or_try_init(|| async {
                tokio::task::spawn_blocking(RsaKeys::generate)
                    .await
                    .map_err(|e| e.to_string())?
                    .map(Arc::new)
                    .map_err(|e| e.to_string())
            })
            .await
            .map_err(|e| tracing::error!(error = %e, "cannot create the RSA key for caching_sha2_password"))
            .ok()
            .cloned()
    }

    /// What to announce to clients.
    pub fn profile(&self) -> BackendProfile {
        self.profile.read().map(|p| p.clone()).unwrap_or_default()
    }

    /// Learns the backend's version and capabilities from one of its greetings.
    pub fn learn_profile(&self, g: &Greeting) {
        if let Ok(mut p) = self.profile.write() {
            p.server_version = self.config().listen.server_version.clone().unwrap_or_else(|| g.server_version.clone());
            p.capabilities = g.capabilities;
            p.charset = g.charset;
            p.status = g.status & crate::protocol::status::AUTOCOMMIT;
            p.ext_capabilities = g.ext_capabilities;
        }
    }
}
