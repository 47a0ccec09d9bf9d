//! Connection checks and resets (liveness, COM_PING, COM_RESET_CONNECTION / COM_CHANGE_USER),
//! and the [`ServerHealth`] hook through which the pool reports connect outcomes to congestion
//! control (docs/routing.md §6).

use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio::io::Interest;
use tokio::net::TcpStream;

use crate::login_name::ServerKind;
use crate::protocol::command;
use crate::protocol::message::{ErrPacket, OkPacket, ERR, OK};
use crate::protocol::ProtocolError;
use crate::route::congestion::CongestionManager;
use crate::session::backend::{Backend, LoginOutcome, LoginRequest};
use crate::session::server_kind;
use crate::tls::Stream;

/// Largest answer accepted to a pool command (OK or ERR).
const MAX_ANSWER: usize = 1 << 20;

/// Receives connect outcomes per server: connect errors and timeouts count as failures for
/// congestion control; a login refused by the server is neither.
pub trait ServerHealth: Send + Sync {
    /// A connection attempt to `server` failed (refused, timed out, closed during login).
    fn connect_failed(&self, server: SocketAddr);
    /// A connection to `server` was established and logged in.
    fn connect_succeeded(&self, server: SocketAddr);
}

impl ServerHealth for Mutex<CongestionManager> {
    fn connect_failed(&self, server: SocketAddr) {
        if let Ok(mut m) = self.lock() {
            m.on_failure(server, Instant::now());
        }
    }

    fn connect_succeeded(&self, server: SocketAddr) {
        if let Ok(mut m) = self.lock() {
            m.on_success(server, Instant::now());
        }
    }
}

/// A closure `(server, succeeded)`, for tests and adapters.
impl<F: Fn(SocketAddr, bool) + Send + Sync> ServerHealth for F {
    fn connect_failed(&self, server: SocketAddr) {
        self(server, false)
    }

    fn connect_succeeded(&self, server: SocketAddr) {
        self(server, true)
    }
}

/// Reports nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHealth;

impl ServerHealth for NoHealth {
    fn connect_failed(&self, _: SocketAddr) {}
    fn connect_succeeded(&self, _: SocketAddr) {}
}

/// Non-blocking check that an idle connection is still open and quiet: the server has neither
/// closed it nor sent anything (an idle server connection never speaks first).
/// A connection on a session thread's ring is peeked each time: it has no reactor readiness.
pub fn looks_alive(backend: &mut Backend) -> bool {
    if !backend.wire.buf.is_empty() {
        return false;
    }
    match &mut backend.wire.io {
        Stream::Ring(ring) => ring.quiet(),
        io => io.tcp().is_some_and(quiet),
    }
}

/// [`looks_alive`] for a connection its session uses again at once, on its own thread: one on a
/// session thread's ring is not peeked with a system call (one per statement: #16) but by a
/// peek queued in the ring right before its next send ([`crate::tls::Stream::stale`] then
/// says the request went to a closed connection, and ran nowhere).
pub fn alive_or_checked_on_send(backend: &mut Backend) -> bool {
    match &mut backend.wire.io {
        Stream::Ring(ring) => backend.wire.buf.is_empty() && ring.check_on_send(),
        _ => looks_alive(backend),
    }
}

/// Whether nothing waits to be read on `stream`, not even the end of the stream. The runtime's
/// readiness answers first: it is cleared when a read drained the socket (as reading an answer
/// whole does) and set by the reactor when the server sends or closes, so the common reuse costs
/// no system call (one per statement before: #16). Only a socket the reactor saw readable is
/// peeked; a peek that finds nothing clears the readiness again.
fn quiet(stream: &TcpStream) -> bool {
    match stream.try_io(Interest::READABLE, || peek(stream)) {
        Err(e) => e.kind() == std::io::ErrorKind::WouldBlock,
        Ok(_) => false, // 0: the server closed; more: it spoke unasked
    }
}

/// Peeks one byte without blocking: `Ok(0)` at the end of the stream, `WouldBlock` when empty.
fn peek(stream: &TcpStream) -> std::io::Result<usize> {
    let mut byte = 0u8;
    // One system call (no duplicate descriptor): MSG_DONTWAIT never blocks, MSG_PEEK consumes
    // nothing. SAFETY: the descriptor is open for the borrow of `stream`; the buffer is 1 byte.
    let n = unsafe {
        libc::recv(stream.as_raw_fd(), (&mut byte as *mut u8).cast(), 1, libc::MSG_PEEK | libc::MSG_DONTWAIT)
    };
    usize::try_from(n).map_err(|_| std::io::Error::last_os_error())
}

/// Sends a one-packet command and reads its OK or ERR answer within `timeout`.
pub async fn command(
    backend: &mut Backend,
    payload: &[u8],
    timeout: Duration,
) -> Result<Result<OkPacket, ErrPacket>, ProtocolError> {
    let caps = backend.capabilities;
    let exchange = async {
        backend.wire.write_packet(0, payload).await?;
        let p = backend.wire.read_packet(MAX_ANSWER).await?;
        match p.payload.first() {
            Some(&OK) => Ok(Ok(OkPacket::parse(&p.payload, caps)?)),
            Some(&ERR) => Ok(Err(ErrPacket::parse(&p.payload)?)),
            _ => Err(ProtocolError::Malformed("expected OK or ERR")),
        }
    };
    tokio::time::timeout(timeout, exchange).await.map_err(|_| ProtocolError::Io(std::io::ErrorKind::TimedOut.into()))?
}

/// COM_PING: whether the server answers OK in time.
pub async fn ping(backend: &mut Backend, timeout: Duration) -> bool {
    matches!(command(backend, &[command::PING], timeout).await, Ok(Ok(_)))
}

/// The server-kind probe: accepted by every OceanBase version, unknown to MySQL and MariaDB.
const KIND_PROBE: &[u8] = b"SET @@session.ob_read_consistency = @@session.ob_read_consistency";

/// The kind of the server of a logged-in connection: known ([`server_kind::known`]), or probed
/// now and remembered. `None`: the probe could not be answered (the connection is then broken).
pub async fn probe_kind(backend: &mut Backend, addr: SocketAddr, timeout: Duration) -> Option<ServerKind> {
    if let Some(kind) = server_kind::known(addr, &backend.greeting.server_version) {
        return Some(kind);
    }
    let payload = [&[command::QUERY], KIND_PROBE].concat();
    let kind = match self::command(backend, &payload, timeout).await.ok()? {
        Ok(_) => ServerKind::OceanBase,
        Err(_) => ServerKind::Mysql,
    };
    tracing::info!(server = %addr, version = %backend.greeting.server_version, ?kind, "server kind learnt");
    server_kind::learn(addr, kind);
    Some(kind)
}

/// Clears all session state: COM_RESET_CONNECTION, or COM_CHANGE_USER with `login` when the
/// server does not know it or when `relogin` asks for it. Returns whether the login was replayed
/// (the database and character set are then the login's). On error the connection is to be
/// dropped; the text says why.
///
/// An OceanBase server told the application's identity (`login.identity`) gets COM_CHANGE_USER
/// straight away: only a new login carries the new client's address and session id.
pub async fn reset(
    backend: &mut Backend,
    login: &LoginRequest<'_>,
    timeout: Duration,
    relogin: bool,
) -> Result<bool, String> {
    let addr = backend.wire.io.peer_addr().map_err(|e| e.to_string())?;
    let kind = server_kind::of(addr, &backend.greeting.server_version);
    if !relogin && (login.identity.is_none() || kind != ServerKind::OceanBase) {
        match command(backend, &[command::RESET_CONNECTION], timeout).await.map_err(|e| e.to_string())? {
            Ok(ok) => {
                backend.session_status = ok.status;
                return Ok(false);
            }
            Err(e) => tracing::debug!(error = %e, "COM_RESET_CONNECTION refused, trying COM_CHANGE_USER"),
        }
    }
    let outcome = tokio::time::timeout(timeout, backend.change_user(login))
        .await
        .map_err(|_| "COM_CHANGE_USER timed out".to_string())?
        .map_err(|e| e.to_string())?;
    match outcome {
        LoginOutcome::Ok(_) => Ok(true),
        LoginOutcome::Denied(e) => Err(e.to_string()),
    }
}
