//! The server side of a routed session: its binding to server connections (a connection it
//! holds, or none and the server of its previous request) and what dependent functions need
//! from that server session. [`super::execute`] runs one request on it.

use std::net::SocketAddr;

use super::dependent::Dependent;
use crate::session::pool::{PooledConn, Scrub};

/// How a routed session is bound to its server connections between requests.
// The binding lives in its session and is not moved around; boxing the connection would cost an
// allocation each time a transaction's connection is held again.
#[allow(clippy::large_enum_variant)]
pub(super) enum Binding {
    /// Nothing kept: each request takes a pooled connection. `last`: the server of the previous
    /// request (dependent functions and commands without a statement go there).
    Released { last: Option<SocketAddr> },
    /// A connection kept for the next request: the session is sticky (a transaction, a pin or
    /// an open cursor, [`super::transaction::StickyReason`]). The previous request ran on it.
    Held(PooledConn),
}

impl Default for Binding {
    fn default() -> Self {
        Binding::Released { last: None }
    }
}

/// What a routed session keeps of its servers between requests.
#[derive(Default)]
pub(super) struct ServerLink {
    binding: Binding,
    /// The previous statement's server session and the last insert id (dependent functions).
    pub dependent: Dependent,
    /// The framed request being sent, kept between requests (no allocation per statement) up
    /// to [`KEEP_OUT`] bytes.
    pub out: Vec<u8>,
}

/// The largest request buffer a session keeps for the next request.
pub(super) const KEEP_OUT: usize = 64 * 1024;

impl ServerLink {
    /// The kept connection.
    pub fn held(&self) -> Option<&PooledConn> {
        match &self.binding {
            Binding::Held(conn) => Some(conn),
            Binding::Released { .. } => None,
        }
    }

    /// The kept connection, to use in place.
    pub fn held_mut(&mut self) -> Option<&mut PooledConn> {
        match &mut self.binding {
            Binding::Held(conn) => Some(conn),
            Binding::Released { .. } => None,
        }
    }

    /// Whether a connection is kept.
    pub fn is_holding(&self) -> bool {
        matches!(self.binding, Binding::Held(_))
    }

    /// Takes the kept connection (to run a request on it, to release or to splice it); its
    /// server stays the previous one.
    pub fn take_held(&mut self) -> Option<PooledConn> {
        let last = self.last_server();
        match std::mem::replace(&mut self.binding, Binding::Released { last }) {
            Binding::Held(conn) => Some(conn),
            Binding::Released { .. } => None,
        }
    }

    /// Keeps `conn` for the next request (a connection kept before is released).
    pub fn hold(&mut self, conn: PooledConn) {
        self.binding = Binding::Held(conn);
    }

    /// The server of the previous request.
    pub fn last_server(&self) -> Option<SocketAddr> {
        match &self.binding {
            Binding::Held(conn) => Some(conn.key().server),
            Binding::Released { last } => *last,
        }
    }

    /// The last request ran on `server` (a held connection is on it already).
    pub fn ran_on(&mut self, server: SocketAddr) {
        if let Binding::Released { last } = &mut self.binding {
            *last = Some(server);
        }
    }

    /// Forgets everything (COM_RESET_CONNECTION, COM_CHANGE_USER); the kept connection is reset
    /// in a task of its own, returned (`None` when there was none, or it was closed instead).
    pub fn reset(&mut self) -> Option<Scrub> {
        let scrub = self.take_held().and_then(PooledConn::scrub);
        *self = ServerLink::default();
        scrub
    }
}
