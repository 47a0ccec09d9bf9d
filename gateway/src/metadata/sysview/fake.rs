//! A fake sys tenant for unit tests: answers the sys-view statements from mutable in-memory rows
//! (location rows filtered by tenant, table and tablet id like the real WHERE clauses).

use std::sync::Mutex;

use crate::metadata::information_schema::{SqlClient, TextRow};
use crate::metadata::{MetaFuture, MetadataError};

/// A location row of `tenant.db.table`.
#[derive(Debug, Clone)]
pub struct Loc {
    pub tenant: String,
    pub db: String,
    pub table: String,
    /// Columns as in `sql::LOCATION_COLUMNS`.
    pub row: TextRow,
}

/// Rows per view.
#[derive(Debug, Clone, Default)]
pub struct Views {
    pub zones: Vec<TextRow>,
    pub servers: Vec<TextRow>,
    pub tenants: Vec<TextRow>,
    pub leaders: Vec<TextRow>,
    pub locations: Vec<Loc>,
    pub part_info: Vec<TextRow>,
    pub parts: Vec<TextRow>,
    pub subs: Vec<TextRow>,
    /// Fail the single-leader query.
    pub no_ls_locations: bool,
}

/// The fake server.
#[derive(Debug, Default)]
pub struct FakeSys {
    pub views: Mutex<Views>,
    pub log: Mutex<Vec<String>>,
}

pub fn s(v: &str) -> Option<String> {
    Some(v.to_string())
}

/// A row from `&str` cells, `"NULL"` meaning SQL NULL.
pub fn row(cells: &[&str]) -> TextRow {
    cells.iter().map(|c| if *c == "NULL" { None } else { s(c) }).collect()
}

/// A location row: tablet, ip, sql port, table id, role, part_num, replica_type, dup.
#[allow(clippy::too_many_arguments)]
pub fn loc(
    t: (&str, &str, &str),
    tablet: u64,
    ip: &str,
    table_id: u64,
    role: i64,
    part_num: u64,
    rtype: i64,
    dup: i64,
) -> Loc {
    let row = row(&[
        &tablet.to_string(),
        ip,
        "2881",
        &table_id.to_string(),
        &role.to_string(),
        &part_num.to_string(),
        "3",
        "1700000000",
        &rtype.to_string(),
        &dup.to_string(),
        "3",
        "2882",
    ]);
    Loc { tenant: t.0.into(), db: t.1.into(), table: t.2.into(), row }
}

/// The quoted value after `marker` in `sql` (`A.table_name = 'x'` → `x`).
fn quoted_after<'a>(sql: &'a str, marker: &str) -> Option<&'a str> {
    let rest = &sql[sql.find(marker)? + marker.len()..];
    let rest = rest.strip_prefix('\'')?;
    Some(&rest[..rest.find('\'')?])
}

/// The tablet ids a location statement asks for.
fn tablet_filter(sql: &str) -> Vec<u64> {
    if let Some(i) = sql.find("A.tablet_id IN (") {
        let rest = &sql[i + "A.tablet_id IN (".len()..];
        let list = &rest[..rest.find(')').unwrap_or(0)];
        return list.split(',').filter_map(|x| x.trim().parse().ok()).collect();
    }
    if let Some(i) = sql.find("A.tablet_id = ") {
        let rest = &sql[i + "A.tablet_id = ".len()..];
        let n: String = rest.chars().take_while(char::is_ascii_digit).collect();
        return n.parse().into_iter().collect();
    }
    Vec::new()
}

impl Views {
    fn locations(&self, sql: &str) -> Vec<TextRow> {
        let tenant = quoted_after(sql, "A.tenant_name = ").unwrap_or_default();
        let table = quoted_after(sql, "A.table_name = ").unwrap_or_default();
        let db = quoted_after(sql, "A.database_name = ").unwrap_or_default();
        let dummy = table == "__all_dummy";
        let ids = tablet_filter(sql);
        let mut out: Vec<TextRow> = self
            .locations
            .iter()
            .filter(|l| l.tenant == tenant && l.table == table && l.db == db)
            .filter(|l| dummy || ids.iter().any(|id| l.row[0].as_deref() == Some(id.to_string().as_str())))
            .map(|l| l.row.clone())
            .collect();
        out.sort_by_key(|r| r[4].clone());
        out
    }

    fn answer(&self, sql: &str) -> Result<Vec<TextRow>, MetadataError> {
        let rows = if sql.contains("__all_virtual_proxy_partition_info") {
            self.part_info.clone()
        } else if sql.contains("__all_virtual_proxy_sub_partition") {
            self.subs.clone()
        } else if sql.contains("__all_virtual_proxy_partition A") {
            self.parts.clone()
        } else if sql.contains("__all_virtual_proxy_schema") {
            self.locations(sql)
        } else if sql.contains("CDB_OB_LS_LOCATIONS") {
            if self.no_ls_locations {
                return Err(MetadataError::Query { sql: sql.into(), message: "Table doesn't exist".into() });
            }
            self.leaders.clone()
        } else if sql.contains("DBA_OB_ZONES") {
            self.zones.clone()
        } else if sql.contains("FROM oceanbase.DBA_OB_SERVERS WHERE") {
            self.servers.clone()
        } else if sql.contains("FROM oceanbase.DBA_OB_TENANTS where") {
            self.tenants.clone()
        } else {
            return Err(MetadataError::Query { sql: sql.into(), message: "unexpected statement".into() });
        };
        Ok(rows)
    }
}

impl SqlClient for FakeSys {
    fn query<'a>(&'a self, sql: &'a str) -> MetaFuture<'a, Vec<TextRow>> {
        self.log.lock().unwrap().push(sql.to_string());
        let answer = self.views.lock().unwrap().answer(sql);
        Box::pin(async move { answer })
    }
}

const T: (&str, &str, &str) = ("t1", "db1", "orders");

/// Three zones (z1, z2 read-write in region hz; z3 read-only in sh), six servers 10.0.{1,2,3}.{1,2},
/// tenant t1 (primary zone `z1;z2`) on all six, tenant t2 single-leader on 10.0.1.1, and
/// `t1.db1.orders` HASH(id) PARTITIONS 4 (tablets 200001–200004, rows shuffled), leaders spread
/// over z1/z2, a follower and a read-only replica in z3 each.
pub fn topology() -> Views {
    let ips = ["10.0.1.1", "10.0.1.2", "10.0.2.1", "10.0.2.2", "10.0.3.1", "10.0.3.2"];
    let mut v = Views {
        zones: vec![
            row(&["z1", "ACTIVE", "0", "hz", "hz-a", "ReadWrite"]),
            row(&["z2", "ACTIVE", "0", "hz", "hz-b", "ReadWrite"]),
            row(&["z3", "ACTIVE", "0", "sh", "sh-a", "ReadOnly"]),
        ],
        servers: ips
            .iter()
            .map(|ip| row(&[ip, "2882", "2881", &format!("z{}", &ip[5..6]), "ACTIVE", "1", "0"]))
            .collect(),
        tenants: vec![
            row(&["t1", "1002", "FULL{1}@z1, FULL{1}@z2, READONLY{1}@z3", "NULL", "z1;z2", "NORMAL"]),
            row(&["t2", "1004", "FULL{1}@z1", "NULL", "RANDOM", "NORMAL"]),
        ],
        leaders: vec![row(&["t1", "10.0.1.1:2881", "0"]), row(&["t2", "10.0.1.1:2881", "1"])],
        ..Views::default()
    };
    for ip in ips {
        v.locations.push(loc(("t1", "oceanbase", "__all_dummy"), 0, ip, 1, 2, 1, 0, 0));
    }
    for p in 0..4u64 {
        let leader = ips[p as usize % 4];
        let follower = ips[(p as usize + 2) % 4];
        for (ip, role, rtype) in [(leader, 1, 0), (follower, 2, 0), (ips[4 + p as usize % 2], 2, 16)] {
            v.locations.push(loc(T, 200_001 + p, ip, 500_001, role, 4, rtype, 0));
            if p == 0 {
                v.locations.push(loc(T, 0, ip, 500_001, role, 4, rtype, 0));
            }
        }
    }
    v.part_info = vec![row(&[
        "0", "1", "1", "id", "", "0", "4", "NULL", "4", "1", "0", "id", "5", "63", "-1", "20", "0", "", "",
    ])];
    for p in [2u64, 0, 3, 1] {
        v.parts.push(row(&[
            &(200_001 + p).to_string(),
            "1001",
            &p.to_string(),
            &format!("p{p}"),
            "",
            "0",
            "",
            &p.to_string(),
        ]));
    }
    v
}

impl SqlClient for std::sync::Arc<FakeSys> {
    fn query<'a>(&'a self, sql: &'a str) -> MetaFuture<'a, Vec<TextRow>> {
        self.as_ref().query(sql)
    }
}

impl FakeSys {
    /// Statements run so far that contain `needle`.
    pub fn count(&self, needle: &str) -> usize {
        self.log.lock().unwrap().iter().filter(|q| q.contains(needle)).count()
    }

    /// Sets the role of the location row of `tablet` on `ip`.
    pub fn set_role(&self, tablet: u64, ip: &str, role: i64) {
        let mut v = self.views.lock().unwrap();
        for l in v.locations.iter_mut() {
            if l.row[0].as_deref() == Some(tablet.to_string().as_str()) && l.row[1].as_deref() == Some(ip) {
                l.row[4] = Some(role.to_string());
            }
        }
    }
}
