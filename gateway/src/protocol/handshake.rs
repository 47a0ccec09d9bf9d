//! Connection phase packets: the v10 greeting, the client's handshake response, auth switch.

use super::buf::{put_lenenc_bytes, put_nul_bytes, Reader};
use super::{caps, ProtocolError};

/// The server's initial handshake packet (protocol version 10).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Greeting {
    /// Server version string, e.g. `10.11.19-MariaDB`.
    pub server_version: String,
    /// Connection (thread) id.
    pub connection_id: u32,
    /// Authentication salt (20 bytes for both password plugins).
    pub salt: Vec<u8>,
    /// Capability flags.
    pub capabilities: u32,
    /// Default collation id.
    pub charset: u8,
    /// Server status flags.
    pub status: u16,
    /// Default authentication plugin.
    pub auth_plugin: String,
    /// MariaDB extended capabilities ([`super::ext_caps`]); meaningful when CLIENT_MYSQL
    /// (`caps::LONG_PASSWORD`) is clear.
    pub ext_capabilities: u32,
}

impl Greeting {
    /// Parses a greeting payload.
    pub fn parse(payload: &[u8]) -> Result<Self, ProtocolError> {
        let mut r = Reader::new(payload);
        if r.u8()? != 10 {
            return Err(ProtocolError::Malformed("unsupported handshake protocol version"));
        }
        let server_version = String::from_utf8_lossy(r.nul_bytes()).into_owned();
        let connection_id = r.u32()?;
        let mut salt = r.take(8)?.to_vec();
        r.u8()?;
        let cap_low = u32::from(r.u16()?);
        let charset = r.u8()?;
        let status = r.u16()?;
        let cap_high = u32::from(r.u16()?);
        let capabilities = cap_low | cap_high << 16;
        let salt_len = usize::from(r.u8()?);
        let filler = r.take(10)?;
        let ext_capabilities = match filler.get(6..10) {
            Some(b) if capabilities & caps::LONG_PASSWORD == 0 => u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            _ => 0,
        };
        if capabilities & caps::SECURE_CONNECTION != 0 {
            let n = salt_len.saturating_sub(8).max(13);
            let part2 = r.take(n.min(r.remaining()))?;
            salt.extend_from_slice(part2.strip_suffix(&[0]).unwrap_or(part2));
        }
        let auth_plugin = if capabilities & caps::PLUGIN_AUTH != 0 {
            String::from_utf8_lossy(r.nul_bytes()).into_owned()
        } else {
            "mysql_native_password".into()
        };
        Ok(Greeting {
            server_version,
            connection_id,
            salt,
            capabilities,
            charset,
            status,
            auth_plugin,
            ext_capabilities,
        })
    }

    /// Encodes the greeting payload. The salt must be 20 bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(96);
        out.push(10);
        put_nul_bytes(&mut out, self.server_version.as_bytes());
        out.extend_from_slice(&self.connection_id.to_le_bytes());
        out.extend_from_slice(&self.salt[..8]);
        out.push(0);
        out.extend_from_slice(&(self.capabilities as u16).to_le_bytes());
        out.push(self.charset);
        out.extend_from_slice(&self.status.to_le_bytes());
        out.extend_from_slice(&((self.capabilities >> 16) as u16).to_le_bytes());
        out.push((self.salt.len() + 1) as u8);
        out.extend_from_slice(&[0u8; 6]);
        // MariaDB's extended capabilities (zero unless CLIENT_MYSQL is clear).
        out.extend_from_slice(&self.ext_capabilities.to_le_bytes());
        put_nul_bytes(&mut out, &self.salt[8..]);
        put_nul_bytes(&mut out, self.auth_plugin.as_bytes());
        out
    }
}

/// The client's HandshakeResponse41.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HandshakeResponse {
    /// Capability flags the client asks for.
    pub capabilities: u32,
    /// Max packet size the client accepts.
    pub max_packet: u32,
    /// Collation id.
    pub charset: u8,
    /// Login name.
    pub user: String,
    /// Authentication response for `auth_plugin`.
    pub auth_response: Vec<u8>,
    /// Database to select (CONNECT_WITH_DB).
    pub database: Option<String>,
    /// Plugin the response was computed with.
    pub auth_plugin: Option<String>,
    /// Raw connection attributes (CONNECT_ATTRS), key/value lenenc strings.
    pub attributes: Vec<(Vec<u8>, Vec<u8>)>,
    /// MariaDB extended capabilities (last 4 bytes of the reserved area), when CLIENT_MYSQL
    /// (`caps::LONG_PASSWORD`) is clear.
    pub ext_capabilities: u32,
}

impl HandshakeResponse {
    /// Whether the payload is a bare SSLRequest (32 bytes, CLIENT_SSL set).
    pub fn is_ssl_request(payload: &[u8]) -> bool {
        payload.len() == 32 && Reader::new(payload).u32().map(|c| c & caps::SSL != 0).unwrap_or(false)
    }

    /// An SSLRequest: the first 32 bytes of a HandshakeResponse41 with CLIENT_SSL set; the
    /// TLS handshake follows, then the whole response over TLS. MariaDB takes the extended
    /// capabilities from this packet (its last 4 bytes, when CLIENT_MYSQL is clear), so they are
    /// sent here as in the full response.
    pub fn ssl_request(capabilities: u32, max_packet: u32, charset: u8, ext_capabilities: u32) -> Vec<u8> {
        let mut out = Vec::with_capacity(32);
        out.extend_from_slice(&(capabilities | caps::SSL).to_le_bytes());
        out.extend_from_slice(&max_packet.to_le_bytes());
        out.push(charset);
        out.extend_from_slice(&[0u8; 19]);
        let ext = if capabilities & caps::LONG_PASSWORD == 0 { ext_capabilities } else { 0 };
        out.extend_from_slice(&ext.to_le_bytes());
        out
    }

    /// Parses a HandshakeResponse41 payload. Pre-4.1 clients are refused.
    pub fn parse(payload: &[u8]) -> Result<Self, ProtocolError> {
        let mut r = Reader::new(payload);
        let capabilities = r.u32()?;
        if capabilities & caps::PROTOCOL_41 == 0 {
            return Err(ProtocolError::Malformed("client does not speak protocol 4.1"));
        }
        let max_packet = r.u32()?;
        let charset = r.u8()?;
        let reserved = r.take(23)?;
        let ext_capabilities = match reserved.get(19..23) {
            Some(b) if capabilities & caps::LONG_PASSWORD == 0 => u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            _ => 0,
        };
        let user = String::from_utf8_lossy(r.nul_bytes()).into_owned();
        let auth_response = if capabilities & caps::PLUGIN_AUTH_LENENC_CLIENT_DATA != 0 {
            r.lenenc_bytes()?.to_vec()
        } else if capabilities & caps::SECURE_CONNECTION != 0 {
            let n = usize::from(r.u8()?);
            r.take(n)?.to_vec()
        } else {
            r.nul_bytes().to_vec()
        };
        let mut resp = HandshakeResponse {
            capabilities,
            max_packet,
            charset,
            user,
            auth_response,
            ext_capabilities,
            ..Default::default()
        };
        if capabilities & caps::CONNECT_WITH_DB != 0 && r.remaining() > 0 {
            let db = r.nul_bytes();
            if !db.is_empty() {
                resp.database = Some(String::from_utf8_lossy(db).into_owned());
            }
        }
        if capabilities & caps::PLUGIN_AUTH != 0 && r.remaining() > 0 {
            resp.auth_plugin = Some(String::from_utf8_lossy(r.nul_bytes()).into_owned());
        }
        if capabilities & caps::CONNECT_ATTRS != 0 && r.remaining() > 0 {
            resp.attributes = parse_attributes(&mut r)?;
        }
        Ok(resp)
    }

    /// Encodes a HandshakeResponse41 payload.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(128);
        out.extend_from_slice(&self.capabilities.to_le_bytes());
        out.extend_from_slice(&self.max_packet.to_le_bytes());
        out.push(self.charset);
        out.extend_from_slice(&[0u8; 19]);
        let ext = if self.capabilities & caps::LONG_PASSWORD == 0 { self.ext_capabilities } else { 0 };
        out.extend_from_slice(&ext.to_le_bytes());
        put_nul_bytes(&mut out, self.user.as_bytes());
        if self.capabilities & caps::PLUGIN_AUTH_LENENC_CLIENT_DATA != 0 {
            put_lenenc_bytes(&mut out, &self.auth_response);
        } else {
            out.push(self.auth_response.len() as u8);
            out.extend_from_slice(&self.auth_response);
        }
        if self.capabilities & caps::CONNECT_WITH_DB != 0 {
            put_nul_bytes(&mut out, self.database.as_deref().unwrap_or("").as_bytes());
        }
        if self.capabilities & caps::PLUGIN_AUTH != 0 {
            put_nul_bytes(&mut out, self.auth_plugin.as_deref().unwrap_or("").as_bytes());
        }
        if self.capabilities & caps::CONNECT_ATTRS != 0 {
            put_attributes(&mut out, &self.attributes);
        }
        out
    }
}

/// Connection attributes as key/value byte strings.
pub type Attributes = Vec<(Vec<u8>, Vec<u8>)>;

/// Connection attributes: one lenenc block of lenenc key/value strings.
fn parse_attributes(r: &mut Reader<'_>) -> Result<Attributes, ProtocolError> {
    let mut a = Reader::new(r.lenenc_bytes()?);
    let mut out = Vec::new();
    while a.remaining() > 0 {
        let k = a.lenenc_bytes()?.to_vec();
        let v = a.lenenc_bytes()?.to_vec();
        out.push((k, v));
    }
    Ok(out)
}

fn put_attributes(out: &mut Vec<u8>, attributes: &[(Vec<u8>, Vec<u8>)]) {
    let mut block = Vec::new();
    for (k, v) in attributes {
        put_lenenc_bytes(&mut block, k);
        put_lenenc_bytes(&mut block, v);
    }
    put_lenenc_bytes(out, &block);
}

/// An AuthSwitchRequest (`0xFE`, plugin name, plugin data).
pub fn auth_switch_request(plugin: &str, data: &[u8]) -> Vec<u8> {
    let mut out = vec![0xFE];
    put_nul_bytes(&mut out, plugin.as_bytes());
    out.extend_from_slice(data);
    out.push(0);
    out
}

/// An AuthSwitchRequest whose data is sent as it is, without a trailing NUL (`client_ed25519`'s
/// 32-byte nonce, which may itself end in a zero byte).
pub fn auth_switch_request_raw(plugin: &str, data: &[u8]) -> Vec<u8> {
    let mut out = vec![0xFE];
    put_nul_bytes(&mut out, plugin.as_bytes());
    out.extend_from_slice(data);
    out
}

/// Parses an AuthSwitchRequest into (plugin, data without its trailing NUL); `client_ed25519`'s
/// nonce has no terminator and is kept whole.
pub fn parse_auth_switch(payload: &[u8]) -> Result<(String, Vec<u8>), ProtocolError> {
    let mut r = Reader::new(payload);
    if r.u8()? != 0xFE {
        return Err(ProtocolError::Malformed("not an auth switch request"));
    }
    let plugin = String::from_utf8_lossy(r.nul_bytes()).into_owned();
    let data = r.rest();
    if plugin == super::ed25519::CLIENT_PLUGIN {
        return Ok((plugin, data.to_vec()));
    }
    Ok((plugin, data.strip_suffix(&[0]).unwrap_or(data).to_vec()))
}

/// Parses a COM_CHANGE_USER payload into a handshake-response-like value.
pub fn parse_change_user(payload: &[u8], client_caps: u32) -> Result<HandshakeResponse, ProtocolError> {
    let mut r = Reader::new(payload);
    r.u8()?;
    let user = String::from_utf8_lossy(r.nul_bytes()).into_owned();
    let auth_response = if client_caps & caps::SECURE_CONNECTION != 0 {
        let n = usize::from(r.u8()?);
        r.take(n)?.to_vec()
    } else {
        r.nul_bytes().to_vec()
    };
    let db = r.nul_bytes();
    let database = (!db.is_empty()).then(|| String::from_utf8_lossy(db).into_owned());
    let mut resp = HandshakeResponse { capabilities: client_caps, user, auth_response, database, ..Default::default() };
    if r.remaining() >= 2 {
        resp.charset = r.u16()? as u8;
    }
    if client_caps & caps::PLUGIN_AUTH != 0 && r.remaining() > 0 {
        resp.auth_plugin = Some(String::from_utf8_lossy(r.nul_bytes()).into_owned());
    }
    if client_caps & caps::CONNECT_ATTRS != 0 && r.remaining() > 0 {
        resp.attributes = parse_attributes(&mut r)?;
    }
    Ok(resp)
}

/// Encodes a COM_CHANGE_USER payload.
pub fn encode_change_user(r: &HandshakeResponse) -> Vec<u8> {
    let mut out = vec![super::command::CHANGE_USER];
    put_nul_bytes(&mut out, r.user.as_bytes());
    out.push(r.auth_response.len() as u8);
    out.extend_from_slice(&r.auth_response);
    put_nul_bytes(&mut out, r.database.as_deref().unwrap_or("").as_bytes());
    out.extend_from_slice(&u16::from(r.charset).to_le_bytes());
    if r.capabilities & caps::PLUGIN_AUTH != 0 {
        put_nul_bytes(&mut out, r.auth_plugin.as_deref().unwrap_or("").as_bytes());
    }
    if r.capabilities & caps::CONNECT_ATTRS != 0 {
        put_attributes(&mut out, &r.attributes);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greeting_round_trips() {
        let g = Greeting {
            server_version: "5.5.5-10.11.19-MariaDB".into(),
            connection_id: 42,
            salt: (1..=20).collect(),
            capabilities: caps::SUPPORTED,
            charset: 45,
            status: 2,
            auth_plugin: "mysql_native_password".into(),
            ext_capabilities: 0,
        };
        assert_eq!(Greeting::parse(&g.encode()).unwrap(), g);
        let mariadb = Greeting { capabilities: caps::SUPPORTED & !caps::LONG_PASSWORD, ext_capabilities: 0b1101, ..g };
        assert_eq!(Greeting::parse(&mariadb.encode()).unwrap(), mariadb);
    }

    #[test]
    fn handshake_response_round_trips_with_every_optional_part() {
        let h = HandshakeResponse {
            capabilities: caps::SUPPORTED,
            max_packet: 1 << 24,
            charset: 33,
            user: "alice".into(),
            auth_response: vec![9; 20],
            database: Some("db1".into()),
            auth_plugin: Some("caching_sha2_password".into()),
            attributes: vec![(b"_client_name".to_vec(), b"x".to_vec())],
            ext_capabilities: 0,
        };
        assert_eq!(HandshakeResponse::parse(&h.encode()).unwrap(), h);
        let mariadb = HandshakeResponse {
            capabilities: caps::SUPPORTED & !caps::LONG_PASSWORD,
            ext_capabilities: 5,
            ..h.clone()
        };
        assert_eq!(HandshakeResponse::parse(&mariadb.encode()).unwrap(), mariadb);
        let bare = HandshakeResponse { capabilities: caps::PROTOCOL_41 | caps::SECURE_CONNECTION, ..h.clone() };
        let p = HandshakeResponse::parse(&bare.encode()).unwrap();
        assert_eq!((p.user.as_str(), p.database, p.auth_plugin), ("alice", None, None));
    }

    #[test]
    fn garbage_is_an_error() {
        assert!(HandshakeResponse::parse(&[1, 2, 3]).is_err());
        assert!(HandshakeResponse::parse(&[0u8; 40]).is_err());
        assert!(Greeting::parse(&[9, 1, 2]).is_err());
    }

    #[test]
    fn change_user_round_trips() {
        let h = HandshakeResponse {
            capabilities: caps::SUPPORTED,
            charset: 45,
            user: "bob".into(),
            auth_response: vec![1; 20],
            database: Some("d".into()),
            auth_plugin: Some("mysql_native_password".into()),
            ..Default::default()
        };
        let p = parse_change_user(&encode_change_user(&h), caps::SUPPORTED).unwrap();
        assert_eq!(p, h);
    }
}
