//! A connection borrowed from the pool: derefs to [`Backend`], returns itself when dropped.

use std::ops::{Deref, DerefMut};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::OwnedSemaphorePermit;

use super::{health, scrub, Idle, KeyPool, PoolError, PoolKey};
use crate::protocol::command;
use crate::session::backend::Backend;
use crate::session::state::{ClientState, ConnSync, SyncStep};

/// A server connection and what of a client's session state it holds (see [`ClientState::plan`]):
/// boxed from connect to close, so that handing it out and taking it back moves a pointer.
pub(super) struct Conn {
    pub(super) backend: Backend,
    pub(super) sync: ConnSync,
}

impl Conn {
    /// Moves the connection from a session thread's ring back to tokio's reactor before it leaves
    /// its session (any thread may take it next); `false`: it cannot, and is to be closed. It is
    /// peeked first: the reactor knows nothing of what came before it was registered, so a
    /// server's close that came while it was on the ring would go unseen by the next checkout.
    fn leave_ring(&mut self) -> bool {
        !self.backend.wire.io.is_ring()
            || (health::looks_alive(&mut self.backend) && self.backend.wire.io.off_ring().is_ok())
    }
}

/// A server connection handed out by [`super::Pool::get`]. Small (a box, its home and a few
/// flags): it travels by value through every step of a request.
pub struct PooledConn {
    /// `None` only once the connection has left (drop, detach).
    conn: Option<Box<Conn>>,
    client: u64,
    broken: bool,
    /// A request was sent and its answer not read to the end: never reusable as it is.
    in_flight: bool,
    /// Its client is gone (or reset its session): reset before it is idle again ([`scrub`]).
    scrub: bool,
    timeout: Duration,
    home: Arc<KeyPool>,
    /// The connection's slot: it goes with the connection among the idle ones, and is released
    /// when the connection is closed.
    slot: Option<OwnedSemaphorePermit>,
}

impl PooledConn {
    pub(super) fn new(
        conn: Box<Conn>,
        client: u64,
        home: Arc<KeyPool>,
        slot: OwnedSemaphorePermit,
        timeout: Duration,
    ) -> Self {
        home.in_use.fetch_add(1, Ordering::Relaxed);
        let slot = Some(slot);
        PooledConn { conn: Some(conn), client, broken: false, in_flight: false, scrub: false, timeout, home, slot }
    }

    /// The key this connection belongs to.
    pub fn key(&self) -> &PoolKey {
        &self.home.key
    }

    /// The server's thread id of this connection.
    pub fn thread_id(&self) -> u32 {
        self.conn.as_ref().map_or(0, |c| c.backend.greeting.connection_id)
    }

    /// What of a client's session state the connection holds (see [`ClientState::plan`]).
    pub fn sync(&self) -> &ConnSync {
        &self.inner().sync
    }

    /// [`PooledConn::sync`], to change.
    pub fn sync_mut(&mut self) -> &mut ConnSync {
        &mut self.inner_mut().sync
    }

    fn inner(&self) -> &Conn {
        match &self.conn {
            Some(c) => c,
            // Only `drop`, `scrub` and `detach` take the connection, and all consume the PooledConn.
            None => unreachable!("pooled connection used after it left the pool"),
        }
    }

    fn inner_mut(&mut self) -> &mut Conn {
        match &mut self.conn {
            Some(c) => c,
            None => unreachable!("pooled connection used after it left the pool"),
        }
    }

    /// The connection must not be reused (it failed, or its protocol state is unknown).
    pub fn mark_broken(&mut self) {
        self.broken = true;
    }

    /// Marks a request as sent (`true`) or its answer as read to the end (`false`). A connection
    /// dropped in between (the session was cancelled, the relay failed) is closed, never reused.
    pub fn set_in_flight(&mut self, in_flight: bool) {
        self.in_flight = in_flight;
    }

    /// Its client is gone or reset its session: whatever the client left on the server session
    /// (transaction, locks, temporary tables, variables) is reset before the connection is idle
    /// again, in the background once it is dropped.
    pub fn scrub_on_release(&mut self) {
        self.scrub = true;
    }

    /// Its client reset its session: the connection is reset now, in a task of its own (returned,
    /// `None` when it is closed instead: broken, or its answer not read to the end).
    pub fn scrub(mut self) -> Option<scrub::Scrub> {
        let (mut conn, slot) = (self.conn.take()?, self.slot.take()?);
        if self.broken || self.in_flight || !conn.backend.wire.buf.is_empty() || !conn.leave_ring() {
            return None;
        }
        scrub::spawn(self.home.clone(), conn, slot, self.timeout)
    }

    /// Whether the connection can go back to the pool as it is: not broken, no answer left
    /// unread, and its client has not left.
    pub fn reusable(&self) -> bool {
        !self.broken
            && !self.in_flight
            && !self.scrub
            && self.conn.as_ref().is_some_and(|c| c.backend.wire.buf.is_empty())
    }

    /// The connection as an idle one, idle since `since` (its slot and last client go with it).
    /// `None`, and the connection closed, when it is not [`Self::reusable`].
    pub(super) fn into_idle(mut self, since: Instant) -> Option<Idle> {
        if !self.reusable() {
            return None;
        }
        let (mut conn, slot) = (self.conn.take()?, self.slot.take()?);
        conn.leave_ring().then_some(Idle { conn, last_client: self.client, since, slot })
    }

    /// The pool of the connection's key.
    pub(super) fn home(&self) -> &Arc<KeyPool> {
        &self.home
    }

    /// Whether the connection was marked broken.
    pub fn is_broken(&self) -> bool {
        self.broken
    }

    /// The client (its [`ClientState::id`]) the connection is handed to.
    pub fn client(&self) -> u64 {
        self.client
    }

    /// Takes the connection out of the pool for good (a session pinned to it, kernel splice):
    /// its slot is freed and it is never returned.
    pub fn detach(mut self) -> Option<(Backend, ConnSync)> {
        let Conn { backend, sync } = *self.conn.take()?;
        Some((backend, sync))
    }

    /// Brings the connection's session up to `state` (docs/routing.md §11 steps 4–5 and the held
    /// one-shots): runs [`ClientState::plan`], then records it with [`ClientState::synced`].
    /// Returns the number of statements sent. On failure the connection is marked broken.
    pub async fn sync_state(&mut self, state: &mut ClientState) -> Result<usize, PoolError> {
        let plan = state.plan(self.sync());
        for step in &plan.steps {
            let payload = match step {
                SyncStep::InitDb(db) => [&[command::INIT_DB], db.as_bytes()].concat(),
                SyncStep::Query(q) => [&[command::QUERY], q.as_slice()].concat(),
            };
            let server = self.home.key.server;
            let timeout = self.timeout;
            self.in_flight = true;
            let answer = health::command(self, &payload, timeout).await;
            self.in_flight = false;
            match answer {
                Ok(Ok(_)) => {}
                Ok(Err(err)) => {
                    self.broken = true;
                    tracing::info!(%server, error = %err, "session sync refused");
                    return Err(PoolError::Sync { server, err });
                }
                Err(source) => {
                    self.broken = true;
                    return Err(PoolError::Lost { server, source });
                }
            }
        }
        state.synced(self.sync_mut(), &plan);
        Ok(plan.steps.len())
    }
}

impl Deref for PooledConn {
    type Target = Backend;

    fn deref(&self) -> &Backend {
        &self.inner().backend
    }
}

impl DerefMut for PooledConn {
    fn deref_mut(&mut self) -> &mut Backend {
        &mut self.inner_mut().backend
    }
}

impl Drop for PooledConn {
    fn drop(&mut self) {
        self.home.in_use.fetch_sub(1, Ordering::Relaxed);
        let (Some(mut conn), Some(slot)) = (self.conn.take(), self.slot.take()) else { return };
        if self.broken || self.in_flight || !conn.backend.wire.buf.is_empty() || !conn.leave_ring() {
            tracing::debug!(server = %self.home.key.server, thread = conn.backend.greeting.connection_id, "connection closed, not returned");
            return;
        }
        if self.scrub {
            // Its client is gone: nobody waits for the reset.
            let _ = scrub::spawn(self.home.clone(), conn, slot, self.timeout);
            return;
        }
        self.home.put_idle(Idle { conn, last_client: self.client, since: Instant::now(), slot });
    }
}
