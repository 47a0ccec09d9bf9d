//! Location-cache settings (`[location_cache]` in the configuration; ODP defaults, docs/routing.md §12).

use std::time::Duration;

use serde::Deserialize;

use super::entry::EntryPolicy;

/// Timing of the location cache and the metadata refresh. Durations are in milliseconds.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CacheConfig {
    /// Minimum time between an entry's last update and a refetch of it once dirty
    /// (ODP `delay_update_entry_interval`). Default 5000.
    pub min_refetch_ms: u64,
    /// How long a lookup that finds no usable entry waits for the fetch it started (or joined)
    /// before answering "not available" so that the caller falls back. Default 500.
    pub wait_missing_ms: u64,
    /// How long a lookup that finds a stale (dirty or expired) entry waits for its refetch before
    /// using the stale value. Default 0: use it at once and refresh in the background (ODP
    /// `enable_async_pull_location_cache`).
    pub wait_stale_ms: u64,
    /// Upper bound of one metadata fetch; a slower fetch counts as failed. Default 5000.
    pub fetch_timeout_ms: u64,
    /// Table and tablet entries older than this are refetched; 0 = never (ODP
    /// `location_expire_period_time`). Default 0.
    pub location_expiry_ms: u64,
    /// Validity of a tenant's server list (ODP `tenant_location_valid_time`). Default one day.
    pub tenant_servers_valid_ms: u64,
    /// Period of the servers/zones/tenants refresh (ODP `server_state_refresh_interval`; the
    /// 15 s of its documentation, docs/routing.md §12, where ODP 4.3.1 ships 20 s). Default 15000.
    pub cluster_refresh_ms: u64,
}

impl Default for CacheConfig {
    fn default() -> Self {
        CacheConfig {
            min_refetch_ms: 5_000,
            wait_missing_ms: 500,
            wait_stale_ms: 0,
            fetch_timeout_ms: 5_000,
            location_expiry_ms: 0,
            tenant_servers_valid_ms: 86_400_000,
            cluster_refresh_ms: 15_000,
        }
    }
}

impl CacheConfig {
    /// Policy of table and tablet entries.
    pub fn location_policy(&self) -> EntryPolicy {
        EntryPolicy {
            min_refetch: Duration::from_millis(self.min_refetch_ms),
            fetch_timeout: self.fetch_timeout(),
            expiry: (self.location_expiry_ms > 0).then(|| Duration::from_millis(self.location_expiry_ms)),
        }
    }

    /// Policy of tenant server lists.
    pub fn tenant_policy(&self) -> EntryPolicy {
        EntryPolicy {
            min_refetch: Duration::from_millis(self.min_refetch_ms),
            fetch_timeout: self.fetch_timeout(),
            expiry: (self.tenant_servers_valid_ms > 0).then(|| Duration::from_millis(self.tenant_servers_valid_ms)),
        }
    }

    /// Bound of one fetch.
    pub fn fetch_timeout(&self) -> Duration {
        Duration::from_millis(self.fetch_timeout_ms)
    }

    /// Wait bound of a lookup: `stale` when a (stale) value exists.
    pub fn wait(&self, stale: bool) -> Duration {
        Duration::from_millis(if stale { self.wait_stale_ms } else { self.wait_missing_ms })
    }

    /// Period of the cluster refresh.
    pub fn cluster_refresh(&self) -> Duration {
        Duration::from_millis(self.cluster_refresh_ms)
    }
}
