//! Filling a login name's missing tenant and cluster (ODP `do_parse_full_user_name`, `need_reject_user_login`).

use super::parse::LoginName;
use super::{LoginConfig, LoginError, MAX_FULL_NAME_LEN};

/// Defaults of the listener the client dialled: the tenant and cluster its address maps to, or,
/// without a mapping, `routing.default_tenant` and the first configured cluster (ODP: `sys` and
/// its first cluster). `None` where the deployment has no such notion (a MariaDB backend has no
/// cluster).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Defaults {
    /// Tenant for names without one.
    pub tenant: Option<String>,
    /// Cluster for names without one.
    pub cluster: Option<String>,
}

/// Where a resolved tenant or cluster came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The login name.
    Name,
    /// `[login] tenant` and `cluster` (the name gave neither).
    Config,
    /// The listener's [`Defaults`].
    Listener,
    /// Nowhere: the name gave none and there is no default.
    Unset,
}

/// The kind of server a session logs in to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerKind {
    /// OceanBase: understands `user@tenant`, rejects `#cluster`.
    OceanBase,
    /// MySQL or MariaDB: knows neither tenants nor clusters.
    Mysql,
}

impl ServerKind {
    /// The kind of a server by the version string of its greeting (OceanBase's contains
    /// `OceanBase`, e.g. `5.7.25-OceanBase_CE-v4.2.1.0`).
    pub fn of_version(server_version: &str) -> ServerKind {
        if server_version.contains("OceanBase") {
            ServerKind::OceanBase
        } else {
            ServerKind::Mysql
        }
    }
}

/// The user name to log in to a server of `kind` with: `user@tenant` for OceanBase (ODP
/// rewrites the login the same way), the bare user for MySQL/MariaDB. Never `#cluster`.
pub fn server_user(user: &str, tenant: Option<&str>, kind: ServerKind) -> String {
    match (kind, tenant) {
        (ServerKind::OceanBase, Some(t)) => format!("{user}@{t}"),
        _ => user.to_string(),
    }
}

/// A login name with its tenant and cluster decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The database user.
    pub user: String,
    /// The tenant the session belongs to.
    pub tenant: Option<String>,
    /// The cluster the session belongs to.
    pub cluster: Option<String>,
    /// The cluster id the name gave.
    pub cluster_id: Option<i64>,
    /// Where `tenant` came from.
    pub tenant_from: Origin,
    /// Where `cluster` came from.
    pub cluster_from: Origin,
}

impl Resolved {
    /// The user name to log in to a server with: `user@tenant` for OceanBase (ODP rewrites the
    /// login the same way), the bare user for MySQL/MariaDB. Never `#cluster` or the cluster id.
    pub fn server_user(&self, kind: ServerKind) -> String {
        server_user(&self.user, self.tenant.as_deref(), kind)
    }

    /// `user@tenant#cluster[:id]`, leaving out absent parts (logs, SHOW PROXYSESSION).
    pub fn full_name(&self) -> String {
        let mut s = self.user.clone();
        if let Some(t) = &self.tenant {
            s = format!("{s}@{t}");
        }
        if let Some(c) = &self.cluster {
            s = format!("{s}#{c}");
        }
        if let Some(id) = self.cluster_id {
            s = format!("{s}:{id}");
        }
        s
    }

    /// The name ODP shows in access-denied messages: the full name when the cluster was chosen
    /// (by the name or `[login]`), else `user@tenant`.
    pub fn shown_name(&self) -> String {
        match self.cluster_from {
            Origin::Name | Origin::Config => self.full_name(),
            Origin::Listener | Origin::Unset => self.server_user(ServerKind::OceanBase),
        }
    }
}

/// Decides tenant and cluster: the name's own parts first; if it gives neither and `[login]`
/// sets both `tenant` and `cluster`, those; otherwise the listener's defaults part by part.
/// With `enable_full_username`, a name lacking tenant or cluster is refused (ODP exempts the
/// proxy's own `proxysys` tenant).
pub fn resolve(parsed: &LoginName, listener: &Defaults, config: &LoginConfig) -> Result<Resolved, LoginError> {
    let (tenant, cluster) = match (&parsed.tenant, &parsed.cluster, &config.tenant, &config.cluster) {
        (None, None, Some(t), Some(c)) => ((Some(t.clone()), Origin::Config), (Some(c.clone()), Origin::Config)),
        _ => (pick(&parsed.tenant, &listener.tenant), pick(&parsed.cluster, &listener.cluster)),
    };
    let resolved = Resolved {
        user: parsed.user.clone(),
        tenant: tenant.0,
        cluster: cluster.0,
        cluster_id: parsed.cluster_id,
        tenant_from: tenant.1,
        cluster_from: cluster.1,
    };
    let full = resolved.full_name();
    if full.len() >= MAX_FULL_NAME_LEN {
        return Err(LoginError::TooLong { name: full, part: "full name", limit: MAX_FULL_NAME_LEN - 1 });
    }
    let proxysys = parsed.tenant.as_deref().is_some_and(|t| t.eq_ignore_ascii_case("proxysys"));
    if config.enable_full_username && !proxysys && (parsed.tenant.is_none() || parsed.cluster.is_none()) {
        return Err(LoginError::FullNameRequired { name: resolved.shown_name() });
    }
    Ok(resolved)
}

fn pick(own: &Option<String>, default: &Option<String>) -> (Option<String>, Origin) {
    match (own, default) {
        (Some(v), _) => (Some(v.clone()), Origin::Name),
        (None, Some(d)) => (Some(d.clone()), Origin::Listener),
        (None, None) => (None, Origin::Unset),
    }
}
