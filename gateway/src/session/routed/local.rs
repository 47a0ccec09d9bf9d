//! Statements a routed session answers or rewrites itself, without a route decision:
//!
//! * `SELECT @@socket` (alone or in a list of `@@` variables, as mysql_async 0.37 sends
//!   `SELECT @@max_allowed_packet,@@wait_timeout,@@socket` after connecting): `@@socket` becomes
//!   `NULL`, so drivers never learn a server's unix socket and bypass the gateway;
//! * `SELECT @@tx_read_only` / `@@transaction_read_only` while a `BEGIN` is deferred (docs/routing.md §8);
//! * `SET` of the gateway's route variables only (`ob_read_consistency`, `ob_route_policy`):
//!   answered by the gateway, which routes by them. `ob_read_consistency` is also an OceanBase
//!   server variable: it joins the session state and reaches OceanBase connections with the next
//!   sync (so a weak read runs weak on the replica), never MySQL-compatible ones. The
//!   [`GATEWAY_ONLY`] ones (no OceanBase 4.x server knows them) are never sent;
//! * `SET TRANSACTION …` and one-shot variables (`insert_id`, `rand_seed1/2`): held and replayed
//!   right before the next statement, on whichever connection serves it;
//! * `SHOW [FULL] PROCESSLIST` (docs/routing.md §13, see [`crate::session::processlist`]).

use std::sync::Arc;

use crate::route::{ProxyRoutePolicy, ReadConsistency};
use crate::session::state::{Assignment, SetValue, Target};

/// Route variables that no server knows (`SELECT @@ob_route_policy` on an OceanBase 4.3.5
/// kernel: ERROR 1193): kept by the gateway alone. Every other route variable is also the
/// server's own (`ob_read_consistency`) and is synced to OceanBase connections.
pub const GATEWAY_ONLY: [&str; 1] = ["ob_route_policy"];

/// Route variables a session sets on the gateway.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RouteVars {
    /// `ob_read_consistency`.
    pub read_consistency: Option<ReadConsistency>,
    /// `ob_route_policy`.
    pub route_policy: Option<i64>,
    /// User variable `@proxy_route_policy` (a server keeps it; the gateway routes by it), when
    /// set to a name the route engine knows (docs/routing.md §5: other values are ignored).
    pub proxy_route_policy: Option<ProxyRoutePolicy>,
    /// User variable `@proxy_idc_name`: the IDC this session's LDC order counts from instead of
    /// `[routing] idc` (docs/routing.md §3), when set to a non-empty string.
    pub idc: Option<Arc<str>>,
}

/// What to do with a `SET` statement.
#[derive(Debug, Clone, PartialEq)]
pub enum SetAction {
    /// Only route variables: apply them to [`RouteVars`] and answer OK.
    Route(RouteVars),
    /// Only next-transaction / one-shot assignments: hold them in the client state, answer OK.
    Hold,
    /// Send it to a server.
    Forward,
}

/// Decides how to treat a `SET` statement's assignments (`None`: one the parser does not
/// understand), given the current route variables.
pub fn set_action(items: Option<&[Assignment]>, current: &RouteVars) -> SetAction {
    let Some(items) = items else { return SetAction::Forward };
    if items.is_empty() {
        return SetAction::Forward;
    }
    let one_shot = |t: &Target| match t {
        Target::NextTransaction => true,
        Target::System(n) => ["insert_id", "rand_seed1", "rand_seed2"].contains(&n.as_str()),
        _ => false,
    };
    if items.iter().all(|a| one_shot(&a.target)) {
        return SetAction::Hold;
    }
    let mut vars = current.clone();
    for a in items {
        match &a.target {
            // A value the gateway does not know goes to the server, which answers the error.
            Target::System(n) if n == "ob_read_consistency" => match consistency(&a.value) {
                Some(c) => vars.read_consistency = Some(c),
                None => return SetAction::Forward,
            },
            Target::System(n) if n == "ob_route_policy" => vars.route_policy = Some(route_policy(&a.value)),
            _ => return SetAction::Forward,
        }
    }
    SetAction::Route(vars)
}

/// `ob_read_consistency` by name or by its index on OceanBase (1 FROZEN, 2 WEAK, 3 STRONG);
/// `DEFAULT` is STRONG. `None`: not a value of the variable.
/// The route variables after a `SET` that a server ran (one that also set other variables):
/// its route-variable assignments with a known value applied to `current`.
pub fn route_vars_after(items: &[Assignment], current: &RouteVars) -> RouteVars {
    let mut vars = current.clone();
    for a in items {
        match &a.target {
            Target::System(n) if n == "ob_read_consistency" => {
                vars.read_consistency = consistency(&a.value).or(vars.read_consistency);
            }
            Target::System(n) if n == "ob_route_policy" => vars.route_policy = Some(route_policy(&a.value)),
            Target::User(n) if n == "proxy_route_policy" => {
                vars.proxy_route_policy = a.value.text().as_deref().and_then(ProxyRoutePolicy::parse);
            }
            Target::User(n) if n == "proxy_idc_name" => {
                vars.idc = a.value.text().as_deref().map(str::trim).filter(|t| !t.is_empty()).map(Arc::from);
            }
            _ => {}
        }
    }
    vars
}

fn consistency(v: &SetValue) -> Option<ReadConsistency> {
    let t = v.text().unwrap_or_default().to_ascii_uppercase();
    match t.as_str() {
        "WEAK" | "2" => Some(ReadConsistency::Weak),
        "FROZEN" | "1" => Some(ReadConsistency::Frozen),
        "STRONG" | "3" | "DEFAULT" => Some(ReadConsistency::Strong),
        _ => None,
    }
}

/// `ob_route_policy` by name or number (docs/routing.md §5: 0–3).
fn route_policy(v: &SetValue) -> i64 {
    let t = v.text().unwrap_or_default().to_ascii_uppercase();
    match t.as_str() {
        "MERGE_IDC_ORDER" => 0,
        "READONLY_ZONE_FIRST" => 1,
        "ONLY_READONLY_ZONE" => 2,
        "UNMERGE_ZONE_FIRST" => 3,
        // Unknown names: an unsupported value, which the route engine reports and replaces.
        _ => t.parse().unwrap_or(-1),
    }
}

/// The items of `SELECT @@a, @@b …` (names as written, without `@@`), when the statement is
/// exactly that.
fn variable_select(sql: &str) -> Option<Vec<&str>> {
    let t = sql.trim().trim_end_matches(';').trim_end();
    let head = t.get(..6)?;
    if !head.eq_ignore_ascii_case("select") || !t[6..].starts_with(|c: char| c.is_ascii_whitespace()) {
        return None;
    }
    t[6..]
        .split(',')
        .map(|item| {
            let name = item.trim().strip_prefix("@@")?;
            name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.').then_some(name)
        })
        .collect()
}

fn base_name(var: &str) -> String {
    let lower = var.to_ascii_lowercase();
    lower.strip_prefix("session.").or_else(|| lower.strip_prefix("local.")).unwrap_or(&lower).to_string()
}

/// `SELECT … @@socket …` with `@@socket` replaced by `NULL AS `@@socket``; `None` when the
/// statement is not such a list or names no `@@socket`.
pub fn rewrite_socket_select(sql: &str) -> Option<String> {
    let items = variable_select(sql)?;
    if !items.iter().any(|n| base_name(n) == "socket") {
        return None;
    }
    let cols: Vec<String> = items
        .iter()
        .map(|n| if base_name(n) == "socket" { format!("NULL AS `@@{n}`") } else { format!("@@{n}") })
        .collect();
    Some(format!("SELECT {}", cols.join(", ")))
}

/// `SELECT @@tx_read_only` / `@@transaction_read_only` (one item): the column name.
pub fn tx_read_only_select(sql: &str) -> Option<String> {
    let items = variable_select(sql)?;
    match items.as_slice() {
        [one] if ["tx_read_only", "transaction_read_only"].contains(&base_name(one).as_str()) => {
            Some(format!("@@{one}"))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn socket_is_never_revealed() {
        assert_eq!(
            rewrite_socket_select("SELECT @@max_allowed_packet,@@wait_timeout,@@socket").as_deref(),
            Some("SELECT @@max_allowed_packet, @@wait_timeout, NULL AS `@@socket`")
        );
        assert_eq!(
            rewrite_socket_select("select @@SESSION.socket;").as_deref(),
            Some("SELECT NULL AS `@@SESSION.socket`")
        );
        assert_eq!(rewrite_socket_select("SELECT @@wait_timeout"), None);
        assert_eq!(rewrite_socket_select("SELECT @@socket FROM t"), None);
    }

    #[test]
    fn recognises_tx_read_only() {
        assert_eq!(tx_read_only_select("SELECT @@tx_read_only").as_deref(), Some("@@tx_read_only"));
        assert_eq!(
            tx_read_only_select("select @@session.transaction_read_only").as_deref(),
            Some("@@session.transaction_read_only")
        );
        assert_eq!(tx_read_only_select("SELECT @@tx_read_only, @@port"), None);
    }

    #[test]
    fn set_actions() {
        let parse = |sql: &[u8]| crate::session::state::parse_set(sql, crate::sql::Mode::default());
        let none = RouteVars::default();
        let weak = set_action(parse(b"SET ob_read_consistency = 'WEAK'").as_deref(), &none);
        assert_eq!(
            weak,
            SetAction::Route(RouteVars { read_consistency: Some(ReadConsistency::Weak), ..RouteVars::default() })
        );
        assert_eq!(
            set_action(parse(b"SET @@session.ob_route_policy = ONLY_READONLY_ZONE").as_deref(), &none),
            SetAction::Route(RouteVars { read_consistency: None, route_policy: Some(2), ..RouteVars::default() })
        );
        assert_eq!(
            set_action(parse(b"SET TRANSACTION ISOLATION LEVEL SERIALIZABLE").as_deref(), &none),
            SetAction::Hold
        );
        assert_eq!(set_action(parse(b"SET insert_id = 5").as_deref(), &none), SetAction::Hold);
        assert_eq!(set_action(parse(b"SET time_zone = '+01:00'").as_deref(), &none), SetAction::Forward);
        assert_eq!(
            set_action(parse(b"SET ob_read_consistency = WEAK, time_zone = '+01:00'").as_deref(), &none),
            SetAction::Forward
        );
        assert_eq!(set_action(parse(b"SET ob_read_consistency = 'SOMETIMES'").as_deref(), &none), SetAction::Forward);
        let strong =
            SetAction::Route(RouteVars { read_consistency: Some(ReadConsistency::Strong), ..RouteVars::default() });
        assert_eq!(set_action(parse(b"SET ob_read_consistency = DEFAULT").as_deref(), &none), strong);
        let mixed = route_vars_after(
            &parse(b"SET ob_read_consistency = WEAK, time_zone = '+01:00'").unwrap_or_default(),
            &none,
        );
        assert_eq!(mixed.read_consistency, Some(ReadConsistency::Weak));
        assert_eq!(route_vars_after(&parse(b"SET time_zone = '+01:00'").unwrap_or_default(), &mixed), mixed);
    }

    #[test]
    fn proxy_route_policy_is_a_user_variable_the_server_keeps() {
        use crate::route::ProxyRoutePolicy;
        let parse = |sql: &[u8]| crate::session::state::parse_set(sql, crate::sql::Mode::default());
        let none = RouteVars::default();
        // A user variable goes to the server (which keeps it for `SELECT @proxy_route_policy`).
        let set = parse(b"SET @Proxy_Route_Policy = 'follower_first'");
        assert_eq!(set_action(set.as_deref(), &none), SetAction::Forward);
        let ff = route_vars_after(&set.unwrap_or_default(), &none);
        assert_eq!(ff.proxy_route_policy, Some(ProxyRoutePolicy::FollowerFirst));
        let both = route_vars_after(
            &parse(b"SET @a = 1, @proxy_route_policy := \"FORCE_READONLY_ZONE\"").unwrap_or_default(),
            &ff,
        );
        assert_eq!(both.proxy_route_policy, Some(ProxyRoutePolicy::ForceReadonlyZone));
        // NULL, an unknown name or an expression: not a policy (the configuration's applies).
        for sql in [
            &b"SET @proxy_route_policy = NULL"[..],
            b"SET @proxy_route_policy = 'sometimes'",
            b"SET @proxy_route_policy = CONCAT('a')",
        ] {
            assert_eq!(route_vars_after(&parse(sql).unwrap_or_default(), &ff).proxy_route_policy, None, "{sql:?}");
        }
        // Another variable leaves it.
        assert_eq!(route_vars_after(&parse(b"SET @proxy_route = 'x'").unwrap_or_default(), &ff), ff);
    }

    #[test]
    fn proxy_idc_name_is_the_sessions_idc_while_it_is_a_non_empty_string() {
        let parse = |sql: &[u8]| crate::session::state::parse_set(sql, crate::sql::Mode::default());
        let after = |sql: &[u8], vars: &RouteVars| route_vars_after(&parse(sql).unwrap_or_default(), vars);
        let idc2 = after(b"SET @PROXY_IDC_NAME = ' idc2 '", &RouteVars::default());
        assert_eq!(idc2.idc.as_deref(), Some("idc2"));
        for clear in [&b"SET @proxy_idc_name = ''"[..], b"SET @proxy_idc_name = NULL"] {
            assert_eq!(after(clear, &idc2).idc, None, "{clear:?}");
        }
        assert_eq!(after(b"SET @proxy_idc = 'idc3'", &idc2), idc2);
    }
}
