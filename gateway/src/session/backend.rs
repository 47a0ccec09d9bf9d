//! The gateway as a client of a backend server: connect, log in with the client's credentials.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use tokio::net::TcpStream;

use super::identity::{oceanbase_attributes, ClientIdentity};
use super::{server_kind, Credential, SessionError};
use crate::login_name::{self, ServerKind};
use crate::protocol::auth::{self, CACHING_SHA2, NATIVE};
use crate::protocol::ed25519;
use crate::protocol::frame::Wire;
use crate::protocol::handshake::{encode_change_user, parse_auth_switch, Greeting, HandshakeResponse};
use crate::protocol::message::{ErrPacket, OkPacket, ERR, OK};
use crate::protocol::{caps, codes, ProtocolError};
use crate::tls::{ServerTls, Stream};

/// Largest packet accepted from a backend during login.
const MAX_LOGIN_PACKET: usize = 1 << 20;

/// An open backend connection.
pub struct Backend {
    /// The connection (plain TCP or TLS) with its read buffer.
    pub wire: Wire<Stream>,
    /// The backend's greeting (its salt is reused by COM_CHANGE_USER).
    pub greeting: Greeting,
    /// Capabilities in effect on this leg.
    pub capabilities: u32,
    /// The status flags of the OK that began the current server session (login, COM_CHANGE_USER,
    /// COM_RESET_CONNECTION): its autocommit is the server's global value of that moment, which
    /// a routing gateway tells its client at login.
    pub session_status: u16,
}

/// How a backend login ended.
#[derive(Debug)]
pub enum LoginOutcome {
    /// The server's OK payload.
    Ok(Bytes),
    /// The server's ERR, to relay to the client.
    Denied(ErrPacket),
}

/// What the gateway logs in with.
#[derive(Debug, Clone)]
pub struct LoginRequest<'a> {
    /// User name: the bare account name, without tenant or cluster.
    pub user: &'a str,
    /// Tenant of the session (docs/routing.md §14). An OceanBase server gets `user@tenant`, a
    /// MySQL/MariaDB server the bare user; the greeting's version string tells them apart.
    pub tenant: Option<&'a str>,
    /// Secret.
    pub credential: &'a Credential,
    /// Database to select, if any.
    pub database: Option<&'a str>,
    /// Collation id.
    pub charset: u8,
    /// Capabilities of the client leg (the backend leg asks for the same).
    pub client_caps: u32,
    /// MariaDB extended capabilities of the client leg (the backend leg asks for those the
    /// server offers); 0 for none.
    pub client_ext_caps: u32,
    /// Connection attributes to pass on.
    pub attributes: &'a [(Vec<u8>, Vec<u8>)],
    /// Server-leg TLS (`Shared::server_tls`); `None`: plain TCP.
    pub tls: Option<Arc<ServerTls>>,
    /// The application behind the login, told to OceanBase servers (`[backend] client_identity`);
    /// `None`: not told.
    pub identity: Option<ClientIdentity>,
}

/// Opens a TCP connection and reads the greeting, within `timeout`.
pub async fn connect(addr: SocketAddr, timeout: Duration) -> Result<(Wire<TcpStream>, Greeting), SessionError> {
    let unreachable = |why: String| SessionError::Refused {
        err: ErrPacket::new(codes::BACKEND_UNREACHABLE, format!("gateway: cannot connect to backend {addr}: {why}")),
        seq: 0,
    };
    let attempt = async {
        let stream = TcpStream::connect(addr).await.map_err(|e| unreachable(e.to_string()))?;
        stream.set_nodelay(true).map_err(|e| unreachable(e.to_string()))?;
        let mut wire = Wire::new(stream);
        let p = wire.read_packet(MAX_LOGIN_PACKET).await.map_err(|e| unreachable(e.to_string()))?;
        if p.payload.first() == Some(&ERR) {
            let e = ErrPacket::parse(&p.payload).map_err(|e| unreachable(e.to_string()))?;
            return Err(unreachable(e.to_string()));
        }
        let g = Greeting::parse(&p.payload).map_err(|e| unreachable(e.to_string()))?;
        Ok((wire, g))
    };
    tokio::time::timeout(timeout, attempt).await.map_err(|_| unreachable("timed out".into()))?
}

/// Logs in on a fresh connection. Errors here are backend failures; a refusal by the server is
/// `LoginOutcome::Denied`.
pub async fn login(
    wire: Wire<TcpStream>,
    greeting: Greeting,
    req: &LoginRequest<'_>,
) -> Result<(Backend, LoginOutcome), SessionError> {
    let mut capabilities = (req.client_caps & caps::SUPPORTED & greeting.capabilities)
        | caps::PROTOCOL_41
        | caps::SECURE_CONNECTION
        | (caps::PLUGIN_AUTH & greeting.capabilities);
    if req.database.is_some() {
        capabilities |= caps::CONNECT_WITH_DB & greeting.capabilities;
    }
    let addr = wire.io.peer_addr().map_err(|e| SessionError::Backend(e.into()))?;
    let attributes = req.server_attributes(addr, &greeting);
    if !attributes.is_empty() {
        capabilities |= caps::CONNECT_ATTRS & greeting.capabilities;
    }
    // MariaDB's extended capabilities: asked for by clearing CLIENT_MYSQL.
    let ext_capabilities = req.client_ext_caps & greeting.ext_capabilities;
    if ext_capabilities != 0 && greeting.capabilities & caps::LONG_PASSWORD == 0 {
        capabilities &= !caps::LONG_PASSWORD;
    }
    let (mut wire, seq) = secure(wire, &greeting, req, &mut capabilities, ext_capabilities).await?;
    let plugin = greeting.auth_plugin.clone();
    let auth_response = scramble(&plugin, &greeting.salt, req.credential)?;
    let response = HandshakeResponse {
        capabilities,
        max_packet: 1 << 30,
        charset: req.charset,
        user: req.server_user(addr, &greeting),
        auth_response,
        database: req.database.map(str::to_string),
        auth_plugin: Some(plugin.clone()),
        attributes,
        ext_capabilities,
    };
    wire.write_packet(seq, &response.encode()).await.map_err(SessionError::Backend)?;
    let outcome = auth_loop(&mut wire, &plugin, &greeting.salt, req.credential).await?;
    let session_status = outcome.status(capabilities).unwrap_or(greeting.status);
    Ok((Backend { wire, greeting, capabilities, session_status }, outcome))
}

/// Switches the connection to TLS when `[backend] tls` asks for it (SSLRequest at sequence 1,
/// the TLS handshake, then the handshake response at sequence 2). Returns the connection and
/// the sequence id of the handshake response.
async fn secure(
    wire: Wire<TcpStream>,
    greeting: &Greeting,
    req: &LoginRequest<'_>,
    capabilities: &mut u32,
    ext_capabilities: u32,
) -> Result<(Wire<Stream>, u8), SessionError> {
    let (tcp, buf) = wire.into_parts();
    let addr = tcp.peer_addr().map_err(|e| SessionError::Backend(e.into()))?;
    let refused =
        |why: String| SessionError::refuse(codes::SSL_CONNECTION, 0, format!("gateway: TLS to backend {addr}: {why}"));
    let Some(tls) = req.tls.as_deref() else { return Ok((Wire::from_parts(Stream::Plain(tcp), buf), 1)) };
    if !tls.wanted(greeting.capabilities & caps::SSL != 0).map_err(|e| refused(e.to_string()))? {
        return Ok((Wire::from_parts(Stream::Plain(tcp), buf), 1));
    }
    *capabilities |= caps::SSL;
    let mut wire = Wire::from_parts(tcp, buf);
    let ssl_request = HandshakeResponse::ssl_request(*capabilities, 1 << 30, req.charset, ext_capabilities);
    wire.write_packet(1, &ssl_request).await.map_err(SessionError::Backend)?;
    let (tcp, buf) = wire.into_parts();
    if !buf.is_empty() {
        return Err(SessionError::Backend(ProtocolError::Malformed("server sent data before the TLS handshake")));
    }
    let stream = tls.connect(tcp, addr).await.map_err(|e| refused(e.to_string()))?;
    tracing::debug!(backend = %addr, cipher = ?stream.cipher(), "server leg is TLS");
    Ok((Wire::from_parts(stream, buf), 2))
}

impl LoginRequest<'_> {
    /// The user name this server gets: `user@tenant` if its greeting says OceanBase, else the
    /// bare user (never `#cluster`, which an OceanBase kernel refuses with ERROR 1045).
    fn server_user(&self, addr: SocketAddr, greeting: &Greeting) -> String {
        login_name::server_user(self.user, self.tenant, server_kind::of(addr, &greeting.server_version))
    }

    /// The connection attributes this server gets: the client's, and for an OceanBase server
    /// the application's identity ([`super::identity`]).
    fn server_attributes(&self, addr: SocketAddr, greeting: &Greeting) -> Vec<(Vec<u8>, Vec<u8>)> {
        match server_kind::of(addr, &greeting.server_version) {
            ServerKind::OceanBase => oceanbase_attributes(self.attributes, self.identity.as_ref()),
            ServerKind::Mysql => self.attributes.to_vec(),
        }
    }
}

impl Backend {
    /// Re-authenticates this connection as another user (COM_CHANGE_USER).
    pub async fn change_user(&mut self, req: &LoginRequest<'_>) -> Result<LoginOutcome, SessionError> {
        let addr = self.wire.io.peer_addr().map_err(|e| SessionError::Backend(e.into()))?;
        let plugin = self.greeting.auth_plugin.clone();
        let response = HandshakeResponse {
            capabilities: self.capabilities,
            charset: req.charset,
            user: req.server_user(addr, &self.greeting),
            auth_response: scramble(&plugin, &self.greeting.salt, req.credential)?,
            database: req.database.map(str::to_string),
            auth_plugin: Some(plugin.clone()),
            attributes: req.server_attributes(addr, &self.greeting),
            ..Default::default()
        };
        self.wire.write_packet(0, &encode_change_user(&response)).await.map_err(SessionError::Backend)?;
        let salt = self.greeting.salt.clone();
        let outcome = auth_loop(&mut self.wire, &plugin, &salt, req.credential).await?;
        if let Some(st) = outcome.status(self.capabilities) {
            self.session_status = st;
        }
        Ok(outcome)
    }
}

impl LoginOutcome {
    /// The status flags of an accepted login's OK (`None`: refused, or an OK too short to say).
    pub fn status(&self, caps: u32) -> Option<u16> {
        match self {
            LoginOutcome::Ok(payload) => OkPacket::parse(payload, caps).ok().map(|ok| ok.status),
            LoginOutcome::Denied(_) => None,
        }
    }
}

/// The auth response for `plugin`.
fn scramble(plugin: &str, salt: &[u8], cred: &Credential) -> Result<Vec<u8>, SessionError> {
    match (plugin, cred) {
        (ed25519::CLIENT_PLUGIN, Credential::Plain(pw)) => Ok(ed25519::sign(pw, salt).to_vec()),
        (_, Credential::Plain(pw)) if pw.is_empty() => Ok(Vec::new()),
        (NATIVE, Credential::Plain(pw)) => Ok(auth::native_scramble(&auth::native_stage1(pw), salt).to_vec()),
        (NATIVE, Credential::NativeStage1(s1)) => Ok(auth::native_scramble(s1, salt).to_vec()),
        (CACHING_SHA2, Credential::Plain(pw)) => Ok(auth::sha2_scramble(pw, salt).to_vec()),
        (other, _) => Err(SessionError::refuse(
            codes::ACCESS_DENIED,
            0,
            format!("gateway: the backend asks for authentication plugin '{other}', which the gateway cannot use with this account's credentials"),
        )),
    }
}

/// Answers auth switches and caching_sha2 requests until the server says OK or ERR.
async fn auth_loop(
    wire: &mut Wire<Stream>,
    plugin: &str,
    salt: &[u8],
    cred: &Credential,
) -> Result<LoginOutcome, SessionError> {
    let (mut plugin, mut salt) = (plugin.to_string(), salt.to_vec());
    loop {
        let p = wire.read_packet(MAX_LOGIN_PACKET).await.map_err(SessionError::Backend)?;
        let seq = p.last_seq.wrapping_add(1);
        match p.payload.first().copied() {
            Some(OK) => return Ok(LoginOutcome::Ok(p.payload)),
            Some(ERR) => return Ok(LoginOutcome::Denied(ErrPacket::parse(&p.payload).map_err(SessionError::Backend)?)),
            Some(0xFE) => {
                let (new_plugin, new_salt) = parse_auth_switch(&p.payload).map_err(SessionError::Backend)?;
                plugin = new_plugin;
                salt = new_salt;
                let resp = scramble(&plugin, &salt, cred)?;
                wire.write_packet(seq, &resp).await.map_err(SessionError::Backend)?;
            }
            Some(0x01) if plugin == CACHING_SHA2 => match p.payload.get(1).copied() {
                Some(auth::SHA2_FAST_OK) => {}
                Some(auth::SHA2_FULL_AUTH) => sha2_full_auth(wire, seq, &salt, cred).await?,
                _ => return Err(SessionError::Backend(ProtocolError::Malformed("unexpected caching_sha2 data"))),
            },
            _ => return Err(SessionError::Backend(ProtocolError::Malformed("unexpected packet during login"))),
        }
    }
}

/// caching_sha2_password full authentication towards a backend: over TLS the clear-text
/// password (NUL-terminated), else the RSA exchange.
async fn sha2_full_auth(wire: &mut Wire<Stream>, seq: u8, salt: &[u8], cred: &Credential) -> Result<(), SessionError> {
    let Credential::Plain(pw) = cred else {
        return Err(SessionError::refuse(
            codes::ACCESS_DENIED,
            0,
            "gateway: backend full authentication needs the plain password",
        ));
    };
    if wire.io.is_tls() {
        let clear: Vec<u8> = pw.iter().copied().chain([0]).collect();
        wire.write_packet(seq, &clear).await.map_err(SessionError::Backend)?;
        return Ok(());
    }
    wire.write_packet(seq, &[auth::SHA2_REQUEST_PUBLIC_KEY]).await.map_err(SessionError::Backend)?;
    let p = wire.read_packet(MAX_LOGIN_PACKET).await.map_err(SessionError::Backend)?;
    let pem = p.payload.get(1..).ok_or(SessionError::Backend(ProtocolError::Malformed("empty public key")))?;
    let cipher = auth::rsa_encrypt_password(pem, pw, salt)
        .map_err(|e| SessionError::refuse(codes::ACCESS_DENIED, 0, format!("gateway: backend public key: {e}")))?;
    wire.write_packet(p.last_seq.wrapping_add(1), &cipher).await.map_err(SessionError::Backend)?;
    Ok(())
}
