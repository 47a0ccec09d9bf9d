//! An accepted client connection: the data plane's hints (the server or VIP it dialled), the
//! greeting (TLS when asked), authentication, then a routed or a 1:1 session; how it ended is
//! logged and a refusal sent.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::net::TcpStream;
use tracing::{debug, info, Instrument};

use super::client_auth;
use super::greeting::{self, Answer, Hello};
use super::{SessionError, Shared};
use crate::protocol::frame::Wire;
use crate::protocol::ProtocolError;
use crate::tls::{self, Stream};

/// Serves one accepted client connection until it ends; never panics, logs why it ended.
pub async fn serve(stream: TcpStream, peer: SocketAddr, shared: Arc<Shared>) {
    let id = shared.next_connection_id();
    let span = tracing::info_span!("conn", id, peer = %peer);
    async move {
        let client_count = shared.metrics.client_connected();
        // Counted until the session ends: a SIGTERM drain waits for it.
        let open = shared.drain.enter(id);
        let _ = stream.set_nodelay(true);
        // Steered (cgroup mode): the server the client dialled, when it is an intercepted address.
        let steered = crate::dataplane::steer::steered_backend(&stream, &shared.config(), shared.planner.as_ref())
            // Router / sk_lookup modes: the VIP the client dialled is the accepted socket's local address.
            .or_else(|| crate::dataplane::modes::vip_backend(&stream, &shared.config(), shared.planner.as_ref()));
        let backend_addr = steered.unwrap_or(shared.config().backend.address);
        // The address the application dialled: the steered server or VIP, else our listener.
        let dialled = steered.or_else(|| stream.local_addr().ok());
        let deadline = Instant::now() + Duration::from_secs(shared.config().listen.handshake_timeout_secs);
        let greeted =
            tokio::time::timeout_at(deadline.into(), hello(Wire::new(Stream::Plain(stream)), &shared, id, dialled))
                .await;
        let (mut client, hello) = match greeted {
            Ok(Some(greeted)) => greeted,
            Ok(None) => return,
            Err(_) => return debug!("handshake timed out"),
        };
        match run(&mut client, hello, deadline, peer, &shared, id, (backend_addr, dialled)).await {
            Ran::Here(result) => finish(&mut client, result).await,
            Ran::Moved { counted: true } => {
                // The session thread counts it now (its own guards); this task ends.
                std::mem::forget(client_count);
                std::mem::forget(open);
            }
            Ran::Moved { counted: false } => info!("session ended abnormally on its session thread"),
        }
    }
    .instrument(span)
    .await
}

/// Logs how a session ended; a refusal is sent to the client.
async fn finish(client: &mut Wire<Stream>, result: Result<(), SessionError>) {
    match result {
        Ok(()) => debug!("session closed"),
        Err(SessionError::Refused { err, seq }) => {
            info!(code = err.code, message = %err.message, "session refused");
            let _ = client.write_packet(seq, &err.encode()).await;
        }
        // A peer that connects and goes away (health checks, port probes) is not news.
        Err(SessionError::Client(ProtocolError::Closed | ProtocolError::Io(_))) => debug!("client went away"),
        Err(e) => info!(error = %e, "session ended"),
    }
}

/// Greets the client and reads its handshake response, over TLS when it asks for it (the
/// client leg's mode is [`tls::client_tls_mode`] of the address it dialled). `None`: the
/// session ended here (logged, refusal sent).
async fn hello(
    mut client: Wire<Stream>,
    shared: &Shared,
    id: u32,
    dialled: Option<SocketAddr>,
) -> Option<(Wire<Stream>, Hello)> {
    let mode = tls::client_tls_mode(&shared.config(), dialled);
    let answer = match greeting::greet(&mut client, shared, id, mode).await {
        Ok(answer) => answer,
        Err(e) => {
            finish(&mut client, Err(e)).await;
            return None;
        }
    };
    let hello = match answer {
        Answer::Plain(hello) => return Some((client, hello)),
        Answer::StartTls(hello) => hello,
    };
    let mut client = match greeting::accept_tls(client, shared).await {
        Ok(client) => client,
        Err(e) => {
            info!(error = %e, "TLS handshake with the client failed");
            return None;
        }
    };
    match greeting::read_response(&mut client, hello).await {
        Ok(hello) => Some((client, hello)),
        Err(e) => {
            finish(&mut client, Err(e)).await;
            None
        }
    }
}

/// Where a session ran.
enum Ran {
    /// In this task, to this end.
    Here(Result<(), SessionError>),
    /// On a session thread, which finishes it; `counted`: the thread took over its counts (in
    /// the drain and the connection gauge), else its task ended before it started.
    Moved { counted: bool },
}

async fn run(
    client: &mut Wire<Stream>,
    hello: Hello,
    deadline: Instant,
    peer: SocketAddr,
    shared: &Arc<Shared>,
    id: u32,
    (backend_addr, dialled): (SocketAddr, Option<SocketAddr>),
) -> Ran {
    let login =
        tokio::time::timeout_at(deadline.into(), client_auth::accept(client, shared, hello, peer.ip(), dialled))
            .await
            .map_err(|_| SessionError::Client(ProtocolError::Malformed("handshake timed out")));
    let login = match login {
        Ok(Ok(login)) => login,
        Ok(Err(e)) | Err(e) => return Ran::Here(Err(e)),
    };
    // With [routing], every session is routed per statement by its cluster's planner, except
    // the data plane's passthrough users (pinned to one backend from login, spliceable).
    let kind = match login.planner.clone() {
        Some(planner)
            if !shared
                .config()
                .dataplane
                .as_ref()
                .is_some_and(|d| d.passthrough_users.contains(&login.response.user)) =>
        {
            Kind::Routed(planner)
        }
        _ => Kind::Direct(backend_addr),
    };
    // io_uring session threads: a plain-TCP session moves to one for the rest of its life,
    // unless the kernel splice may take it once pinned (it needs tokio's sockets).
    let movable = client.io.plain().is_some()
        && match kind {
            Kind::Routed(_) => !super::routed::may_splice(shared),
            Kind::Direct(_) => true,
        };
    if let Some(threads) = shared.session_threads.get().filter(|_| movable) {
        let mut client = std::mem::replace(client, Wire::unbuffered(Stream::Detached));
        let (started, counted) = tokio::sync::oneshot::channel();
        let shared = shared.clone();
        let session = async move {
            // Counted by this task from here on; the accepting task ends (with all it held).
            let (_client, _open) = (shared.metrics.client_taken_over(), shared.drain.take_over(id));
            let _ = started.send(());
            let result = kind.serve(&mut client, &shared, login, (peer, dialled), id).await;
            finish(&mut client, result).await;
        };
        threads.spawn(session.in_current_span());
        return Ran::Moved { counted: counted.await.is_ok() };
    }
    Ran::Here(kind.serve(client, shared, login, (peer, dialled), id).await)
}

/// What serves an authenticated client.
enum Kind {
    /// A routed session (`[routing]`), planned by its cluster's planner.
    Routed(crate::planner::Planner),
    /// A 1:1 session to this server.
    Direct(SocketAddr),
}

impl Kind {
    async fn serve(
        self,
        client: &mut Wire<Stream>,
        shared: &Shared,
        login: client_auth::ClientLogin,
        addrs: (SocketAddr, Option<SocketAddr>),
        id: u32,
    ) -> Result<(), SessionError> {
        match self {
            Kind::Routed(planner) => super::routed::serve(client, shared, planner, id, addrs, login).await,
            Kind::Direct(backend) => super::proxy::serve(client, shared, login, addrs, id, backend).await,
        }
    }
}
