//! `[[clusters]]` and `[[listen.dialled]]`: the clusters the gateway routes to through their sys tenant, and the defaults of the addresses clients dial.

use std::net::SocketAddr;

use serde::Deserialize;

/// One OceanBase cluster routed through its sys tenant (docs/routing.md §14, §12).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterConfig {
    /// Cluster name, as logins name it (`user@tenant#name`).
    pub name: String,
    /// SQL addresses (`ip:port`) of some servers of the cluster, usually the RootService ones
    /// (ODP `rootservice_list`). The gateway logs in to the first that answers and learns every
    /// server from `DBA_OB_SERVERS`. Set this or `config_server_url`, not both.
    #[serde(default)]
    pub rslist: Vec<SocketAddr>,
    /// URL of the cluster's entry on a config server (ODP's JSON: `Data.RsList[].address` and
    /// `sql_port`, `Data.ObRegion`), `http://` only. Fetched at the first login to the cluster,
    /// then every 60 s in the background (the previous rslist is kept when that fails).
    #[serde(default)]
    pub config_server_url: Option<String>,
    /// User for the sys-tenant metadata queries, sent verbatim. Default `proxyro@sys`.
    #[serde(default = "default_sys_user")]
    pub sys_user: String,
    /// Password of `sys_user`. Default empty.
    #[serde(default)]
    pub sys_password: String,
    /// Period in milliseconds of the zones / servers / tenants refresh of this cluster
    /// (`DBA_OB_ZONES`, `DBA_OB_SERVERS`, `DBA_OB_TENANTS`). Default 15000.
    #[serde(default = "default_refresh_ms")]
    pub refresh_ms: u64,
    /// TLS to this cluster's servers for client sessions (pooled connections of routed
    /// sessions), as `[backend] tls`: `{ mode = "off" | "preferred" | "required" | "verify_ca" |
    /// "verify_identity", ca = "path", server_name = "name" }`. Unset: `[backend] tls`. The CA
    /// file is re-read on reload; new server connections use the new setting. The sys-tenant
    /// metadata connections use the setting the cluster was set up with (`preferred` keeps them
    /// plain: the metadata client cannot fall back).
    #[serde(default)]
    pub tls: Option<crate::tls::BackendTls>,
}

fn default_sys_user() -> String {
    "proxyro@sys".into()
}

fn default_refresh_ms() -> u64 {
    15_000
}

impl ClusterConfig {
    /// Checks one entry; the message names it.
    pub fn validate(&self) -> Result<(), String> {
        let who = format!("[[clusters]] {:?}", self.name);
        if self.name.is_empty() {
            return Err("a [[clusters]] entry has an empty name".into());
        }
        if self.name.len() > crate::login_name::MAX_CLUSTER_LEN {
            return Err(format!("{who}: name is longer than {} bytes", crate::login_name::MAX_CLUSTER_LEN));
        }
        match (self.rslist.is_empty(), &self.config_server_url) {
            (true, None) => return Err(format!("{who}: set rslist or config_server_url")),
            (false, Some(_)) => return Err(format!("{who}: set either rslist or config_server_url, not both")),
            (_, Some(url)) => check_url(url).map_err(|e| format!("{who}: config_server_url: {e}"))?,
            (false, None) => {}
        }
        if self.refresh_ms == 0 {
            return Err(format!("{who}: refresh_ms must be at least 1"));
        }
        Ok(())
    }
}

/// A config-server URL the gateway can fetch: `http://host[:port]/…`.
pub fn check_url(url: &str) -> Result<(), String> {
    let Some(rest) = url.strip_prefix("http://") else {
        return Err(format!("{url:?} is not an http:// URL (https is not supported)"));
    };
    if rest.is_empty() || rest.starts_with('/') {
        return Err(format!("{url:?} has no host"));
    }
    Ok(())
}

/// An address clients dial and the cluster and tenant of their logins that name none
/// (`[[listen.dialled]]`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DialledDefault {
    /// The address the application dialled: the gateway's own `[listen] address` for direct
    /// clients, or, for steered connections, the server or VIP address they were steered from.
    pub address: SocketAddr,
    /// Cluster of logins through this address that name no cluster. Unset: the default cluster.
    #[serde(default)]
    pub cluster: Option<String>,
    /// Tenant of logins through this address that name no tenant. Unset: `[routing] default_tenant`.
    #[serde(default)]
    pub tenant: Option<String>,
    /// Client-leg TLS of connections through this address: `"off"`, `"optional"` or
    /// `"required"`, as `[listen] tls` (whose value applies when unset). `"optional"` and
    /// `"required"` need `[tls]`. For new sessions.
    #[serde(default)]
    pub tls: Option<crate::tls::TlsMode>,
}
