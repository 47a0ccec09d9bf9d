//! KILL on gateway connection ids: clients only know the ids the gateway handed out, so a
//! `KILL [QUERY|CONNECTION] id` is rewritten to the backend thread that serves that session.

use crate::protocol::command;

/// A parsed KILL statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kill {
    /// `KILL QUERY` (only the running statement) rather than the connection.
    pub query_only: bool,
    /// The gateway connection id named by the client.
    pub id: u32,
}

/// Recognises `KILL [QUERY | CONNECTION] <id>` (an optional trailing `;`) in a COM_QUERY text,
/// and COM_PROCESS_KILL. Anything else, including KILL with expressions, is not a match.
pub fn parse(payload: &[u8]) -> Option<Kill> {
    match *payload.first()? {
        command::PROCESS_KILL => {
            let b: [u8; 4] = payload.get(1..5)?.try_into().ok()?;
            Some(Kill { query_only: false, id: u32::from_le_bytes(b) })
        }
        command::QUERY => parse_text(std::str::from_utf8(&payload[1..]).ok()?),
        _ => None,
    }
}

fn parse_text(sql: &str) -> Option<Kill> {
    let sql = sql.trim().trim_end_matches(';').trim_end();
    let mut words = sql.split_ascii_whitespace();
    if !words.next()?.eq_ignore_ascii_case("kill") {
        return None;
    }
    let mut word = words.next()?;
    let mut query_only = false;
    if word.eq_ignore_ascii_case("query") {
        query_only = true;
        word = words.next()?;
    } else if word.eq_ignore_ascii_case("connection") {
        word = words.next()?;
    }
    let id = word.parse().ok()?;
    words.next().is_none().then_some(Kill { query_only, id })
}

/// The statement to send to the backend for `kill` aimed at backend thread `thread`.
pub fn rewrite(kill: Kill, thread: u32) -> Vec<u8> {
    let verb = if kill.query_only { "KILL QUERY" } else { "KILL CONNECTION" };
    let mut out = vec![command::QUERY];
    out.extend_from_slice(format!("{verb} {thread}").as_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> Vec<u8> {
        let mut v = vec![command::QUERY];
        v.extend_from_slice(s.as_bytes());
        v
    }

    #[test]
    fn recognises_kill_forms() {
        assert_eq!(parse(&q("KILL 12")), Some(Kill { query_only: false, id: 12 }));
        assert_eq!(parse(&q("  kill query 7 ; ")), Some(Kill { query_only: true, id: 7 }));
        assert_eq!(parse(&q("Kill Connection 3")), Some(Kill { query_only: false, id: 3 }));
        assert_eq!(parse(&[command::PROCESS_KILL, 9, 0, 0, 0]), Some(Kill { query_only: false, id: 9 }));
    }

    #[test]
    fn leaves_everything_else_alone() {
        for s in ["select 1", "KILL", "KILL QUERY", "KILL 1 2", "KILL USER bob", "KILL QUERY ID 5", "killer 5"] {
            assert_eq!(parse(&q(s)), None, "{s}");
        }
        assert_eq!(rewrite(Kill { query_only: true, id: 1 }, 44), q("KILL QUERY 44"));
    }
}
