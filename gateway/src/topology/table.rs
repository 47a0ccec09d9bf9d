//! Table entries: what the location cache knows about one table (docs/routing.md §12).

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};

use crate::partition::{Location, TableScheme};

use super::replica::Replica;

/// Identifies a table: tenant, database, table name.
///
/// Database and table names are stored lower-case (OceanBase MySQL mode runs with
/// `lower_case_table_names = 1`, docs/routing.md §12); the tenant name is kept as given.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TableKey {
    /// Tenant name (shared: every routed statement builds a key for its session's tenant).
    pub tenant: std::sync::Arc<str>,
    /// Database (schema) name, lower case.
    pub database: String,
    /// Table name, lower case.
    pub table: String,
}

impl TableKey {
    /// A key with database and table names folded to lower case.
    pub fn new(tenant: &str, database: &str, table: &str) -> TableKey {
        TableKey::of_tenant(&tenant.into(), database, table)
    }

    /// [`TableKey::new`] sharing the tenant's name (no copy of it).
    pub fn of_tenant(tenant: &std::sync::Arc<str>, database: &str, table: &str) -> TableKey {
        TableKey {
            tenant: std::sync::Arc::clone(tenant),
            database: database.to_ascii_lowercase(),
            table: table.to_ascii_lowercase(),
        }
    }
}

impl fmt::Display for TableKey {
    /// `tenant:db.table`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}.{}", self.tenant, self.database, self.table)
    }
}

/// Identifies a tablet (partition entry) of a table.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TabletKey {
    /// The table.
    pub table: TableKey,
    /// Tablet id.
    pub tablet_id: u64,
}

/// A tablet key's parts, owned or borrowed: the location cache is probed with a borrowed
/// [`TabletRef`] (every routed statement on a partitioned table probes it), so no table key is
/// cloned for a lookup. Hashes and compares exactly as [`TabletKey`] does.
pub trait TabletKeyParts: Sync {
    /// The table.
    fn table(&self) -> &TableKey;
    /// Tablet id.
    fn tablet_id(&self) -> u64;
}

/// A tablet key borrowing its table key.
#[derive(Debug, Clone, Copy)]
pub struct TabletRef<'a> {
    /// The table.
    pub table: &'a TableKey,
    /// Tablet id.
    pub tablet_id: u64,
}

impl TabletKeyParts for TabletKey {
    fn table(&self) -> &TableKey {
        &self.table
    }
    fn tablet_id(&self) -> u64 {
        self.tablet_id
    }
}

impl TabletKeyParts for TabletRef<'_> {
    fn table(&self) -> &TableKey {
        self.table
    }
    fn tablet_id(&self) -> u64 {
        self.tablet_id
    }
}

impl<'a> Borrow<dyn TabletKeyParts + 'a> for TabletKey {
    fn borrow(&self) -> &(dyn TabletKeyParts + 'a) {
        self
    }
}

/// The derived `Hash` of [`TabletKey`]: its fields in order.
impl Hash for dyn TabletKeyParts + '_ {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.table().hash(state);
        self.tablet_id().hash(state);
    }
}

impl PartialEq for dyn TabletKeyParts + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.tablet_id() == other.tablet_id() && self.table() == other.table()
    }
}

impl Eq for dyn TabletKeyParts + '_ {}

impl ToOwned for dyn TabletKeyParts + '_ {
    type Owned = TabletKey;

    fn to_owned(&self) -> TabletKey {
        TabletKey { table: self.table().clone(), tablet_id: self.tablet_id() }
    }
}

/// Table type (`table_type` of `__all_virtual_proxy_schema`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TableType {
    /// 0.
    SystemTable,
    /// 1.
    SystemView,
    /// 2.
    VirtualTable,
    /// 3.
    #[default]
    UserTable,
    /// 4.
    UserView,
    /// 5.
    UserIndex,
    /// 6.
    TemporaryTable,
}

impl TableType {
    /// From the view's code; unknown codes read as a user table.
    pub fn from_code(code: i64) -> TableType {
        match code {
            0 => TableType::SystemTable,
            1 => TableType::SystemView,
            2 => TableType::VirtualTable,
            4 => TableType::UserView,
            5 => TableType::UserIndex,
            6 => TableType::TemporaryTable,
            _ => TableType::UserTable,
        }
    }

    /// Name as EXPLAIN ROUTE prints it (`USER TABLE`).
    pub fn name(self) -> &'static str {
        match self {
            TableType::SystemTable => "SYSTEM TABLE",
            TableType::SystemView => "SYSTEM VIEW",
            TableType::VirtualTable => "VIRTUAL TABLE",
            TableType::UserTable => "USER TABLE",
            TableType::UserView => "USER VIEW",
            TableType::UserIndex => "USER INDEX",
            TableType::TemporaryTable => "TEMPORARY TABLE",
        }
    }
}

/// A table entry.
#[derive(Debug, Clone, PartialEq)]
pub struct TableEntry {
    /// The table.
    pub key: TableKey,
    /// Table id when the source knows it (sys views, static file).
    pub table_id: Option<u64>,
    /// Table type.
    pub table_type: TableType,
    /// Schema version when known (staleness checks).
    pub schema_version: Option<u64>,
    /// Number of partitions (leaf tablets); 1 for a non-partitioned table.
    pub part_num: usize,
    /// Duplicate (broadcast) table: every replica is readable like the leader (docs/routing.md §3).
    pub duplicate: bool,
    /// Partitioning with tablet ids filled in when known; `None` for a non-partitioned table or
    /// a partitioned table whose partitioning cannot be calculated (docs/routing.md §12).
    pub scheme: Option<TableScheme>,
    /// Replicas of the single tablet of a non-partitioned table (empty for partitioned tables).
    pub replicas: Vec<Replica>,
}

impl TableEntry {
    /// Whether the table has more than one partition or a partitioning scheme.
    pub fn is_partitioned(&self) -> bool {
        self.part_num > 1 || self.scheme.is_some()
    }

    /// Tablet ids of all leaf partitions in partition order (those the scheme knows).
    pub fn tablet_ids(&self) -> Vec<u64> {
        let Some(s) = &self.scheme else { return Vec::new() };
        s.partitions
            .iter()
            .flat_map(
                |p| if p.subs.is_empty() { vec![p.tablet_id] } else { p.subs.iter().map(|s| s.tablet_id).collect() },
            )
            .flatten()
            .collect()
    }

    /// Tablet id of a located row: the location's own, else the scheme's for its indexes.
    pub fn tablet_of(&self, loc: &Location) -> Option<u64> {
        if loc.tablet_id.is_some() {
            return loc.tablet_id;
        }
        let part = self.scheme.as_ref()?.partitions.get(loc.part_idx)?;
        match &loc.sub {
            Some((i, _)) => part.subs.get(*i)?.tablet_id,
            None => part.tablet_id,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    #[test]
    fn a_borrowed_tablet_key_finds_what_the_owned_key_stored() {
        let table = TableKey::new("t1", "DB", "Orders");
        let mut map: HashMap<TabletKey, u32, foldhash::quality::RandomState> = HashMap::default();
        map.insert(TabletKey { table: table.clone(), tablet_id: 7 }, 70);
        map.insert(TabletKey { table: TableKey::new("t1", "db", "other"), tablet_id: 7 }, 71);
        let find = |table: &TableKey, tablet_id| {
            let parts = TabletRef { table, tablet_id };
            map.get(&parts as &dyn TabletKeyParts).copied()
        };
        assert_eq!(find(&table, 7), Some(70));
        assert_eq!(find(&TableKey::new("t1", "db", "ORDERS"), 7), Some(70), "names are folded by TableKey::new");
        assert_eq!(find(&table, 8), None);
        assert_eq!(find(&TableKey::new("t2", "db", "orders"), 7), None);
        let parts: &dyn TabletKeyParts = &TabletRef { table: &table, tablet_id: 7 };
        assert_eq!(parts.to_owned(), TabletKey { table, tablet_id: 7 });
    }
}
