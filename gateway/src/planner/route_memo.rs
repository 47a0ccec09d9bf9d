//! What one session's planner remembers of the tables it last routed by: each table's key and
//! entry, its tenant's facts, and the route candidates of each tablet it used. A statement on
//! one of those tables reuses them instead of probing the location cache three times (tenant servers,
//! table, tablet), as long as the cache and the cluster model have not changed since
//! ([`crate::topology::Locator::generation`]) and none of the fresh values used has expired. Then
//! the probes would have given the same answers, so the route is the one they would give. The
//! partition is still calculated from each statement's values, and the decision still made per
//! statement (its random tie-break included).

use std::sync::Arc;

use tokio::time::Instant;

use super::memo::{Fresh, TenantFacts};
use crate::route::Candidate;
use crate::topology::{TableEntry, TableKey};

/// Most tablets remembered, over all tables: with three replicas each, about 9 KiB a session.
/// Beyond that, the tablet remembered longest ago (of the table remembered longest ago) is
/// forgotten.
const MAX_TABLETS: usize = 32;

/// Most tables remembered; beyond that the one remembered longest ago is forgotten.
const MAX_TABLES: usize = 8;

/// A session's memory of its last tables (empty at first). One per session: no locks.
#[derive(Debug, Default)]
pub struct RouteMemo {
    tables: Vec<TableMemo>,
}

/// The table part, as the lookups found it.
#[derive(Debug)]
pub(super) struct TableMemo {
    /// The locator's generation read before the lookups.
    generation: u64,
    /// The earliest expiry of the table and tenant-server values used (`None`: never).
    until: Option<Instant>,
    /// The statement's tenant, database and table name as given (before case folding).
    tenant: Arc<str>,
    database: Box<str>,
    name: Box<str>,
    /// The table's key.
    pub key: Arc<TableKey>,
    /// The table's entry.
    pub entry: Arc<TableEntry>,
    /// The tenant's facts.
    pub facts: Arc<TenantFacts>,
    /// Candidates per tablet (`None`: a table that is not partitioned), each with its expiry.
    tablets: Vec<TabletMemo>,
}

/// A tablet (`None`: a table that is not partitioned), its expiry, and its candidates (shared
/// with the requests that use them).
type TabletMemo = (Option<u64>, Option<Instant>, Arc<[Candidate]>);

/// What the lookups of one statement found, to remember.
pub(super) struct Found<'a> {
    pub generation: u64,
    pub tenant: &'a Arc<str>,
    pub database: &'a str,
    pub name: &'a str,
    pub key: &'a Arc<TableKey>,
    pub entry: &'a Arc<TableEntry>,
    pub facts: &'a Arc<TenantFacts>,
    /// Freshness of the tenant-server list, the table entry and the tablet.
    pub tenant_fresh: Fresh,
    pub table_fresh: Fresh,
    pub tablet_fresh: Fresh,
    pub tablet_id: Option<u64>,
    pub candidates: &'a Arc<[Candidate]>,
}

impl RouteMemo {
    /// The remembered table, when the statement names the same one and nothing changed since.
    pub(super) fn table(
        &self,
        generation: u64,
        now: Instant,
        tenant: &Arc<str>,
        database: &str,
        name: &str,
    ) -> Option<&TableMemo> {
        self.tables
            .iter()
            .find(|m| m.names(tenant, database, name))
            .filter(|m| m.generation == generation && before(now, m.until))
    }

    /// Remembers what the lookups found, when every value was fresh.
    pub(super) fn remember(&mut self, f: Found<'_>) {
        let (Some(tenant_until), Some(table_until), Some(tablet_until)) =
            (f.tenant_fresh, f.table_fresh, f.tablet_fresh)
        else {
            return;
        };
        let until = earliest(tenant_until, table_until);
        // What an older generation found may no longer be true.
        self.tables.retain(|m| m.generation == f.generation);
        let known = self.tables.iter().position(|m| {
            m.names(f.tenant, f.database, f.name) && Arc::ptr_eq(&m.entry, f.entry) && Arc::ptr_eq(&m.facts, f.facts)
        });
        let i = match known {
            Some(i) => i,
            None => {
                self.tables.retain(|m| !m.names(f.tenant, f.database, f.name));
                if self.tables.len() >= MAX_TABLES {
                    self.tables.remove(0);
                }
                self.tables.push(TableMemo {
                    generation: f.generation,
                    until,
                    tenant: Arc::clone(f.tenant),
                    database: f.database.into(),
                    name: f.name.into(),
                    key: Arc::clone(f.key),
                    entry: Arc::clone(f.entry),
                    facts: Arc::clone(f.facts),
                    tablets: Vec::new(),
                });
                self.tables.len() - 1
            }
        };
        self.tables[i].tablets.retain(|(id, _, _)| *id != f.tablet_id);
        if self.tables.iter().map(|m| m.tablets.len()).sum::<usize>() >= MAX_TABLETS {
            if let Some(oldest) = self.tables.iter_mut().find(|m| !m.tablets.is_empty()) {
                oldest.tablets.remove(0);
            }
        }
        self.tables[i].tablets.push((f.tablet_id, tablet_until, Arc::clone(f.candidates)));
    }

    /// How many tablets are remembered, over all tables.
    pub fn tablets(&self) -> usize {
        self.tables.iter().map(|m| m.tablets.len()).sum()
    }

    /// Forgets everything (a change the generation does not cover).
    pub fn clear(&mut self) {
        self.tables.clear();
    }
}

impl TableMemo {
    /// It is the memory of this table of this tenant, named so.
    fn names(&self, tenant: &Arc<str>, database: &str, name: &str) -> bool {
        *self.name == *name
            && *self.database == *database
            && (Arc::ptr_eq(&self.tenant, tenant) || self.tenant == *tenant)
    }

    /// The candidates of tablet `id` (`None`: the table is not partitioned), unless expired.
    pub(super) fn candidates(&self, id: Option<u64>, now: Instant) -> Option<&Arc<[Candidate]>> {
        self.tablets.iter().find(|(t, until, _)| *t == id && before(now, *until)).map(|(_, _, c)| c)
    }
}

/// `now` is before `until` (`None`: never expires).
fn before(now: Instant, until: Option<Instant>) -> bool {
    until.is_none_or(|u| now < u)
}

/// The earlier of two expiries (`None`: never).
fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, None) => a,
        (None, b) => b,
    }
}
