//! The client side of a session, the same for 1:1 and routed sessions: the client's connection,
//! what its login negotiated, and the answers and exchanges that need only those.

use std::future::Future;
use std::net::SocketAddr;

use tracing::info;

use super::client_auth::Exchange;
use super::kill_switch::KillSwitch;
use super::next_command::{self, NextCommand};
use super::relay::{self, KillSignal};
use super::{SessionError, Shared};
use crate::live_config::ConfigCopy;
use crate::protocol::frame::Wire;
use crate::protocol::message::{ErrPacket, OkPacket};
use crate::tls::Stream;

/// One client connection past its login.
pub struct ClientSide<'a> {
    /// The client's connection.
    pub wire: &'a mut Wire<Stream>,
    /// Gateway connection id.
    pub id: u32,
    /// The client's address.
    pub peer: SocketAddr,
    /// The address the client dialled (login defaults of COM_CHANGE_USER).
    pub dialled: Option<SocketAddr>,
    /// Capability flags of the client leg.
    pub caps: u32,
    /// MariaDB extended capabilities in effect on the client leg.
    pub ext: u32,
    /// The scramble of the greeting (COM_CHANGE_USER answers it again).
    pub salt: Vec<u8>,
    /// Fires when the gateway starts draining ([`crate::server::drain::Drain::switch`]).
    pub stop: KillSwitch,
    /// The configuration in force: looked at once per command ([`ClientSide::next_command`]), and
    /// what the command then runs under.
    pub config: ConfigCopy,
}

/// The client's connection with what shapes the gateway's own answers on it: a borrow of a
/// [`ClientSide`] that a kind of session can hand out ([`ClientSide::leg`]).
pub struct ClientLeg<'s> {
    /// The client's connection.
    pub wire: &'s mut Wire<Stream>,
    /// Capability flags of the client leg.
    pub caps: u32,
    /// MariaDB extended capabilities in effect on the client leg.
    pub ext: u32,
}

/// How the wait for the client's next command ended.
pub enum Waited<T> {
    /// The client sent a command.
    Command(NextCommand),
    /// The client closed its connection (COM_QUIT or end of stream).
    Closed,
    /// The session was killed (KILL CONNECTION, KILL PROXYSESSION).
    Killed,
    /// The session's own end condition fired first (idle limit, server connection gone).
    Ended(T),
}

impl<'a> ClientSide<'a> {
    /// The client side of session `id` once its login is done: the gateway's drain switch of the
    /// session and a copy of the configuration in force are taken here.
    pub fn new(
        wire: &'a mut Wire<Stream>,
        id: u32,
        (peer, dialled): (SocketAddr, Option<SocketAddr>),
        (caps, ext): (u32, u32),
        salt: Vec<u8>,
        shared: &Shared,
    ) -> Self {
        let (stop, config) = (shared.drain.switch(id), ConfigCopy::of(&shared.live));
        ClientSide { wire, id, peer, dialled, caps, ext, salt, stop, config }
    }
}

impl ClientSide<'_> {
    /// Waits for the client's next command, a kill, or `ended`, whichever comes first: the one
    /// wait of both session kinds' command loops. A kill wins over a command ready at the same
    /// moment, and a command read while the kill was delivered is dropped unanswered: the
    /// client sent it after its session was killed.
    pub async fn next_command<T>(
        &mut self,
        shared: &Shared,
        kill: &mut KillSignal,
        ended: impl Future<Output = T>,
    ) -> Result<Waited<T>, SessionError> {
        let max = self.config.current(&shared.live).listen.max_packet_size;
        let next = tokio::select! {
            biased;
            () = relay::killed(kill) => None,
            next = next_command::read(self.wire, shared, max, &mut self.stop) => Some(next?),
            why = ended => return Ok(Waited::Ended(why)),
        };
        Ok(match next {
            None => {
                info!("session killed");
                Waited::Killed
            }
            Some(_) if relay::is_killed(kill) => {
                info!("session killed");
                Waited::Killed
            }
            Some(Some(cmd)) => Waited::Command(cmd),
            Some(None) => Waited::Closed,
        })
    }

    /// The authentication exchange of a COM_CHANGE_USER (the gateway's next packet is seq 1).
    pub fn change_user_exchange<'b>(&'b mut self, shared: &'b Shared) -> Exchange<'b> {
        Exchange {
            wire: &mut *self.wire,
            shared,
            peer: self.peer.ip(),
            salt: &self.salt,
            seq: 1,
            capabilities: self.caps,
            dialled: self.dialled,
        }
    }

    /// The client's connection, for an answer of the gateway's own.
    pub fn leg(&mut self) -> ClientLeg<'_> {
        ClientLeg { wire: &mut *self.wire, caps: self.caps, ext: self.ext }
    }

    /// Answers with an OK carrying `status`.
    pub async fn reply_ok(&mut self, seq: u8, status: u16) -> Result<(), SessionError> {
        self.leg().reply_ok(seq, status).await
    }

    /// Answers with `err`.
    pub async fn reply_err(&mut self, seq: u8, err: &ErrPacket) -> Result<(), SessionError> {
        self.leg().reply_err(seq, err).await
    }
}

impl ClientLeg<'_> {
    /// Answers with an OK carrying `status`.
    pub async fn reply_ok(self, seq: u8, status: u16) -> Result<(), SessionError> {
        let ok = OkPacket::with_status(status).encode(self.caps);
        self.wire.write_packet(seq, &ok).await.map(drop).map_err(SessionError::Client)
    }

    /// Writes an answer the gateway made (result sets shaped for the client's capabilities).
    pub async fn write_made(self, answer: Vec<u8>) -> Result<(), SessionError> {
        let answer = if self.ext & crate::protocol::ext_caps::EXTENDED_TYPE_INFO != 0 {
            crate::protocol::resultset::with_extended_type_info(answer)
        } else {
            answer
        };
        self.wire.write_raw(&answer).await.map_err(SessionError::Client)
    }

    /// Answers with `err`.
    pub async fn reply_err(self, seq: u8, err: &ErrPacket) -> Result<(), SessionError> {
        self.wire.write_packet(seq, &err.encode()).await.map(drop).map_err(SessionError::Client)
    }
}

#[cfg(test)]
#[path = "client_side_tests.rs"]
mod tests;
