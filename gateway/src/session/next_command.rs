//! The next command of a session, read and checked the same way by 1:1 and routed sessions:
//! framing errors become the server's errors, and a draining gateway (SIGTERM) closes an idle
//! session at this statement boundary or refuses the command it was sent.

use crate::tls::Stream;
use bytes::Bytes;

use super::kill_switch::KillSwitch;
use super::{SessionError, Shared};
use crate::protocol::codes;
use crate::protocol::frame::Wire;
use crate::protocol::ProtocolError;

/// A command a client sent.
pub struct NextCommand {
    /// The command byte.
    pub cmd: u8,
    /// The whole payload, command byte included.
    pub payload: Bytes,
    /// Sequence id of the answer.
    pub reply_seq: u8,
}

/// Reads the next command; `None`: the client closed, or the gateway is draining.
/// `stop` fires when the gateway starts draining.
pub async fn read(
    client: &mut Wire<Stream>,
    shared: &Shared,
    max: usize,
    stop: &mut KillSwitch,
) -> Result<Option<NextCommand>, SessionError> {
    let read = tokio::select! {
        biased;
        () = stop.fired() => return Ok(None),
        read = client.read_packet(max) => read,
    };
    let packet = match read {
        Ok(p) => p,
        Err(ProtocolError::Closed) => return Ok(None),
        Err(ProtocolError::TooLarge { .. }) => {
            return Err(SessionError::refuse(
                codes::PACKET_TOO_LARGE,
                1,
                "Got a packet bigger than 'max_allowed_packet' bytes",
            ));
        }
        Err(ProtocolError::OutOfOrder { .. }) => {
            return Err(SessionError::refuse(codes::OUT_OF_ORDER, 1, "Got packets out of order"));
        }
        Err(e) => return Err(SessionError::Client(e)),
    };
    if packet.first_seq != 0 {
        return Err(SessionError::refuse(
            codes::OUT_OF_ORDER,
            packet.last_seq.wrapping_add(1),
            "Got packets out of order",
        ));
    }
    let Some(&cmd) = packet.payload.first() else {
        return Err(SessionError::refuse(codes::MALFORMED, 1, "Malformed communication packet"));
    };
    let reply_seq = packet.last_seq.wrapping_add(1);
    if stop.is_set() || shared.drain.is_stopping() {
        return Err(SessionError::Refused { err: crate::server::drain::Drain::shutdown_err(), seq: reply_seq });
    }
    Ok(Some(NextCommand { cmd, payload: packet.payload, reply_seq }))
}
