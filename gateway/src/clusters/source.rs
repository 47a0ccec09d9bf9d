//! The metadata source of a sys-tenant cluster: the sys views, plus teaching the sys-tenant client every server the cluster model lists.

use crate::metadata::sysview::SysViewSource;
use crate::metadata::{MetaFuture, MetadataSource};
use crate::topology::{Cluster, TableKey, TableMeta, TabletLocation, TenantServers};

use super::sys_client::SysClient;

/// [`SysViewSource`] over a [`SysClient`]; each cluster model read hands its servers to the
/// client, so that metadata queries keep working when the rslist servers are gone.
#[derive(Debug)]
pub struct ClusterSource {
    views: SysViewSource<SysClient>,
}

impl ClusterSource {
    /// The source of cluster `name` over `client`.
    pub fn new(client: SysClient, name: &str) -> ClusterSource {
        ClusterSource { views: SysViewSource::new(client, name) }
    }

    async fn cluster(&self) -> Result<Cluster, crate::metadata::MetadataError> {
        let model = self.views.cluster().await?;
        let servers = model.servers().iter().filter(|s| s.in_service && !s.stopping).map(|s| s.addr).collect();
        self.views.client().learn_servers(servers);
        Ok(model)
    }
}

impl MetadataSource for ClusterSource {
    fn name(&self) -> &'static str {
        "sysview"
    }

    fn fetch_cluster(&self) -> MetaFuture<'_, Cluster> {
        Box::pin(self.cluster())
    }

    fn fetch_tenant_servers<'a>(&'a self, tenant: &'a str) -> MetaFuture<'a, TenantServers> {
        Box::pin(self.views.tenant_servers(tenant))
    }

    fn fetch_table<'a>(&'a self, key: &'a TableKey) -> MetaFuture<'a, TableMeta> {
        Box::pin(self.views.table(key))
    }

    fn fetch_tablets<'a>(&'a self, key: &'a TableKey, tablet_ids: &'a [u64]) -> MetaFuture<'a, Vec<TabletLocation>> {
        Box::pin(self.views.tablets(key, tablet_ids))
    }
}
