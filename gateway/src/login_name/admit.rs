//! A client's login name decided and checked against the gateway's accounts and topology.
//!
//! The order follows ODP's as far as it can without helping unauthenticated probes: the name is
//! parsed and its tenant and cluster resolved before authentication (the account's tenant is
//! its default), the account and its tenant restriction are checked with the password, and the
//! cluster and tenant are checked against the topology only after the password was proved, so
//! that nobody learns which tenants exist, or fills the tenant cache with made-up names, without
//! an account. **[GW]**

use std::net::SocketAddr;

use super::{parse, resolve, Defaults, LoginConfig, LoginError, LoginName, Resolved};
use crate::config::{Config, UserConfig};
use crate::planner::Planner;

/// Parses `name` and picks the account it names: [`parse`], except that a name in the
/// separator form that is itself a configured account (`my-app-01`) is that account, whole.
/// **[GW]** ODP, which has no list of accounts, would read `my-app-01` as user `01` of tenant
/// `app` in cluster `my`; the gateway knows its accounts and keeps such names working.
pub fn parse_for(name: &str, config: &Config) -> Result<LoginName, LoginError> {
    let standard = name.contains('@') || name.contains('#');
    if !standard && config.user(name).is_some() {
        return Ok(LoginName {
            user: name.to_string(),
            tenant: None,
            cluster: None,
            cluster_id: None,
            separator: None,
        });
    }
    parse(name, &config.login.separators())
}

/// Resolves tenant and cluster. Precedence (docs/routing.md §14), each filling only what the name
/// leaves out: the account's own `tenant` (which then also wins over `[login]`); `[login]
/// tenant` and `cluster` together (only for names giving neither); the `[[listen.dialled]]`
/// entry of the address the client dialled (`dialled`: the listener itself or the steered
/// server / VIP address); then `[routing] default_tenant` and `default_cluster` (the static
/// topology's cluster, else the first `[[clusters]]` entry). Without `[routing]` there is no
/// default tenant or cluster.
pub fn resolve_for(
    parsed: &LoginName,
    account: Option<&UserConfig>,
    config: &Config,
    default_cluster: Option<String>,
    dialled: Option<SocketAddr>,
) -> Result<Resolved, LoginError> {
    let defaults = defaults_for(account, config, default_cluster, dialled);
    if account.is_some_and(|a| a.tenant.is_some()) {
        let login = LoginConfig { tenant: None, cluster: None, ..config.login.clone() };
        return resolve(parsed, &defaults, &login);
    }
    resolve(parsed, &defaults, &config.login)
}

/// The defaults a login through `dialled` gets (see [`resolve_for`] for the order).
pub fn defaults_for(
    account: Option<&UserConfig>,
    config: &Config,
    default_cluster: Option<String>,
    dialled: Option<SocketAddr>,
) -> Defaults {
    let routing = config.routing.as_ref();
    let mapped = dialled.and_then(|a| config.listen.dialled.iter().find(|d| d.address == a));
    let tenant = account
        .and_then(|u| u.tenant.clone())
        .or_else(|| mapped.and_then(|m| m.tenant.clone()))
        .or_else(|| routing.map(|r| r.default_tenant.clone()));
    let cluster = mapped.and_then(|m| m.cluster.clone()).or(default_cluster).filter(|c| !c.is_empty());
    Defaults { tenant, cluster: routing.and(cluster) }
}

/// Whether the account may log in to the resolved tenant: an account with a `tenant` only to
/// that one (OceanBase users belong to one tenant: the same name elsewhere is another user).
pub fn tenant_allowed(account: &UserConfig, resolved: &Resolved) -> bool {
    match (&account.tenant, &resolved.tenant) {
        (Some(own), Some(asked)) => own.eq_ignore_ascii_case(asked),
        _ => true,
    }
}

/// Checks the resolved cluster and tenant against the topology: the cluster must be the
/// topology's (ERROR 4669 otherwise), the tenant one of its tenants (ERROR 5157). `sys` always
/// exists; a tenant missing from the cluster model (the model leaves out tenants in a locality
/// change) is looked up in the tenant location cache before it is called unknown. A model not
/// loaded yet (no cluster name) checks nothing.
pub async fn check_topology(resolved: &Resolved, planner: &Planner) -> Result<(), LoginError> {
    let cluster = planner.locator().cluster();
    if cluster.name.is_empty() {
        return Ok(());
    }
    if let Some(asked) = &resolved.cluster {
        if *asked != cluster.name {
            return Err(LoginError::UnknownCluster { cluster: asked.clone() });
        }
    }
    let Some(tenant) = &resolved.tenant else { return Ok(()) };
    if tenant.eq_ignore_ascii_case("sys") || cluster.tenant(tenant).is_some() {
        return Ok(());
    }
    if planner.locator().tenant_servers(tenant).await.value().is_some() {
        return Ok(());
    }
    Err(LoginError::UnknownTenant { tenant: tenant.clone() })
}
