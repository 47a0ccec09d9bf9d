//! The `[routing]` table: topology source, route-policy inputs and retry bounds.

use std::net::SocketAddr;

use serde::Deserialize;

/// Routing settings: the topology source and the route-policy inputs of docs/routing.md §5.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoutingConfig {
    /// Static topology file (docs/routing.md §14): zones, servers, tenants, tables with partitioning and
    /// replica placement. `"demo"` selects the embedded demo topology. Its cluster is the default
    /// cluster. Optional when `[[clusters]]` or `config_server_url` name clusters instead.
    #[serde(default)]
    pub topology: Option<String>,
    /// Config-server URL of ODP's cluster list (`Data.ObRootServiceInfoUrlList[]` of
    /// `{ObRegion, ObRootServiceInfoUrl}`), `http://` only: a login may name any cluster listed
    /// there besides the `[[clusters]]` ones (which win on a name clash); the cluster's entry is
    /// then read from its `ObRootServiceInfoUrl` like a `[[clusters]] config_server_url`, with
    /// the sys user and password of `cluster_sys_user` / `cluster_sys_password`. Unset: none.
    #[serde(default)]
    pub config_server_url: Option<String>,
    /// Sys-tenant user for clusters found through `config_server_url`. Default `proxyro@sys`.
    #[serde(default = "default_sys_user")]
    pub cluster_sys_user: String,
    /// Password of `cluster_sys_user`. Default empty.
    #[serde(default)]
    pub cluster_sys_password: String,
    /// Discover the partitioning of tables the topology does not list (`[routing.table_discovery]`
    /// with `user`, `password`, `source = "information_schema"`): on first use of a table, from
    /// `information_schema` on a server of its tenant; refreshed like other location-cache entries
    /// and after errors that say the schema changed (no such table, table definition changed,
    /// unknown partition). Partition `i` of a discovered table is placed on the tenant's server
    /// `i mod n` (leader) with the other servers as followers (`metadata::discovery`). Unset: only
    /// the topology's tables are routed by partition.
    #[serde(default)]
    pub table_discovery: Option<crate::metadata::TableDiscoveryConfig>,
    /// Replace server addresses of the topology by server name, e.g. `{ s1 = "127.0.0.1:3307" }`.
    #[serde(default)]
    pub server_addresses: std::collections::HashMap<String, SocketAddr>,
    /// Tenant of logins that name none (`user` rather than `user@tenant`). Default `sys`.
    #[serde(default = "default_tenant")]
    pub default_tenant: String,
    /// The IDC this gateway runs in (`proxy_idc_name`); empty disables LDC ordering.
    #[serde(default)]
    pub idc: Option<String>,
    /// Config `proxy_route_policy` (e.g. `FOLLOWER_FIRST`): weak reads of a tenant without
    /// read-only zones follow it when the session has no valid `@proxy_route_policy`
    /// (docs/routing.md §5). Unknown names are ignored, as ODP does. Unset: none.
    #[serde(default)]
    pub proxy_route_policy: Option<String>,
    /// Config `proxy_primary_zone_name` (`"zone1;zone2"`): in a tenant without read-only zones,
    /// every request goes only to servers of these zones, in list order (policy
    /// PROXY_PRIMARY_ZONE_NAME_ONLY, docs/routing.md §5); a weak read with a follower policy
    /// follows that policy instead. Unset or empty: off.
    #[serde(default)]
    pub proxy_primary_zone_name: Option<String>,
    /// Config `enable_primary_zone`: strong requests that name no located partition go to the
    /// tenant's primary zone first (PRIMARY_ZONE_FIRST, docs/routing.md §5). Default true.
    #[serde(default = "default_true")]
    pub enable_primary_zone: bool,
    /// Config `target_db_server` (`"10.0.0.7:2881,10.0.0.8:2881"`): every request goes to the
    /// first of these servers that can take it (policy TARGET_DB_SERVER_ONLY), unless its
    /// statement names its own with a `/* target_db_server=… */` hint. Each must be a server of
    /// the session's tenant; a request of a tenant without one is refused with error 4179.
    /// Unset: off.
    #[serde(default)]
    pub target_db_server: Option<String>,
    /// Fixed RNG seed for tie-breaking among equal candidates (tests, reproducible traces).
    /// Unset: a fresh seed per statement.
    #[serde(default)]
    pub seed: Option<u64>,
    /// Location cache timing.
    #[serde(default)]
    pub cache: crate::topology::CacheConfig,
    /// Route log: a JSON-lines file that gets one line per routed request (gateway connection
    /// id, per-connection request number, command, the first 200 bytes of the SQL, consistency,
    /// the server actually used, its role, the partition, why the session was sticky, the number
    /// of attempts). Written by a background thread; lines are dropped (and counted in the log)
    /// rather than slowing sessions down when the disk cannot keep up. Unset: no route log.
    #[serde(default)]
    pub route_log: Option<std::path::PathBuf>,
    /// Connection attempts per request when servers fail (`connect_observer_max_retries`,
    /// docs/routing.md §7; 2–5). The bound is the largest of this and 2 × candidates + 1, and each
    /// candidate is tried at most once per request. Default 3.
    #[serde(default = "default_connect_retries")]
    pub connect_observer_max_retries: usize,
}

impl RoutingConfig {
    /// The embedded demo topology (`metadata/demo_topology.toml`) from a client in idc1, tenant
    /// `sys`, tie-breaks seeded by `seed` (random when `None`): what planner tests and benches
    /// route against.
    pub fn demo(seed: Option<u64>) -> RoutingConfig {
        RoutingConfig {
            topology: Some("demo".into()),
            server_addresses: Default::default(),
            default_tenant: "sys".into(),
            idc: Some("idc1".into()),
            proxy_route_policy: None,
            proxy_primary_zone_name: None,
            enable_primary_zone: true,
            target_db_server: None,
            seed,
            cache: Default::default(),
            route_log: None,
            connect_observer_max_retries: 3,
            config_server_url: None,
            cluster_sys_user: "proxyro@sys".into(),
            cluster_sys_password: String::new(),
            table_discovery: None,
        }
    }
}

fn default_sys_user() -> String {
    "proxyro@sys".into()
}

fn default_true() -> bool {
    true
}

fn default_connect_retries() -> usize {
    3
}

fn default_tenant() -> String {
    "sys".into()
}
