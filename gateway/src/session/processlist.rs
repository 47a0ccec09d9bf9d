//! The gateway's own process list, one for both session modes (docs/routing.md §13): `SHOW [FULL]
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
use crate::session::kill::Kill;
use crate::session::routed::registry::SessionInfo;
use crate::session::Shared;
use crate::sql::lexer::skip_leading_comments;

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

/// A question the gateway's process list answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Question {
    /// `SHOW [FULL] PROCESSLIST`, COM_PROCESS_INFO.
    Show {
        /// `FULL`: `Info` is not cut at 100 characters.
        full: bool,
    },
    /// A simple query of `information_schema.PROCESSLIST`.
    Table(TableQuery),
}

/// The question a COM_QUERY text of session `caller` asks of the process list, if it asks one.
pub fn question(sql: &str, caller: u32) -> Option<Question> {
    recognise(sql).map(|full| Question::Show { full }).or_else(|| recognise_table(sql, caller).map(Question::Table))
}

/// The answer to `q`.
pub fn answer(shared: &Shared, asker: Asker<'_>, q: &Question) -> TextResultSet {
    match q {
        Question::Show { full } => list(shared, asker, *full),
        Question::Table(t) => table(shared, asker, t),
    }
}

/// `SHOW [FULL] PROCESSLIST` (comments allowed anywhere, as the server takes them): `Some(full)`.
pub fn recognise(sql: &str) -> Option<bool> {
    if sql.len() > 1024 {
        return None;
    }
    let mut words = Vec::with_capacity(4);
    let mut t = sql;
    while words.len() < 4 {
        t = skip_leading_comments(t);
        let Some(word) = t.split(|c: char| c.is_ascii_whitespace() || c == '/' || c == '#' || c == ';').next() else {
            break;
        };
        if word.is_empty() {
            if t.starts_with(';') {
                t = &t[1..];
                continue;
            }
            // A comment the skip does not take (`/*!…*/`, a lone `/`): not this statement.
            if !t.is_empty() {
                return None;
            }
            break;
        }
        words.push(word);
        t = &t[word.len()..];
    }
    match words.as_slice() {
        [s, p] if s.eq_ignore_ascii_case("show") && p.eq_ignore_ascii_case("processlist") => Some(false),
        [s, f, p]
            if s.eq_ignore_ascii_case("show")
                && f.eq_ignore_ascii_case("full")
                && p.eq_ignore_ascii_case("processlist") =>
        {
            Some(true)
        }
        _ => None,
    }
}

/// `SELECT <* | columns> FROM information_schema.PROCESSLIST [WHERE ID = <n | CONNECTION_ID()>]`
/// of session `caller`: the columns (indexes into [`COLUMNS`]) and the id filter. Other queries
/// of the table are not recognised (they run on a server and show its own threads).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableQuery {
    columns: Vec<usize>,
    id: Option<u32>,
}

/// SHOW PROCESSLIST's columns; `information_schema.PROCESSLIST` has them under upper-case names.
const COLUMNS: [&str; 8] = ["Id", "User", "Host", "db", "Command", "Time", "State", "Info"];

/// Recognises a [`TableQuery`].
pub fn recognise_table(sql: &str, caller: u32) -> Option<TableQuery> {
    let mut t = skip_leading_comments(sql).trim().trim_end_matches(';').trim_end();
    // Trailing comments (`… /* app tag */`).
    while let Some(body) = t.strip_suffix("*/") {
        t = body[..body.rfind("/*")?].trim_end().trim_end_matches(';').trim_end();
    }
    let named = |w: &[u8]| w.eq_ignore_ascii_case(b"processlist");
    if t.len() > 1024 || !t.get(..6)?.eq_ignore_ascii_case("select") || !t.as_bytes().windows(11).any(named) {
        return None;
    }
    let spaced = t.replace('`', "").replace(',', " , ").replace('=', " = ").to_ascii_lowercase();
    let words: Vec<&str> = spaced.split_ascii_whitespace().collect();
    let from = words.iter().position(|w| *w == "from").filter(|f| f % 2 == 0)?;
    let mut columns = Vec::new();
    for (i, w) in words[1..from].iter().enumerate() {
        match (i % 2, *w) {
            (0, "*") => columns.extend(0..COLUMNS.len()),
            (0, name) => columns.push(COLUMNS.iter().position(|c| c.eq_ignore_ascii_case(name))?),
            (1, ",") => {}
            _ => return None,
        }
    }
    let id = match &words[from + 1..] {
        ["information_schema.processlist"] => None,
        ["information_schema.processlist", "where", "id", "=", v] => {
            Some(if *v == "connection_id()" { caller } else { v.parse().unwrap_or(0) })
        }
        _ => return None,
    };
    (!columns.is_empty()).then_some(TableQuery { columns, id })
}

/// The answer to a [`TableQuery`]: the rows of `SHOW FULL PROCESSLIST`, filtered and projected.
pub fn table(shared: &Shared, asker: Asker<'_>, q: &TableQuery) -> TextResultSet {
    let all = list(shared, asker, true);
    let names: Vec<String> = q.columns.iter().map(|&c| COLUMNS[c].to_ascii_uppercase()).collect();
    let mut rs = TextResultSet::with_text_columns(&names.iter().map(String::as_str).collect::<Vec<_>>());
    for (i, &c) in q.columns.iter().enumerate() {
        rs.columns[i].1 = all.columns[c].1;
    }
    for row in all.rows {
        if q.id.is_some_and(|id| row[0].as_deref() != Some(id.to_string().as_str())) {
            continue;
        }
        rs.rows.push(q.columns.iter().map(|&c| row[c].clone()).collect());
    }
    rs
}

/// The rows `asker` sees. Its own row shows what it sent (the registry has the statement).
pub fn list(shared: &Shared, asker: Asker<'_>, full: bool) -> TextResultSet {
    let mut rs = TextResultSet::with_text_columns(&COLUMNS);
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
                crate::session::routed::registry::SPLICED => "spliced",
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
        assert_eq!(recognise("SHOW /* x */ PROCESSLIST"), Some(false));
        assert_eq!(recognise("SHOW PROCESSLIST /* app */;"), Some(false));
        assert_eq!(recognise("# c\nSHOW FULL -- y\n PROCESSLIST"), Some(true));
        assert_eq!(recognise("SHOW PROCESSLIST; SELECT 1"), None);
        assert_eq!(recognise("-- x\nshow full processlist"), Some(true));
        assert_eq!(recognise("SHOW PROCESSLIST x"), None);
        assert_eq!(recognise("SELECT 'SHOW PROCESSLIST'"), None);
    }

    #[test]
    fn recognises_simple_information_schema_queries() {
        let q = |s| recognise_table(s, 9);
        assert_eq!(
            q("SELECT * FROM information_schema.PROCESSLIST"),
            Some(TableQuery { columns: (0..8).collect(), id: None })
        );
        assert_eq!(
            q("select id,info from `information_schema`.`processlist` where id=connection_id();"),
            Some(TableQuery { columns: vec![0, 7], id: Some(9) })
        );
        assert_eq!(
            q("SELECT ID FROM INFORMATION_SCHEMA.PROCESSLIST WHERE ID = 12 /* a */ /* b */"),
            Some(TableQuery { columns: vec![0], id: Some(12) })
        );
        for s in [
            "SELECT COUNT(*) FROM information_schema.PROCESSLIST",
            "SELECT id FROM information_schema.PROCESSLIST WHERE user = 'a'",
            "SELECT id info FROM information_schema.processlist",
            "SELECT * FROM t",
        ] {
            assert_eq!(q(s), None, "{s}");
        }
    }
}
