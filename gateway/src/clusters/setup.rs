//! Setting up one sys-tenant cluster at its first login: rslist (configured or from the config server), sys-tenant client, first cluster read, refresh tasks.

use std::sync::Arc;
use std::time::Duration;

use crate::config::RoutingConfig;
use crate::planner::Planner;
use crate::topology::Locator;

use super::config::ClusterConfig;
use super::source::ClusterSource;
use super::sys_client::{self, Login, SysClient};
use super::{config_server, ClusterError};
use crate::tls::BackendTls;

/// How often a cluster's config-server entry is fetched again (ODP
/// `config_server_refresh_interval`).
pub const RSLIST_REFRESH: Duration = Duration::from_secs(60);

/// Builds the planner of `spec`: fails when the rslist cannot be had (config server down or
/// answering nonsense) or no sys-tenant server gives the cluster model. On success the cluster
/// model is refreshed every `refresh_ms` and a config-server rslist every [`RSLIST_REFRESH`],
/// for as long as the process runs (clusters are never forgotten).
/// Sys-tenant connections use `tls` (the cluster's own `tls`, else `[backend] tls`).
pub async fn build(spec: &ClusterConfig, routing: &RoutingConfig, tls: &BackendTls) -> Result<Planner, ClusterError> {
    let rslist = match &spec.config_server_url {
        Some(url) => {
            let entry = config_server::fetch_cluster(url).await?;
            if entry.region.as_deref().is_some_and(|r| r != spec.name) {
                tracing::warn!(cluster = %spec.name, url, region = ?entry.region, "config server names the cluster differently");
            }
            entry.rslist
        }
        None => spec.rslist.clone(),
    };
    let mut cache = routing.cache.clone();
    cache.cluster_refresh_ms = spec.refresh_ms;
    let connect_timeout = (cache.fetch_timeout() / 3).max(Duration::from_millis(200));
    let login =
        Login { user: spec.sys_user.clone(), password: spec.sys_password.clone(), ssl: sys_client::ssl_opts(tls) };
    let client = SysClient::new(&spec.name, rslist.clone(), login, connect_timeout);
    let locator = Locator::new(Arc::new(ClusterSource::new(client.clone(), &spec.name)), cache);
    locator.refresh_cluster().await.map_err(|source| ClusterError::Metadata { cluster: spec.name.clone(), source })?;
    let model = locator.cluster();
    tracing::info!(cluster = %spec.name, rslist = ?rslist, servers = model.servers().len(), tenants = model.tenants().len(),
        "cluster set up from its sys tenant");
    drop(locator.spawn_cluster_refresh());
    if let Some(url) = &spec.config_server_url {
        spawn_rslist_refresh(client, spec.name.clone(), url.clone());
    }
    Ok(Planner::with_locator(locator, routing))
}

/// Fetches the cluster's config-server entry every [`RSLIST_REFRESH`]; a failure keeps the
/// previous rslist and logs a warning (docs/routing.md §14).
fn spawn_rslist_refresh(client: SysClient, cluster: String, url: String) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + RSLIST_REFRESH, RSLIST_REFRESH);
        loop {
            tick.tick().await;
            match config_server::fetch_cluster(&url).await {
                Ok(entry) => {
                    if entry.rslist != client.rslist() {
                        tracing::info!(%cluster, rslist = ?entry.rslist, "config server: new rslist");
                        client.set_rslist(entry.rslist);
                    }
                }
                Err(e) => {
                    tracing::warn!(%cluster, error = %e, "config server refetch failed; keeping the previous rslist")
                }
            }
        }
    });
}
