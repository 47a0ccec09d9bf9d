//! One fuzz case: a valid exchange (a login, real prepared statements, a few commands) built from
//! the case's own seeded generator, mutated, sent over raw TCP with the write side closed after
//! it, and the gateway's answer read until it closes the connection or the case deadline passes.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use super::answers;
use super::commands::{self, Stmt, PREPARED};
use super::frames::{self, Frame, MAX_FRAME};
use crate::raw::RawConn;
use crate::workload::Rng;

/// Where and as whom the cases log in.
#[derive(Debug, Clone)]
pub struct Target {
    pub addr: SocketAddr,
    pub user: String,
    pub password: String,
}

/// How a case's connection ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum End {
    Closed,
    Reset,
}

/// What a case got back.
#[derive(Debug, Clone)]
pub struct CaseOutcome {
    /// What was sent (the mutations, in order).
    pub label: String,
    /// Kind of the first packet of the answer ("none" if the connection closed silently).
    pub first: &'static str,
    /// Codes of the ERR packets received.
    pub errors: Vec<u16>,
    pub end: End,
}

/// The generator of case `case` under `seed`: each case is reproducible on its own.
pub fn case_rng(seed: u64, case: u64) -> Rng {
    Rng::new(seed ^ case.wrapping_mul(0xD1B5_4A32_D192_ED03))
}

/// Labels of what may legitimately leave a command unanswered or swallow the next one.
const BYTE_LEVEL: &[&str] = &[
    "bitflip",
    "shorten",
    "length lie",
    "seq ",
    "stream cut",
    "insert ",
    "duplicate",
    "drop frame",
    "interesting byte",
    "quit",
    "change user",
    "16 MiB",
];

/// Runs case `case`; `Err` says what went wrong (a hang, a refused valid login, …).
pub fn run(target: &Target, seed: u64, case: u64, deadline: Duration) -> Result<CaseOutcome, String> {
    let mut rng = case_rng(seed, case);
    let started = Instant::now();
    let login = rng.chance(20);
    let (conn, frames, cut, label) = if login { handshake(&mut rng, target)? } else { commands(&mut rng, target)? };
    // Commands only hostile in their content (frames intact, no COM_QUIT / COM_CHANGE_USER /
    // 16 MiB frame) are followed by a statement of the case's own; its answer must come, last.
    let plain = !login && !BYTE_LEVEL.iter().any(|m| label.contains(m));
    let sentinel = plain.then(|| format!("netfuzz-{seed:x}-{case}"));
    let mut frames = frames;
    if let Some(nonce) = &sentinel {
        frames.extend(frames::packet(0, format!("\x03SELECT '{nonce}'").as_bytes()));
    }
    let label = match &sentinel {
        Some(_) => format!("{label}, sentinel"),
        None => label,
    };
    let mut stream = conn;
    let mut wire = frames::encode(&frames);
    if let Some(at) = cut {
        wire.truncate(at);
    }
    // Sometimes in small pieces, so frames and headers arrive split across reads.
    let pieces = (wire.len() < 1 << 16 && rng.chance(15)).then(|| 1 + rng.below(7) as usize);
    let label = match pieces {
        Some(n) => format!("{label} (in {n}-byte writes)"),
        None => label,
    };
    let (got, end) =
        exchange(&mut stream, (wire, pieces), started + deadline).map_err(|e| format!("{e} after: {label}"))?;
    if let Some(nonce) = &sentinel {
        answers::check_sentinel(&got, nonce, end).map_err(|e| format!("{e} after: {label}"))?;
    }
    let (first, errors) = answers::classify(&got, login);
    Ok(CaseOutcome { label, first, errors, end })
}

type Built = (TcpStream, Vec<Frame>, Option<usize>, String);

/// A mutated handshake response (maybe followed by a command).
fn handshake(rng: &mut Rng, t: &Target) -> Result<Built, String> {
    let conn = RawConn::connect(t.addr).map_err(|e| format!("connect/greeting: {e:#}"))?;
    let db = rng.chance(50).then_some("test");
    let mut resp = conn.handshake_response(&t.user, &t.password, db);
    let mut labels = vec!["handshake".to_string()];
    let mut frames = match rng.below(10) {
        0 => {
            // An SSLRequest (the gateway has no TLS here) and then bytes that are no TLS.
            resp[1] |= 0x08; // CLIENT_SSL (0x800)
            resp.truncate(32);
            labels.push("SSLRequest".into());
            let junk: Vec<u8> = (0..rng.below(64)).map(|_| rng.next_u64() as u8).collect();
            [frames::packet(1, &resp), vec![frames::Frame::honest(0x16, junk)]].concat()
        }
        1 | 2 => {
            // Another plugin: the gateway asks for an auth switch, answered ahead of time.
            let plugin = *rng.pick(&[&b"caching_sha2_password"[..], b"", b"dialog", b"x"]);
            let end = resp.len() - b"mysql_native_password\0".len();
            resp.truncate(end);
            resp.extend_from_slice(plugin);
            resp.push(0);
            let scramble = crate::raw::scramble_native(&t.password, &conn.greeting.salt);
            labels.push(format!("plugin {:?}", String::from_utf8_lossy(plugin)));
            [frames::packet(1, &resp), frames::packet(3, &scramble)].concat()
        }
        _ => frames::packet(1, &resp),
    };
    if rng.chance(40) {
        frames.extend(frames::packet(0, &commands::query(rng).0));
    }
    let mut cut = None;
    for _ in 0..1 + rng.below(2) {
        labels.push(frames::mutate(rng, &mut frames, &mut cut));
    }
    Ok((into_stream(conn)?, frames, cut, labels.join(", ")))
}

/// A real login and real prepared statements, then mutated commands.
fn commands(rng: &mut Rng, t: &Target) -> Result<Built, String> {
    let mut conn = RawConn::login(t.addr, &t.user, &t.password, Some("test"))
        .map_err(|e| format!("valid login refused: {e:#}"))?;
    let mut stmts = Vec::new();
    for _ in 0..rng.below(3) {
        let (sql, params) = *rng.pick(PREPARED);
        let p = conn.prepare(sql).map_err(|e| format!("valid COM_STMT_PREPARE {sql:?}: {e:#}"))?;
        if p.params != params {
            return Err(format!("{sql:?} prepared with {} parameters, expected {params}", p.params));
        }
        stmts.push(Stmt { id: p.id, params });
    }
    let mut labels = Vec::new();
    let mut frames = Vec::new();
    let mut quit = false;
    for _ in 0..1 + rng.below(4) {
        let (payload, label) = command(rng, &stmts, t, &conn.greeting.salt);
        labels.push(if quit { format!("{label} [after COM_QUIT]") } else { label });
        quit |= payload == [crate::raw::cmd::QUIT];
        frames.extend(frames::packet(0, &payload));
    }
    if rng.chance(1) {
        let (big, label) = big_frame(rng);
        frames.extend(big);
        labels.push(label);
    }
    let mut cut = None;
    for _ in 0..rng.below(3) {
        labels.push(frames::mutate(rng, &mut frames, &mut cut));
    }
    Ok((into_stream(conn)?, frames, cut, labels.join(", ")))
}

/// One command, valid or hostile.
fn command(rng: &mut Rng, stmts: &[Stmt], t: &Target, salt: &[u8]) -> (Vec<u8>, String) {
    let stmt = (!stmts.is_empty()).then(|| *rng.pick(stmts));
    let bogus = Stmt { id: rng.next_u64() as u32, params: rng.below(3) as u16 };
    let hostile = rng.chance(50);
    match rng.below(100) {
        0..=34 => commands::query(rng),
        35..=59 => commands::execute(rng, stmt.unwrap_or(bogus), hostile),
        60..=67 => commands::long_data(rng, stmt.unwrap_or(bogus), hostile),
        68..=74 => commands::stmt_other(rng, stmt.unwrap_or(bogus)),
        75..=89 => commands::misc(rng),
        90..=94 => commands::change_user(rng, &t.user, &t.password, salt),
        _ => (vec![crate::raw::cmd::QUIT], "quit".into()),
    }
}

/// A COM_QUERY at the 16 MiB frame boundary: a full frame and its continuation (honest, missing,
/// out of sequence, or lying about its length).
fn big_frame(rng: &mut Rng) -> (Vec<Frame>, String) {
    let extra = *rng.pick(&[0usize, 1, 100]);
    let mut f = frames::packet(0, &commands::sized_query(MAX_FRAME + extra));
    let label = match rng.below(4) {
        0 => "16 MiB frame + continuation".to_string(),
        1 => {
            f.truncate(1);
            "16 MiB frame, continuation missing".into()
        }
        2 => {
            let seq = rng.below(256) as u8;
            f[1].seq = seq;
            format!("16 MiB frame, continuation seq {seq}")
        }
        _ => {
            f[1].len = MAX_FRAME as u32;
            "16 MiB frame, continuation claims 16 MiB".into()
        }
    };
    (f, format!("{label} (+{extra})"))
}

fn into_stream(conn: RawConn) -> Result<TcpStream, String> {
    let mut conn = conn;
    conn.stream().try_clone().map_err(|e| format!("clone socket: {e}"))
}

/// Writes `wire` (in `pieces`-byte writes if set; from a thread, so a gateway answering while we
/// write cannot block both sides), closes the write side, reads until the gateway closes. Past
/// `deadline`: a hang.
fn exchange(
    stream: &mut TcpStream,
    (wire, pieces): (Vec<u8>, Option<usize>),
    deadline: Instant,
) -> Result<(Vec<u8>, End), String> {
    let mut w = stream.try_clone().map_err(|e| format!("clone socket: {e}"))?;
    let writer = std::thread::spawn(move || {
        for chunk in wire.chunks(pieces.unwrap_or(wire.len()).max(1)) {
            if w.write_all(chunk).is_err() {
                break;
            }
        }
        let _ = w.shutdown(Shutdown::Write);
    });
    let mut got = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    let end = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            let _ = stream.shutdown(Shutdown::Both);
            let _ = writer.join();
            return Err(format!(
                "hang: neither an answer nor a close within the deadline ({} bytes received)",
                got.len()
            ));
        }
        let _ = stream.set_read_timeout(Some(left));
        match stream.read(&mut buf) {
            Ok(0) => break End::Closed,
            Ok(n) if got.len() < (8 << 20) => got.extend_from_slice(&buf[..n]),
            Ok(_) => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted) => {}
            Err(_) => break End::Reset,
        }
    };
    // The gateway closed: a writer still blocked gets an error now.
    let _ = stream.shutdown(Shutdown::Both);
    let _ = writer.join();
    Ok((got, end))
}
