//! The connections of one key (server, tenant, user and wire identity): the slots every
//! connection holds from its connect to its close, the idle list, and the requests waiting their
//! turn.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};

use super::conn::Conn;
use super::{park, PoolKey};

/// The connections of one key.
pub(super) struct KeyPool {
    /// The key (shared by every connection handed out: a checkout clones no key).
    pub(super) key: PoolKey,
    /// The logins' [`wire_identity`] (the map's key besides [`KeyPool::key`]).
    pub(super) wire: u64,
    /// One permit per connection that exists (handed out, idle, or being reset): a connection
    /// keeps its permit from its connect to its close, so that handing it out and taking it
    /// back touch no semaphore.
    pub(super) slots: Arc<Semaphore>,
    /// Idle connections, most recently returned last.
    pub(super) idle: Mutex<Vec<Idle>>,
    pub(super) in_use: AtomicUsize,
    /// Requests waiting for a connection ([`KeyPool::wait_turn`]).
    pub(super) waiting: AtomicUsize,
    /// Told when a connection becomes idle while requests wait.
    pub(super) returned: Notify,
    /// The sessions' parking spots of this key ([`park`]): connections kept between statements,
    /// taken back for other requests when the key is full.
    pub(super) spots: Mutex<park::Spots>,
}

pub(super) struct Idle {
    /// Boxed from connect to close, so that the hand-outs and returns of every statement move
    /// a pointer, not the connection, its buffers and its session state.
    pub(super) conn: Box<Conn>,
    pub(super) last_client: u64,
    pub(super) since: Instant,
    /// The connection's slot, held while it is idle too.
    pub(super) slot: OwnedSemaphorePermit,
}

/// Adds one to a gauge for the guard's lifetime (also when the request is cancelled).
pub(super) struct Gauge<'a>(&'a AtomicUsize);

impl<'a> Gauge<'a> {
    pub(super) fn up(g: &'a AtomicUsize) -> (Self, usize) {
        (Gauge(g), g.fetch_add(1, Ordering::SeqCst) + 1)
    }
}

impl Drop for Gauge<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl KeyPool {
    /// An empty pool of `key` (and `wire`) with `max_per_key` slots (at least one).
    pub(super) fn new(key: PoolKey, wire: u64, max_per_key: usize) -> Self {
        KeyPool {
            key,
            wire,
            slots: Arc::new(Semaphore::new(max_per_key.max(1))),
            idle: Mutex::default(),
            in_use: AtomicUsize::new(0),
            waiting: AtomicUsize::new(0),
            returned: Notify::new(),
            spots: Mutex::default(),
        }
    }

    /// An idle connection (with its slot), else a free slot for a new one; `None` when the
    /// request must wait. An idle connection does not go to a newcomer while requests wait
    /// for one: they were first.
    pub(super) fn idle_or_slot(&self, client: u64) -> Option<Found> {
        let first = self.waiting.load(Ordering::Relaxed) == 0;
        if first {
            if let Some(idle) = self.take_idle(client) {
                return Some(Found::Idle(idle));
            }
        }
        if let Ok(slot) = self.slots.clone().try_acquire_owned() {
            return Some(Found::Slot(slot));
        }
        // Full: a connection a session keeps between its statements is taken back.
        first.then(|| self.take_parked()).flatten().map(Found::Idle)
    }

    /// Waits until `deadline` for an idle connection or a slot freed by a closed one (`None`:
    /// the deadline passed).
    pub(super) async fn wait_turn(&self, client: u64, deadline: tokio::time::Instant) -> Option<Found> {
        // Counted before the idle list is looked at: a connection returned after the look
        // sees the count, under the list's lock, and tells a waiter (`put_idle`).
        // The look at parked connections fences first: a session parking one meanwhile sees
        // the count ([`super::park`]).
        let _waiting = Gauge::up(&self.waiting);
        let expired = tokio::time::sleep_until(deadline);
        tokio::pin!(expired);
        loop {
            // Listening before the look: a connection returned after it wakes this waiter (two
            // returns wake two waiters; a notification that found no listener is kept).
            let returned = self.returned.notified();
            tokio::pin!(returned);
            returned.as_mut().enable();
            if let Some(idle) = self.take_idle(client).or_else(|| self.take_parked()) {
                return Some(Found::Idle(idle));
            }
            tokio::select! {
                biased;
                slot = self.slots.clone().acquire_owned() => return slot.ok().map(Found::Slot),
                () = &mut returned => {}
                () = &mut expired => return None,
            }
        }
    }

    /// The idle connection `client` used last if any (its session needs no reset), else the most
    /// recently returned one.
    pub(super) fn take_idle(&self, client: u64) -> Option<Idle> {
        let mut idle = self.idle.lock().ok()?;
        let pos = idle.iter().rposition(|i| i.last_client == client).or_else(|| idle.len().checked_sub(1))?;
        Some(idle.remove(pos))
    }

    pub(super) fn put_idle(&self, idle: Idle) {
        let Ok(mut v) = self.idle.lock() else { return };
        v.push(idle);
        // Read under the lock: a waiter counted itself before its last look at the list.
        let waiting = self.waiting.load(Ordering::Relaxed) > 0;
        drop(v);
        if waiting {
            self.returned.notify_one();
        }
    }
}

/// What a request found for its connection.
pub(super) enum Found {
    /// An idle connection, with its slot.
    Idle(Idle),
    /// A free slot: a new connection is opened in it.
    Slot(OwnedSemaphorePermit),
}
