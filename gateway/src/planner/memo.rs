//! Per-tenant facts derived from the topology for every statement (the tenant's placed servers,
//! their route candidates, the parsed primary zone), memoized by the identity of their sources:
//! reused while the location cache hands out the same server list and the cluster model is the
//! same one, rebuilt as soon as either is replaced. The lookups still run per statement (they
//! drive refreshes and expiry); only the derivation is skipped.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::time::Instant;

use super::candidates;
use crate::route::{Candidate, PrimaryZone};
use crate::topology::{Cluster, Locator, PlacedServer, TenantServers};

/// A lookup's freshness: `Some(until)` fresh until `until` (`None`: no expiry), `None` not fresh.
pub type Fresh = Option<Option<Instant>>;

/// Most tenants remembered; beyond that the memo starts over.
const MAX_TENANTS: usize = 256;

/// What the planner derives from a tenant's servers and the cluster model.
#[derive(Debug)]
pub struct TenantFacts {
    cluster: Arc<Cluster>,
    servers: Option<Arc<TenantServers>>,
    /// The tenant's servers with their placement (empty when the list is not available).
    pub placed: Vec<PlacedServer>,
    /// One tenant-server candidate per server (shared with the requests that use it).
    pub candidates: Arc<[Candidate]>,
    /// The tenant's primary zone, when the cluster knows the tenant.
    pub primary_zone: Option<PrimaryZone>,
}

impl TenantFacts {
    fn build(cluster: Arc<Cluster>, servers: Option<Arc<TenantServers>>, tenant: &str) -> TenantFacts {
        let placed: Vec<PlacedServer> = servers
            .as_ref()
            .map(|s| s.servers.iter().map(|&a| PlacedServer::place(a, &cluster)).collect())
            .unwrap_or_default();
        let candidates = candidates::tenant(&placed).into();
        let primary_zone = cluster.tenant(tenant).map(|t| candidates::primary_zone(&t.primary_zone));
        TenantFacts { cluster, servers, placed, candidates, primary_zone }
    }

    fn derived_from(&self, cluster: &Arc<Cluster>, servers: &Option<Arc<TenantServers>>) -> bool {
        let same_servers = match (&self.servers, servers) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        same_servers && Arc::ptr_eq(&self.cluster, cluster)
    }
}

/// The memo, shared by clones of a planner.
#[derive(Debug, Default)]
pub struct TenantMemo {
    tenants: Mutex<HashMap<String, Arc<TenantFacts>>>,
}

impl TenantMemo {
    /// The facts of `tenant` for the current server list (looked up as of `now`) and cluster
    /// model, with the server list's [`crate::topology::Lookup::fresh_until`].
    pub async fn facts(&self, locator: &Locator, tenant: &str, now: Instant) -> (Arc<TenantFacts>, Fresh) {
        let lookup = locator.tenant_servers_at(tenant, now).await;
        let fresh = lookup.fresh_until();
        let servers = lookup.value().cloned();
        let cluster = locator.cluster();
        let mut map = self.tenants.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(f) = map.get(tenant).filter(|f| f.derived_from(&cluster, &servers)) {
            return (Arc::clone(f), fresh);
        }
        let facts = Arc::new(TenantFacts::build(cluster, servers, tenant));
        if map.len() >= MAX_TENANTS {
            map.clear();
        }
        map.insert(tenant.to_string(), Arc::clone(&facts));
        (facts, fresh)
    }
}
