//! Server connection pools per (server, tenant, user), for per-statement routing: one client
//! session borrows many server connections.
//!
//! * Bounded: at most `max_per_key` connections per key, each holding a slot from its connect to
//!   its close (idle or handed out: a checkout and a return touch no semaphore); a request that
//!   finds all in use waits its turn, behind earlier waiters, for one to come back or be closed,
//!   for `acquire_timeout_ms`, then fails with a clear error.
//! * No connect storm: at most `max_connects_per_server` connection attempts to one server are in
//!   flight; further attempts queue (within the same acquire timeout), and give up at once when
//!   an attempt to that server fails meanwhile, so that they go to another candidate instead.
//! * Bounded waits: one deadline per request, `acquire_timeout_ms` from when it asks, ends the
//!   slot wait, the permit wait, the connect, the greeting and the login, and bounds the ping or
//!   reset of a reused connection.
//! * Checked on reuse: an idle connection past `idle_timeout_secs` is closed; every reused one
//!   must pass a non-blocking socket check, and a COM_PING when idle longer than
//!   `health_check_after_ms`.
//! * No state leaks: the connections of a client that leaves (or resets its session) are reset
//!   in the background before they are idle again ([`scrub`]: nothing it left — transaction,
//!   locks, temporary tables — blocks others); a connection last used by another client is
//!   reset again before it is handed out (COM_RESET_CONNECTION, COM_CHANGE_USER when unsupported or
//!   when the new client has no database), and gets back the `IGNORE_SPACE` of its login. One
//!   going back to the client that used it last keeps its session, so the client's state sync
//!   ([`super::state`]) only sends what changed. Idle connections of the asking client are
//!   preferred.
//! * Connect failures and successes are reported to a [`ServerHealth`] (congestion control).
//! * Capability flags that change the wire format ([`WIRE_CAPS`]: DEPRECATE_EOF, multi-statements
//!   and multi-results, SESSION_TRACK, FOUND_ROWS, IGNORE_SPACE, LOCAL_FILES) are part of a
//!   pool's identity besides the [`PoolKey`]: a connection logs in with the capabilities of the
//!   client that opened it, and is only ever handed to clients that negotiated the same ones, so
//!   relayed answers always have the shape the client expects.
//!
//! A [`PooledConn`] derefs to [`Backend`] and goes back to the pool when dropped, unless it was
//! marked broken, detached, or still has unread bytes.

mod config;
mod conn;
mod error;
mod gate;
pub(crate) mod health;
mod homes;
mod key_pool;
mod park;
mod scrub;
mod stats;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gate::{NoPermit, ServerGate};
use stats::Counters;
use tokio::sync::OwnedSemaphorePermit;
use tracing::{debug, info, warn, Instrument};

pub use config::PoolConfig;
use conn::Conn;
pub use conn::PooledConn;
pub use error::PoolError;
pub use health::{alive_or_checked_on_send, command, looks_alive, ping, NoHealth, ServerHealth};
pub use homes::{Homes, KeyRef};
use key_pool::{Found, Gauge, Idle, KeyPool};
pub use scrub::{scrubs_done, Scrub};
pub use stats::{PoolStats, ServerPoolStats};

use super::backend::{self, Backend, LoginOutcome, LoginRequest};
use super::server_kind;
use super::state::ConnSync;
use super::SessionError;
use crate::login_name::ServerKind;
use crate::protocol::codes;

/// The wire identity of a login by its capabilities: its [`WIRE_CAPS`] and its MariaDB extended
/// capabilities (progress reports add packets to answers): connections are shared only between
/// logins that agree on both.
pub fn wire_identity(client_caps: u32, client_ext_caps: u32) -> u64 {
    (u64::from(client_ext_caps) << 32) | u64::from(client_caps & WIRE_CAPS)
}

/// Capability flags that change what travels on the wire; connections are shared only between
/// clients that agree on them (module docs).
pub const WIRE_CAPS: u32 = crate::protocol::caps::DEPRECATE_EOF
    | crate::protocol::caps::MULTI_STATEMENTS
    | crate::protocol::caps::MULTI_RESULTS
    | crate::protocol::caps::PS_MULTI_RESULTS
    | crate::protocol::caps::SESSION_TRACK
    | crate::protocol::caps::FOUND_ROWS
    | crate::protocol::caps::IGNORE_SPACE
    | crate::protocol::caps::LOCAL_FILES;

/// What a pool holds connections for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PoolKey {
    /// The server.
    pub server: SocketAddr,
    /// The tenant (empty for plain MySQL servers). Shared: a key is built for every checkout.
    pub tenant: Arc<str>,
    /// The user the connections are logged in as.
    pub user: Arc<str>,
}

/// The connection pools of all keys; cheap to clone (shared).
#[derive(Clone)]
pub struct Pool {
    inner: Arc<Inner>,
}

struct Inner {
    cfg: PoolConfig,
    health: Arc<dyn ServerHealth>,
    /// Pools by key and wire identity ([`wire_identity`]).
    /// foldhash, randomly seeded per map (keys hold client-chosen names): looked up for every
    /// checkout.
    keys: Mutex<HashMap<(PoolKey, u64), Arc<KeyPool>, foldhash::quality::RandomState>>,
    servers: Mutex<HashMap<SocketAddr, Arc<ServerGate>>>,
    counters: Counters,
}

impl Pool {
    /// An empty pool reporting connect outcomes to `health`.
    pub fn new(cfg: PoolConfig, health: Arc<dyn ServerHealth>) -> Self {
        let inner =
            Inner { cfg, health, keys: Mutex::default(), servers: Mutex::default(), counters: Counters::default() };
        Pool { inner: Arc::new(inner) }
    }

    /// The settings.
    pub fn config(&self) -> &PoolConfig {
        &self.inner.cfg
    }

    /// A connection of `key` for client `client` (its [`super::state::ClientState::id`]), logged
    /// in with `login` when a new one is needed. `login.user` must be `key.user`.
    pub async fn get(&self, key: &PoolKey, login: &LoginRequest<'_>, client: u64) -> Result<PooledConn, PoolError> {
        let wire = wire_identity(login.client_caps, login.client_ext_caps);
        self.get_at(self.inner.key_pool(key, wire), || login.clone(), client).await
    }

    /// [`Pool::get`] for a session that remembers the pools it used ([`Homes`]), with the login
    /// made only when it is used: a new connection, or one another client used last (making it
    /// reads the live configuration: TLS, client identity). `wire`: the login's
    /// [`wire_identity`]. A key the session used lately is not looked up in the map of all keys
    /// (a lock and a hash of the whole key). The pool is found before the returned future runs
    /// (no async layer of its own to move).
    pub fn get_remembered<'p, 'l: 'p, F>(
        &'p self,
        homes: &mut Homes,
        key: KeyRef<'_>,
        wire: u64,
        login: F,
        client: u64,
    ) -> impl std::future::Future<Output = Result<PooledConn, PoolError>> + use<'p, 'l, F>
    where
        F: Fn() -> LoginRequest<'l> + Sync,
    {
        let home = match homes.find(key, wire) {
            Some(home) => home,
            None => homes.keep(self.inner.key_pool(&key.to_owned(), wire)),
        };
        self.get_at(home, login, client)
    }

    async fn get_at<'l, F>(&self, home: Arc<KeyPool>, login: F, client: u64) -> Result<PooledConn, PoolError>
    where
        F: Fn() -> LoginRequest<'l> + Sync,
    {
        let key = &home.key;
        let span =
            tracing::debug_span!("pool_get", server = %key.server, tenant = %key.tenant, user = %key.user, client);
        self.acquire(home, &login, client).instrument(span).await
    }

    async fn acquire<'l, F>(&self, home: Arc<KeyPool>, login: &F, client: u64) -> Result<PooledConn, PoolError>
    where
        F: Fn() -> LoginRequest<'l> + Sync,
    {
        let cfg = &self.inner.cfg;
        let key = &home.key;
        // One clock reading (the runtime's, which tests may pause) for the deadline and the
        // idle connections' age: a reuse reads the clock once.
        let asked = tokio::time::Instant::now();
        let (started, deadline) = (asked.into_std(), asked + cfg.acquire_timeout());
        loop {
            // An idle connection brings the slot it holds; a new one needs a free slot.
            let found = match home.idle_or_slot(client) {
                Some(found) => found,
                None => match home.wait_turn(client, deadline).await {
                    Some(found) => found,
                    None => {
                        self.inner.counters.acquire_timeouts.fetch_add(1, Ordering::Relaxed);
                        let waited_ms = started.elapsed().as_millis() as u64;
                        info!(waited_ms, size = cfg.max_per_key, "no pooled connection available");
                        return Err(PoolError::Busy { server: key.server, waited_ms, size: cfg.max_per_key });
                    }
                },
            };
            let idle = match found {
                Found::Idle(idle) => idle,
                Found::Slot(slot) => {
                    let conn = Box::pin(self.open_new(key, &login(), deadline, started)).await?;
                    return Ok(PooledConn::new(conn, client, home, slot, cfg.connect_timeout()));
                }
            };
            // The common reuse talks to no server and awaits nothing; the other steps are boxed,
            // so that every checkout does not move a future as large as a login (#16). A
            // connection that cannot be revived is closed, and its slot with it.
            let revived = match self.ready_now(idle, client, started) {
                Reuse::Ready(idle) => Some((idle.conn, idle.slot)),
                Reuse::Revive(idle) => Box::pin(self.revive(idle, &login(), client, started, deadline)).await,
            };
            if let Some((conn, slot)) = revived {
                self.inner.counters.reuses.fetch_add(1, Ordering::Relaxed);
                return Ok(PooledConn::new(conn, client, home, slot, cfg.connect_timeout()));
            }
        }
    }

    /// The connection the session of `homes` parked for `key` ([`Homes::park`]), when it can be
    /// used as it is: the checks of an idle connection going back to its own client
    /// ([`Pool::ready_now`]). One that cannot goes to the key's idle list with its idle time,
    /// where the checkout that follows finds it and pings, resets or closes it.
    /// `now`: the caller's recent clock reading, to which the connection's idle time is measured.
    pub fn parked(&self, homes: &Homes, key: KeyRef<'_>, wire: u64, client: u64, now: Instant) -> Option<PooledConn> {
        let mut parked = homes.take_parked(key, wire)?;
        let cfg = &self.inner.cfg;
        let age = now.saturating_duration_since(parked.since);
        let fresh = parked.conn.client() == client && age < cfg.health_check_after() && age <= cfg.idle_timeout();
        // Its own session's next request: a connection on the ring is checked as it is sent.
        if fresh && alive_or_checked_on_send(&mut parked.conn) {
            return Some(parked.conn);
        }
        let home = Arc::clone(parked.conn.home());
        if let Some(idle) = parked.into_idle() {
            home.put_idle(idle);
        }
        None
    }

    /// A new connection of `key`, logged in with `login`, its server's kind known.
    async fn open_new(
        &self,
        key: &PoolKey,
        login: &LoginRequest<'_>,
        deadline: tokio::time::Instant,
        started: Instant,
    ) -> Result<Box<Conn>, PoolError> {
        let mut backend = self.connect(key, login, deadline, started).await?;
        let (kind, first) = self.server_kind(&mut backend, key.server).await?;
        if first && kind == ServerKind::OceanBase && login.identity.is_some() {
            // The login lacked what only OceanBase is told (the client's identity): log in again.
            backend = self.connect(key, login, deadline, started).await?;
        }
        let sync = ConnSync::new(login.database, login.charset).on_oceanbase(kind == ServerKind::OceanBase);
        Ok(Box::new(Conn { backend, sync }))
    }

    /// An idle connection usable by `client` as it is (asking at `now`): recently used, by this
    /// client, and quiet. Otherwise it needs [`Pool::revive`] (a ping, a hand-over, or closing).
    fn ready_now(&self, mut idle: Idle, client: u64, now: Instant) -> Reuse {
        let cfg = &self.inner.cfg;
        let age = now.saturating_duration_since(idle.since);
        let fresh = idle.last_client == client && age < cfg.health_check_after() && age <= cfg.idle_timeout();
        if fresh && looks_alive(&mut idle.conn.backend) {
            return Reuse::Ready(idle);
        }
        Reuse::Revive(idle)
    }

    /// The kind of a new connection's server, and whether this connection had to find it out
    /// (its login was made without knowing it; `server_kind`).
    async fn server_kind(&self, backend: &mut Backend, server: SocketAddr) -> Result<(ServerKind, bool), PoolError> {
        if let Some(kind) = server_kind::known(server, &backend.greeting.server_version) {
            return Ok((kind, false));
        }
        match health::probe_kind(backend, server, self.inner.cfg.connect_timeout()).await {
            Some(kind) => Ok((kind, true)),
            None => Err(PoolError::Connect { server, reason: "no answer to the server-kind probe".into() }),
        }
    }

    /// Makes an idle connection usable for `client` (asking at `now`) before `deadline`, or
    /// closes it (`None`).
    async fn revive(
        &self,
        idle: Idle,
        login: &LoginRequest<'_>,
        client: u64,
        now: Instant,
        deadline: tokio::time::Instant,
    ) -> Option<(Box<Conn>, OwnedSemaphorePermit)> {
        let cfg = &self.inner.cfg;
        // Read the clock only for a step that talks to the server (the common reuse has none).
        let bound = || step_bound(cfg.connect_timeout(), deadline);
        let age = now.saturating_duration_since(idle.since);
        let Idle { mut conn, last_client, slot, .. } = idle;
        let Conn { backend, sync } = &mut *conn;
        let thread = backend.greeting.connection_id;
        let usable = age <= cfg.idle_timeout()
            && looks_alive(backend)
            && (age < cfg.health_check_after() || ping(backend, bound()).await);
        if !usable {
            debug!(thread, age_ms = age.as_millis() as u64, "idle connection closed: expired or dead");
            self.inner.counters.discarded.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        if last_client != client {
            if let Err(e) = self.hand_over(backend, sync, login, bound()).await {
                warn!(thread, error = %e, "reset of a pooled connection failed; closed");
                self.inner.counters.discarded.fetch_add(1, Ordering::Relaxed);
                return None;
            }
        }
        Some((conn, slot))
    }

    /// Makes a connection last used by another client a fresh session: reset now, even when
    /// [`scrub`] reset it as its client left (a new session takes the global variables as they
    /// are when it starts), by a new login when the client has no database and the connection
    /// has one (COM_RESET_CONNECTION keeps the database; a client must not find another's), and
    /// `IGNORE_SPACE` back in `sql_mode` when the client asked for it at login.
    async fn hand_over(
        &self,
        backend: &mut Backend,
        sync: &mut ConnSync,
        login: &LoginRequest<'_>,
        bound: Duration,
    ) -> Result<(), String> {
        let unselect = login.database.is_none() && sync.database().is_some();
        match health::reset(backend, login, bound, unselect).await? {
            false => sync.reset(),
            true => sync.relogin(login.database, login.charset),
        }
        self.inner.counters.resets.fetch_add(1, Ordering::Relaxed);
        if login.client_caps & crate::protocol::caps::IGNORE_SPACE != 0
            && !scrub::restore_ignore_space(backend, bound).await
        {
            return Err("restoring IGNORE_SPACE in sql_mode failed".into());
        }
        Ok(())
    }

    /// Opens a connection, within the server's connect limit: the permit wait, the TCP connect,
    /// the greeting and the login all end by the request's `deadline` (and the attempt itself
    /// within `connect_timeout_ms`).
    async fn connect(
        &self,
        key: &PoolKey,
        login: &LoginRequest<'_>,
        deadline: tokio::time::Instant,
        started: Instant,
    ) -> Result<Backend, PoolError> {
        let cfg = &self.inner.cfg;
        let gate = self.inner.gate(key.server);
        let _permit = match gate.permit(deadline).await {
            Ok(p) => p,
            Err(NoPermit::Timeout) => {
                self.inner.counters.acquire_timeouts.fetch_add(1, Ordering::Relaxed);
                let waited_ms = started.elapsed().as_millis() as u64;
                info!(waited_ms, limit = cfg.max_connects_per_server, "connect limit reached");
                return Err(PoolError::ConnectQueue {
                    server: key.server,
                    waited_ms,
                    limit: cfg.max_connects_per_server,
                });
            }
            Err(NoPermit::ServerFailed(why)) => {
                let waited_ms = started.elapsed().as_millis() as u64;
                info!(waited_ms, "gave up waiting to connect: an attempt to the server failed meanwhile");
                let reason = format!("an attempt to connect failed while this request waited {waited_ms} ms ({why})");
                return Err(PoolError::Connect { server: key.server, reason });
            }
        };
        let _connecting = gate.connecting();
        let result = open(key.server, login, step_bound(cfg.connect_timeout(), deadline)).await;
        let health = &self.inner.health;
        match &result {
            Ok(b) => {
                self.inner.counters.connects.fetch_add(1, Ordering::Relaxed);
                health.connect_succeeded(key.server);
                debug!(thread = b.greeting.connection_id, "connected");
            }
            Err(PoolError::Denied { err, .. }) => info!(error = %err, "login refused"),
            Err(e) => {
                self.inner.counters.connect_failures.fetch_add(1, Ordering::Relaxed);
                health.connect_failed(key.server);
                warn!(error = %e, "connect failed");
                gate.attempt_failed(&e.to_string());
            }
        }
        result
    }

    /// Closes idle and parked connections past the idle timeout (call it now and then).
    pub fn reap_idle(&self) -> usize {
        let limit = self.inner.cfg.idle_timeout();
        let pools: Vec<Arc<KeyPool>> =
            self.inner.keys.lock().map(|k| k.values().cloned().collect()).unwrap_or_default();
        let mut n = 0;
        for p in pools {
            if let Ok(mut idle) = p.idle.lock() {
                let before = idle.len();
                idle.retain(|i| i.since.elapsed() <= limit);
                n += before - idle.len();
            }
            n += p.close_parked(|since| since.elapsed() > limit);
        }
        self.inner.counters.discarded.fetch_add(n as u64, Ordering::Relaxed);
        n
    }

    /// Closes every idle or parked connection to `server` (it was found dead or congested).
    pub fn clear_server(&self, server: SocketAddr) -> usize {
        let pools: Vec<Arc<KeyPool>> = match self.inner.keys.lock() {
            Ok(k) => k.iter().filter(|((key, _), _)| key.server == server).map(|(_, p)| p.clone()).collect(),
            Err(_) => Vec::new(),
        };
        let idle: usize = pools.iter().filter_map(|p| p.idle.lock().ok().map(|mut i| i.drain(..).count())).sum();
        idle + pools.iter().map(|p| p.close_parked(|_| true)).sum::<usize>()
    }
}

impl Inner {
    fn key_pool(&self, key: &PoolKey, wire: u64) -> Arc<KeyPool> {
        let mut keys = self.keys.lock().unwrap_or_else(|e| e.into_inner());
        keys.entry((key.clone(), wire))
            .or_insert_with(|| Arc::new(KeyPool::new(key.clone(), wire, self.cfg.max_per_key)))
            .clone()
    }

    fn gate(&self, server: SocketAddr) -> Arc<ServerGate> {
        let mut servers = self.servers.lock().unwrap_or_else(|e| e.into_inner());
        servers.entry(server).or_insert_with(|| Arc::new(ServerGate::new(self.cfg.max_connects_per_server))).clone()
    }
}

/// What an idle connection taken for reuse needs ([`Pool::ready_now`]).
enum Reuse {
    /// Nothing: it is handed out as it is.
    Ready(Idle),
    /// A look at the server (a ping, a hand-over) or closing: [`Pool::revive`].
    Revive(Idle),
}

/// How long one step (connect, ping, reset) may take: `limit`, cut short by the request's
/// `deadline` (never zero, so that an expired deadline still fails through the step's timeout).
fn step_bound(limit: Duration, deadline: tokio::time::Instant) -> Duration {
    limit.min(deadline.saturating_duration_since(tokio::time::Instant::now())).max(Duration::from_millis(1))
}

/// TCP connect, greeting and login to `server`, all within `timeout`.
async fn open(
    server: SocketAddr,
    login: &LoginRequest<'_>,
    timeout: std::time::Duration,
) -> Result<Backend, PoolError> {
    let connect_err = |e: SessionError| match e {
        // backend::login words it "gateway: TLS to backend <addr>: <why>" (ERR 2026).
        SessionError::Refused { err, .. } if err.code == codes::SSL_CONNECTION => {
            PoolError::Tls { server, reason: err.message }
        }
        // backend::connect words it "gateway: cannot connect to backend <addr>: <why>".
        SessionError::Refused { err, .. } => {
            let reason = match err.message.split_once(&format!("{server}: ")) {
                Some((_, why)) => why.to_string(),
                None => err.message,
            };
            PoolError::Connect { server, reason }
        }
        other => PoolError::Connect { server, reason: other.to_string() },
    };
    let attempt = async {
        let (wire, greeting) = backend::connect(server, timeout).await.map_err(connect_err)?;
        let (b, outcome) = backend::login(wire, greeting, login).await.map_err(connect_err)?;
        match outcome {
            LoginOutcome::Ok(_) => Ok(b),
            LoginOutcome::Denied(err) => Err(PoolError::Denied { server, err }),
        }
    };
    tokio::time::timeout(timeout, attempt).await.unwrap_or_else(|_| {
        Err(PoolError::Connect { server, reason: format!("timed out after {} ms", timeout.as_millis()) })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_defaults_and_partial_toml() {
        let cfg: PoolConfig = toml::from_str("max_per_key = 4\nacquire_timeout_ms = 250").unwrap();
        assert_eq!(cfg, PoolConfig { max_per_key: 4, acquire_timeout_ms: 250, ..PoolConfig::default() });
        assert!(toml::from_str::<PoolConfig>("max_per_kee = 4").is_err(), "unknown fields are refused");
    }
}
