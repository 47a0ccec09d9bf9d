//! KILL on gateway connection ids: clients only know the ids the gateway handed out (greeting,
//! `CONNECTION_ID()`, SHOW PROCESSLIST), so a `KILL [QUERY|CONNECTION] id` — as text, as
//! COM_PROCESS_KILL, or as a prepared statement — names a gateway session. KILL forms that name
//! something else (`KILL USER`, `KILL QUERY ID`, expressions) are refused: sent on, they would
//! reach server threads of other clients.

use crate::protocol::message::ErrPacket;
use crate::protocol::{codes, command};
use crate::sql::lexer::{first_word, skip_leading_comments};
use crate::sql::Value;

/// ER_WRONG_ARGUMENTS.
const WRONG_ARGUMENTS: u16 = 1210;

/// A parsed KILL statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kill {
    /// `KILL QUERY` (only the running statement) rather than the connection.
    pub query_only: bool,
    /// The gateway connection id named by the client.
    pub id: u32,
}

/// The id operand of a KILL statement's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operand {
    /// A literal id.
    Id(u32),
    /// `?`: bound at EXECUTE.
    Placeholder,
    /// `CONNECTION_ID()`: the session's own id.
    Caller,
}

/// A KILL statement as prepared: its id is a literal or the one parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Template {
    /// `KILL QUERY`.
    pub query_only: bool,
    /// The id, or `?`.
    pub operand: Operand,
}

/// Recognises `KILL [HARD|SOFT] [QUERY | CONNECTION] <id | CONNECTION_ID()>` (leading comments
/// and an optional trailing `;` allowed) in a COM_QUERY text of session `caller`, and
/// COM_PROCESS_KILL. Anything else, including KILL with other expressions, is not a match.
pub fn parse(payload: &[u8], caller: u32) -> Option<Kill> {
    match *payload.first()? {
        command::PROCESS_KILL => {
            let b: [u8; 4] = payload.get(1..5)?.try_into().ok()?;
            Some(Kill { query_only: false, id: u32::from_le_bytes(b) })
        }
        command::QUERY => match template(std::str::from_utf8(&payload[1..]).ok()?)? {
            Template { query_only, operand: Operand::Id(id) } => Some(Kill { query_only, id }),
            Template { query_only, operand: Operand::Caller } => Some(Kill { query_only, id: caller }),
            Template { operand: Operand::Placeholder, .. } => None,
        },
        _ => None,
    }
}

/// Whether a statement text is a KILL statement of any form.
pub fn is_kill(sql: &str) -> bool {
    first_word(sql).eq_ignore_ascii_case("kill")
}

/// Whether a COM_QUERY, read in any of the SQL `modes` (the session's, or every one when it is
/// not known), holds a KILL statement that [`parse`] does not take: a form the gateway refuses,
/// or a KILL among several statements (sent on, it would name a server thread).
pub fn refused(payload: &[u8], modes: &[crate::sql::Mode]) -> bool {
    if payload.first() != Some(&command::QUERY) || !payload.windows(4).any(|w| w.eq_ignore_ascii_case(b"kill")) {
        return false;
    }
    let text = String::from_utf8_lossy(&payload[1..]);
    modes.iter().any(|&mode| crate::sql::split::statements_in(&text, mode).any(is_kill))
}

/// The error for a COM_PROCESS_KILL too short to hold its 4-byte id. It is never sent on: MariaDB
/// reads the id past the end of such a packet, from whatever an earlier packet left in its
/// buffer, and kills the thread that names (found by the network fuzzer: a 2-byte packet through
/// a routed session killed another client's pooled connection of the same account).
pub fn malformed() -> ErrPacket {
    ErrPacket::new(codes::MALFORMED, "Malformed communication packet")
}

/// The error for a KILL statement the gateway does not take (see the module doc).
pub fn unsupported() -> ErrPacket {
    ErrPacket::new(
        codes::NOT_SUPPORTED,
        "gateway: only KILL [QUERY | CONNECTION] <connection id> is supported (ids are the gateway's)",
    )
}

/// `KILL [HARD|SOFT] [QUERY | CONNECTION] (<id> | ? | CONNECTION_ID())`.
pub fn template(sql: &str) -> Option<Template> {
    let sql = skip_leading_comments(sql).trim().trim_end_matches(';').trim_end();
    let mut words = sql.split_ascii_whitespace();
    if !words.next()?.eq_ignore_ascii_case("kill") {
        return None;
    }
    let mut word = words.next()?;
    if word.eq_ignore_ascii_case("hard") || word.eq_ignore_ascii_case("soft") {
        word = words.next()?;
    }
    let mut query_only = false;
    if word.eq_ignore_ascii_case("query") {
        query_only = true;
        word = words.next()?;
    } else if word.eq_ignore_ascii_case("connection") {
        word = words.next()?;
    }
    let operand = match word {
        "?" => Operand::Placeholder,
        w if w.eq_ignore_ascii_case("connection_id()") => Operand::Caller,
        w => Operand::Id(w.parse().ok()?),
    };
    words.next().is_none().then_some(Template { query_only, operand })
}

impl Template {
    /// Number of parameters (`?`) of the statement.
    pub fn params(&self) -> u16 {
        u16::from(self.operand == Operand::Placeholder)
    }

    /// The KILL of session `caller` with its parameter bound (EXECUTE). A non-integer or
    /// negative id is ER 1210, an id beyond any connection id names no session (1094).
    pub fn bind(&self, values: &[Value<'_>], caller: u32) -> Result<Kill, ErrPacket> {
        let id = match self.operand {
            Operand::Id(id) => id,
            Operand::Caller => caller,
            Operand::Placeholder => id_of(values.first().unwrap_or(&Value::Unknown))?,
        };
        Ok(Kill { query_only: self.query_only, id })
    }
}

fn id_of(v: &Value<'_>) -> Result<u32, ErrPacket> {
    let wrong = || ErrPacket::new(WRONG_ARGUMENTS, "Incorrect arguments to KILL");
    let n: u64 = match v {
        Value::Int(i) => u64::try_from(*i).map_err(|_| wrong())?,
        Value::UInt(u) => *u,
        Value::Decimal(t) => t.trim().parse().map_err(|_| wrong())?,
        Value::Str { bytes, .. } => {
            std::str::from_utf8(bytes).ok().and_then(|s| s.trim().parse().ok()).ok_or_else(wrong)?
        }
        _ => return Err(wrong()),
    };
    u32::try_from(n).map_err(|_| ErrPacket::new(codes::NO_SUCH_THREAD, format!("Unknown thread id: {n}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse1(p: &[u8]) -> Option<Kill> {
        parse(p, 1)
    }

    fn q(s: &str) -> Vec<u8> {
        let mut v = vec![command::QUERY];
        v.extend_from_slice(s.as_bytes());
        v
    }

    #[test]
    fn recognises_kill_forms() {
        assert_eq!(parse1(&q("KILL 12")), Some(Kill { query_only: false, id: 12 }));
        assert_eq!(parse1(&q("  kill query 7 ; ")), Some(Kill { query_only: true, id: 7 }));
        assert_eq!(parse1(&q("Kill Connection 3")), Some(Kill { query_only: false, id: 3 }));
        assert_eq!(parse1(&q("/* app */ KILL HARD QUERY 4")), Some(Kill { query_only: true, id: 4 }));
        assert_eq!(parse(&q("KILL QUERY connection_id()"), 77), Some(Kill { query_only: true, id: 77 }));
        assert_eq!(parse1(&[command::PROCESS_KILL, 9, 0, 0, 0]), Some(Kill { query_only: false, id: 9 }));
    }

    #[test]
    fn leaves_everything_else_alone() {
        for s in [
            "select 1",
            "KILL",
            "KILL QUERY",
            "KILL 1 2",
            "KILL USER bob",
            "KILL QUERY ID 5",
            "killer 5",
            "KILL ?",
            "KILL (5)",
        ] {
            assert_eq!(parse1(&q(s)), None, "{s}");
        }
        let m = &[crate::sql::Mode::default()];
        assert!(
            refused(&q("SELECT 1; KILL 5"), m) && refused(&q("KILL USER bob"), m) && !refused(&q("SELECT 'kill'"), m)
        );
        // Where a statement ends depends on the client's SQL mode; a session whose mode is not
        // known refuses a KILL that any mode reads as a statement of its own.
        let nbe = &[crate::sql::Mode { nbe: true, ansi_quotes: false }];
        assert!(!refused(&q(r"SELECT 'a\'; KILL 5"), m) && refused(&q(r"SELECT 'a\'; KILL 5"), nbe));
        let all = &crate::sql::Mode::ALL;
        assert!(refused(&q(r"SELECT 'a\'; KILL 5"), all) && refused(&q(r#"SELECT "a\"; KILL 5"#), all));
        assert!(!refused(&q(r#"SELECT 'x; KILL 5', "y; KILL 6""#), all), "inside quotes in every mode");
        assert!(
            is_kill("/* x */ kill user bob")
                && is_kill("KILL (5)")
                && !is_kill("killer 5")
                && !is_kill("SELECT 'KILL 5'")
        );
    }

    #[test]
    fn prepared_kill_binds_its_id() {
        let t = template("KILL QUERY ?").expect("template");
        assert_eq!(t.params(), 1);
        assert_eq!(t.bind(&[Value::Int(5)], 1), Ok(Kill { query_only: true, id: 5 }));
        assert_eq!(
            t.bind(&[Value::Str { bytes: b"6".as_slice().into(), charset: None }], 1),
            Ok(Kill { query_only: true, id: 6 })
        );
        assert_eq!(t.bind(&[Value::Int(-1)], 1).map_err(|e| e.code), Err(WRONG_ARGUMENTS));
        assert_eq!(t.bind(&[Value::Null], 1).map_err(|e| e.code), Err(WRONG_ARGUMENTS));
        assert_eq!(t.bind(&[Value::UInt(1 << 40)], 1).map_err(|e| e.code), Err(codes::NO_SUCH_THREAD));
        let lit = template("kill 8").expect("template");
        assert_eq!((lit.params(), lit.bind(&[], 1)), (0, Ok(Kill { query_only: false, id: 8 })));
    }
}
