//! The cluster layout the tests write as the gateway's static topology, and the routing oracle
//! computed from it independently of the gateway: partition of a key (HASH = `abs(v) % n`, RANGE
//! by its bounds, docs/routing.md §14 / docs/partition.md), leaders, the replica a weak read prefers.

use std::collections::{BTreeSet, HashMap};
use std::net::SocketAddr;

/// A zone.
#[derive(Debug, Clone)]
pub struct ZoneSpec {
    pub name: &'static str,
    pub region: &'static str,
    pub idc: &'static str,
    /// A read-only zone (its servers hold read-only replicas).
    pub readonly: bool,
}

/// A server and its zone.
#[derive(Debug, Clone)]
pub struct ServerSpec {
    pub name: &'static str,
    pub zone: &'static str,
}

/// How a table is partitioned (on the single column `c1`, or `id` for sysbench tables).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Partitioning {
    /// Not partitioned: one tablet.
    None,
    /// `HASH(col) PARTITIONS n`.
    Hash(u32),
    /// `KEY(col) PARTITIONS n` — placement by OceanBase's KEY hash, which the test does not
    /// compute (it is not MariaDB's, docs/architecture.md §3).
    Key(u32),
    /// `RANGE(col)` with these exclusive upper bounds; a last partition `MAXVALUE` follows.
    Range(Vec<i64>),
}

/// Replicas of one tablet, by server name.
#[derive(Debug, Clone)]
pub struct Placement {
    pub leader: &'static str,
    pub followers: Vec<&'static str>,
    pub readonly: Vec<&'static str>,
}

impl Placement {
    /// Every server holding a replica.
    pub fn servers(&self) -> impl Iterator<Item = &'static str> + '_ {
        std::iter::once(self.leader).chain(self.followers.iter().copied()).chain(self.readonly.iter().copied())
    }
}

/// A table of the topology.
#[derive(Debug, Clone)]
pub struct TableSpec {
    pub database: &'static str,
    pub name: String,
    /// Partition column.
    pub column: &'static str,
    pub partitioning: Partitioning,
    /// `CREATE TABLE` as given to MariaDB and, for partitioned tables, to the topology.
    pub ddl: String,
    /// Per partition (one entry for a non-partitioned table).
    pub placements: Vec<Placement>,
}

impl TableSpec {
    /// Number of partitions (1 when not partitioned).
    pub fn parts(&self) -> usize {
        self.placements.len()
    }
}

/// Zones, servers, tables, and the IDC the gateway runs in.
#[derive(Debug, Clone)]
pub struct Topology {
    pub zones: Vec<ZoneSpec>,
    pub servers: Vec<ServerSpec>,
    pub tables: Vec<TableSpec>,
    /// `[routing] idc` of the gateway.
    pub idc: &'static str,
    /// Tenant primary zone list.
    pub primary_zone: &'static str,
}

/// The columns of every workload table.
pub const COLUMNS: &str = "c1 INT NOT NULL, c2 VARCHAR(64), c3 INT, PRIMARY KEY (c1)";

/// Placement of partition `i` of a table: its zone1 replica alternates s1, s1, s4, s4, …; even
/// partitions are led from zone1 (s1 or s4), odd ones from s2 (zone2); the other read-write zone
/// holds a follower and s3 (read-only zone3, another region) a read-only replica.
pub fn spread(i: usize) -> Placement {
    let zone1 = if i % 4 < 2 { "s1" } else { "s4" };
    let (leader, follower) = if i.is_multiple_of(2) { (zone1, "s2") } else { ("s2", zone1) };
    Placement { leader, followers: vec![follower], readonly: vec!["s3"] }
}

impl Topology {
    /// Four servers: s1 and s4 in zone1 (region sh, idc1 — the gateway's IDC), s2 in zone2 (sh,
    /// idc2), s3 in read-only zone3 (region hz, idc3). Tables in `test`: `t_hash` HASH(c1) 8,
    /// `t_key` KEY(c1) 8, `t_range` RANGE(c1) at 1000/2000/3000/MAXVALUE, `t_plain` (leader s2),
    /// and `r_hash` HASH(c1) 8, which the workload never writes; plus `sbtest.sbtest1..n`
    /// HASH(id) 4 when `sbtest_tables > 0`.
    pub fn standard(sbtest_tables: u32) -> Topology {
        let zones = vec![
            ZoneSpec { name: "zone1", region: "sh", idc: "idc1", readonly: false },
            ZoneSpec { name: "zone2", region: "sh", idc: "idc2", readonly: false },
            ZoneSpec { name: "zone3", region: "hz", idc: "idc3", readonly: true },
        ];
        let servers = vec![
            ServerSpec { name: "s1", zone: "zone1" },
            ServerSpec { name: "s2", zone: "zone2" },
            ServerSpec { name: "s3", zone: "zone3" },
            ServerSpec { name: "s4", zone: "zone1" },
        ];
        let mut tables = vec![
            table("t_hash", Partitioning::Hash(8)),
            table("t_key", Partitioning::Key(8)),
            table("t_range", Partitioning::Range(vec![1000, 2000, 3000])),
            table("t_plain", Partitioning::None),
            table("r_hash", Partitioning::Hash(8)),
        ];
        for i in 1..=sbtest_tables {
            tables.push(sbtest_table(i));
        }
        Topology { zones, servers, tables, idc: "idc1", primary_zone: "zone1;zone2,zone3" }
    }

    /// [`Topology::standard`] without sysbench tables as a normal deployment (docs/routing.md §5):
    /// zone3 is read-write, and s3 holds a full follower of every tablet instead of a read-only
    /// replica. Follower policies, `proxy_primary_zone_name` and the primary zone apply only here.
    pub fn normal() -> Topology {
        let mut t = Topology::standard(0);
        for z in &mut t.zones {
            z.readonly = false;
        }
        for p in t.tables.iter_mut().flat_map(|table| table.placements.iter_mut()) {
            let readonly = std::mem::take(&mut p.readonly);
            p.followers.extend(readonly);
        }
        t
    }

    /// The table named `name`.
    pub fn table(&self, name: &str) -> &TableSpec {
        self.tables.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("no table {name} in the topology"))
    }

    /// Server names in order.
    pub fn server_names(&self) -> Vec<&'static str> {
        self.servers.iter().map(|s| s.name).collect()
    }

    fn zone_of(&self, server: &str) -> &ZoneSpec {
        let s = self.servers.iter().find(|s| s.name == server).unwrap_or_else(|| panic!("no server {server}"));
        self.zones.iter().find(|z| z.name == s.zone).unwrap_or_else(|| panic!("no zone {}", s.zone))
    }

    /// The partition index of `key`, when the test computes it: HASH `abs(v) % n`, RANGE by the
    /// bounds, 0 for a non-partitioned table; `None` for KEY (see [`Partitioning::Key`]).
    pub fn partition_of(&self, table: &str, key: i64) -> Option<usize> {
        match &self.table(table).partitioning {
            Partitioning::None => Some(0),
            Partitioning::Hash(n) => Some((key.unsigned_abs() % u64::from(*n)) as usize),
            Partitioning::Key(_) => None,
            Partitioning::Range(bounds) => Some(bounds.iter().position(|b| key < *b).unwrap_or(bounds.len())),
        }
    }

    /// Leader of partition `part` of `table`.
    pub fn leader(&self, table: &str, part: usize) -> &'static str {
        self.table(table).placements[part].leader
    }

    /// Leaders of all partitions of `table`.
    pub fn leaders(&self, table: &str) -> BTreeSet<&'static str> {
        self.table(table).placements.iter().map(|p| p.leader).collect()
    }

    /// Servers in the gateway's IDC.
    pub fn local_servers(&self) -> BTreeSet<&'static str> {
        self.servers.iter().filter(|s| self.zone_of(s.name).idc == self.idc).map(|s| s.name).collect()
    }

    /// Where a weak read of partition `part` goes (docs/routing.md §5 + docs/routing.md §4): the tenant has a
    /// read-only zone, so a WEAK request takes the `ob_route_policy` policy, READONLY_ZONE_FIRST by
    /// default (MariaDB has no such variable); its first non-empty entry for this layout is ANWP —
    /// the read-write replica of the partition in the gateway's IDC (ANRP/BNRP are empty: the
    /// read-only zone is in another region; nothing is merging). Exactly one such replica exists
    /// per partition here, so the target is determined.
    pub fn weak_target(&self, table: &str, part: usize) -> &'static str {
        let local = self.local_servers();
        let p = &self.table(table).placements[part];
        let mut rw_local = p.servers().filter(|s| local.contains(s) && !self.zone_of(s).readonly);
        let first = rw_local.next().unwrap_or_else(|| panic!("{table} p{part} has no replica in {}", self.idc));
        assert!(rw_local.next().is_none(), "{table} p{part}: two local replicas, the weak target is not unique");
        first
    }

    /// The static topology file (docs/routing.md §14) with the servers' real addresses.
    pub fn to_toml(&self, addrs: &HashMap<String, SocketAddr>) -> String {
        let q = |s: &str| format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""));
        let list = |v: &[&str]| format!("[{}]", v.iter().map(|s| q(s)).collect::<Vec<_>>().join(", "));
        let mut t = String::from("cluster = \"routing-tests\"\n");
        for z in &self.zones {
            let ty = if z.readonly { "ReadOnly" } else { "ReadWrite" };
            t += &format!(
                "\n[[zones]]\nname = {}\nregion = {}\nidc = {}\ntype = \"{ty}\"\n",
                q(z.name),
                q(z.region),
                q(z.idc)
            );
        }
        for s in &self.servers {
            let addr = addrs.get(s.name).unwrap_or_else(|| panic!("no address for {}", s.name));
            t += &format!("\n[[servers]]\nname = {}\naddr = \"{addr}\"\nzone = {}\n", q(s.name), q(s.zone));
        }
        t += &format!("\n[[tenants]]\nname = \"sys\"\nid = 1\nprimary_zone = {}\n", q(self.primary_zone));
        for (i, tb) in self.tables.iter().enumerate() {
            t += &format!(
                "\n[[tables]]\ntenant = \"sys\"\ndatabase = {}\nname = {}\ntable_id = {}\nfirst_tablet_id = {}\n",
                q(tb.database),
                q(&tb.name),
                600_001 + i,
                300_001 + 1000 * i
            );
            let place = |p: &Placement| {
                format!(
                    "leader = {}, followers = {}, readonly = {}",
                    q(p.leader),
                    list(&p.followers),
                    list(&p.readonly)
                )
            };
            if tb.partitioning == Partitioning::None {
                t += &format!("replicas = {{ {} }}\n", place(&tb.placements[0]));
                continue;
            }
            t += &format!("ddl = {}\npartitions = [\n", q(&tb.ddl));
            for (i, p) in tb.placements.iter().enumerate() {
                t += &format!("  {{ name = \"p{i}\", {} }},\n", place(p));
            }
            t += "]\n";
        }
        t
    }
}

fn partition_clause(col: &str, p: &Partitioning) -> String {
    match p {
        Partitioning::None => String::new(),
        Partitioning::Hash(n) => format!(" PARTITION BY HASH({col}) PARTITIONS {n}"),
        Partitioning::Key(n) => format!(" PARTITION BY KEY({col}) PARTITIONS {n}"),
        Partitioning::Range(bounds) => {
            let mut parts: Vec<String> =
                bounds.iter().enumerate().map(|(i, b)| format!("PARTITION p{i} VALUES LESS THAN ({b})")).collect();
            parts.push(format!("PARTITION p{} VALUES LESS THAN MAXVALUE", bounds.len()));
            format!(" PARTITION BY RANGE({col}) ({})", parts.join(", "))
        }
    }
}

fn part_count(p: &Partitioning) -> usize {
    match p {
        Partitioning::None => 1,
        Partitioning::Hash(n) | Partitioning::Key(n) => *n as usize,
        Partitioning::Range(b) => b.len() + 1,
    }
}

fn table(name: &str, partitioning: Partitioning) -> TableSpec {
    let ddl = format!("CREATE TABLE {name} ({COLUMNS}){}", partition_clause("c1", &partitioning));
    let placements = if partitioning == Partitioning::None {
        // Led from zone2, so that strong reads of it do not simply follow the primary zone.
        vec![Placement { leader: "s2", followers: vec!["s1"], readonly: vec!["s3"] }]
    } else {
        (0..part_count(&partitioning)).map(spread).collect()
    };
    TableSpec { database: "test", name: name.to_string(), column: "c1", partitioning, ddl, placements }
}

/// A sysbench table as sysbench 1.0 creates it, declared HASH(id) PARTITIONS 4 in the topology
/// (on MariaDB it stays as sysbench made it: routing only needs the gateway's view).
fn sbtest_table(i: u32) -> TableSpec {
    let partitioning = Partitioning::Hash(4);
    let ddl = format!(
        "CREATE TABLE sbtest{i} (id INT NOT NULL, k INT NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', \
         pad CHAR(60) NOT NULL DEFAULT '', PRIMARY KEY (id)){}",
        partition_clause("id", &partitioning)
    );
    TableSpec {
        database: "sbtest",
        name: format!("sbtest{i}"),
        column: "id",
        placements: (0..4).map(spread).collect(),
        partitioning,
        ddl,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oracle_on_the_standard_layout() {
        let t = Topology::standard(0);
        assert_eq!(t.partition_of("t_hash", 123), Some(3));
        assert_eq!(t.partition_of("t_hash", -7), Some(7));
        assert_eq!(t.partition_of("t_range", 999), Some(0));
        assert_eq!(t.partition_of("t_range", 3000), Some(3));
        assert_eq!(t.partition_of("t_key", 1), None);
        assert_eq!((t.leader("t_hash", 2), t.leader("t_hash", 3)), ("s4", "s2"));
        assert_eq!(t.leaders("t_hash"), BTreeSet::from(["s1", "s2", "s4"]));
        assert_eq!(t.weak_target("t_hash", 3), "s4", "p3 is led by s2, its zone1 follower is s4");
        assert_eq!(t.weak_target("t_hash", 0), "s1", "p0's zone1 replica is its leader");
        assert_eq!(t.weak_target("t_plain", 0), "s1");
    }

    #[test]
    fn renders_the_static_topology_format() {
        let t = Topology::standard(1);
        let addrs: HashMap<String, SocketAddr> = t
            .server_names()
            .iter()
            .enumerate()
            .map(|(i, n)| (n.to_string(), ([127, 0, 0, 1], 4000 + i as u16).into()))
            .collect();
        let toml = t.to_toml(&addrs);
        assert!(toml.contains("name = \"s4\"\naddr = \"127.0.0.1:4003\"\nzone = \"zone1\""), "{toml}");
        assert!(
            toml.contains("{ name = \"p2\", leader = \"s4\", followers = [\"s2\"], readonly = [\"s3\"] }"),
            "{toml}"
        );
        assert!(toml.contains("replicas = { leader = \"s2\""), "{toml}");
        assert!(toml.contains("PARTITION BY RANGE(c1) (PARTITION p0 VALUES LESS THAN (1000)"), "{toml}");
        // The gateway's own loader accepts it (DDL parsed, every placement names a known server).
        let src = gateway::metadata::static_file::StaticSource::from_toml(&toml, &HashMap::new());
        assert!(src.is_ok(), "{:?}\n{toml}", src.err());
    }
}
