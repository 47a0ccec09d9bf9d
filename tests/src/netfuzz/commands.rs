//! Valid command packets of the command phase (statements, prepared-statement commands, the odd
//! commands) and their structure-aware mutations: COM_STMT_EXECUTE's statement id, flags, null
//! bitmap, types and values, long data to missing parameters, unknown command bytes.

use crate::raw::{cmd, lenenc_bytes, ty};
use crate::workload::Rng;

/// Text statements the fuzzer starts from (`{k}` is a key). Shallow SQL only: deep nesting is
/// another test's subject (issue #13 item 1).
const QUERIES: &[&str] = &[
    "SELECT 1",
    "SELECT c1, c2 FROM t0 WHERE c1 = 123",
    "SELECT c2 FROM t0 WHERE c1 = 0",
    "SELECT c1 FROM t0 WHERE c1 IN (0, 123, {k})",
    "INSERT INTO fz (k, v) VALUES ({k}, 'x')",
    "UPDATE fz SET v = 'y' WHERE k = {k}",
    "DELETE FROM fz WHERE k = {k}",
    "SELECT k, v FROM fz WHERE k = {k}",
    "BEGIN",
    "START TRANSACTION READ ONLY",
    "COMMIT",
    "ROLLBACK",
    "SET @a = {k}",
    "SET autocommit = 0",
    "SET NAMES utf8mb4",
    "USE test",
    "SELECT 1; SELECT 2",
    "INSERT INTO fz (k, v) VALUES ({k}, 'm'); SELECT ROW_COUNT()",
    "CREATE TEMPORARY TABLE tt{k} (a INT)",
    "PREPARE s FROM 'SELECT ?'",
    "EXECUTE s USING @a",
    "DEALLOCATE PREPARE s",
    "SELECT LAST_INSERT_ID(), CONNECTION_ID()",
    "SHOW PROCESSLIST",
    "SELECT @@version",
    "SELECT * FROM fz LIMIT 3",
];

/// Statements prepared (for real) before the mutated commands: (SQL, parameter count).
pub const PREPARED: &[(&str, u16)] = &[
    ("SELECT ?, ?", 2),
    ("SELECT c1, c2 FROM t0 WHERE c1 = ?", 1),
    ("INSERT INTO fz (k, v) VALUES (?, ?)", 2),
    ("SELECT k, v FROM fz WHERE k = ? OR v = ?", 2),
    ("SELECT 1", 0),
    ("UPDATE fz SET v = ? WHERE k = ?", 2),
];

/// A prepared statement of the case: its server-given id and parameter count.
#[derive(Debug, Clone, Copy)]
pub struct Stmt {
    pub id: u32,
    pub params: u16,
}

/// A text statement with a key filled in.
pub fn statement(rng: &mut Rng) -> String {
    let k = rng.below(1000).to_string();
    rng.pick(QUERIES).replace("{k}", &k)
}

/// COM_QUERY of a statement, sometimes with its text mangled a little (shallow).
pub fn query(rng: &mut Rng) -> (Vec<u8>, String) {
    let mut sql = statement(rng).into_bytes();
    let label = match rng.below(6) {
        0 if !sql.is_empty() => {
            let at = rng.below(sql.len() as u64) as usize;
            sql.insert(at, *rng.pick(&[b'\'', b'"', b'`', b'(', b')', b';', b'\\', 0, b'/', b'*', b'-', b'#']));
            "query+char"
        }
        1 => {
            let keep = rng.below(sql.len() as u64 + 1) as usize;
            sql.truncate(keep);
            "query cut"
        }
        _ => "query",
    };
    let mut p = vec![cmd::QUERY];
    p.extend_from_slice(&sql);
    (p, format!("{label} {:?}", String::from_utf8_lossy(&sql)))
}

/// A well-formed value of a random type: (type, bytes).
fn value(rng: &mut Rng) -> (u8, Option<Vec<u8>>) {
    match rng.below(7) {
        0 => (ty::LONG, Some((rng.below(1000) as i32).to_le_bytes().to_vec())),
        1 => (ty::LONGLONG, Some((rng.next_u64() as i64).to_le_bytes().to_vec())),
        2 => (ty::VAR_STRING, Some(lenenc_bytes(format!("v{}", rng.below(100)).as_bytes()))),
        3 => (ty::NULL, None),
        4 => (ty::DOUBLE, Some(1.5f64.to_le_bytes().to_vec())),
        5 => (ty::DATETIME, Some(vec![7, 0xea, 0x07, 12, 2, 1, 2, 3])),
        _ => (ty::BLOB, Some(lenenc_bytes(&[0, 1, 2, 0xff]))),
    }
}

/// Type bytes a hostile client may send: real ones, unused ones, unsupported ones.
const TYPES: &[u8] = &[
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12,
    0x13, 0x14, 0x20, 0x7f, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa, 0xfb, 0xfc, 0xfd, 0xfe, 0xff,
];

/// COM_STMT_EXECUTE of `stmt`; with `hostile`, one part of it is wrong.
pub fn execute(rng: &mut Rng, stmt: Stmt, hostile: bool) -> (Vec<u8>, String) {
    let mut id = stmt.id;
    let mut flags = 0u8;
    let mut iterations = 1u32;
    let mut n = stmt.params as usize;
    let what = if hostile { rng.below(10) } else { 99 };
    let mut label = "execute".to_string();
    match what {
        0 => {
            let random = rng.next_u64() as u32;
            id = *rng.pick(&[0, u32::MAX, stmt.id.wrapping_add(1), stmt.id.wrapping_add(1000), random]);
            label = format!("execute bogus id {id}");
        }
        1 => {
            flags = rng.next_u64() as u8;
            label = format!("execute flags {flags:#x}");
        }
        2 => {
            iterations = rng.next_u64() as u32;
            label = format!("execute iterations {iterations}");
        }
        3 => {
            n = n + 1 + rng.below(3) as usize;
            label = format!("execute {n} params for {}", stmt.params);
        }
        4 if n > 0 => {
            n -= 1;
            label = format!("execute {n} params for {}", stmt.params);
        }
        _ => {}
    }
    let mut b = vec![cmd::STMT_EXECUTE];
    b.extend_from_slice(&id.to_le_bytes());
    b.push(flags);
    b.extend_from_slice(&iterations.to_le_bytes());
    if n == 0 {
        return (b, label);
    }
    let vals: Vec<(u8, Option<Vec<u8>>)> = (0..n).map(|_| value(rng)).collect();
    let mut bitmap = vec![0u8; n.div_ceil(8)];
    for (i, (_, v)) in vals.iter().enumerate() {
        if v.is_none() {
            bitmap[i / 8] |= 1 << (i % 8);
        }
    }
    let mut types: Vec<u8> = vals.iter().flat_map(|(t, _)| [*t, 0]).collect();
    let mut body: Vec<u8> = vals.iter().filter_map(|(_, v)| v.clone()).flatten().collect();
    let mut bound = 1u8;
    match what {
        5 => {
            for x in bitmap.iter_mut() {
                *x = rng.next_u64() as u8;
            }
            label = format!("execute null bitmap {bitmap:02x?}");
        }
        6 => {
            let i = rng.below(n as u64) as usize;
            types[2 * i] = *rng.pick(TYPES);
            types[2 * i + 1] = *rng.pick(&[0, 0x80, 0xff]);
            label = format!("execute type {:#x} for param {i}", types[2 * i]);
        }
        7 => {
            bound = 0;
            label = "execute without types (never bound)".into();
        }
        8 => {
            // A length-encoded value that claims more bytes than the packet has.
            body = [vec![0xfe], u64::MAX.to_le_bytes().to_vec(), body].concat();
            types[0] = ty::VAR_STRING;
            bitmap[0] &= !1;
            label = "execute value length lie".into();
        }
        9 => {
            let keep = rng.below(body.len() as u64 + 1) as usize;
            body.truncate(keep);
            label = format!("execute values cut at {keep}");
        }
        _ => {}
    }
    b.extend_from_slice(&bitmap);
    b.push(bound);
    if bound == 1 {
        b.extend_from_slice(&types);
    }
    b.extend_from_slice(&body);
    (b, label)
}

/// COM_STMT_SEND_LONG_DATA to a parameter of `stmt` (or a missing one, or a bogus statement).
pub fn long_data(rng: &mut Rng, stmt: Stmt, hostile: bool) -> (Vec<u8>, String) {
    let (id, param) = if hostile {
        match rng.below(3) {
            0 => (rng.next_u64() as u32, 0),
            1 => (stmt.id, stmt.params + rng.below(3) as u16),
            _ => (stmt.id, u16::MAX),
        }
    } else {
        (stmt.id, rng.below(u64::from(stmt.params.max(1))) as u16)
    };
    let mut b = vec![cmd::STMT_SEND_LONG_DATA];
    b.extend_from_slice(&id.to_le_bytes());
    b.extend_from_slice(&param.to_le_bytes());
    let n = *rng.pick(&[0usize, 1, 100, 70_000]);
    b.extend((0..n).map(|i| b'a' + (i % 26) as u8));
    (b, format!("long data stmt {id} param {param} ({n} bytes)"))
}

/// The other prepared-statement commands: FETCH, RESET, CLOSE.
pub fn stmt_other(rng: &mut Rng, stmt: Stmt) -> (Vec<u8>, String) {
    let id = if rng.chance(20) { rng.next_u64() as u32 } else { stmt.id };
    let (c, name) = *rng.pick(&[(cmd::STMT_FETCH, "fetch"), (0x1a, "reset"), (cmd::STMT_CLOSE, "close")]);
    let mut b = vec![c];
    b.extend_from_slice(&id.to_le_bytes());
    if c == cmd::STMT_FETCH {
        b.extend_from_slice(&(rng.below(5) as u32).to_le_bytes());
    }
    (b, format!("{name} stmt {id}"))
}

const DATABASES: &[&[u8]] = &[b"test", b"", b"nope", b"te\0st"];
const FIELD_LISTS: &[&[u8]] = &[b"t0\0", b"fz\0%", b"", b"\0\0\0"];

/// Commands other than statements: ping, init db, field list, set option, statistics, process
/// kill of a random id, unknown and refused command bytes.
pub fn misc(rng: &mut Rng) -> (Vec<u8>, String) {
    let (b, label): (Vec<u8>, &str) = match rng.below(9) {
        0 => (vec![cmd::PING], "ping"),
        1 => ([&[0x02u8][..], *rng.pick(DATABASES)].concat(), "init db"),
        2 => ([&[0x04u8][..], *rng.pick(FIELD_LISTS)].concat(), "field list"),
        3 => ([&[0x1bu8][..], &(rng.below(3) as u16).to_le_bytes()[..]].concat(), "set option"),
        4 => (vec![0x09], "statistics"),
        5 => {
            // Sometimes too short for its id: MariaDB reads the rest past the packet's end (the
            // NUL it appends, then old bytes), so a small id there names one of the few server
            // threads of the run, maybe a canary's.
            let short = rng.chance(50);
            let id = if short { rng.below(32) as u32 + 1 } else { rng.next_u64() as u32 }.to_le_bytes();
            let keep = match (short, rng.chance(50)) {
                (false, _) => 4,
                (true, true) => 3, // the id's three bytes and the NUL: exactly that id
                (true, false) => 1 + rng.below(2) as usize,
            };
            ([&[0x0cu8][..], &id[..keep]].concat(), if keep < 4 { "process kill short" } else { "process kill" })
        }
        6 => {
            let c = *rng.pick(&[
                0x00u8, 0x08, 0x0b, 0x0d, 0x0f, 0x10, 0x12, 0x13, 0x14, 0x15, 0x1d, 0x1e, 0x20, 0x7f, 0xfe, 0xff,
            ]);
            (vec![c, rng.next_u64() as u8], "odd command byte")
        }
        7 => (vec![0x1f], "reset connection"),
        _ => (vec![0x0a], "process info"),
    };
    let c = b[0];
    (b, format!("{label} {c:#04x}"))
}

/// A COM_CHANGE_USER back to `user` (a valid scramble for `salt`), maybe cut short.
pub fn change_user(rng: &mut Rng, user: &str, password: &str, salt: &[u8]) -> (Vec<u8>, String) {
    let mut b = vec![0x11];
    b.extend_from_slice(user.as_bytes());
    b.push(0);
    let s = crate::raw::scramble_native(password, salt);
    b.push(s.len() as u8);
    b.extend_from_slice(&s);
    b.extend_from_slice(b"test\0");
    b.extend_from_slice(&45u16.to_le_bytes());
    b.extend_from_slice(b"mysql_native_password\0");
    if rng.chance(30) {
        let keep = rng.below(b.len() as u64) as usize;
        b.truncate(keep.max(1));
        return (b, format!("change user cut at {keep}"));
    }
    (b, "change user".into())
}

/// A COM_QUERY whose payload is exactly `len` bytes: `SELECT 1 /*xxx…*/`.
pub fn sized_query(len: usize) -> Vec<u8> {
    let mut p = vec![cmd::QUERY];
    p.extend_from_slice(b"SELECT 1 /*");
    let fill = len.saturating_sub(p.len() + 2);
    p.resize(p.len() + fill, b'x');
    p.extend_from_slice(b"*/");
    p.truncate(len);
    p
}
