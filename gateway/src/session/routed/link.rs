//! The server side of a routed session between requests: the connection it keeps (transaction,
//! pin, cursor), the server of its previous request, and what dependent functions need from that
//! server session. Issue #18 item 1 grows this into the session's whole server link.

use std::net::SocketAddr;

use super::dependent::Dependent;
use crate::session::pool::{PooledConn, Scrub};

/// What a routed session keeps of its servers between requests.
#[derive(Default)]
pub(super) struct ServerLink {
    /// The connection the session keeps (transaction, pin, cursor); `None` when released.
    held: Option<PooledConn>,
    /// Server of the previous request (dependent functions and commands without a statement go
    /// there).
    last_server: Option<SocketAddr>,
    /// The previous statement's server session and the last insert id (dependent functions).
    pub dependent: Dependent,
}

impl ServerLink {
    /// The kept connection.
    pub fn held(&self) -> Option<&PooledConn> {
        self.held.as_ref()
    }

    /// The kept connection, to use in place.
    pub fn held_mut(&mut self) -> Option<&mut PooledConn> {
        self.held.as_mut()
    }

    /// Whether a connection is kept.
    pub fn is_holding(&self) -> bool {
        self.held.is_some()
    }

    /// Takes the kept connection (to run a request on it, to release or to splice it).
    pub fn take_held(&mut self) -> Option<PooledConn> {
        self.held.take()
    }

    /// Keeps `conn` for the next request.
    pub fn hold(&mut self, conn: PooledConn) {
        self.held = Some(conn);
    }

    /// The server of the previous request.
    pub fn last_server(&self) -> Option<SocketAddr> {
        self.last_server
    }

    /// The last request ran on `server`.
    pub fn ran_on(&mut self, server: SocketAddr) {
        self.last_server = Some(server);
    }

    /// Forgets everything (COM_RESET_CONNECTION, COM_CHANGE_USER); the kept connection is reset
    /// in a task of its own, returned (`None` when there was none, or it was closed instead).
    pub fn reset(&mut self) -> Option<Scrub> {
        let scrub = self.held.take().and_then(PooledConn::scrub);
        *self = ServerLink::default();
        scrub
    }
}
