//! `SHOW PROXYCONFIG [LIKE 'pattern']`: every setting with its value, documentation and whether
//! a change needs a restart, in ODP's layout (`name, value, info, need_reboot, visible_level`).

use super::{AdminCommand, AdminContext, Reply};
use crate::live_config::keys::{Effect, KEYS};
use crate::planner::show_route::like;
use crate::protocol::message::ErrPacket;
use crate::protocol::resultset::TextResultSet;

/// `SHOW PROXYCONFIG`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShowProxyConfig {
    /// `LIKE` pattern on the name.
    pub like: Option<String>,
}

impl AdminCommand for ShowProxyConfig {
    fn execute(&self, cx: &AdminContext<'_>) -> Result<Reply, ErrPacket> {
        let config = cx.shared.config();
        let mut rs = TextResultSet::with_text_columns(&["name", "value", "info", "need_reboot", "visible_level"]);
        for key in KEYS.iter().filter(|k| self.like.as_deref().is_none_or(|p| like(p, k.name))) {
            let when = match key.effect {
                Effect::Immediate => "immediately",
                Effect::NewSessions => "for new sessions",
                Effect::Restart => "after a restart",
            };
            rs.rows.push(vec![
                Some(key.name.to_string()),
                Some((key.get)(&config)),
                Some(format!("{}; takes effect {when}", key.info)),
                Some(key.need_reboot().to_string()),
                Some("USER".to_string()),
            ]);
        }
        Ok(Reply::Rows(rs))
    }
}
