//! `KILL PROXYSESSION id`: ends the gateway session with that connection id (any user's),
//! like `KILL CONNECTION` does for one's own sessions.

use super::{AdminCommand, AdminContext, Reply};
use crate::protocol::codes;
use crate::protocol::message::ErrPacket;

/// ER_QUERY_INTERRUPTED, the answer to killing one's own session.
const QUERY_INTERRUPTED: u16 = 1317;

/// `KILL PROXYSESSION id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KillProxySession {
    /// Gateway connection id.
    pub id: u32,
}

/// Parses what follows `KILL PROXYSESSION`: the id (ODP's optional server-session id is not
/// supported).
pub fn parse(rest: &str) -> Option<KillProxySession> {
    rest.trim().parse().ok().map(|id| KillProxySession { id })
}

impl AdminCommand for KillProxySession {
    fn execute(&self, cx: &AdminContext<'_>) -> Result<Reply, ErrPacket> {
        if !cx.shared.sessions.kill(self.id) {
            return Err(ErrPacket::new(codes::NO_SUCH_THREAD, format!("Unknown thread id: {}", self.id)));
        }
        tracing::info!(user = cx.user, victim = self.id, "KILL PROXYSESSION");
        if self.id == cx.id {
            return Err(ErrPacket::with_state(QUERY_INTERRUPTED, b"70100", "Query execution was interrupted"));
        }
        Ok(Reply::Ok(0))
    }
}
