//! `SHOW PROXYSESSION`: every client session of the gateway, of every user (routed and 1:1),
//! with its gateway id, cluster, tenant, user, client address, database, current command and
//! for how long, its state, the running statement, the server serving it right now and why it
//! keeps its server connection (`trans`, `cursor`, `pin:<reason>`, or empty).

use super::{AdminCommand, AdminContext, Reply};
use crate::protocol::message::ErrPacket;
use crate::protocol::resultset::{ColumnKind, TextResultSet};

/// `SHOW PROXYSESSION`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShowProxySession;

/// Result columns, ODP's names where ODP has the column.
pub const COLUMNS: [&str; 12] =
    ["Id", "Cluster", "Tenant", "User", "Host", "db", "Command", "Time", "state", "Info", "server", "sticky"];

impl AdminCommand for ShowProxySession {
    fn execute(&self, cx: &AdminContext<'_>) -> Result<Reply, ErrPacket> {
        let mut rs = TextResultSet::with_text_columns(&COLUMNS);
        rs.columns[0].1 = ColumnKind::Int;
        rs.columns[7].1 = ColumnKind::Int;
        for (id, s, sticky) in cx.shared.sessions.list_sticky() {
            let (command, state, info) = if id == cx.id {
                ("Query", "executing", Some("SHOW PROXYSESSION".to_string()))
            } else {
                (s.command, state(s.command), s.info.clone())
            };
            rs.rows.push(vec![
                Some(id.to_string()),
                Some(s.cluster.clone()).filter(|c| !c.is_empty()),
                Some(s.tenant.clone()),
                Some(s.user.clone()),
                Some(s.host.clone()),
                s.db.clone(),
                Some(command.to_string()),
                Some(s.since.elapsed().as_secs().to_string()),
                Some(state.to_string()),
                info.map(|i| i.chars().take(100).collect()),
                s.current.map(|(server, _)| server.to_string()),
                Some(sticky.to_string()),
            ]);
        }
        Ok(Reply::Rows(rs))
    }
}

fn state(command: &str) -> &'static str {
    match command {
        "Sleep" => "idle",
        "Connect" => "connecting",
        "Spliced" => "spliced",
        _ => "executing",
    }
}
