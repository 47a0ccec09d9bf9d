//! Feedback from responses into the location cache (docs/routing.md §12).

use tokio::time::Instant;

use super::cache::LocationCache;
use super::table::{TableKey, TabletKey};

/// `OB_NOT_MASTER`: the target is not the leader.
pub const ERR_NOT_MASTER: u16 = 4038;
/// `OB_CONNECT_ERROR`: the target could not be reached.
pub const ERR_CONNECT: u16 = 4124;
/// `OB_TENANT_NOT_IN_SERVER`: the tenant has no unit on the target.
pub const ERR_TENANT_NOT_IN_SERVER: u16 = 5150;

/// `ER_NO_SUCH_TABLE`: the table was dropped or renamed.
pub const ERR_NO_SUCH_TABLE: u16 = 1146;
/// `ER_TABLE_DEF_CHANGED`: the table definition has changed.
pub const ERR_TABLE_DEF_CHANGED: u16 = 1412;
/// `ER_UNKNOWN_PARTITION`: a partition name the server does not have (OceanBase and MySQL).
pub const ERR_UNKNOWN_PARTITION: u16 = 1735;

/// What a response (or its absence) said about the entries the route used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feedback {
    /// `OB_NOT_MASTER` (4038): "delay update" — dirty, refetched no earlier than `min_refetch`.
    NotMaster,
    /// `OB_TENANT_NOT_IN_SERVER` (5150) or a login to the wrong cluster: table, tablet and the
    /// tenant server list dirty.
    TenantNotInServer,
    /// Connecting to the target failed (`OB_CONNECT_ERROR` 4124, connect or login errors): the
    /// target entry (tablet, else table, else tenant server list) dirty.
    ConnectFailed,
    /// The server reported a partition miss (`ob_proxy_partition_hit` false where a hit was
    /// expected, or a hit on a non-partition server): the target entry dirty.
    PartitionMiss,
    /// The server confirmed the route (leader and hit): renew the entry's validity.
    PartitionHit,
    /// The last retry failed: everything the route used dirty (`set_dirty_all`).
    AllFailed,
    /// The server says the table's schema changed (no such table, definition changed, unknown
    /// partition): the table entry dirty, so that its partitioning is read again. **[GW]**
    SchemaChanged,
}

impl Feedback {
    /// The feedback a server error code carries, if any (MySQL errno of the ERR packet).
    pub fn from_server_error(code: u16) -> Option<Feedback> {
        match code {
            ERR_NOT_MASTER => Some(Feedback::NotMaster),
            ERR_TENANT_NOT_IN_SERVER => Some(Feedback::TenantNotInServer),
            ERR_CONNECT => Some(Feedback::ConnectFailed),
            ERR_NO_SUCH_TABLE | ERR_TABLE_DEF_CHANGED | ERR_UNKNOWN_PARTITION => Some(Feedback::SchemaChanged),
            _ => None,
        }
    }
}

/// The entries a routed request used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedbackScope {
    /// Tenant (its server-list entry).
    pub tenant: String,
    /// Table entry, if the route used one.
    pub table: Option<TableKey>,
    /// Tablet entry of that table, if the route used one.
    pub tablet_id: Option<u64>,
}

/// Which entries a feedback changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FeedbackEffect {
    /// The table entry changed state.
    pub table: bool,
    /// The tablet entry changed state.
    pub tablet: bool,
    /// The tenant server list changed state.
    pub tenant: bool,
}

impl LocationCache {
    /// Applies a feedback to the entries of `scope` at `now`.
    pub fn feedback(&self, scope: &FeedbackScope, fb: Feedback, now: Instant) -> FeedbackEffect {
        let effect = match fb {
            Feedback::NotMaster => self.on_target(scope, |e| e.delay_update(now)),
            Feedback::ConnectFailed | Feedback::PartitionMiss => self.on_target(scope, |e| e.set_dirty()),
            Feedback::PartitionHit => {
                self.on_target(scope, |e| {
                    e.renew(now);
                    false
                });
                FeedbackEffect::default()
            }
            Feedback::TenantNotInServer | Feedback::AllFailed => self.dirty_all(scope),
            Feedback::SchemaChanged => {
                let table = scope.table.as_ref().and_then(|t| self.tables.with(t, |e| e.set_dirty())).unwrap_or(false);
                FeedbackEffect { table, ..Default::default() }
            }
        };
        tracing::debug!(?fb, tenant = %scope.tenant, table = ?scope.table, tablet = ?scope.tablet_id, ?effect, "location feedback");
        effect
    }

    /// Applies `f` to the tablet entry if the scope names one, else to the table entry, else (a
    /// route without a table) to the tenant server list.
    fn on_target<F>(&self, scope: &FeedbackScope, f: F) -> FeedbackEffect
    where
        F: Fn(&mut dyn TargetEntry) -> bool,
    {
        let Some(table) = &scope.table else {
            let tenant = self.tenants.with(&scope.tenant, |e| f(e)).unwrap_or(false);
            return FeedbackEffect { tenant, ..Default::default() };
        };
        match scope.tablet_id {
            Some(id) => {
                let key = TabletKey { table: table.clone(), tablet_id: id };
                FeedbackEffect { tablet: self.tablets.with(&key, |e| f(e)).unwrap_or(false), ..Default::default() }
            }
            None => FeedbackEffect { table: self.tables.with(table, |e| f(e)).unwrap_or(false), ..Default::default() },
        }
    }

    fn dirty_all(&self, scope: &FeedbackScope) -> FeedbackEffect {
        let mut effect = FeedbackEffect::default();
        if let Some(table) = &scope.table {
            effect.table = self.tables.with(table, |e| e.set_dirty()).unwrap_or(false);
            if let Some(id) = scope.tablet_id {
                let key = TabletKey { table: table.clone(), tablet_id: id };
                effect.tablet = self.tablets.with(&key, |e| e.set_dirty()).unwrap_or(false);
            }
        }
        effect.tenant = self.tenants.with(&scope.tenant, |e| e.set_dirty()).unwrap_or(false);
        effect
    }
}

/// The entry operations feedback uses, over entries of any value type.
pub trait TargetEntry {
    /// See [`super::entry::Entry::set_dirty`].
    fn set_dirty(&mut self) -> bool;
    /// See [`super::entry::Entry::delay_update`].
    fn delay_update(&mut self, now: Instant) -> bool;
    /// See [`super::entry::Entry::renew`].
    fn renew(&mut self, now: Instant);
}

impl<T> TargetEntry for super::entry::Entry<T> {
    fn set_dirty(&mut self) -> bool {
        super::entry::Entry::set_dirty(self)
    }
    fn delay_update(&mut self, now: Instant) -> bool {
        super::entry::Entry::delay_update(self, now)
    }
    fn renew(&mut self, now: Instant) {
        super::entry::Entry::renew(self, now)
    }
}
