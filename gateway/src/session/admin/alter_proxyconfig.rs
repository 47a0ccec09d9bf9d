//! `ALTER PROXYCONFIG SET name = value`: changes one runtime setting of the running
//! configuration (validated like the file; not written back: the next SIGHUP reads the file).

use super::{unquote, AdminCommand, AdminContext, Reply};
use crate::live_config::ReloadError;
use crate::protocol::message::ErrPacket;

/// ER_WRONG_VALUE_FOR_VAR, for a value the setting does not accept.
const WRONG_VALUE: u16 = 1231;
/// ER_UNKNOWN_SYSTEM_VARIABLE, for a name that is not a setting.
const UNKNOWN_SETTING: u16 = 1193;
/// ER_INCORRECT_GLOBAL_LOCAL_VAR, for a setting that cannot change at runtime.
const READ_ONLY: u16 = 1238;

/// `ALTER PROXYCONFIG SET name = value`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlterProxyConfig {
    /// Setting name.
    pub name: String,
    /// Value text (quotes removed).
    pub value: String,
}

/// Parses what follows `ALTER PROXYCONFIG`: `SET name = value`.
pub fn parse(rest: &str) -> Option<AlterProxyConfig> {
    let (kw, assignment) = rest.split_once(' ')?;
    if !kw.eq_ignore_ascii_case("set") {
        return None;
    }
    let (name, value) = assignment.split_once('=')?;
    let (name, value) = (name.trim(), value.trim());
    if name.is_empty() || value.is_empty() || name.contains(char::is_whitespace) {
        return None;
    }
    let value = unquote(value).unwrap_or(value);
    Some(AlterProxyConfig { name: name.to_string(), value: value.to_string() })
}

impl AdminCommand for AlterProxyConfig {
    fn execute(&self, cx: &AdminContext<'_>) -> Result<Reply, ErrPacket> {
        match cx.shared.live.alter(&self.name, &self.value) {
            Ok(()) => {
                tracing::info!(user = cx.user, setting = %self.name, value = %self.value, "ALTER PROXYCONFIG");
                Ok(Reply::Ok(0))
            }
            Err(e) => {
                let code = match e {
                    ReloadError::UnknownKey(_) => UNKNOWN_SETTING,
                    ReloadError::NotRuntime(..) => READ_ONLY,
                    _ => WRONG_VALUE,
                };
                Err(ErrPacket::with_state(code, b"HY000", e.to_string()))
            }
        }
    }
}
