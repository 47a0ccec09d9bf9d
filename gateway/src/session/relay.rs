//! Moves framed bytes between the two legs: a server answer to the client, LOCAL INFILE data to
//! the server. Frames are forwarded as they are, in batches, without joining large packets.

use bytes::{Buf, BytesMut};
use tokio::io::{AsyncRead, AsyncWrite};

use super::kill_switch::KillSwitch;
use crate::protocol::frame::{header, Wire, HEADER, MAX_FRAME};
use crate::protocol::response::{ResponseTracker, Step};
use crate::protocol::ProtocolError;

/// Where a relay failed.
#[derive(Debug, thiserror::Error)]
pub enum RelayError {
    /// Reading from the server failed or the server broke the protocol.
    #[error("backend: {0}")]
    Backend(ProtocolError),
    /// Talking to the client failed.
    #[error("client: {0}")]
    Client(ProtocolError),
    /// Nothing had reached the client yet when the backend failed.
    #[error("backend failed before answering: {0}")]
    BackendBeforeAnswer(ProtocolError),
    /// The session was killed (KILL CONNECTION) while the answer was streaming; the relay stopped
    /// at a packet boundary. The client's next packet must be the kill's ERR at this sequence id
    /// (`None`: nothing of the answer reached the client, use the answer's first id).
    #[error("session killed while its answer was streaming")]
    Killed {
        /// Sequence id following the last packet the client received.
        next_seq: Option<u8>,
    },
}

/// ER_CONNECTION_KILLED, as MariaDB ends the answer of a killed connection.
pub fn connection_killed() -> crate::protocol::message::ErrPacket {
    crate::protocol::message::ErrPacket::with_state(1927, b"70100", "Connection was killed")
}

/// The session's kill signal, watched while an answer streams (`None`: not watched).
pub type KillSignal = Option<KillSwitch>;

/// Resolves once the session is killed (never without a signal).
pub async fn killed(kill: &mut KillSignal) {
    match kill.as_mut() {
        Some(k) => k.fired().await,
        None => std::future::pending().await,
    }
}

/// Whether the session was killed already: checked after a command is read, so that a command
/// the client sent after its KILL was acknowledged is never answered (the read and the kill may
/// be ready at the same moment).
pub fn is_killed(kill: &KillSignal) -> bool {
    kill.as_ref().is_some_and(KillSwitch::is_set)
}

/// Relays the server's answer to one command until the tracker says it is complete.
pub async fn answer<B, C>(
    backend: &mut Wire<B>,
    client: &mut Wire<C>,
    tracker: &mut ResponseTracker,
    kill: &mut KillSignal,
) -> Result<(), RelayError>
where
    B: AsyncRead + AsyncWrite + Unpin,
    C: AsyncRead + AsyncWrite + Unpin,
{
    relay(backend, client, tracker, false, kill).await.map(|_| ())
}

/// Like [`answer`], but the last batch of the answer (the bytes read with its final packet,
/// never empty for an answer with packets) is returned instead of written: the client has not
/// got the end of the answer, so it cannot have sent its next command yet. The caller writes it
/// (after activating a kernel splice, docs/dataplane.md §3). `None`: the answer had no packets.
pub async fn answer_holding_last<B, C>(
    backend: &mut Wire<B>,
    client: &mut Wire<C>,
    tracker: &mut ResponseTracker,
    kill: &mut KillSignal,
) -> Result<Option<BytesMut>, RelayError>
where
    B: AsyncRead + AsyncWrite + Unpin,
    C: AsyncRead + AsyncWrite + Unpin,
{
    relay(backend, client, tracker, true, kill).await
}

/// The relay loop. `hold_last`: the final batch is returned rather than written; otherwise
/// everything is written and `None` returned.
async fn relay<B, C>(
    backend: &mut Wire<B>,
    client: &mut Wire<C>,
    tracker: &mut ResponseTracker,
    hold_last: bool,
    kill: &mut KillSignal,
) -> Result<Option<BytesMut>, RelayError>
where
    B: AsyncRead + AsyncWrite + Unpin,
    C: AsyncRead + AsyncWrite + Unpin,
{
    let mut sent_any = false;
    let mut pos = 0usize;
    let mut last_seq = None;
    loop {
        while let Some((len, seq)) = header(&backend.buf[pos..]) {
            if backend.buf.len() - pos < HEADER + len {
                backend.buf.reserve(HEADER + len);
                break;
            }
            let step = match tracker.on_frame(&backend.buf[pos + HEADER..pos + HEADER + len]) {
                Ok(step) => step,
                // What a server sends as its connection is killed is not always well formed.
                Err(_) if is_killed(kill) => {
                    flush(backend, client, pos).await?;
                    return Err(stopped(tracker, last_seq));
                }
                Err(e) => return Err(RelayError::Backend(e)),
            };
            pos += HEADER + len;
            last_seq = Some(seq);
            match step {
                Step::More => {}
                Step::Done if hold_last => return Ok(Some(backend.buf.split_to(pos))),
                Step::Done => return flush(backend, client, pos).await.map(|()| None),
                Step::LocalInfile => {
                    flush(backend, client, pos).await?;
                    pos = 0;
                    sent_any = true;
                    local_infile(client, backend).await?;
                }
            }
        }
        if pos > 0 {
            flush(backend, client, pos).await?;
            pos = 0;
            sent_any = true;
        }
        // A kill takes effect between writes to the client (as on a server, a write in progress
        // completes first), so that the client's next packet is the kill's error.
        if is_killed(kill) {
            return Err(stopped(tracker, last_seq));
        }
        let filled = match kill.as_mut() {
            Some(killed) => tokio::select! {
                filled = backend.fill() => filled,
                () = killed.fired() => return Err(stopped(tracker, last_seq)),
            },
            None => backend.fill().await,
        };
        match filled {
            Ok(true) => {}
            // The server closes a killed session's connection, possibly before the kill is seen.
            _ if is_killed(kill) => return Err(stopped(tracker, last_seq)),
            Ok(false) => return Err(lost(ProtocolError::Truncated, sent_any)),
            Err(e) => return Err(lost(e, sent_any)),
        }
    }
}

/// The relay stopped for a kill: at a packet boundary the client can be told, inside a packet
/// split over frames it cannot.
fn stopped(tracker: &ResponseTracker, last_seq: Option<u8>) -> RelayError {
    if tracker.in_continuation() {
        return RelayError::Backend(ProtocolError::Malformed("session killed inside a multi-frame packet"));
    }
    RelayError::Killed { next_seq: last_seq.map(|s| s.wrapping_add(1)) }
}

fn lost(e: ProtocolError, sent_any: bool) -> RelayError {
    if sent_any {
        RelayError::Backend(e)
    } else {
        RelayError::BackendBeforeAnswer(e)
    }
}

async fn flush<B, C>(backend: &mut Wire<B>, client: &mut Wire<C>, upto: usize) -> Result<(), RelayError>
where
    B: AsyncRead + AsyncWrite + Unpin,
    C: AsyncRead + AsyncWrite + Unpin,
{
    // Written from the buffer in place and then dropped from its front: splitting it off would
    // turn the buffer into a shared one and count references on every batch.
    client.write_raw(&backend.buf[..upto]).await.map_err(RelayError::Client)?;
    backend.buf.advance(upto);
    Ok(())
}

/// Relays the client's LOCAL INFILE packets to the server, up to and including the empty packet
/// that ends the file.
async fn local_infile<B, C>(client: &mut Wire<C>, backend: &mut Wire<B>) -> Result<(), RelayError>
where
    B: AsyncRead + AsyncWrite + Unpin,
    C: AsyncRead + AsyncWrite + Unpin,
{
    let mut continuation = false;
    loop {
        let (len, _) = client.need_frame(MAX_FRAME).await.map_err(RelayError::Client)?;
        let frame = client.buf.split_to(HEADER + len);
        backend.write_raw(&frame).await.map_err(RelayError::Backend)?;
        if len == 0 && !continuation {
            return Ok(());
        }
        continuation = len == MAX_FRAME;
    }
}
