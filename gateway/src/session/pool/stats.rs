//! The pools' counters and gauges, over all keys and per server.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};

use super::Pool;

/// Counters and gauges over all keys.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// Keys with a pool.
    pub keys: usize,
    /// Idle connections.
    pub idle: usize,
    /// Connections handed out, or parked by their sessions between statements.
    pub in_use: usize,
    /// Of `in_use`, the connections parked by their sessions between statements
    /// (`pool::park`): the pool takes them back when a request finds its key full.
    pub parked: usize,
    /// Requests waiting for a connection now (every one of their key's slots is taken).
    pub waiting: usize,
    /// Connection attempts in flight now.
    pub connecting: usize,
    /// Requests waiting for a connect permit now.
    pub connect_waiters: usize,
    /// Most connection attempts ever in flight at once to one server.
    pub max_connecting: usize,
    /// Connections opened.
    pub connects: u64,
    /// Connection attempts that failed (login refusals excluded).
    pub connect_failures: u64,
    /// Idle connections handed out again.
    pub reuses: u64,
    /// Resets before a reuse by another client.
    pub resets: u64,
    /// Idle connections closed: expired, dead, failed ping or reset.
    pub discarded: u64,
    /// Requests that timed out waiting.
    pub acquire_timeouts: u64,
}

/// Connections of one server over all its keys, at one moment (the metrics gauges).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerPoolStats {
    /// Idle connections.
    pub idle: usize,
    /// Connections handed out, or parked by their sessions between statements.
    pub in_use: usize,
    /// Connection attempts in flight.
    pub connecting: usize,
}

/// Monotonic counters, shared by every key.
#[derive(Default)]
pub(super) struct Counters {
    pub(super) connects: AtomicU64,
    pub(super) connect_failures: AtomicU64,
    pub(super) reuses: AtomicU64,
    pub(super) resets: AtomicU64,
    pub(super) discarded: AtomicU64,
    pub(super) acquire_timeouts: AtomicU64,
}

impl Pool {
    /// Current counters.
    pub fn stats(&self) -> PoolStats {
        let c = &self.inner.counters;
        let mut s = PoolStats {
            connects: c.connects.load(Ordering::Relaxed),
            connect_failures: c.connect_failures.load(Ordering::Relaxed),
            reuses: c.reuses.load(Ordering::Relaxed),
            resets: c.resets.load(Ordering::Relaxed),
            discarded: c.discarded.load(Ordering::Relaxed),
            acquire_timeouts: c.acquire_timeouts.load(Ordering::Relaxed),
            ..PoolStats::default()
        };
        if let Ok(keys) = self.inner.keys.lock() {
            s.keys = keys.len();
            for p in keys.values() {
                s.idle += p.idle.lock().map(|i| i.len()).unwrap_or(0);
                s.in_use += p.in_use.load(Ordering::Relaxed);
                s.parked += p.parked_count();
                s.waiting += p.waiting.load(Ordering::Relaxed);
            }
        }
        if let Ok(servers) = self.inner.servers.lock() {
            for g in servers.values() {
                s.connecting += g.connecting.load(Ordering::Relaxed);
                s.connect_waiters += g.waiting.load(Ordering::Relaxed);
                s.max_connecting = s.max_connecting.max(g.max_connecting.load(Ordering::Relaxed));
            }
        }
        s
    }

    /// [`ServerPoolStats`] of every server the pool has a key or a connect gate for.
    pub fn server_stats(&self) -> HashMap<SocketAddr, ServerPoolStats> {
        let mut out: HashMap<SocketAddr, ServerPoolStats> = HashMap::new();
        if let Ok(keys) = self.inner.keys.lock() {
            for ((key, _), p) in keys.iter() {
                let s = out.entry(key.server).or_default();
                s.idle += p.idle.lock().map(|i| i.len()).unwrap_or(0);
                s.in_use += p.in_use.load(Ordering::Relaxed);
            }
        }
        if let Ok(servers) = self.inner.servers.lock() {
            for (addr, g) in servers.iter() {
                out.entry(*addr).or_default().connecting += g.connecting.load(Ordering::Relaxed);
            }
        }
        out
    }
}
