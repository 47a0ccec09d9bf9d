//! Wire formats of the raw client: greeting and ERR packets, length-encoded values, OK/EOF status,
//! typed COM_STMT_EXECUTE parameters.

use super::caps;

/// The server greeting (HandshakeV10).
#[derive(Debug, Clone)]
pub struct Greeting {
    pub protocol: u8,
    pub server_version: String,
    pub connection_id: u32,
    pub salt: Vec<u8>,
    pub capabilities: u32,
    pub charset: u8,
    pub status: u16,
    pub auth_plugin: String,
    /// MariaDB extended capabilities (the greeting's last 4 filler bytes; 0 unless the server
    /// cleared CLIENT_MYSQL, bit 0).
    pub ext_capabilities: u32,
}

/// A decoded ERR packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrPacket {
    pub code: u16,
    pub sql_state: String,
    pub message: String,
}

impl std::fmt::Display for ErrPacket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ERROR {} ({}): {}", self.code, self.sql_state, self.message)
    }
}

/// Decodes `payload` if it is an ERR packet.
pub fn parse_err(payload: &[u8]) -> Option<ErrPacket> {
    if payload.len() < 3 || payload[0] != 0xff {
        return None;
    }
    let code = u16::from_le_bytes([payload[1], payload[2]]);
    let (sql_state, msg) = if payload.len() >= 9 && payload[3] == b'#' {
        (String::from_utf8_lossy(&payload[4..9]).into_owned(), &payload[9..])
    } else {
        (String::new(), &payload[3..])
    };
    Some(ErrPacket { code, sql_state, message: String::from_utf8_lossy(msg).into_owned() })
}

/// A prepared statement.
#[derive(Debug, Clone)]
pub struct Prepared {
    pub id: u32,
    pub params: u16,
    pub columns: u16,
    /// The COM_STMT_PREPARE response: OK, parameter definitions + EOF, column definitions + EOF.
    pub packets: Vec<Vec<u8>>,
}

/// A parameter value as sent on the wire.
#[derive(Debug, Clone)]
pub enum ParamValue {
    Null,
    Bytes(Vec<u8>),
    /// Sent before with COM_STMT_SEND_LONG_DATA: no value in the execute packet.
    LongData,
}

/// A typed COM_STMT_EXECUTE parameter.
#[derive(Debug, Clone)]
pub struct Param {
    pub ty: u8,
    pub unsigned: bool,
    pub value: ParamValue,
}

/// MySQL field types used as parameter types.
pub mod ty {
    pub const DECIMAL_NEW: u8 = 0xf6;
    pub const TINY: u8 = 0x01;
    pub const SHORT: u8 = 0x02;
    pub const LONG: u8 = 0x03;
    pub const FLOAT: u8 = 0x04;
    pub const DOUBLE: u8 = 0x05;
    pub const NULL: u8 = 0x06;
    pub const LONGLONG: u8 = 0x08;
    pub const DATE: u8 = 0x0a;
    pub const TIME: u8 = 0x0b;
    pub const DATETIME: u8 = 0x0c;
    pub const BLOB: u8 = 0xfc;
    pub const VAR_STRING: u8 = 0xfd;
    pub const STRING: u8 = 0xfe;
}

impl Param {
    fn new(ty: u8, unsigned: bool, v: Vec<u8>) -> Param {
        Param { ty, unsigned, value: ParamValue::Bytes(v) }
    }
    pub fn tiny(v: i8) -> Param {
        Self::new(ty::TINY, false, v.to_le_bytes().to_vec())
    }
    pub fn utiny(v: u8) -> Param {
        Self::new(ty::TINY, true, vec![v])
    }
    pub fn short(v: i16) -> Param {
        Self::new(ty::SHORT, false, v.to_le_bytes().to_vec())
    }
    pub fn ushort(v: u16) -> Param {
        Self::new(ty::SHORT, true, v.to_le_bytes().to_vec())
    }
    pub fn long(v: i32) -> Param {
        Self::new(ty::LONG, false, v.to_le_bytes().to_vec())
    }
    pub fn ulong(v: u32) -> Param {
        Self::new(ty::LONG, true, v.to_le_bytes().to_vec())
    }
    pub fn longlong(v: i64) -> Param {
        Self::new(ty::LONGLONG, false, v.to_le_bytes().to_vec())
    }
    pub fn ulonglong(v: u64) -> Param {
        Self::new(ty::LONGLONG, true, v.to_le_bytes().to_vec())
    }
    pub fn float(v: f32) -> Param {
        Self::new(ty::FLOAT, false, v.to_le_bytes().to_vec())
    }
    pub fn double(v: f64) -> Param {
        Self::new(ty::DOUBLE, false, v.to_le_bytes().to_vec())
    }
    pub fn decimal(v: &str) -> Param {
        Self::new(ty::DECIMAL_NEW, false, lenenc_bytes(v.as_bytes()))
    }
    pub fn string(v: &str) -> Param {
        Self::new(ty::VAR_STRING, false, lenenc_bytes(v.as_bytes()))
    }
    pub fn fixed_string(v: &str) -> Param {
        Self::new(ty::STRING, false, lenenc_bytes(v.as_bytes()))
    }
    pub fn blob(v: &[u8]) -> Param {
        Self::new(ty::BLOB, false, lenenc_bytes(v))
    }
    pub fn null() -> Param {
        Param { ty: ty::NULL, unsigned: false, value: ParamValue::Null }
    }
    pub fn long_data(ty: u8) -> Param {
        Param { ty, unsigned: false, value: ParamValue::LongData }
    }
    pub fn date(y: u16, m: u8, d: u8) -> Param {
        let mut v = vec![4];
        v.extend_from_slice(&y.to_le_bytes());
        v.extend_from_slice(&[m, d]);
        Self::new(ty::DATE, false, v)
    }
    #[allow(clippy::too_many_arguments)]
    pub fn datetime(y: u16, mo: u8, d: u8, h: u8, mi: u8, s: u8, us: u32) -> Param {
        let mut v = vec![11];
        v.extend_from_slice(&y.to_le_bytes());
        v.extend_from_slice(&[mo, d, h, mi, s]);
        v.extend_from_slice(&us.to_le_bytes());
        Self::new(ty::DATETIME, false, v)
    }
    pub fn time(neg: bool, days: u32, h: u8, mi: u8, s: u8, us: u32) -> Param {
        let mut v = vec![12, neg as u8];
        v.extend_from_slice(&days.to_le_bytes());
        v.extend_from_slice(&[h, mi, s]);
        v.extend_from_slice(&us.to_le_bytes());
        Self::new(ty::TIME, false, v)
    }
}

/// Length-encoded string.
pub fn lenenc_bytes(v: &[u8]) -> Vec<u8> {
    let n = v.len() as u64;
    let mut b = Vec::with_capacity(v.len() + 9);
    if n < 251 {
        b.push(n as u8);
    } else if n < 1 << 16 {
        b.push(0xfc);
        b.extend_from_slice(&(n as u16).to_le_bytes());
    } else if n < 1 << 24 {
        b.push(0xfd);
        b.extend_from_slice(&(n as u32).to_le_bytes()[..3]);
    } else {
        b.push(0xfe);
        b.extend_from_slice(&n.to_le_bytes());
    }
    b.extend_from_slice(v);
    b
}

/// Decodes a length-encoded integer at the start of `b`: (value, bytes used).
pub fn lenenc(b: &[u8]) -> Option<(u64, usize)> {
    let f = *b.first()?;
    let le = |n: usize| -> Option<u64> {
        let s = b.get(1..1 + n)?;
        let mut a = [0u8; 8];
        a[..n].copy_from_slice(s);
        Some(u64::from_le_bytes(a))
    };
    match f {
        0..=250 => Some((f as u64, 1)),
        0xfc => Some((le(2)?, 3)),
        0xfd => Some((le(3)?, 4)),
        0xfe => Some((le(8)?, 9)),
        _ => None,
    }
}

/// Status flags of an OK packet.
pub fn ok_status(p: &[u8]) -> u16 {
    let Some((_, a)) = lenenc(&p[1..]) else { return 0 };
    let Some((_, b)) = lenenc(&p[1 + a..]) else { return 0 };
    let i = 1 + a + b;
    p.get(i..i + 2).map(|s| u16::from_le_bytes([s[0], s[1]])).unwrap_or(0)
}

/// Status flags of an EOF packet.
pub fn eof_status(p: &[u8]) -> u16 {
    p.get(3..5).map(|s| u16::from_le_bytes([s[0], s[1]])).unwrap_or(0)
}

pub(super) fn empty_greeting() -> Greeting {
    Greeting {
        protocol: 0,
        server_version: String::new(),
        connection_id: 0,
        salt: Vec::new(),
        capabilities: 0,
        charset: 0,
        status: 0,
        auth_plugin: String::new(),
        ext_capabilities: 0,
    }
}

/// Parses a HandshakeV10 payload.
pub fn parse_greeting(p: &[u8]) -> anyhow::Result<Greeting> {
    let bad = || anyhow::anyhow!("malformed greeting {:02x?}", &p[..p.len().min(64)]);
    if p.first() != Some(&10) {
        return Err(bad());
    }
    let nul = p[1..].iter().position(|&b| b == 0).ok_or_else(bad)? + 1;
    let version = String::from_utf8_lossy(&p[1..nul]).into_owned();
    let mut i = nul + 1;
    let g = |i: usize, n: usize| p.get(i..i + n).ok_or_else(bad);
    let conn = u32::from_le_bytes(g(i, 4)?.try_into().map_err(|_| bad())?);
    i += 4;
    let mut salt = g(i, 8)?.to_vec();
    i += 9;
    let cap_lo = u16::from_le_bytes([g(i, 2)?[0], g(i, 2)?[1]]) as u32;
    i += 2;
    let charset = g(i, 1)?[0];
    i += 1;
    let status = u16::from_le_bytes([g(i, 2)?[0], g(i, 2)?[1]]);
    i += 2;
    let cap_hi = u16::from_le_bytes([g(i, 2)?[0], g(i, 2)?[1]]) as u32;
    i += 2;
    let auth_len = g(i, 1)?[0] as usize;
    i += 1 + 10;
    let caps = cap_lo | (cap_hi << 16);
    let ext = g(i - 4, 4)?;
    let ext_capabilities = if caps & 1 == 0 { u32::from_le_bytes([ext[0], ext[1], ext[2], ext[3]]) } else { 0 };
    if caps & caps::SECURE_CONNECTION != 0 {
        let n = auth_len.saturating_sub(8).max(13);
        let part = g(i, n)?;
        salt.extend_from_slice(part.strip_suffix(&[0]).unwrap_or(part));
        i += n;
    }
    let plugin = p.get(i..).map(|r| {
        let e = r.iter().position(|&b| b == 0).unwrap_or(r.len());
        String::from_utf8_lossy(&r[..e]).into_owned()
    });
    Ok(Greeting {
        protocol: 10,
        server_version: version,
        connection_id: conn,
        salt,
        capabilities: caps,
        charset,
        status,
        auth_plugin: plugin.unwrap_or_default(),
        ext_capabilities,
    })
}
