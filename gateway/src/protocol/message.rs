//! Generic response packets: OK, ERR and EOF, parsed for their status and built by the gateway.

use super::buf::{put_lenenc, put_lenenc_bytes, Reader};
use super::{caps, ProtocolError};

/// First byte of an OK packet.
pub const OK: u8 = 0x00;
/// First byte of an EOF packet (and of an OK packet that ends a result set with DEPRECATE_EOF).
pub const EOF: u8 = 0xFE;
/// First byte of an ERR packet.
pub const ERR: u8 = 0xFF;
/// First byte of a LOCAL INFILE request.
pub const LOCAL_INFILE: u8 = 0xFB;

/// The parts of an OK packet the gateway uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OkPacket {
    /// Rows affected.
    pub affected_rows: u64,
    /// Last insert id.
    pub last_insert_id: u64,
    /// Server status flags.
    pub status: u16,
    /// Warning count.
    pub warnings: u16,
    /// Human-readable info (may be empty).
    pub info: Vec<u8>,
    /// Raw session-state-change block, present when the status has SESSION_STATE_CHANGED.
    pub session_state: Vec<u8>,
}

impl OkPacket {
    /// A plain OK with the given status.
    pub fn with_status(status: u16) -> Self {
        OkPacket {
            affected_rows: 0,
            last_insert_id: 0,
            status,
            warnings: 0,
            info: Vec::new(),
            session_state: Vec::new(),
        }
    }

    /// Parses an OK payload (header 0x00, or 0xFE for the DEPRECATE_EOF terminator).
    pub fn parse(payload: &[u8], client_caps: u32) -> Result<Self, ProtocolError> {
        let mut r = Reader::new(payload);
        let head = r.u8()?;
        if head != OK && head != EOF {
            return Err(ProtocolError::Malformed("not an OK packet"));
        }
        let affected_rows = r.lenenc()?;
        let last_insert_id = r.lenenc()?;
        let status = r.u16()?;
        let warnings = r.u16()?;
        let (mut info, mut session_state) = (Vec::new(), Vec::new());
        if client_caps & caps::SESSION_TRACK != 0 {
            if r.remaining() > 0 {
                info = r.lenenc_bytes()?.to_vec();
            }
            if status & super::status::SESSION_STATE_CHANGED != 0 && r.remaining() > 0 {
                session_state = r.lenenc_bytes()?.to_vec();
            }
        } else {
            info = r.rest().to_vec();
        }
        Ok(OkPacket { affected_rows, last_insert_id, status, warnings, info, session_state })
    }

    /// Encodes the OK payload for a client with `client_caps`.
    pub fn encode(&self, client_caps: u32) -> Vec<u8> {
        let mut out = vec![OK];
        put_lenenc(&mut out, self.affected_rows);
        put_lenenc(&mut out, self.last_insert_id);
        out.extend_from_slice(&self.status.to_le_bytes());
        out.extend_from_slice(&self.warnings.to_le_bytes());
        if client_caps & caps::SESSION_TRACK != 0 {
            if !self.info.is_empty() || !self.session_state.is_empty() {
                put_lenenc_bytes(&mut out, &self.info);
            }
            if self.status & super::status::SESSION_STATE_CHANGED != 0 {
                put_lenenc_bytes(&mut out, &self.session_state);
            }
        } else {
            out.extend_from_slice(&self.info);
        }
        out
    }
}

/// An ERR packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrPacket {
    /// MySQL error number.
    pub code: u16,
    /// Five-character SQLSTATE.
    pub sql_state: [u8; 5],
    /// Message.
    pub message: String,
}

impl ErrPacket {
    /// An error with SQLSTATE HY000.
    pub fn new(code: u16, message: impl Into<String>) -> Self {
        ErrPacket { code, sql_state: *b"HY000", message: message.into() }
    }

    /// An error with a given SQLSTATE.
    pub fn with_state(code: u16, state: &[u8; 5], message: impl Into<String>) -> Self {
        ErrPacket { code, sql_state: *state, message: message.into() }
    }

    /// ER_ACCESS_DENIED_ERROR exactly as a MySQL server words it.
    pub fn access_denied(user: &str, host: &str, used_password: bool) -> Self {
        let using = if used_password { "YES" } else { "NO" };
        ErrPacket::with_state(
            super::codes::ACCESS_DENIED,
            b"28000",
            format!("Access denied for user '{user}'@'{host}' (using password: {using})"),
        )
    }

    /// Parses an ERR payload (protocol 4.1 form, with the `#` SQLSTATE marker when present).
    pub fn parse(payload: &[u8]) -> Result<Self, ProtocolError> {
        let mut r = Reader::new(payload);
        if r.u8()? != ERR {
            return Err(ProtocolError::Malformed("not an ERR packet"));
        }
        let code = r.u16()?;
        let mut sql_state = *b"HY000";
        let rest = r.rest();
        let message = if rest.first() == Some(&b'#') && rest.len() >= 6 {
            sql_state.copy_from_slice(&rest[1..6]);
            &rest[6..]
        } else {
            rest
        };
        Ok(ErrPacket { code, sql_state, message: String::from_utf8_lossy(message).into_owned() })
    }

    /// Encodes the ERR payload (always with SQLSTATE; every supported client speaks 4.1).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(9 + self.message.len());
        out.push(ERR);
        out.extend_from_slice(&self.code.to_le_bytes());
        out.push(b'#');
        out.extend_from_slice(&self.sql_state);
        out.extend_from_slice(self.message.as_bytes());
        out
    }
}

impl std::fmt::Display for ErrPacket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ERROR {} ({}): {}", self.code, String::from_utf8_lossy(&self.sql_state), self.message)
    }
}

/// Status flags of an EOF packet (`0xFE`, warnings u16, status u16).
pub fn eof_status(payload: &[u8]) -> Result<u16, ProtocolError> {
    let mut r = Reader::new(payload);
    r.u8()?;
    r.u16()?;
    r.u16()
}

/// Whether a packet whose first frame has this payload length and first byte ends a result
/// set: an EOF packet, or the OK packet that replaces it with DEPRECATE_EOF. A row starting with
/// 0xFE (an 8-byte length prefix) is always at least 9 bytes long, hence the length bound.
pub fn is_terminator(first_byte: u8, frame_len: usize, deprecate_eof: bool) -> bool {
    first_byte == EOF && if deprecate_eof { frame_len < super::frame::MAX_FRAME } else { frame_len < 9 }
}

/// Status flags of a result-set terminator (EOF, or OK with DEPRECATE_EOF).
pub fn terminator_status(payload: &[u8], deprecate_eof: bool) -> Result<u16, ProtocolError> {
    if deprecate_eof && payload.len() > 5 {
        Ok(OkPacket::parse(payload, 0)?.status)
    } else {
        eof_status(payload)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ok_round_trips_with_session_track() {
        let ok = OkPacket {
            affected_rows: 300,
            last_insert_id: 70_000,
            status: super::super::status::AUTOCOMMIT | super::super::status::SESSION_STATE_CHANGED,
            warnings: 2,
            info: b"Rows matched: 1".to_vec(),
            session_state: vec![0, 5, 4, b'a', b'u', b't', b'o'],
        };
        let c = caps::PROTOCOL_41 | caps::SESSION_TRACK;
        assert_eq!(OkPacket::parse(&ok.encode(c), c).unwrap(), ok);
        let plain = OkPacket { session_state: Vec::new(), status: 2, ..ok };
        assert_eq!(OkPacket::parse(&plain.encode(caps::PROTOCOL_41), caps::PROTOCOL_41).unwrap(), plain);
    }

    #[test]
    fn err_round_trips_and_access_denied_matches_server_text() {
        let e = ErrPacket::access_denied("bob", "127.0.0.1", true);
        assert_eq!(e.message, "Access denied for user 'bob'@'127.0.0.1' (using password: YES)");
        let p = ErrPacket::parse(&e.encode()).unwrap();
        assert_eq!(p, e);
        assert_eq!(&p.sql_state, b"28000");
    }

    #[test]
    fn terminator_detection_respects_length() {
        assert!(is_terminator(0xFE, 5, false));
        assert!(!is_terminator(0xFE, 9, false));
        assert!(is_terminator(0xFE, 30, true));
        assert!(!is_terminator(0xFE, super::super::frame::MAX_FRAME, true));
        assert!(!is_terminator(0x00, 5, true));
    }
}
