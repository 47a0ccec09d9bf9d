//! Statements the gateway answers itself: `EXPLAIN ROUTE <sql>`, `SHOW PROXYROUTE` (an admin sees
//! every cached table, other users the tables their own sessions were routed by) and the admin
//! commands ([`super::admin`]).

use crate::planner::{render_explain, show_route, Planner, StatementContext};
use crate::protocol::message::ErrPacket;
use crate::protocol::resultset::{TextResultSet, GATEWAY_STATUS};
use crate::protocol::{codes, command};
use crate::sql::{self, StmtKind};

/// An internal statement recognised in a COM_QUERY.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Internal {
    /// `EXPLAIN ROUTE <inner>`.
    ExplainRoute(String),
    /// `SHOW PROXYROUTE [LIKE 'pattern']`.
    ShowProxyRoute(Option<String>),
    /// An admin command (`SHOW PROXYCONFIG`, `KILL PROXYSESSION`, …).
    Admin(super::admin::Admin),
}

/// The session asking.
pub struct Caller<'a> {
    /// Process state.
    pub shared: &'a super::Shared,
    /// The routing pipeline, when configured.
    pub planner: Option<&'a Planner>,
    /// Routing facts of the session (EXPLAIN ROUTE).
    pub ctx: StatementContext,
    /// The client's capability flags.
    pub client_caps: u32,
    /// Login user (admin access control).
    pub user: &'a str,
    /// Gateway connection id.
    pub id: u32,
}

/// Recognises an internal statement; everything else (by far the common case) is `None` after
/// looking at the first word only.
pub fn recognise(payload: &[u8]) -> Option<Internal> {
    if payload.first() != Some(&command::QUERY) {
        return None;
    }
    let text = std::str::from_utf8(&payload[1..]).ok()?;
    let t = text.trim_start();
    let first = &t[..t.find(|c: char| c.is_ascii_whitespace()).unwrap_or(t.len())];
    if first.eq_ignore_ascii_case("explain") {
        let a = sql::analyze(text);
        return (a.kind == StmtKind::ExplainRoute)
            .then(|| Internal::ExplainRoute(a.inner_sql.unwrap_or_default().to_string()));
    }
    if first.eq_ignore_ascii_case("show") {
        return show_proxyroute(text).or_else(|| super::admin::recognise(text).map(Internal::Admin));
    }
    if first.eq_ignore_ascii_case("alter") || first.eq_ignore_ascii_case("kill") {
        return super::admin::recognise(text).map(Internal::Admin);
    }
    None
}

fn show_proxyroute(text: &str) -> Option<Internal> {
    let t = text.trim().trim_end_matches(';').trim_end();
    let mut words = t.split_ascii_whitespace();
    if !words.next()?.eq_ignore_ascii_case("show") || !words.next()?.eq_ignore_ascii_case("proxyroute") {
        return None;
    }
    match words.next() {
        None => Some(Internal::ShowProxyRoute(None)),
        Some(w) if w.eq_ignore_ascii_case("like") => {
            let rest = t[t.to_ascii_lowercase().find(" like ")? + 6..].trim();
            let pat = rest.strip_prefix('\'')?.strip_suffix('\'')?;
            Some(Internal::ShowProxyRoute(Some(pat.to_string())))
        }
        Some(_) => None,
    }
}

/// The framed answer (result set, OK or ERR) to an internal statement, starting at sequence 1.
pub async fn answer(internal: &Internal, caller: &Caller<'_>) -> Vec<u8> {
    let rs = match (internal, caller.planner) {
        (Internal::Admin(admin), _) => {
            let cx = super::admin::AdminContext { shared: caller.shared, user: caller.user, id: caller.id };
            return super::admin::answer(admin, &cx, caller.client_caps);
        }
        (_, None) => {
            let err = ErrPacket::new(codes::NOT_SUPPORTED, "gateway: no [routing] topology is configured");
            let mut out = Vec::new();
            crate::protocol::frame::encode_packet(&mut out, 1, &err.encode());
            return out;
        }
        (Internal::ExplainRoute(inner), Some(planner)) => {
            let planned = planner.plan(inner, &caller.ctx).await;
            if let Some(key) = &planned.table {
                caller.shared.sessions.touched(caller.id, key);
            }
            let mut rs = TextResultSet::with_text_columns(&["Route Plan"]);
            rs.rows.push(vec![Some(render_explain(&format!("EXPLAIN ROUTE {inner}"), &planned))]);
            rs
        }
        (Internal::ShowProxyRoute(pattern), Some(planner)) => {
            let cluster = planner.locator().cluster();
            let mut entries = planner.locator().cache().tables.snapshot();
            // Admins see every entry; others the tables their own sessions were routed by.
            if !super::admin::is_admin(caller.shared, caller.user) {
                let own = caller.shared.sessions.tables_of(caller.user, &caller.ctx.tenant);
                entries.retain(|(key, _)| own.contains(key));
            }
            show_route::show_proxyroute(&cluster.name, &entries, pattern.as_deref())
        }
    };
    rs.encode(1, caller.client_caps, GATEWAY_STATUS)
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
    fn recognises_only_internal_statements() {
        assert_eq!(recognise(&q("EXPLAIN ROUTE SELECT 1")), Some(Internal::ExplainRoute("SELECT 1".into())));
        assert_eq!(recognise(&q("show proxyroute")), Some(Internal::ShowProxyRoute(None)));
        assert_eq!(recognise(&q("SHOW PROXYROUTE LIKE 't%';")), Some(Internal::ShowProxyRoute(Some("t%".into()))));
        assert!(matches!(recognise(&q("kill proxysession 7")), Some(Internal::Admin(_))));
        assert!(matches!(recognise(&q("SHOW PROXYSTAT")), Some(Internal::Admin(_))));
        for s in ["SELECT 1", "EXPLAIN SELECT 1", "SHOW TABLES", "show", "", "explain", "KILL 5", "ALTER TABLE t"] {
            assert_eq!(recognise(&q(s)), None, "{s}");
        }
    }
}
