//! The gateway's own process list, one for both session modes (routing.md §13): `SHOW [FULL]
//! PROCESSLIST` lists the gateway's sessions under their gateway ids, and KILL finds its victim
//! there. Servers' thread ids never appear: a pooled (routed) or backend (1:1) thread id would
//! name nothing, or another client's session, in the gateway's id space.
//!
//! A session sees the sessions of its own user and tenant, like a server user without the
//! PROCESS privilege; only the same user may kill a session (ER 1095), unknown ids and sessions
//! of other tenants are ER 1094.

use crate::protocol::codes;
use crate::protocol::message::ErrPacket;
use crate::protocol::resultset::{ColumnKind, TextResultSet};
use crate::session::connection_id::skip_leading_comments;
use crate::session::kill::Kill;
use crate::session::routed::registry::SessionInfo;
use crate::session::Shared;

/// ER_KILL_DENIED_ERROR.
pub const KILL_DENIED: u16 = 1095;

/// The session asking (its gateway id and who it is).
#[derive(Debug, Clone, Copy)]
pub struct Asker<'a> {
    /// Gateway connection id.
    pub id: u32,
    /// Login user.
    pub user: &'a str,
    /// Tenant of the session.
    pub tenant: &'a str,
}

/// Whom a KILL reaches.
#[derive(Debug, Clone)]
pub enum Victim {
    /// The asking session itself.
    Itself,
    /// Another session of the same user (its current info).
    Other(Box<SessionInfo>),
}

/// `SHOW [FULL] PROCESSLIST` (leading comments allowed): `Some(full)`.
pub fn recognise(sql: &str) -> Option<bool> {
    let t = skip_leading_comments(sql).trim().trim_end_matches(';').trim_end();
    let words: Vec<&str> = t.split_ascii_whitespace().take(4).collect();
    match words.as_slice() {
        [s, p] if s.eq_ignore_ascii_case("show") && p.eq_ignore_ascii_case("processlist") => Some(false),
        [s, f, p] if s.eq_ignore_ascii_case("show") && f.eq_ignore_ascii_case("full") && p.eq_ignore_ascii_case("processlist") => {
            Some(true)
        }
        _ => None,
    }
}

/// The rows `asker` sees. Its own row shows what it sent (the registry has the statement).
pub fn list(shared: &Shared, asker: Asker<'_>, full: bool) -> TextResultSet {
    let mut rs = TextResultSet::with_text_columns(&["Id", "User", "Host", "db", "Command", "Time", "State", "Info"]);
    rs.columns[0].1 = ColumnKind::Int;
    rs.columns[5].1 = ColumnKind::Int;
    for (id, s) in shared.sessions.list() {
        if s.user != asker.user || s.tenant != asker.tenant {
            continue;
        }
        let (command, state, info) = if id == asker.id {
            let command = if s.command == "Sleep" { "Query" } else { s.command };
            let sql = if full { "SHOW FULL PROCESSLIST" } else { "SHOW PROCESSLIST" };
            (command, "executing", s.info.clone().or_else(|| Some(sql.to_string())))
        } else {
            let state = match s.command {
                "Sleep" => "",
                crate::session::routed::SPLICED => "spliced",
                _ => "executing",
            };
            (s.command, state, s.info.clone())
        };
        let info = info.map(|i| if full { i } else { i.chars().take(100).collect() });
        rs.rows.push(vec![
            Some(id.to_string()),
            Some(s.user.clone()),
            Some(s.host.clone()),
            s.db.clone(),
            Some(command.to_string()),
            Some(s.since.elapsed().as_secs().to_string()),
            Some(state.to_string()),
            info,
        ]);
    }
    rs
}

/// The session `kill` names, if `asker` may kill it.
pub fn victim(shared: &Shared, asker: Asker<'_>, kill: Kill) -> Result<Victim, ErrPacket> {
    if kill.id == asker.id {
        return Ok(Victim::Itself);
    }
    let target = match shared.sessions.get(kill.id) {
        Some(t) if t.tenant == asker.tenant => t,
        _ => return Err(ErrPacket::new(codes::NO_SUCH_THREAD, format!("Unknown thread id: {}", kill.id))),
    };
    if target.user != asker.user {
        return Err(ErrPacket::new(KILL_DENIED, format!("You are not owner of thread {}", kill.id)));
    }
    Ok(Victim::Other(Box::new(target)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_processlist_with_comments() {
        assert_eq!(recognise("show full processlist;"), Some(true));
        assert_eq!(recognise("SHOW PROCESSLIST"), Some(false));
        assert_eq!(recognise("/* mariadb */ SHOW PROCESSLIST"), Some(false));
        assert_eq!(recognise("-- x\nshow full processlist"), Some(true));
        assert_eq!(recognise("SHOW PROCESSLIST x"), None);
        assert_eq!(recognise("SELECT 'SHOW PROCESSLIST'"), None);
    }
}
