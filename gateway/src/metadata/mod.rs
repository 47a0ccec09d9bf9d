//! Metadata sources: where topology and partitioning come from (docs/routing.md §12).
//!
//! A [`MetadataSource`] answers the four questions ODP asks the sys tenant (docs/routing.md §12):
//! servers, zones and tenants (docs/routing.md §12–docs/routing.md §12); the servers of a tenant (`__all_dummy`, docs/routing.md §12); a table
//! entry with its partitioning and tablet ids (docs/routing.md §12, docs/routing.md §12–docs/routing.md §12); tablet locations (docs/routing.md §12).
//! Sources: [`static_file`] (a TOML topology, the embedded default) and [`information_schema`]
//! (portable partition definitions). The OceanBase sys-view source implements the same trait.
//! [`discovery`] combines the static topology with `information_schema` for unlisted tables.
//! The location cache ([`crate::topology`]) does not know which source filled it.

pub(crate) mod discovery;
pub mod information_schema;
pub mod static_file;
pub mod sysview;

use std::future::Future;
use std::pin::Pin;

use crate::partition::PartitionError;
use crate::topology::{Cluster, TableKey, TableMeta, TabletLocation, TenantServers, TopologyError};

pub use discovery::{DiscoveringSource, TableDiscoveryConfig};
pub use information_schema::InformationSchemaSource;
pub use static_file::StaticSource;

/// Errors of metadata sources.
#[derive(Debug, Clone, thiserror::Error)]
pub enum MetadataError {
    /// The table, tenant or other object does not exist in the source.
    #[error("not found: {0}")]
    NotFound(String),
    /// The source cannot provide this kind of metadata (e.g. servers from `information_schema`).
    #[error("{source_name} source cannot provide {what}")]
    Unsupported {
        /// The source's name.
        source_name: &'static str,
        /// What was asked.
        what: &'static str,
    },
    /// Connecting to the metadata server failed.
    #[error("cannot connect to metadata server: {0}")]
    Connect(String),
    /// A metadata query failed.
    #[error("metadata query failed: {message} (SQL: {sql})")]
    Query {
        /// The statement.
        sql: String,
        /// Server or client error.
        message: String,
    },
    /// Metadata that cannot be used: a malformed row, a bad topology file.
    #[error("invalid metadata: {0}")]
    Invalid(String),
    /// A partition definition that does not parse.
    #[error("partition definition: {0}")]
    Partition(#[from] PartitionError),
    /// A topology that does not hold together.
    #[error(transparent)]
    Topology(#[from] TopologyError),
}

/// The boxed future every source method returns (object-safe async).
pub type MetaFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, MetadataError>> + Send + 'a>>;

/// A provider of cluster topology and table metadata.
///
/// Methods a source cannot answer return [`MetadataError::Unsupported`]. Every method is called
/// from a background fetch task of the location cache, bounded by its fetch timeout.
pub trait MetadataSource: Send + Sync + 'static {
    /// Short name for logs (`static`, `information_schema`, `sysview`).
    fn name(&self) -> &'static str;

    /// Servers, zones and tenants (with primary zones and single-leader servers), docs/routing.md §12
    /// docs/routing.md §12–docs/routing.md §12. Refreshed periodically.
    fn fetch_cluster(&self) -> MetaFuture<'_, Cluster>;

    /// Servers hosting `tenant` (the `__all_dummy` entry, docs/routing.md §12).
    fn fetch_tenant_servers<'a>(&'a self, tenant: &'a str) -> MetaFuture<'a, TenantServers>;

    /// A table entry: id, type, partition count, partitioning with tablet ids, the replicas of a
    /// non-partitioned table (docs/routing.md §12, docs/routing.md §12–docs/routing.md §12), plus any tablet locations the source has at hand
    /// (a source may return none and answer [`MetadataSource::fetch_tablets`] on demand).
    /// A table that does not exist is [`MetadataError::NotFound`].
    fn fetch_table<'a>(&'a self, key: &'a TableKey) -> MetaFuture<'a, TableMeta>;

    /// Locations of some tablets of a table (docs/routing.md §12, batch form). Ids the source has no location for
    /// are left out of the answer.
    fn fetch_tablets<'a>(&'a self, key: &'a TableKey, tablet_ids: &'a [u64]) -> MetaFuture<'a, Vec<TabletLocation>>;
}
