//! The first exchange with a client: the greeting, its handshake response, and the switch to
//! TLS that an SSLRequest asks for (the response then comes again, over TLS).

use tokio::net::TcpStream;

use super::{SessionError, Shared};
use crate::protocol::auth::{self, NATIVE};
use crate::protocol::frame::{Packet, Wire};
use crate::protocol::handshake::{Greeting, HandshakeResponse};
use crate::protocol::{caps, codes, ext_caps, ProtocolError};
use crate::tls::{Stream, TlsMode};

/// Largest handshake response accepted.
const MAX_RESPONSE: usize = 64 * 1024;

/// MySQL's text for ER_SECURE_TRANSPORT_REQUIRED.
const INSECURE: &str = "Connections using insecure transport are prohibited while --require_secure_transport=ON.";

/// A client that answered the greeting.
#[derive(Debug)]
pub struct Hello {
    /// The salt the client was greeted with.
    pub salt: Vec<u8>,
    /// Capabilities the greeting announced.
    pub announced: u32,
    /// The handshake response (over TLS when the client switched).
    pub packet: Packet,
}

/// What the client answered to the greeting.
#[derive(Debug)]
pub enum Answer {
    /// Its handshake response, on plain TCP.
    Plain(Hello),
    /// An SSLRequest: the TLS handshake comes next ([`accept_tls`]), then [`read_response`].
    StartTls(Hello),
}

/// Sends the greeting (offering TLS unless `mode` is off) and reads the client's first packet,
/// exactly, so that a ClientHello sent right behind an SSLRequest stays on the socket.
pub async fn greet(
    wire: &mut Wire<Stream>,
    shared: &Shared,
    connection_id: u32,
    mode: TlsMode,
) -> Result<Answer, SessionError> {
    let salt = auth::new_salt();
    let profile = shared.profile();
    let offer_tls = mode != TlsMode::Off && shared.config().tls_loaded.acceptor.is_some();
    let ext_capabilities = announced_ext(shared, &profile);
    let announced = (profile.capabilities & caps::SUPPORTED)
        | caps::PROTOCOL_41
        | caps::SECURE_CONNECTION
        | caps::PLUGIN_AUTH
        // CLIENT_MYSQL: cleared when MariaDB's extended capabilities are announced.
        | if ext_capabilities == 0 { caps::LONG_PASSWORD } else { 0 }
        | if offer_tls { caps::SSL } else { 0 };
    let greeting = Greeting {
        server_version: profile.server_version,
        connection_id,
        salt: salt.clone(),
        capabilities: announced,
        charset: profile.charset,
        // What a new server session starts with (the server's global autocommit), as learnt
        // from the servers' greetings: a client that trusts it must not skip SET autocommit.
        status: profile.status,
        auth_plugin: NATIVE.into(),
        ext_capabilities,
    };
    wire.write_packet(0, &greeting.encode()).await.map_err(SessionError::Client)?;
    let packet = wire.read_frame_exact(MAX_RESPONSE).await.map_err(|e| handshake_error(e, 2))?;
    check_seq(&packet, 1)?;
    let seq = packet.last_seq.wrapping_add(1);
    let ssl = HandshakeResponse::is_ssl_request(&packet.payload);
    let hello = Hello { salt, announced, packet };
    match (ssl, offer_tls) {
        (true, true) if wire.buf.is_empty() => Ok(Answer::StartTls(hello)),
        (true, true) => Err(SessionError::refuse(codes::HANDSHAKE, seq, "Bad handshake")),
        (true, false) => {
            Err(SessionError::refuse(codes::HANDSHAKE, seq, "SSL connection error: TLS is not enabled on this gateway"))
        }
        (false, _) if mode == TlsMode::Required => {
            Err(SessionError::refuse(codes::SECURE_TRANSPORT_REQUIRED, seq, INSECURE))
        }
        (false, _) => Ok(Answer::Plain(hello)),
    }
}

/// MariaDB extended capabilities offered to clients: those of a MariaDB backend that a 1:1
/// session relays ([`ext_caps::RELAYED`]). A routing gateway offers [`ext_caps::ROUTED`]: the
/// pool keeps server connections that negotiated progress reports apart from the others, while
/// extended metadata would also change the gateway's own result sets (not done yet).
fn announced_ext(shared: &Shared, profile: &super::shared::BackendProfile) -> u32 {
    let mariadb = profile.capabilities & caps::LONG_PASSWORD == 0;
    let offered = if shared.clusters.routed() { ext_caps::ROUTED } else { ext_caps::RELAYED };
    if mariadb {
        profile.ext_capabilities & offered
    } else {
        0
    }
}

/// The TLS handshake after an SSLRequest. A failed handshake leaves nothing to answer on.
pub async fn accept_tls(wire: Wire<Stream>, shared: &Shared) -> Result<Wire<Stream>, SessionError> {
    let (stream, buf) = wire.into_parts();
    let failed =
        |why: &str| SessionError::Client(ProtocolError::Io(std::io::Error::other(format!("TLS handshake: {why}"))));
    let Some(acceptor) = shared.config().tls_loaded.acceptor.clone() else { return Err(failed("no certificate")) };
    let tcp: TcpStream = match stream {
        Stream::Plain(tcp) => tcp,
        _ => return Err(failed("already TLS")),
    };
    let tls = acceptor.accept(tcp).await.map_err(|e| failed(&e.to_string()))?;
    let stream = Stream::Server(Box::new(tls));
    tracing::debug!(cipher = ?stream.cipher(), "client leg is TLS");
    Ok(Wire::from_parts(stream, buf))
}

/// Reads the handshake response that follows the TLS handshake (sequence 2).
pub async fn read_response(wire: &mut Wire<Stream>, hello: Hello) -> Result<Hello, SessionError> {
    let packet = wire.read_packet(MAX_RESPONSE).await.map_err(|e| handshake_error(e, 3))?;
    check_seq(&packet, 2)?;
    Ok(Hello { packet, ..hello })
}

fn check_seq(packet: &Packet, expected: u8) -> Result<(), SessionError> {
    if packet.first_seq != expected {
        return Err(SessionError::refuse(
            codes::OUT_OF_ORDER,
            packet.last_seq.wrapping_add(1),
            "Got packets out of order",
        ));
    }
    Ok(())
}

/// A framing error during the handshake: "Bad handshake" when the client can still be told.
pub fn handshake_error(e: ProtocolError, seq: u8) -> SessionError {
    match e {
        ProtocolError::TooLarge { .. } | ProtocolError::OutOfOrder { .. } | ProtocolError::Malformed(_) => {
            SessionError::refuse(codes::HANDSHAKE, seq, "Bad handshake")
        }
        other => SessionError::Client(other),
    }
}
