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

/// A server connection handed out by [`super::Pool::get`].
pub struct PooledConn {
    /// `None` only once the connection has left (drop, detach).
    backend: Option<Box<Backend>>,
    /// What of a client's session state the connection holds (see [`ClientState::plan`]).
    pub sync: ConnSync,
    key: PoolKey,
    client: u64,
    broken: bool,
    /// A request was sent and its answer not read to the end: never reusable as it is.
    in_flight: bool,
    /// Its client is gone (or reset its session): reset before it is idle again ([`scrub`]).
    scrub: bool,
    timeout: Duration,
    home: Arc<KeyPool>,
    /// Released after the connection is back among the idle ones.
    slot: Option<OwnedSemaphorePermit>,
}

impl PooledConn {
    pub(super) fn new(
        backend: Box<Backend>,
        sync: ConnSync,
        key: PoolKey,
        client: u64,
        home: Arc<KeyPool>,
        slot: OwnedSemaphorePermit,
        timeout: Duration,
    ) -> Self {
        home.in_use.fetch_add(1, Ordering::Relaxed);
        let slot = Some(slot);
        PooledConn {
            backend: Some(backend),
            sync,
            key,
            client,
            broken: false,
            in_flight: false,
            scrub: false,
            timeout,
            home,
            slot,
        }
    }

    /// The key this connection belongs to.
    pub fn key(&self) -> &PoolKey {
        &self.key
    }

    /// The server's thread id of this connection.
    pub fn thread_id(&self) -> u32 {
        self.backend.as_ref().map_or(0, |b| b.greeting.connection_id)
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
        let backend = self.backend.take()?;
        if self.broken || self.in_flight || !backend.wire.buf.is_empty() {
            return None;
        }
        let sync = std::mem::take(&mut self.sync);
        scrub::spawn(self.home.clone(), backend, sync, self.slot.take(), self.timeout)
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
    pub fn detach(mut self) -> Option<(Box<Backend>, ConnSync)> {
        let backend = self.backend.take()?;
        Some((backend, std::mem::take(&mut self.sync)))
    }

    /// Brings the connection's session up to `state` (docs/routing.md §11 steps 4–5 and the held
    /// one-shots): runs [`ClientState::plan`], then records it with [`ClientState::synced`].
    /// Returns the number of statements sent. On failure the connection is marked broken.
    pub async fn sync_state(&mut self, state: &mut ClientState) -> Result<usize, PoolError> {
        let plan = state.plan(&self.sync);
        for step in &plan.steps {
            let payload = match step {
                SyncStep::InitDb(db) => [&[command::INIT_DB], db.as_bytes()].concat(),
                SyncStep::Query(q) => [&[command::QUERY], q.as_slice()].concat(),
            };
            let server = self.key.server;
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
        state.synced(&mut self.sync, &plan);
        Ok(plan.steps.len())
    }
}

impl Deref for PooledConn {
    type Target = Backend;

    fn deref(&self) -> &Backend {
        match &self.backend {
            Some(b) => b,
            // Only `drop` and `detach` take the backend, and both consume the PooledConn.
            None => unreachable!("pooled connection used after it left the pool"),
        }
    }
}

impl DerefMut for PooledConn {
    fn deref_mut(&mut self) -> &mut Backend {
        match &mut self.backend {
            Some(b) => b,
            None => unreachable!("pooled connection used after it left the pool"),
        }
    }
}

impl Drop for PooledConn {
    fn drop(&mut self) {
        self.home.in_use.fetch_sub(1, Ordering::Relaxed);
        let Some(backend) = self.backend.take() else { return };
        if self.broken || self.in_flight || !backend.wire.buf.is_empty() {
            tracing::debug!(server = %self.key.server, thread = backend.greeting.connection_id, "connection closed, not returned");
            return;
        }
        let sync = std::mem::take(&mut self.sync);
        if self.scrub {
            // Its client is gone: nobody waits for the reset.
            let _ = scrub::spawn(self.home.clone(), backend, sync, self.slot.take(), self.timeout);
            return;
        }
        self.home.put_idle(Idle { backend, sync, last_client: self.client, since: Instant::now() });
    }
}
