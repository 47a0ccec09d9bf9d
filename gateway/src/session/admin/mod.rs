//! The gateway's admin commands over the MySQL protocol (docs/routing.md §15): recognition, access
//! control (`[[users]] admin = true`), one file per command behind [`AdminCommand`].
//!
//! | statement | file |
//! |---|---|
//! | `SHOW PROXYCONFIG [LIKE 'pat']` | [`show_proxyconfig`] |
//! | `ALTER PROXYCONFIG SET name = value` | [`alter_proxyconfig`] |
//! | `SHOW PROXYSESSION` | [`show_proxysession`] |
//! | `KILL PROXYSESSION id` | [`kill_proxysession`] |
//! | `SHOW PROXYCONGESTION` | [`show_proxycongestion`] |
//! | `SHOW PROXYSTAT [LIKE 'pat']` | [`show_proxystat`] |

pub(crate) mod alter_proxyconfig;
pub(crate) mod kill_proxysession;
pub(crate) mod show_proxyconfig;
pub(crate) mod show_proxycongestion;
pub(crate) mod show_proxysession;
pub(crate) mod show_proxystat;

use crate::protocol::message::{ErrPacket, OkPacket};
use crate::protocol::resultset::{TextResultSet, GATEWAY_STATUS};
use crate::session::Shared;

/// ER_SPECIFIC_ACCESS_DENIED_ERROR, what a server answers a user without SUPER.
pub const ACCESS_DENIED: u16 = 1227;

/// Who runs the command.
pub struct AdminContext<'a> {
    /// Process state.
    pub shared: &'a Shared,
    /// Login user of the session.
    pub user: &'a str,
    /// Gateway connection id of the session.
    pub id: u32,
}

/// What a command answers.
#[derive(Debug)]
pub enum Reply {
    /// A result set.
    Rows(TextResultSet),
    /// OK with this many affected rows.
    Ok(u64),
}

/// One admin command.
pub trait AdminCommand {
    /// Runs the command; an `Err` is the client's answer.
    fn execute(&self, cx: &AdminContext<'_>) -> Result<Reply, ErrPacket>;
}

/// A recognised admin statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Admin {
    /// `SHOW PROXYCONFIG`.
    ShowConfig(show_proxyconfig::ShowProxyConfig),
    /// `ALTER PROXYCONFIG SET`.
    AlterConfig(alter_proxyconfig::AlterProxyConfig),
    /// `SHOW PROXYSESSION`.
    ShowSession(show_proxysession::ShowProxySession),
    /// `KILL PROXYSESSION`.
    KillSession(kill_proxysession::KillProxySession),
    /// `SHOW PROXYCONGESTION`.
    ShowCongestion(show_proxycongestion::ShowProxyCongestion),
    /// `SHOW PROXYSTAT`.
    ShowStat(show_proxystat::ShowProxyStat),
}

impl Admin {
    fn command(&self) -> &dyn AdminCommand {
        match self {
            Admin::ShowConfig(c) => c,
            Admin::AlterConfig(c) => c,
            Admin::ShowSession(c) => c,
            Admin::KillSession(c) => c,
            Admin::ShowCongestion(c) => c,
            Admin::ShowStat(c) => c,
        }
    }
}

/// Recognises an admin statement in query text (`SHOW PROXY…`, `ALTER PROXYCONFIG`,
/// `KILL PROXYSESSION`); anything else is `None`.
pub fn recognise(text: &str) -> Option<Admin> {
    let t = text.trim().trim_end_matches(';').trim_end();
    let mut words = t.split_ascii_whitespace();
    let verb = words.next()?.to_ascii_lowercase();
    let object = words.next()?.to_ascii_lowercase();
    let rest = t.split_ascii_whitespace().skip(2).collect::<Vec<_>>().join(" ");
    match (verb.as_str(), object.as_str()) {
        ("show", "proxyconfig") => {
            Some(Admin::ShowConfig(show_proxyconfig::ShowProxyConfig { like: like_clause(&rest)? }))
        }
        ("show", "proxystat") => Some(Admin::ShowStat(show_proxystat::ShowProxyStat { like: like_clause(&rest)? })),
        ("show", "proxysession") if rest.is_empty() => Some(Admin::ShowSession(show_proxysession::ShowProxySession)),
        ("show", "proxycongestion") if rest.is_empty() => {
            Some(Admin::ShowCongestion(show_proxycongestion::ShowProxyCongestion))
        }
        ("alter", "proxyconfig") => alter_proxyconfig::parse(&rest).map(Admin::AlterConfig),
        ("kill", "proxysession") => kill_proxysession::parse(&rest).map(Admin::KillSession),
        _ => None,
    }
}

/// `""` → no pattern; `LIKE 'pat'` → the pattern; anything else → not recognised.
fn like_clause(rest: &str) -> Option<Option<String>> {
    if rest.is_empty() {
        return Some(None);
    }
    let (kw, pat) = rest.split_once(' ')?;
    if !kw.eq_ignore_ascii_case("like") {
        return None;
    }
    Some(Some(unquote(pat.trim())?.to_string()))
}

/// The text of a `'…'` or `"…"` literal.
pub(crate) fn unquote(s: &str) -> Option<&str> {
    s.strip_prefix('\'')
        .and_then(|s| s.strip_suffix('\''))
        .or_else(|| s.strip_prefix('"').and_then(|s| s.strip_suffix('"')))
}

/// Whether `user` may run admin commands under the configuration in force now.
pub fn is_admin(shared: &Shared, user: &str) -> bool {
    shared.config().user(user).is_some_and(|u| u.admin)
}

/// The framed answer (result set, OK or ERR) to an admin statement, starting at sequence 1.
pub fn answer(admin: &Admin, cx: &AdminContext<'_>, client_caps: u32) -> Vec<u8> {
    let reply = if is_admin(cx.shared, cx.user) {
        admin.command().execute(cx)
    } else {
        tracing::info!(user = cx.user, "admin command refused: not an admin user");
        Err(ErrPacket::with_state(
            ACCESS_DENIED,
            b"42000",
            "Access denied; you need (at least one of) the SUPER privilege(s) for this operation",
        ))
    };
    let mut out = Vec::new();
    match reply {
        Ok(Reply::Rows(rs)) => return rs.encode(1, client_caps, GATEWAY_STATUS),
        Ok(Reply::Ok(n)) => {
            let mut ok = OkPacket::with_status(GATEWAY_STATUS);
            ok.affected_rows = n;
            crate::protocol::frame::encode_packet(&mut out, 1, &ok.encode(client_caps));
        }
        Err(err) => {
            crate::protocol::frame::encode_packet(&mut out, 1, &err.encode());
        }
    }
    out
}

#[cfg(test)]
mod tests;
