//! Moves framed bytes between the two legs: a server answer to the client, LOCAL INFILE data to
//! the server. Frames are forwarded as they are, in batches, without joining large packets.

use bytes::BytesMut;
use tokio::io::{AsyncRead, AsyncWrite};

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
}

/// Relays the server's answer to one command until the tracker says it is complete.
pub async fn answer<B, C>(
    backend: &mut Wire<B>,
    client: &mut Wire<C>,
    tracker: &mut ResponseTracker,
) -> Result<(), RelayError>
where
    B: AsyncRead + AsyncWrite + Unpin,
    C: AsyncRead + AsyncWrite + Unpin,
{
    relay(backend, client, tracker, false).await.map(|_| ())
}

/// Like [`answer`], but the last batch of the answer (the bytes read with its final packet,
/// never empty for an answer with packets) is returned instead of written: the client has not
/// got the end of the answer, so it cannot have sent its next command yet. The caller writes it
/// (after activating a kernel splice, docs/dataplane.md §3). `None`: the answer had no packets.
pub async fn answer_holding_last<B, C>(
    backend: &mut Wire<B>,
    client: &mut Wire<C>,
    tracker: &mut ResponseTracker,
) -> Result<Option<BytesMut>, RelayError>
where
    B: AsyncRead + AsyncWrite + Unpin,
    C: AsyncRead + AsyncWrite + Unpin,
{
    relay(backend, client, tracker, true).await
}

/// The relay loop. `hold_last`: the final batch is returned rather than written; otherwise
/// everything is written and `None` returned.
async fn relay<B, C>(
    backend: &mut Wire<B>,
    client: &mut Wire<C>,
    tracker: &mut ResponseTracker,
    hold_last: bool,
) -> Result<Option<BytesMut>, RelayError>
where
    B: AsyncRead + AsyncWrite + Unpin,
    C: AsyncRead + AsyncWrite + Unpin,
{
    let mut sent_any = false;
    let mut pos = 0usize;
    loop {
        while let Some((len, _)) = header(&backend.buf[pos..]) {
            if backend.buf.len() - pos < HEADER + len {
                backend.buf.reserve(HEADER + len);
                break;
            }
            let step = tracker
                .on_frame(&backend.buf[pos + HEADER..pos + HEADER + len])
                .map_err(RelayError::Backend)?;
            pos += HEADER + len;
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
        match backend.fill().await {
            Ok(true) => {}
            Ok(false) => return Err(lost(ProtocolError::Truncated, sent_any)),
            Err(e) => return Err(lost(e, sent_any)),
        }
    }
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
    let out = backend.buf.split_to(upto);
    client.write_raw(&out).await.map_err(RelayError::Client)
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
