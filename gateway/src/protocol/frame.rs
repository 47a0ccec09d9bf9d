//! Packet framing: 4-byte headers, sequence ids, 16 MiB frames joined into logical packets.

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::ProtocolError;

/// Largest payload of one frame; a frame of exactly this size is continued by the next one.
pub const MAX_FRAME: usize = 0xFF_FFFF;

/// Header size.
pub const HEADER: usize = 4;

/// Reads the payload length and sequence id of the frame starting at `buf[0]`, if the header is
/// complete.
pub fn header(buf: &[u8]) -> Option<(usize, u8)> {
    if buf.len() < HEADER {
        return None;
    }
    let len = usize::from(buf[0]) | usize::from(buf[1]) << 8 | usize::from(buf[2]) << 16;
    Some((len, buf[3]))
}

/// One buffered side of a connection: a socket plus the bytes read from it but not consumed.
#[derive(Debug)]
pub struct Wire<S> {
    /// The socket.
    pub io: S,
    /// Bytes read and not yet consumed.
    pub buf: BytesMut,
}

/// A whole logical packet: payload joined from its frames, and the sequence id of its last frame.
#[derive(Debug, Clone)]
pub struct Packet {
    /// Sequence id of the first frame.
    pub first_seq: u8,
    /// Sequence id of the last frame; the answer uses `last_seq + 1`.
    pub last_seq: u8,
    /// Joined payload.
    pub payload: Bytes,
}

impl<S: AsyncRead + AsyncWrite + Unpin> Wire<S> {
    /// Wraps a socket.
    pub fn new(io: S) -> Self {
        Wire { io, buf: BytesMut::with_capacity(16 * 1024) }
    }

    /// Wraps a socket without a buffer yet (a placeholder, or a wire that may never read).
    pub fn unbuffered(io: S) -> Self {
        Wire { io, buf: BytesMut::new() }
    }

    /// Reads more bytes into the buffer. `Ok(false)` on end of stream.
    pub async fn fill(&mut self) -> Result<bool, ProtocolError> {
        if self.buf.is_empty() {
            rewind(&mut self.buf);
        }
        if self.buf.capacity() - self.buf.len() < 8192 {
            self.buf.reserve(64 * 1024);
        }
        Ok(self.io.read_buf(&mut self.buf).await? > 0)
    }

    /// Makes sure the frame at the start of the buffer is complete; returns its payload length and
    /// sequence id. End of stream before any byte is `Closed`, inside a frame `Truncated`; a frame
    /// longer than `max` is refused as soon as its header arrives, before its payload is buffered.
    pub async fn need_frame(&mut self, max: usize) -> Result<(usize, u8), ProtocolError> {
        loop {
            if let Some((len, seq)) = header(&self.buf) {
                if len > max {
                    return Err(ProtocolError::TooLarge { size: len, max });
                }
                if self.buf.len() >= HEADER + len {
                    return Ok((len, seq));
                }
                self.buf.reserve(HEADER + len - self.buf.len());
            }
            if !self.fill().await? {
                return Err(if self.buf.is_empty() { ProtocolError::Closed } else { ProtocolError::Truncated });
            }
        }
    }

    /// Reads one logical packet, joining continuation frames, refusing more than `max` bytes.
    pub async fn read_packet(&mut self, max: usize) -> Result<Packet, ProtocolError> {
        let (len, first_seq) = self.need_frame(max).await?;
        let mut frame = self.buf.split_to(HEADER + len);
        let mut payload = frame.split_off(HEADER);
        let mut last_seq = first_seq;
        let mut last_len = len;
        while last_len == MAX_FRAME {
            let room = max.saturating_sub(payload.len());
            let (len, seq) = self.need_frame(room).await.map_err(|e| match e {
                ProtocolError::TooLarge { size, .. } => ProtocolError::TooLarge { size: size + payload.len(), max },
                other => other,
            })?;
            let expected = last_seq.wrapping_add(1);
            if seq != expected {
                return Err(ProtocolError::OutOfOrder { expected, got: seq });
            }
            let mut next = self.buf.split_to(HEADER + len);
            payload.unsplit(next.split_off(HEADER));
            last_seq = seq;
            last_len = len;
        }
        Ok(Packet { first_seq, last_seq, payload: payload.freeze() })
    }

    /// Writes a payload as one or more frames starting at `seq`; returns the next sequence id.
    pub async fn write_packet(&mut self, seq: u8, payload: &[u8]) -> Result<u8, ProtocolError> {
        let mut out = Vec::with_capacity(payload.len() + HEADER * (1 + payload.len() / MAX_FRAME));
        let next = encode_packet(&mut out, seq, payload);
        self.io.write_all(&out).await?;
        // A TLS stream may keep the last record buffered until flushed (a no-op on TCP).
        self.io.flush().await?;
        Ok(next)
    }

    /// Writes raw bytes (already framed).
    pub async fn write_raw(&mut self, raw: &[u8]) -> Result<(), ProtocolError> {
        self.io.write_all(raw).await?;
        self.io.flush().await?;
        Ok(())
    }

    /// Reads exactly one frame (of at most `max` bytes) from the socket, not a byte beyond it,
    /// when nothing is buffered: the handshake response, after which a client may start TLS
    /// (its ClientHello must stay on the socket for the TLS handshake). With bytes already
    /// buffered, the ordinary [`Self::read_packet`].
    pub async fn read_frame_exact(&mut self, max: usize) -> Result<Packet, ProtocolError> {
        if !self.buf.is_empty() {
            return self.read_packet(max).await;
        }
        let mut head = [0u8; HEADER];
        let n = self.io.read(&mut head[..1]).await?;
        if n == 0 {
            return Err(ProtocolError::Closed);
        }
        self.io.read_exact(&mut head[1..]).await.map_err(truncated)?;
        let (len, seq) = header(&head).ok_or(ProtocolError::Malformed("frame header"))?;
        if len > max {
            return Err(ProtocolError::TooLarge { size: len, max });
        }
        let mut payload = vec![0u8; len];
        self.io.read_exact(&mut payload).await.map_err(truncated)?;
        Ok(Packet { first_seq: seq, last_seq: seq, payload: payload.into() })
    }

    /// The socket and the unread bytes, e.g. to wrap the socket in TLS.
    pub fn into_parts(self) -> (S, BytesMut) {
        (self.io, self.buf)
    }

    /// A socket with bytes already read from it.
    pub fn from_parts(io: S, buf: BytesMut) -> Self {
        Wire { io, buf }
    }
}

/// Moves an empty buffer's start back to the start of its allocation, when nothing else holds a
/// part of it: the next read then lands in the same (cache-warm) bytes as the last one, rather
/// than walking through the whole allocation before `reserve` reclaims it (#16: sixteen sessions
/// relaying 14 KB answers walked over a megabyte that way; docs/performance.md §3). Asking for
/// one byte more than the buffer can hold is what makes `try_reclaim` move the start; when the
/// start is already there, or a `Bytes` still shares the allocation, it does nothing and
/// allocates nothing.
fn rewind(buf: &mut BytesMut) {
    let _ = buf.try_reclaim(buf.capacity() + 1);
}

fn truncated(e: std::io::Error) -> ProtocolError {
    if e.kind() == std::io::ErrorKind::UnexpectedEof {
        ProtocolError::Truncated
    } else {
        ProtocolError::Io(e)
    }
}

/// Frames `payload` into `out` starting at sequence `seq`, splitting at 16 MiB and adding the
/// empty terminating frame when the length is a multiple of it. Returns the next sequence id.
pub fn encode_packet(out: &mut Vec<u8>, mut seq: u8, payload: &[u8]) -> u8 {
    let mut rest = payload;
    loop {
        let n = rest.len().min(MAX_FRAME);
        out.extend_from_slice(&(n as u32).to_le_bytes()[..3]);
        out.push(seq);
        out.extend_from_slice(&rest[..n]);
        seq = seq.wrapping_add(1);
        rest = &rest[n..];
        if n < MAX_FRAME {
            return seq;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn round_trip(len: usize) {
        let payload: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        let mut framed = Vec::new();
        let next = encode_packet(&mut framed, 3, &payload);
        let frames = len / MAX_FRAME + 1;
        assert_eq!(next, 3 + frames as u8);
        assert_eq!(framed.len(), len + HEADER * frames);
        let (a, mut b) = tokio::io::duplex(1 << 20);
        let writer = tokio::spawn(async move {
            b.write_all(&framed).await.unwrap();
        });
        let mut w = Wire::new(a);
        let p = w.read_packet(usize::MAX).await.unwrap();
        writer.await.unwrap();
        assert_eq!(p.first_seq, 3);
        assert_eq!(p.last_seq, 3 + frames as u8 - 1);
        assert!(p.payload[..] == payload[..]);
    }

    #[tokio::test]
    async fn frames_split_and_join_at_16_mib() {
        round_trip(0).await;
        round_trip(10).await;
        round_trip(MAX_FRAME - 1).await;
        round_trip(MAX_FRAME).await;
        round_trip(MAX_FRAME + 1).await;
        round_trip(2 * MAX_FRAME).await;
    }

    #[tokio::test]
    async fn too_large_and_out_of_order_are_errors() {
        let mut framed = Vec::new();
        encode_packet(&mut framed, 0, &vec![7u8; MAX_FRAME + 5]);
        let (a, mut b) = tokio::io::duplex(1 << 20);
        let data = framed.clone();
        tokio::spawn(async move { b.write_all(&data).await });
        let err = Wire::new(a).read_packet(1 << 20).await.unwrap_err();
        assert!(matches!(err, ProtocolError::TooLarge { .. }), "{err}");

        framed[HEADER + MAX_FRAME + 3] = 9; // second frame's sequence id
        let (a, mut b) = tokio::io::duplex(1 << 20);
        tokio::spawn(async move { b.write_all(&framed).await });
        let err = Wire::new(a).read_packet(usize::MAX).await.unwrap_err();
        assert!(matches!(err, ProtocolError::OutOfOrder { expected: 1, got: 9 }), "{err}");
    }

    #[tokio::test]
    async fn eof_inside_frame_is_truncated() {
        let (a, mut b) = tokio::io::duplex(64);
        tokio::spawn(async move {
            b.write_all(&[10, 0, 0, 0, 1, 2]).await.unwrap();
        });
        let err = Wire::new(a).read_packet(usize::MAX).await.unwrap_err();
        assert!(matches!(err, ProtocolError::Truncated), "{err}");
    }

    #[tokio::test]
    async fn an_emptied_buffer_is_read_into_from_its_start_again() {
        let (a, mut b) = tokio::io::duplex(1 << 16);
        let mut w = Wire::new(a);
        let start = w.buf.as_ptr();
        let mut framed = Vec::new();
        encode_packet(&mut framed, 0, &[5u8; 3000]);
        b.write_all(&framed).await.unwrap();
        let first = w.read_packet(usize::MAX).await.unwrap();
        assert!(w.buf.is_empty());
        assert_ne!(w.buf.as_ptr(), start, "the read moved the buffer's start");

        // While the packet shares the allocation the buffer cannot be moved back.
        b.write_all(&framed).await.unwrap();
        let second = w.read_packet(usize::MAX).await.unwrap();
        assert_ne!(w.buf.as_ptr(), start);
        drop((first, second));

        b.write_all(&framed[..10]).await.unwrap();
        assert!(w.fill().await.unwrap());
        assert_eq!(w.buf.as_ptr(), start, "the next read lands at the allocation's start");
        assert_eq!(&w.buf[..], &framed[..10]);
    }
}
