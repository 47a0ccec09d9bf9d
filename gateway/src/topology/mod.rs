//! The cluster model and the location cache: which servers hold which tablet, in which zone.
//!
//! * [`cluster`] — zones (region, IDC, type, status), servers, tenants and primary zones.
//! * [`table`], [`replica`] — table entries (with the `partition::TableScheme`), tablet
//!   locations, replicas (role, type) and their placement.
//! * [`entry`], [`cache`] — ODP's entry states and the cache of table, tablet and tenant entries.
//! * [`feedback`] — response feedback: NOT_MASTER, TENANT_NOT_IN_SERVER, connect failures,
//!   partition miss/hit (docs/routing.md §12).
//! * [`locator`] — the request-path API: bounded-wait lookups that fetch from a
//!   [`crate::metadata::MetadataSource`].
//!
//! For a row of `tenant.db.table`: `Locator::table` gives the entry and its scheme,
//! `partition::locate(scheme, values)` the `Location`, `Locator::replicas(key, Some(&loc))` the
//! replicas with zone, region, IDC and zone type.

pub(crate) mod cache;
pub(crate) mod cluster;
pub(crate) mod config;
pub(crate) mod entry;
pub(crate) mod feedback;
pub mod locator;
pub(crate) mod replica;
pub(crate) mod table;

#[cfg(test)]
mod tests;

pub use cache::{EntryMap, LocationCache, TableMeta};
pub use cluster::{Cluster, PrimaryZone, Server, ServerStatus, Tenant, Zone, ZoneStatus, ZoneType};
pub use config::CacheConfig;
pub use entry::{Action, Entry, EntryPolicy, EntryState, Probe};
pub use feedback::{Feedback, FeedbackEffect, FeedbackScope};
pub use locator::{Locator, Lookup, PartitionReplicas};
pub use replica::{PlacedReplica, PlacedServer, Replica, ReplicaType, Role, TabletLocation, TenantServers};
pub use table::{TableEntry, TableKey, TableType, TabletKey};

/// Errors of the topology model and of location lookups.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TopologyError {
    /// A cluster description that does not hold together (unknown zone, duplicate server …).
    #[error("invalid topology: {0}")]
    Invalid(String),
    /// A location is not available within the lookup bound; the caller falls back.
    #[error("{what} not available: {reason}")]
    NotAvailable {
        /// What was looked up.
        what: String,
        /// Why it is not available (last fetch error, fetch still running, …).
        reason: String,
    },
}
