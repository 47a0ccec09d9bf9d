//! Per-server congestion control: dead, force-alive, alive and detect congestion (docs/routing.md §6).
//!
//! Pure state machines driven by an injected clock: every method takes `now: Instant`, so tests
//! step time by adding durations instead of sleeping.

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Why a server is congested, from least to most severe (the priority of docs/routing.md §6 reversed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CongestionKind {
    /// Active probes failed 3 times in a row (DETECT_DEAD).
    Detect,
    /// 5 failures within 120 s.
    Alive,
    /// The server or its zone is upgrading.
    ForceAlive,
    /// The server is INACTIVE or replaying.
    Dead,
}

impl CongestionKind {
    /// Field name printed in CONGESTION_CONTROL (`dead_congested`, …).
    pub const fn field(self) -> &'static str {
        match self {
            CongestionKind::Detect => "detect_congested",
            CongestionKind::Alive => "alive_congested",
            CongestionKind::ForceAlive => "force_alive_congested",
            CongestionKind::Dead => "dead_congested",
        }
    }
}

/// Congestion state of a server at one instant, as the route engine consumes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CongestionState {
    /// Usable.
    #[default]
    Alive,
    /// Alive-congested, but the retry interval has passed: one connection may try it; call
    /// [`CongestionManager::claim_retry`] when connecting.
    RetryDue,
    /// Congested: skipped unless every candidate is.
    Congested(CongestionKind),
}

impl CongestionState {
    /// The server should be skipped.
    pub const fn is_congested(self) -> bool {
        matches!(self, CongestionState::Congested(_))
    }

    /// Dead or force-alive congested: counts as unavailable for the `_OPTIMIZED` switch (docs/routing.md §4).
    pub const fn is_force_congested(self) -> bool {
        matches!(self, CongestionState::Congested(CongestionKind::Dead | CongestionKind::ForceAlive))
    }

    /// Ordering key: usable servers first, then congested ones by increasing severity.
    pub(crate) fn severity(self) -> u8 {
        match self {
            CongestionState::Alive | CongestionState::RetryDue => 0,
            CongestionState::Congested(k) => 1 + k as u8,
        }
    }
}

/// Server status from the server-list refresh (`DBA_OB_SERVERS`, docs/routing.md §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ServerStatus {
    /// ACTIVE and in service: clears dead and force-alive congestion.
    Active,
    /// INACTIVE: dead.
    Inactive,
    /// ACTIVE but not in service (replaying): dead.
    Replay,
    /// `stop_time` set, or its zone upgrading: force-alive congested.
    Upgrade,
    /// DELETING: unchanged.
    Deleting,
}

/// Congestion settings; defaults are ODP's (docs/routing.md §6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CongestionConfig {
    /// `enable_congestion`.
    pub enabled: bool,
    /// `congestion_failure_threshold` (5); 0 disables alive congestion.
    pub failure_threshold: u32,
    /// `congestion_fail_window` (120 s).
    pub fail_window: Duration,
    /// `congestion_retry_interval` (20 s).
    pub retry_interval: Duration,
    /// `min_keep_congestion_interval` (20 s).
    pub min_keep_interval: Duration,
    /// `server_detect_fail_threshold` (3).
    pub detect_fail_threshold: u32,
}

impl Default for CongestionConfig {
    fn default() -> Self {
        CongestionConfig {
            enabled: true,
            failure_threshold: 5,
            fail_window: Duration::from_secs(120),
            retry_interval: Duration::from_secs(20),
            min_keep_interval: Duration::from_secs(20),
            detect_fail_threshold: 3,
        }
    }
}

/// Congestion flags and timers of one server.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerCongestion {
    dead: bool,
    force_alive: bool,
    /// When alive congestion was set.
    alive_since: Option<Instant>,
    /// Last failure, bumped when a retry is granted.
    last_failure: Option<Instant>,
    /// Failures inside the window.
    failures: VecDeque<Instant>,
    detect_failures: u32,
    detect_dead: bool,
}

impl ServerCongestion {
    /// Applies a server-list refresh (docs/routing.md §6). ACTIVE clears dead and force-alive congestion, and
    /// alive congestion once it has been kept `min_keep_interval`.
    pub fn on_server_status(&mut self, status: ServerStatus, now: Instant, cfg: &CongestionConfig) {
        match status {
            ServerStatus::Active => {
                self.dead = false;
                self.force_alive = false;
                self.clear_alive_if_kept(now, cfg);
            }
            ServerStatus::Inactive | ServerStatus::Replay => self.dead = true,
            ServerStatus::Upgrade => self.force_alive = true,
            ServerStatus::Deleting => {}
        }
    }

    /// Records a failure (connect error, timeout, closed connection, `OB_SERVER_IS_INIT`, …).
    pub fn on_failure(&mut self, now: Instant, cfg: &CongestionConfig) {
        if !cfg.enabled || cfg.failure_threshold == 0 {
            return;
        }
        self.failures.push_back(now);
        while self.failures.front().is_some_and(|f| now.saturating_duration_since(*f) > cfg.fail_window) {
            self.failures.pop_front();
        }
        self.last_failure = Some(now);
        if self.alive_since.is_none() && self.failures.len() >= cfg.failure_threshold as usize {
            self.alive_since = Some(now);
        }
    }

    /// Records a success: clears alive congestion kept at least `min_keep_interval`.
    pub fn on_success(&mut self, now: Instant, cfg: &CongestionConfig) {
        self.clear_alive_if_kept(now, cfg);
    }

    /// Records the outcome of an active probe (`select 'detect server' from dual`).
    pub fn on_detect(&mut self, ok: bool, cfg: &CongestionConfig) {
        if ok {
            self.detect_failures = 0;
            self.detect_dead = false;
        } else {
            self.detect_failures = self.detect_failures.saturating_add(1);
            self.detect_dead = self.detect_failures >= cfg.detect_fail_threshold;
        }
    }

    /// Whether the server is alive whatever the time: no congestion of any kind is set.
    fn plainly_alive(&self) -> bool {
        !self.dead && !self.force_alive && self.alive_since.is_none() && !self.detect_dead
    }

    /// The state at `now` (priority dead > force-alive > alive > detect), without side effects.
    pub fn state(&self, now: Instant, cfg: &CongestionConfig) -> CongestionState {
        if !cfg.enabled {
            CongestionState::Alive
        } else if self.dead {
            CongestionState::Congested(CongestionKind::Dead)
        } else if self.force_alive {
            CongestionState::Congested(CongestionKind::ForceAlive)
        } else if self.alive_since.is_some() {
            self.alive_congested_state(now, cfg)
        } else if self.detect_dead {
            CongestionState::Congested(CongestionKind::Detect)
        } else {
            CongestionState::Alive
        }
    }

    /// Takes the single retry of an alive-congested server whose retry interval has passed: the
    /// failure time is bumped so that other connections keep skipping it. Returns whether the
    /// retry was granted.
    pub fn claim_retry(&mut self, now: Instant, cfg: &CongestionConfig) -> bool {
        let due = self.state(now, cfg) == CongestionState::RetryDue;
        if due {
            self.last_failure = Some(now);
        }
        due
    }

    fn alive_congested_state(&self, now: Instant, cfg: &CongestionConfig) -> CongestionState {
        let last = self.last_failure.or(self.alive_since);
        match last {
            Some(t) if now.saturating_duration_since(t) >= cfg.retry_interval => CongestionState::RetryDue,
            _ => CongestionState::Congested(CongestionKind::Alive),
        }
    }

    fn clear_alive_if_kept(&mut self, now: Instant, cfg: &CongestionConfig) {
        if let Some(since) = self.alive_since {
            if now.saturating_duration_since(since) >= cfg.min_keep_interval {
                self.alive_since = None;
                self.last_failure = None;
                self.failures.clear();
            }
        }
    }
}

/// Congestion state of every server the gateway has seen.
#[derive(Debug, Default)]
pub struct CongestionManager {
    cfg: CongestionConfig,
    /// By server address (from the topology, not from clients: a fast hasher, looked up for every
    /// routed request).
    servers: HashMap<SocketAddr, ServerCongestion, foldhash::fast::RandomState>,
    /// Set after every change: whether every server is alive ([`Calm`]).
    calm: Calm,
}

/// Whether every server the manager knows is alive (no congestion of any kind), readable
/// without the manager's lock: while it holds, every server's state is
/// [`CongestionState::Alive`], so a request orders its candidates without the lock that every
/// session shares. Updated under the lock by every change of the manager.
#[derive(Debug, Clone)]
pub struct Calm(Arc<AtomicBool>);

impl Default for Calm {
    fn default() -> Self {
        Calm(Arc::new(AtomicBool::new(true)))
    }
}

impl Calm {
    /// Whether every server is alive now.
    pub fn is_calm(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }
}

impl Clone for CongestionManager {
    /// A copy with a flag of its own (changes to the copy do not move the original's).
    fn clone(&self) -> Self {
        let calm = Calm(Arc::new(AtomicBool::new(self.calm.is_calm())));
        CongestionManager { cfg: self.cfg, servers: self.servers.clone(), calm }
    }
}

impl CongestionManager {
    /// A manager with the given settings.
    pub fn new(cfg: CongestionConfig) -> Self {
        CongestionManager { cfg, servers: HashMap::default(), calm: Calm::default() }
    }

    /// The settings.
    pub fn config(&self) -> &CongestionConfig {
        &self.cfg
    }

    /// The manager's [`Calm`] flag (shared: it follows every later change).
    pub fn calm(&self) -> Calm {
        self.calm.clone()
    }

    /// Sets the [`Calm`] flag after a change.
    fn recheck(&self) {
        let calm = !self.cfg.enabled || self.servers.values().all(ServerCongestion::plainly_alive);
        self.calm.0.store(calm, Ordering::Release);
    }

    /// State of `addr` at `now`; unknown servers are alive.
    pub fn state(&self, addr: SocketAddr, now: Instant) -> CongestionState {
        self.servers.get(&addr).map_or(CongestionState::Alive, |s| s.state(now, &self.cfg))
    }

    /// See [`ServerCongestion::on_server_status`].
    pub fn on_server_status(&mut self, addr: SocketAddr, status: ServerStatus, now: Instant) {
        let cfg = self.cfg;
        self.servers.entry(addr).or_default().on_server_status(status, now, &cfg);
        self.recheck();
    }

    /// See [`ServerCongestion::on_failure`].
    pub fn on_failure(&mut self, addr: SocketAddr, now: Instant) {
        let cfg = self.cfg;
        self.servers.entry(addr).or_default().on_failure(now, &cfg);
        self.recheck();
    }

    /// See [`ServerCongestion::on_success`].
    pub fn on_success(&mut self, addr: SocketAddr, now: Instant) {
        let cfg = self.cfg;
        if let Some(s) = self.servers.get_mut(&addr) {
            s.on_success(now, &cfg);
            self.recheck();
        }
    }

    /// See [`ServerCongestion::on_detect`].
    pub fn on_detect(&mut self, addr: SocketAddr, ok: bool) {
        let cfg = self.cfg;
        self.servers.entry(addr).or_default().on_detect(ok, &cfg);
        self.recheck();
    }

    /// See [`ServerCongestion::claim_retry`].
    pub fn claim_retry(&mut self, addr: SocketAddr, now: Instant) -> bool {
        let cfg = self.cfg;
        self.servers.get_mut(&addr).is_some_and(|s| s.claim_retry(now, &cfg))
    }

    /// Every server seen, in address order, for `SHOW PROXYCONGESTION` (read-only).
    pub fn report(&self, now: Instant) -> Vec<CongestionReport> {
        let mut out: Vec<CongestionReport> = self
            .servers
            .iter()
            .map(|(addr, s)| CongestionReport {
                addr: *addr,
                state: s.state(now, &self.cfg),
                failures: s
                    .failures
                    .iter()
                    .filter(|f| now.saturating_duration_since(**f) <= self.cfg.fail_window)
                    .count(),
                last_failure: s.last_failure,
                retry_at: s.alive_since.and(s.last_failure.or(s.alive_since)).map(|t| t + self.cfg.retry_interval),
                detect_failures: s.detect_failures,
            })
            .collect();
        out.sort_by_key(|r| r.addr);
        out
    }
}

/// One server's congestion, as `SHOW PROXYCONGESTION` prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CongestionReport {
    /// Server address.
    pub addr: SocketAddr,
    /// State now.
    pub state: CongestionState,
    /// Failures inside the failure window.
    pub failures: usize,
    /// Last failure (or granted retry).
    pub last_failure: Option<Instant>,
    /// When an alive-congested server may be retried.
    pub retry_at: Option<Instant>,
    /// Failed active probes in a row.
    pub detect_failures: u32,
}
