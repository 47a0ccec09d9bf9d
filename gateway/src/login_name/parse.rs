//! Splitting a login name into user, tenant, cluster and cluster id (ODP `handle_full_user_name`).

use super::{LoginError, Separators, MAX_CLUSTER_LEN, MAX_FULL_NAME_LEN, MAX_TENANT_LEN};

/// A login name split into its parts. Empty tenant or cluster parts (`app@`, `::app`) are `None`,
/// as in ODP, which treats them as "not given".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginName {
    /// The database user.
    pub user: String,
    /// The tenant, if the name gives one.
    pub tenant: Option<String>,
    /// The cluster, if the name gives one.
    pub cluster: Option<String>,
    /// The cluster id after `:` (0 in ODP means "none").
    pub cluster_id: Option<i64>,
    /// The separator of the non-standard form, `None` for the standard `user@tenant#cluster` form.
    pub separator: Option<char>,
}

/// Parses a login name as sent in the handshake response (docs/routing.md §14).
///
/// * Standard form, when the name contains `@` or `#`: `user[@tenant][#cluster[:cluster_id]]`.
///   The user ends at the first `@` (or at the first `#` if there is no `@`); the tenant ends at
///   the first `#` after it; the cluster id follows the first `:` of the cluster part. **[GW]** A
///   `#` before the first `@` belongs to the user (`a#b@t` is user `a#b`, tenant `t`); ODP splits
///   such a name into user `a#b`, no tenant, cluster `t`.
/// * Non-standard form, when the name contains neither and one of `separators` occurs at least
///   twice (the first such separator in list order): `cluster<s>tenant<s>user[<s or :>cluster_id]`.
///   So `c.t.first.last` fails (cluster id `last`), exactly as in ODP.
///
/// A cluster id that is empty (`u@t#c:`) is ignored; one that is not a decimal integer is an error.
pub fn parse(name: &str, separators: &Separators) -> Result<LoginName, LoginError> {
    let standard = name.contains('@') || name.contains('#');
    let separator = if standard { None } else { separators.chars().iter().copied().find(|&s| occurs_twice(name, s)) };
    let raw = match separator {
        None => split_standard(name),
        Some(s) => split_separated(name, s),
    };
    let parsed = LoginName {
        user: raw.user.to_string(),
        tenant: non_empty(raw.tenant),
        cluster: non_empty(raw.cluster),
        cluster_id: cluster_id(name, raw.cluster_id)?,
        separator,
    };
    check(name, &parsed)?;
    Ok(parsed)
}

/// The parts as found, before emptiness and id checks.
struct Raw<'a> {
    user: &'a str,
    tenant: &'a str,
    cluster: &'a str,
    cluster_id: &'a str,
}

fn occurs_twice(name: &str, s: char) -> bool {
    name.split_once(s).is_some_and(|(_, rest)| rest.contains(s))
}

fn split_standard(name: &str) -> Raw<'_> {
    let (user, tenant_cluster) = match name.split_once('@') {
        Some((user, rest)) => (user, Some(rest)),
        None => (name, None),
    };
    let (user, tenant, cluster_part) = match tenant_cluster {
        Some(rest) => match rest.split_once('#') {
            Some((tenant, cluster)) => (user, tenant, cluster),
            None => (user, rest, ""),
        },
        None => match user.split_once('#') {
            Some((user, cluster)) => (user, "", cluster),
            None => (user, "", ""),
        },
    };
    let (cluster, cluster_id) = cluster_part.split_once(':').unwrap_or((cluster_part, ""));
    Raw { user, tenant, cluster, cluster_id }
}

fn split_separated(name: &str, s: char) -> Raw<'_> {
    // `occurs_twice` holds, so both splits succeed; the fallbacks only keep this total.
    let (cluster, rest) = name.split_once(s).unwrap_or(("", name));
    let (tenant, rest) = rest.split_once(s).unwrap_or(("", rest));
    let (user, cluster_id) = rest.split_once(s).or_else(|| rest.split_once(':')).unwrap_or((rest, ""));
    Raw { user, tenant, cluster, cluster_id }
}

fn non_empty(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_string())
}

fn cluster_id(name: &str, id: &str) -> Result<Option<i64>, LoginError> {
    if id.is_empty() {
        return Ok(None);
    }
    id.parse::<i64>().map(Some).map_err(|_| LoginError::BadClusterId { name: name.to_string(), id: id.to_string() })
}

fn check(name: &str, p: &LoginName) -> Result<(), LoginError> {
    let too_long = |part, limit| LoginError::TooLong { name: name.to_string(), part, limit };
    if p.user.is_empty() {
        return Err(LoginError::EmptyUser { name: name.to_string() });
    }
    if p.tenant.as_ref().is_some_and(|t| t.len() > MAX_TENANT_LEN) {
        return Err(too_long("tenant", MAX_TENANT_LEN));
    }
    if p.cluster.as_ref().is_some_and(|c| c.len() > MAX_CLUSTER_LEN) {
        return Err(too_long("cluster", MAX_CLUSTER_LEN));
    }
    if full_name_len(p) >= MAX_FULL_NAME_LEN {
        return Err(too_long("full name", MAX_FULL_NAME_LEN - 1));
    }
    Ok(())
}

/// Bytes of `user@tenant#cluster[:id]` as ODP rebuilds it (separators counted even for absent parts).
fn full_name_len(p: &LoginName) -> usize {
    let id = p.cluster_id.map_or(0, |id| 1 + id.to_string().len());
    p.user.len() + 1 + p.tenant.as_ref().map_or(0, String::len) + 1 + p.cluster.as_ref().map_or(0, String::len) + id
}
