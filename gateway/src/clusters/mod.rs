//! Clusters: each cluster name a login can name → the planner that routes its sessions (docs/routing.md §14).
//!
//! The static topology (`[routing] topology`), when configured, is one cluster, set up at start.
//! `[[clusters]]` entries and the clusters of `[routing] config_server_url`'s list are set up
//! at the first login that names them ([`setup`]): rslist, sys-tenant client ([`sys_client`]),
//! the cluster model from `DBA_OB_*`, then kept for the life of the process and refreshed in
//! the background. Concurrent first logins to one cluster wait for one set-up; a failed set-up
//! is retried by the next login.

pub(crate) mod config;
pub(crate) mod config_server;
pub(crate) mod setup;
pub(crate) mod source;
pub(crate) mod sys_client;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::OnceCell;
use tokio::time::Instant;

use crate::config::{Config, RoutingConfig};
use crate::metadata::MetadataError;
use crate::planner::Planner;

pub use config::{check_url, ClusterConfig, DialledDefault};

/// How long the config server's cluster list is reused before a login asks for it again.
const LIST_TTL: Duration = Duration::from_secs(60);
/// How long a failed fetch of the list is the answer before the config server is asked again
/// (logins before authentication may need the list: they must not hammer a failing server).
const LIST_RETRY: Duration = Duration::from_secs(5);

/// The config server's cluster list as last fetched, and the last failure when there is none.
#[derive(Default)]
struct ListState {
    ok: Option<(Instant, ClusterList)>,
    failed: Option<(Instant, ClusterError)>,
}

/// `(ObRegion, ObRootServiceInfoUrl)` pairs of the config server's cluster list.
type ClusterList = Vec<(String, String)>;

/// Why a cluster cannot serve a login.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ClusterError {
    /// Neither configured nor listed by the config server (ODP `OB_CLUSTER_NOT_EXIST`).
    #[error("cluster {cluster:?} does not exist")]
    Unknown {
        /// The name asked for.
        cluster: String,
    },
    /// The config server failed or answered something unusable.
    #[error("config server {url}: {reason}")]
    ConfigServer {
        /// The URL asked.
        url: String,
        /// What went wrong.
        reason: String,
    },
    /// The cluster's sys tenant did not give its model.
    #[error("cluster {cluster:?}: {source}")]
    Metadata {
        /// The cluster.
        cluster: String,
        /// The metadata error.
        source: MetadataError,
    },
}

/// The clusters of this gateway.
pub struct Clusters {
    routing: Option<Arc<RoutingConfig>>,
    /// The static topology's planner: the default cluster when configured.
    fixed: Option<Planner>,
    configured: Vec<ClusterConfig>,
    /// `[backend] tls` at start: the sys-tenant TLS of clusters without their own `tls`.
    default_tls: crate::tls::BackendTls,
    slots: Mutex<HashMap<String, Arc<OnceCell<Planner>>>>,
    /// The config server's cluster list and when it was fetched.
    list: tokio::sync::Mutex<ListState>,
}

impl std::fmt::Debug for Clusters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Clusters")
            .field("fixed", &self.fixed.is_some())
            .field("configured", &self.configured.len())
            .finish()
    }
}

impl Clusters {
    /// The clusters of `config`, with the static topology's planner if there is one.
    pub fn new(config: &Config, fixed: Option<Planner>) -> Clusters {
        Clusters {
            routing: config.routing.clone().map(Arc::new),
            fixed,
            configured: config.clusters.clone(),
            default_tls: config.backend.tls.clone(),
            slots: Mutex::new(HashMap::new()),
            list: tokio::sync::Mutex::new(ListState::default()),
        }
    }

    /// Whether sessions are routed (a `[routing]` section): every login then needs a cluster.
    pub fn routed(&self) -> bool {
        self.routing.is_some()
    }

    /// The static topology's planner.
    pub fn fixed(&self) -> Option<&Planner> {
        self.fixed.as_ref()
    }

    /// The cluster of logins that name none and dial no mapped address: the static topology's,
    /// else the first `[[clusters]]` entry, else the first of the config server's list.
    pub async fn default_cluster(&self) -> Option<String> {
        if let Some(name) = self.fixed_name() {
            return Some(name);
        }
        if let Some(first) = self.configured.first() {
            return Some(first.name.clone());
        }
        self.listed().await.ok()?.first().map(|(name, _)| name.clone())
    }

    fn fixed_name(&self) -> Option<String> {
        self.fixed.as_ref().map(|p| p.locator().cluster().name.clone()).filter(|n| !n.is_empty())
    }

    /// The planner of cluster `name`, set up now if this is its first login.
    pub async fn planner(&self, name: &str) -> Result<Planner, ClusterError> {
        if let (Some(p), Some(fixed)) = (&self.fixed, self.fixed_name()) {
            if fixed == name {
                return Ok(p.clone());
            }
        }
        let Some(routing) = self.routing.clone() else {
            return Err(ClusterError::Unknown { cluster: name.to_string() });
        };
        if let Some(p) = self.built(name) {
            return Ok(p);
        }
        // Resolved before a slot exists: made-up names must not accumulate slots.
        let spec = self.spec(name, &routing).await?;
        let slot = self.slot(name);
        let tls = spec.tls.as_ref().unwrap_or(&self.default_tls);
        let planner = slot.get_or_try_init(|| setup::build(&spec, &routing, tls)).await?;
        Ok(planner.clone())
    }

    /// Every cluster set up so far with its name, the static one first.
    pub fn planners(&self) -> Vec<(String, Planner)> {
        let mut out: Vec<(String, Planner)> =
            self.fixed.iter().map(|p| (p.locator().cluster().name.clone(), p.clone())).collect();
        let slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        let mut built: Vec<(String, Planner)> =
            slots.iter().filter_map(|(n, s)| s.get().map(|p| (n.clone(), p.clone()))).collect();
        built.sort_by(|a, b| a.0.cmp(&b.0));
        out.extend(built);
        out
    }

    /// The servers of every cluster set up so far (the metrics' `server` label set, SHOW
    /// PROXYCONGESTION), in address order.
    pub fn servers(&self) -> std::collections::BTreeSet<std::net::SocketAddr> {
        let planners = self.planners();
        planners
            .iter()
            .flat_map(|(_, p)| p.locator().cluster().servers().iter().map(|s| s.addr).collect::<Vec<_>>())
            .collect()
    }

    /// The planner of `name` if its set-up finished.
    fn built(&self, name: &str) -> Option<Planner> {
        let slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        slots.get(name).and_then(|s| s.get().cloned())
    }

    fn slot(&self, name: &str) -> Arc<OnceCell<Planner>> {
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        Arc::clone(slots.entry(name.to_string()).or_default())
    }

    /// How to set up cluster `name`: its `[[clusters]]` entry, else its entry in the config
    /// server's list.
    async fn spec(&self, name: &str, routing: &RoutingConfig) -> Result<ClusterConfig, ClusterError> {
        if let Some(c) = self.configured.iter().find(|c| c.name == name) {
            return Ok(c.clone());
        }
        if routing.config_server_url.is_none() {
            return Err(ClusterError::Unknown { cluster: name.to_string() });
        }
        let listed = self.listed().await?;
        let Some((_, url)) = listed.iter().find(|(n, _)| n == name) else {
            return Err(ClusterError::Unknown { cluster: name.to_string() });
        };
        Ok(ClusterConfig {
            name: name.to_string(),
            rslist: Vec::new(),
            config_server_url: Some(url.clone()),
            sys_user: routing.cluster_sys_user.clone(),
            sys_password: routing.cluster_sys_password.clone(),
            refresh_ms: routing.cache.cluster_refresh_ms,
            tls: None,
        })
    }

    /// The config server's cluster list, fetched at most once per [`LIST_TTL`]; a failed
    /// refetch keeps the previous list (docs/routing.md §14).
    async fn listed(&self) -> Result<ClusterList, ClusterError> {
        let Some(url) = self.routing.as_ref().and_then(|r| r.config_server_url.clone()) else {
            return Ok(Vec::new());
        };
        let mut state = self.list.lock().await;
        if let Some((at, list)) = &state.ok {
            if at.elapsed() < LIST_TTL {
                return Ok(list.clone());
            }
        }
        if let (None, Some((at, e))) = (&state.ok, &state.failed) {
            if at.elapsed() < LIST_RETRY {
                return Err(e.clone());
            }
        }
        match config_server::fetch_list(&url).await {
            Ok(list) => {
                *state = ListState { ok: Some((Instant::now(), list.clone())), failed: None };
                Ok(list)
            }
            Err(e) => match state.ok.take() {
                Some((_, old)) => {
                    tracing::warn!(error = %e, "config server cluster list refetch failed; keeping the previous list");
                    state.ok = Some((Instant::now(), old.clone()));
                    Ok(old)
                }
                None => {
                    state.failed = Some((Instant::now(), e.clone()));
                    Err(e)
                }
            },
        }
    }
}
