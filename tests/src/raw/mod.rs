//! A minimal, hand-written MySQL client over a blocking `TcpStream`: framing, the protocol-41
//! handshake with `mysql_native_password`, and a few commands (query, prepared statements with
//! explicit wire types, cursors, long data). Used where real drivers cannot go: malformed input,
//! exact parameter types, COM_STMT_FETCH, COM_STMT_SEND_LONG_DATA.
//!
//! It never sets CLIENT_DEPRECATE_EOF, so result sets end with EOF packets.

mod auth;
mod wire;

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use anyhow::{bail, Context};

pub use auth::{probe_caching_sha2, scramble_caching_sha2, scramble_native, Sha2Path};
pub use wire::{
    eof_status, lenenc, lenenc_bytes, ok_status, parse_err, parse_greeting, ty, ErrPacket, Greeting, Param, ParamValue,
    Prepared,
};

/// Capability flags used here.
pub mod caps {
    pub const LONG_PASSWORD: u32 = 0x1;
    pub const LONG_FLAG: u32 = 0x4;
    pub const CONNECT_WITH_DB: u32 = 0x8;
    pub const PROTOCOL_41: u32 = 0x200;
    pub const TRANSACTIONS: u32 = 0x2000;
    pub const SECURE_CONNECTION: u32 = 0x8000;
    pub const MULTI_STATEMENTS: u32 = 0x1_0000;
    pub const MULTI_RESULTS: u32 = 0x2_0000;
    pub const PS_MULTI_RESULTS: u32 = 0x4_0000;
    pub const PLUGIN_AUTH: u32 = 0x8_0000;
}

/// Server status flags used here.
pub mod status {
    pub const MORE_RESULTS_EXISTS: u16 = 0x0008;
    pub const CURSOR_EXISTS: u16 = 0x0040;
    pub const LAST_ROW_SENT: u16 = 0x0080;
}

/// Command bytes.
pub mod cmd {
    pub const QUIT: u8 = 0x01;
    pub const QUERY: u8 = 0x03;
    pub const PROCESS_KILL: u8 = 0x0c;
    pub const PING: u8 = 0x0e;
    pub const CHANGE_USER: u8 = 0x11;
    pub const STMT_PREPARE: u8 = 0x16;
    pub const STMT_EXECUTE: u8 = 0x17;
    pub const STMT_SEND_LONG_DATA: u8 = 0x18;
    pub const STMT_CLOSE: u8 = 0x19;
    pub const STMT_FETCH: u8 = 0x1c;
}

/// What a peer did when we waited for a reply.
#[derive(Debug)]
pub enum Outcome {
    /// An ERR packet (and whatever followed is not looked at).
    Err(ErrPacket),
    /// Some other packet.
    Packet(Vec<u8>),
    /// Orderly close (read returned 0).
    Closed,
    /// Connection reset.
    Reset,
    /// Nothing within the timeout.
    Timeout,
}

/// A raw client connection.
pub struct RawConn {
    stream: TcpStream,
    seq: u8,
    /// The greeting the server sent.
    pub greeting: Greeting,
    /// The status flags of the login's OK (0 before a login).
    pub login_status: u16,
}

impl RawConn {
    /// Connects and reads the greeting (seq 0).
    pub fn connect(addr: SocketAddr) -> anyhow::Result<RawConn> {
        let stream = TcpStream::connect(addr).with_context(|| format!("connect {addr}"))?;
        stream.set_read_timeout(Some(Duration::from_secs(30)))?;
        stream.set_nodelay(true)?;
        let mut c = RawConn { stream, seq: 0, greeting: wire::empty_greeting(), login_status: 0 };
        let p = c.read_packet().context("reading the greeting")?;
        if let Some(e) = parse_err(&p) {
            bail!("server refused the connection: {e}");
        }
        c.greeting = parse_greeting(&p)?;
        Ok(c)
    }

    /// Connects and logs in with `mysql_native_password`; the connection is in the command phase.
    pub fn login(addr: SocketAddr, user: &str, password: &str, db: Option<&str>) -> anyhow::Result<RawConn> {
        Self::login_ext(addr, user, password, db, 0)
    }

    /// [`RawConn::login`] asking for MariaDB extended capabilities `ext` (those the greeting
    /// offers; CLIENT_MYSQL cleared when any is asked for).
    pub fn login_ext(
        addr: SocketAddr,
        user: &str,
        password: &str,
        db: Option<&str>,
        ext: u32,
    ) -> anyhow::Result<RawConn> {
        let mut c = Self::connect(addr)?;
        let mut resp = c.handshake_response(user, password, db);
        let ext = ext & c.greeting.ext_capabilities;
        if ext != 0 && c.greeting.capabilities & caps::LONG_PASSWORD == 0 {
            resp[0] &= !1;
            resp[28..32].copy_from_slice(&ext.to_le_bytes());
        }
        c.write_packet(&resp)?;
        loop {
            let p = c.read_packet().context("reading the auth reply")?;
            match p.first() {
                Some(0x00) => {
                    c.login_status = ok_status(&p);
                    return Ok(c);
                }
                Some(0xff) => bail!("login refused: {}", parse_err(&p).map(|e| e.to_string()).unwrap_or_default()),
                Some(0xfe) => {
                    let nul = p[1..].iter().position(|&b| b == 0).map(|i| i + 1).unwrap_or(p.len());
                    let plugin = String::from_utf8_lossy(&p[1..nul]).into_owned();
                    if plugin != "mysql_native_password" {
                        bail!("auth switch to unsupported plugin {plugin}");
                    }
                    let salt: Vec<u8> = p.get(nul + 1..).unwrap_or(&[]).iter().copied().take(20).collect();
                    let s = scramble_native(password, &salt);
                    c.write_packet(&s)?;
                }
                _ => bail!("unexpected auth packet {:02x?}", &p[..p.len().min(32)]),
            }
        }
    }

    /// The HandshakeResponse41 payload for this greeting.
    pub fn handshake_response(&self, user: &str, password: &str, db: Option<&str>) -> Vec<u8> {
        use caps::*;
        let mut want = LONG_PASSWORD
            | LONG_FLAG
            | PROTOCOL_41
            | TRANSACTIONS
            | SECURE_CONNECTION
            | MULTI_STATEMENTS
            | MULTI_RESULTS
            | PS_MULTI_RESULTS
            | PLUGIN_AUTH;
        if db.is_some() {
            want |= CONNECT_WITH_DB;
        }
        let flags = want & (self.greeting.capabilities | MULTI_STATEMENTS);
        let mut b = Vec::new();
        b.extend_from_slice(&flags.to_le_bytes());
        b.extend_from_slice(&(16u32 << 20).to_le_bytes());
        b.push(45); // utf8mb4_general_ci
        b.extend_from_slice(&[0u8; 23]);
        b.extend_from_slice(user.as_bytes());
        b.push(0);
        let auth = scramble_native(password, &self.greeting.salt);
        b.push(auth.len() as u8);
        b.extend_from_slice(&auth);
        if let Some(db) = db {
            b.extend_from_slice(db.as_bytes());
            b.push(0);
        }
        b.extend_from_slice(b"mysql_native_password\0");
        b
    }

    /// The underlying socket, for writing arbitrary bytes.
    pub fn stream(&mut self) -> &mut TcpStream {
        &mut self.stream
    }

    /// Sets the sequence id the next written packet gets.
    pub fn set_seq(&mut self, seq: u8) {
        self.seq = seq;
    }

    /// Reads one logical packet (joining 16 MiB frames), checking the sequence id.
    pub fn read_packet(&mut self) -> anyhow::Result<Vec<u8>> {
        let mut out = Vec::new();
        loop {
            let mut h = [0u8; 4];
            self.stream.read_exact(&mut h)?;
            let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
            if h[3] != self.seq {
                bail!("packet out of order: got seq {}, expected {}", h[3], self.seq);
            }
            self.seq = self.seq.wrapping_add(1);
            let start = out.len();
            out.resize(start + len, 0);
            self.stream.read_exact(&mut out[start..])?;
            if len < 0xff_ffff {
                return Ok(out);
            }
        }
    }

    /// Writes one logical packet, split into 16 MiB frames.
    pub fn write_packet(&mut self, payload: &[u8]) -> io::Result<()> {
        let mut buf = Vec::with_capacity(payload.len() + 8);
        let mut rest = payload;
        loop {
            let n = rest.len().min(0xff_ffff);
            buf.extend_from_slice(&(n as u32).to_le_bytes()[..3]);
            buf.push(self.seq);
            self.seq = self.seq.wrapping_add(1);
            buf.extend_from_slice(&rest[..n]);
            rest = &rest[n..];
            if n < 0xff_ffff {
                break;
            }
        }
        self.stream.write_all(&buf)
    }

    /// Starts a command: sequence 0, `[cmd] + body`.
    pub fn command(&mut self, cmd: u8, body: &[u8]) -> io::Result<()> {
        self.seq = 0;
        let mut p = Vec::with_capacity(body.len() + 1);
        p.push(cmd);
        p.extend_from_slice(body);
        self.write_packet(&p)
    }

    /// COM_QUERY; returns every packet of the response (all result sets).
    pub fn query(&mut self, sql: &str) -> anyhow::Result<Vec<Vec<u8>>> {
        self.command(cmd::QUERY, sql.as_bytes())?;
        self.read_response(false)
    }

    /// Reads one complete command response: OK / ERR / result set(s), following MORE_RESULTS.
    /// With `stop_at_cursor`, a result set whose column-definition EOF says CURSOR_EXISTS ends there.
    pub fn read_response(&mut self, stop_at_cursor: bool) -> anyhow::Result<Vec<Vec<u8>>> {
        let mut all = Vec::new();
        loop {
            let first = self.read_packet()?;
            let kind = first.first().copied();
            all.push(first.clone());
            let more = match kind {
                Some(0x00) => ok_status(&first) & status::MORE_RESULTS_EXISTS != 0,
                Some(0xff) => false,
                Some(0xfb) => bail!("LOCAL INFILE request not supported by the raw client"),
                _ => {
                    let (ncols, _) = lenenc(&first).context("bad column count")?;
                    for _ in 0..ncols {
                        all.push(self.read_packet()?);
                    }
                    let eof = self.read_packet()?;
                    let st = eof_status(&eof);
                    all.push(eof);
                    if stop_at_cursor && st & status::CURSOR_EXISTS != 0 {
                        return Ok(all);
                    }
                    self.read_rows(&mut all)?
                }
            };
            if !more {
                return Ok(all);
            }
        }
    }

    /// Reads rows up to and including the closing EOF or ERR; returns whether more results follow.
    fn read_rows(&mut self, all: &mut Vec<Vec<u8>>) -> anyhow::Result<bool> {
        loop {
            let p = self.read_packet()?;
            let end = (p.first() == Some(&0xfe) && p.len() < 9) || p.first() == Some(&0xff);
            let st = if p.first() == Some(&0xfe) && p.len() < 9 { eof_status(&p) } else { 0 };
            all.push(p);
            if end {
                return Ok(st & status::MORE_RESULTS_EXISTS != 0);
            }
        }
    }

    /// COM_STMT_PREPARE; returns the statement id, parameter count and all response packets.
    pub fn prepare(&mut self, sql: &str) -> anyhow::Result<Prepared> {
        self.command(cmd::STMT_PREPARE, sql.as_bytes())?;
        let first = self.read_packet()?;
        if let Some(e) = parse_err(&first) {
            bail!("prepare failed: {e}");
        }
        if first.len() < 12 || first[0] != 0 {
            bail!("bad COM_STMT_PREPARE OK {:02x?}", first);
        }
        let id = u32::from_le_bytes([first[1], first[2], first[3], first[4]]);
        let ncols = u16::from_le_bytes([first[5], first[6]]);
        let nparams = u16::from_le_bytes([first[7], first[8]]);
        let mut packets = vec![first];
        for n in [nparams, ncols] {
            if n > 0 {
                for _ in 0..=n {
                    packets.push(self.read_packet()?);
                }
            }
        }
        Ok(Prepared { id, params: nparams, columns: ncols, packets })
    }

    /// COM_STMT_EXECUTE with `flags` (1 = read-only cursor) and explicitly typed parameters.
    pub fn execute(&mut self, stmt: u32, flags: u8, params: &[Param]) -> anyhow::Result<Vec<Vec<u8>>> {
        let mut b = Vec::new();
        b.extend_from_slice(&stmt.to_le_bytes());
        b.push(flags);
        b.extend_from_slice(&1u32.to_le_bytes());
        if !params.is_empty() {
            let mut bitmap = vec![0u8; params.len().div_ceil(8)];
            for (i, p) in params.iter().enumerate() {
                if matches!(p.value, ParamValue::Null) {
                    bitmap[i / 8] |= 1 << (i % 8);
                }
            }
            b.extend_from_slice(&bitmap);
            b.push(1);
            for p in params {
                b.push(p.ty);
                b.push(if p.unsigned { 0x80 } else { 0 });
            }
            for p in params {
                if let ParamValue::Bytes(v) = &p.value {
                    b.extend_from_slice(v);
                }
            }
        }
        self.command(cmd::STMT_EXECUTE, &b)?;
        self.read_response(flags != 0)
    }

    /// COM_STMT_FETCH of `rows` rows; returns the rows and the closing EOF (or an ERR).
    pub fn fetch(&mut self, stmt: u32, rows: u32) -> anyhow::Result<Vec<Vec<u8>>> {
        let mut b = stmt.to_le_bytes().to_vec();
        b.extend_from_slice(&rows.to_le_bytes());
        self.command(cmd::STMT_FETCH, &b)?;
        let mut all = Vec::new();
        self.read_rows(&mut all)?;
        Ok(all)
    }

    /// COM_STMT_SEND_LONG_DATA (no reply).
    pub fn send_long_data(&mut self, stmt: u32, param: u16, data: &[u8]) -> anyhow::Result<()> {
        let mut b = stmt.to_le_bytes().to_vec();
        b.extend_from_slice(&param.to_le_bytes());
        b.extend_from_slice(data);
        self.command(cmd::STMT_SEND_LONG_DATA, &b)?;
        Ok(())
    }

    /// COM_STMT_CLOSE (no reply).
    pub fn close_stmt(&mut self, stmt: u32) -> anyhow::Result<()> {
        self.command(cmd::STMT_CLOSE, &stmt.to_le_bytes())?;
        Ok(())
    }

    /// Waits up to `timeout` for the peer: an ERR packet, another packet, a close or a reset.
    /// Ignores the sequence id (malformed-input tests may have broken it on purpose).
    pub fn outcome(&mut self, timeout: Duration) -> Outcome {
        let _ = self.stream.set_read_timeout(Some(timeout));
        let mut h = [0u8; 4];
        match read_full(&mut self.stream, &mut h) {
            Ok(0) => return Outcome::Closed,
            Ok(_) => {}
            Err(e) => return io_outcome(e),
        }
        let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
        let mut p = vec![0u8; len];
        if let Err(e) = self.stream.read_exact(&mut p) {
            return io_outcome(e);
        }
        match parse_err(&p) {
            Some(e) => Outcome::Err(e),
            None => Outcome::Packet(p),
        }
    }

    /// After an ERR: waits for the peer to close (returns `Closed`/`Reset`) or says what came.
    pub fn outcome_after(&mut self, timeout: Duration) -> Outcome {
        self.outcome(timeout)
    }
}

fn io_outcome(e: io::Error) -> Outcome {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => Outcome::Timeout,
        io::ErrorKind::UnexpectedEof => Outcome::Closed,
        _ => Outcome::Reset,
    }
}

/// Reads exactly `buf.len()` bytes; `Ok(0)` if the peer closed before the first byte.
fn read_full(s: &mut TcpStream, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match s.read(&mut buf[n..])? {
            0 if n == 0 => return Ok(0),
            0 => return Err(io::ErrorKind::UnexpectedEof.into()),
            k => n += k,
        }
    }
    Ok(n)
}
