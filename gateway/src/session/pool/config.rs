//! Pool settings (`[pool]` in the gateway configuration).

use std::time::Duration;

use serde::Deserialize;

/// Limits and timers of the server connection pools.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PoolConfig {
    /// Most connections (idle and in use) per (server, tenant, user). A request that finds them
    /// all in use waits for one to come back, up to `acquire_timeout_ms`. Default 32.
    pub max_per_key: usize,
    /// Most connection attempts (TCP connect + login) in flight to one server at a time, over all
    /// its keys, so that a crowd of clients arriving together does not storm it. Default 8.
    pub max_connects_per_server: usize,
    /// How long a request may wait for a connection, in total from when it asks: a free slot, a
    /// connect permit, the TCP connect, the greeting and the login all end by this one deadline
    /// (the request then fails over to another candidate, or fails with a clear error).
    /// Milliseconds; default 5000.
    pub acquire_timeout_ms: u64,
    /// Bound of one connection attempt (TCP connect, greeting, login), cut short by the
    /// request's `acquire_timeout_ms` deadline. Milliseconds; default 3000.
    pub connect_timeout_ms: u64,
    /// An idle connection older than this is closed instead of reused. Seconds; default 300
    /// (below the servers' `wait_timeout`).
    pub idle_timeout_secs: u64,
    /// A connection idle longer than this is checked with COM_PING before reuse; younger ones only
    /// get a non-blocking check that the server has not closed the socket. Milliseconds; default
    /// 5000; 0 pings on every reuse.
    pub health_check_after_ms: u64,
}

impl Default for PoolConfig {
    fn default() -> Self {
        PoolConfig {
            max_per_key: 32,
            max_connects_per_server: 8,
            acquire_timeout_ms: 5000,
            connect_timeout_ms: 3000,
            idle_timeout_secs: 300,
            health_check_after_ms: 5000,
        }
    }
}

impl PoolConfig {
    /// `acquire_timeout_ms` as a duration.
    pub fn acquire_timeout(&self) -> Duration {
        Duration::from_millis(self.acquire_timeout_ms)
    }

    /// `connect_timeout_ms` as a duration.
    pub fn connect_timeout(&self) -> Duration {
        Duration::from_millis(self.connect_timeout_ms)
    }

    /// `idle_timeout_secs` as a duration.
    pub fn idle_timeout(&self) -> Duration {
        Duration::from_secs(self.idle_timeout_secs)
    }

    /// `health_check_after_ms` as a duration.
    pub fn health_check_after(&self) -> Duration {
        Duration::from_millis(self.health_check_after_ms)
    }
}
