//! A connection of either leg, plain TCP or TLS, behind one `AsyncRead + AsyncWrite` type.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// A client or server connection.
#[derive(Debug)]
pub enum Stream {
    /// Plain TCP (spliceable).
    Plain(TcpStream),
    /// TLS to a client: the gateway is the TLS server.
    Server(Box<tokio_rustls::server::TlsStream<TcpStream>>),
    /// TLS to a database server: the gateway is the TLS client.
    Client(Box<tokio_rustls::client::TlsStream<TcpStream>>),
    /// Plain TCP on a session thread's io_uring ([`Stream::to_ring`]); used on that thread only.
    Ring(crate::dataplane::ring::RingStream),
    /// The socket was handed to the kernel splice ([`Stream::detach`]); reads and writes fail.
    Detached,
}

impl Stream {
    /// The tokio TCP socket underneath (socket options, peeks, addresses). Never read or write
    /// it directly when the stream is TLS.
    /// `None` once detached or on a session thread's ring.
    pub fn tcp(&self) -> Option<&TcpStream> {
        match self {
            Stream::Plain(s) => Some(s),
            Stream::Server(s) => Some(s.get_ref().0),
            Stream::Client(s) => Some(s.get_ref().0),
            Stream::Ring(_) | Stream::Detached => None,
        }
    }

    /// The TCP peer's address (the server of a backend connection).
    pub fn peer_addr(&self) -> io::Result<std::net::SocketAddr> {
        match self {
            Stream::Ring(s) => s.peer_addr(),
            _ => self.tcp().ok_or_else(detached)?.peer_addr(),
        }
    }

    /// Moves a plain socket from tokio's reactor to this session thread's ring
    /// (`dataplane::ring`); nothing changes for a TLS or detached stream, or off a session
    /// thread. On failure the stream is detached (its socket is closed).
    pub fn to_ring(&mut self) -> io::Result<()> {
        if !matches!(self, Stream::Plain(_)) || !crate::dataplane::ring::on_session_thread() {
            return Ok(());
        }
        match std::mem::replace(self, Stream::Detached) {
            Stream::Plain(s) => *self = Stream::Ring(crate::dataplane::ring::RingStream::new(s.into_std()?)?),
            other => *self = other,
        }
        Ok(())
    }

    /// Whether the stream is on a session thread's ring.
    pub fn is_ring(&self) -> bool {
        matches!(self, Stream::Ring(_))
    }

    /// Moves a stream on a session thread's ring back to tokio's reactor, so that any thread may
    /// use it (a pooled server connection going back to the pool); nothing changes for another
    /// stream. It must be on its own thread, or [settled](RingStream::settle) there since. Fails,
    /// the stream unchanged, while the ring still has an operation of it or bytes it received,
    /// and where no runtime is entered; after a failure to register it, it is detached (closed).
    ///
    /// [`RingStream::settle`]: crate::dataplane::ring::RingStream::settle
    pub fn off_ring(&mut self) -> io::Result<()> {
        if !self.is_ring() {
            return Ok(());
        }
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(io::Error::other("no runtime to take the socket"));
        }
        match std::mem::replace(self, Stream::Detached) {
            Stream::Ring(ring) => match ring.into_std() {
                Ok(sock) => *self = Stream::Plain(TcpStream::from_std(sock)?),
                Err(ring) => {
                    *self = Stream::Ring(ring);
                    return Err(io::Error::other("the ring still has an operation of the socket"));
                }
            },
            other => *self = other,
        }
        Ok(())
    }

    /// Whether the stream's last checked send went to a connection the server had already closed
    /// ([`RingStream::check_on_send`]); `false` for any other stream.
    ///
    /// [`RingStream::check_on_send`]: crate::dataplane::ring::RingStream::check_on_send
    pub fn stale(&self) -> bool {
        matches!(self, Stream::Ring(ring) if ring.stale())
    }

    /// Waits until the ring has sent what was written to the stream (nothing to wait for on
    /// another stream), so that it can be [settled](Stream::settle) before it is parked.
    pub async fn sent(&mut self) -> io::Result<()> {
        match self {
            Stream::Ring(ring) => std::future::poll_fn(|cx| ring.poll_sends_done(cx)).await,
            _ => Ok(()),
        }
    }

    /// Takes what the ring finished for the stream, on the stream's own thread; whether it is
    /// [settled](crate::dataplane::ring::RingStream::settle) (`true` for any other stream).
    pub fn settle(&mut self) -> bool {
        match self {
            Stream::Ring(ring) => ring.settle(),
            _ => true,
        }
    }

    /// Takes a plain socket out of tokio's reactor for the kernel splice, whose supervisor
    /// watches it itself (`dataplane::splice`); the stream is [`Stream::Detached`] afterwards.
    /// `None` (nothing changed) for a TLS or already detached stream.
    pub fn detach(&mut self) -> Option<io::Result<std::net::TcpStream>> {
        match std::mem::replace(self, Stream::Detached) {
            Stream::Plain(s) => Some(s.into_std()),
            other => {
                *self = other;
                None
            }
        }
    }

    /// The socket when the stream is plain TCP: only such a stream may be spliced in the kernel.
    pub fn plain(&self) -> Option<&TcpStream> {
        match self {
            Stream::Plain(s) => Some(s),
            _ => None,
        }
    }

    /// Whether the stream is TLS.
    pub fn is_tls(&self) -> bool {
        matches!(self, Stream::Server(_) | Stream::Client(_))
    }

    /// The negotiated protocol version and cipher suite, e.g. `TLSv1_3/TLS13_AES_256_GCM_SHA384`
    /// (logs); `None` for plain TCP.
    pub fn cipher(&self) -> Option<String> {
        let (version, suite) = match self {
            Stream::Plain(_) | Stream::Ring(_) | Stream::Detached => return None,
            Stream::Server(s) => (s.get_ref().1.protocol_version(), s.get_ref().1.negotiated_cipher_suite()),
            Stream::Client(s) => (s.get_ref().1.protocol_version(), s.get_ref().1.negotiated_cipher_suite()),
        };
        Some(format!("{:?}/{:?}", version?, suite?.suite()))
    }
}

impl From<TcpStream> for Stream {
    fn from(s: TcpStream) -> Self {
        Stream::Plain(s)
    }
}

impl AsyncRead for Stream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Server(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Client(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Ring(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Detached => Poll::Ready(Err(detached())),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Server(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Client(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Ring(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Detached => Poll::Ready(Err(detached())),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_flush(cx),
            Stream::Server(s) => Pin::new(s).poll_flush(cx),
            Stream::Client(s) => Pin::new(s).poll_flush(cx),
            Stream::Ring(s) => Pin::new(s).poll_flush(cx),
            Stream::Detached => Poll::Ready(Ok(())),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Server(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Client(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Ring(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Detached => Poll::Ready(Ok(())),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Stream::Server(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Stream::Client(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Stream::Ring(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Stream::Detached => Poll::Ready(Err(detached())),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Stream::Plain(s) => s.is_write_vectored(),
            Stream::Server(s) => s.is_write_vectored(),
            Stream::Client(s) => s.is_write_vectored(),
            Stream::Ring(s) => s.is_write_vectored(),
            Stream::Detached => false,
        }
    }
}

/// The error of reading or writing a detached stream.
fn detached() -> io::Error {
    io::Error::new(io::ErrorKind::NotConnected, "the socket was handed to the kernel splice")
}
