//! The connect limit of one server: at most `max_connects_per_server` attempts in flight, the
//! others wait for a permit until their request's deadline — or until an attempt to the server
//! fails, which sends them on to another candidate at once instead of into the same failure.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

/// Connect limit and gauges of one server.
pub(super) struct ServerGate {
    permits: Arc<Semaphore>,
    /// Woken when an attempt fails (refused, timed out, closed during the greeting or login).
    failed: Notify,
    /// Why the last attempt failed.
    last_failure: Mutex<String>,
    pub(super) connecting: AtomicUsize,
    pub(super) waiting: AtomicUsize,
    pub(super) max_connecting: AtomicUsize,
}

/// Why no permit was handed out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum NoPermit {
    /// The deadline passed while waiting.
    Timeout,
    /// An attempt to the server failed while waiting (its reason).
    ServerFailed(String),
}

impl ServerGate {
    pub(super) fn new(limit: usize) -> Self {
        ServerGate {
            permits: Arc::new(Semaphore::new(limit.max(1))),
            failed: Notify::new(),
            last_failure: Mutex::default(),
            connecting: AtomicUsize::new(0),
            waiting: AtomicUsize::new(0),
            max_connecting: AtomicUsize::new(0),
        }
    }

    /// A connect permit, waiting at most until `deadline`; gives up as soon as an attempt to the
    /// server fails meanwhile.
    pub(super) async fn permit(&self, deadline: Instant) -> Result<OwnedSemaphorePermit, NoPermit> {
        if let Ok(p) = self.permits.clone().try_acquire_owned() {
            return Ok(p);
        }
        let _waiting = super::Gauge::up(&self.waiting);
        // Registered before the permit wait starts, so a failure in between is not missed.
        let failed = self.failed.notified();
        tokio::pin!(failed);
        failed.as_mut().enable();
        tokio::select! {
            // A failure seen together with a free permit still means the server is failing.
            biased;
            () = &mut failed => {
                let why = self.last_failure.lock().map(|s| s.clone()).unwrap_or_default();
                Err(NoPermit::ServerFailed(why))
            }
            p = tokio::time::timeout_at(deadline, self.permits.clone().acquire_owned()) => match p {
                Ok(Ok(p)) => Ok(p),
                _ => Err(NoPermit::Timeout),
            },
        }
    }

    /// An attempt failed: the requests waiting for a permit are told.
    pub(super) fn attempt_failed(&self, why: &str) {
        if let Ok(mut s) = self.last_failure.lock() {
            why.clone_into(&mut s);
        }
        self.failed.notify_waiters();
    }

    /// Counts an attempt in flight for the guard's lifetime.
    pub(super) fn connecting(&self) -> super::Gauge<'_> {
        let (g, n) = super::Gauge::up(&self.connecting);
        self.max_connecting.fetch_max(n, Ordering::Relaxed);
        g
    }
}
