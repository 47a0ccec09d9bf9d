//! The static source: the demo topology, address overrides, validation.

use std::collections::HashMap;
use std::net::SocketAddr;

use crate::metadata::{MetadataError, MetadataSource, StaticSource};
use crate::partition::{locate, CastContext, KeyValue};
use crate::topology::{ReplicaType, Role, TableKey, ZoneType};

fn overrides() -> HashMap<String, SocketAddr> {
    [("s1", 40001), ("s2", 40002), ("s3", 40003)]
        .into_iter()
        .map(|(n, p)| (n.to_string(), SocketAddr::from(([127, 0, 0, 1], p))))
        .collect()
}

#[test]
fn demo_zones_servers_tenant() {
    let src = StaticSource::demo(&HashMap::new()).unwrap();
    let c = src.cluster();
    let zones: Vec<(&str, &str, &str, ZoneType)> =
        c.zones().iter().map(|z| (z.name.as_str(), z.region.as_str(), z.idc.as_str(), z.zone_type)).collect();
    assert_eq!(
        zones,
        [
            ("zone1", "sh", "idc1", ZoneType::ReadWrite),
            ("zone2", "sh", "idc2", ZoneType::ReadWrite),
            ("zone3", "hz", "idc3", ZoneType::ReadOnly)
        ]
    );
    assert_eq!(c.servers().len(), 3);
    let tenant = c.tenant("sys").unwrap();
    assert_eq!((tenant.primary_zone.weight("zone1"), tenant.primary_zone.weight("zone2")), (Some(0), Some(1)));
}

#[test]
fn demo_t0_p3_leader() {
    let src = StaticSource::demo(&overrides()).unwrap();
    let meta = src.table(&TableKey::new("sys", "test", "t0")).unwrap();
    assert_eq!((meta.entry.table_id, meta.entry.part_num), (Some(500_084), 8));
    let scheme = meta.entry.scheme.as_ref().unwrap();
    let loc = locate(scheme, &[KeyValue::Int(123)], &CastContext::default()).unwrap();
    assert_eq!((loc.part_idx, loc.name(), loc.tablet_id), (3, "p3", Some(200_065)));
    let tablet = meta.tablets.iter().find(|t| t.tablet_id == 200_065).unwrap();
    let leader = tablet.leader().unwrap();
    assert_eq!(leader.addr, SocketAddr::from(([127, 0, 0, 1], 40002)), "s2 with its overridden address");
    assert_eq!(src.cluster().server(leader.addr).map(|s| s.zone.as_str()), Some("zone2"));
    let kinds: Vec<(u16, Role, ReplicaType)> =
        tablet.replicas.iter().map(|r| (r.addr.port(), r.role, r.replica_type)).collect();
    assert_eq!(
        kinds,
        [
            (40002, Role::Leader, ReplicaType::Full),
            (40001, Role::Follower, ReplicaType::Full),
            (40003, Role::Follower, ReplicaType::ReadOnly)
        ]
    );
    assert_eq!(meta.entry.tablet_ids(), (200_062..200_070).collect::<Vec<_>>());
}

#[test]
fn demo_leaders_are_spread() {
    let src = StaticSource::demo(&HashMap::new()).unwrap();
    let meta = src.table(&TableKey::new("sys", "test", "t0")).unwrap();
    let mut ports: Vec<u16> = meta.tablets.iter().filter_map(|t| t.leader()).map(|l| l.addr.port()).collect();
    ports.sort_unstable();
    ports.dedup();
    assert_eq!(ports, [3311, 3312]);
}

#[test]
fn unknown_override_and_unknown_server_are_errors() {
    let mut o = HashMap::new();
    o.insert("s9".to_string(), SocketAddr::from(([127, 0, 0, 1], 1)));
    assert!(matches!(StaticSource::demo(&o), Err(MetadataError::Invalid(m)) if m.contains("s9")));
    let text = crate::metadata::static_file::DEMO_TOPOLOGY.replace(
        "leader = \"s1\", followers = [\"s2\"], readonly = [\"s3\"] },\n  { name = \"p1\"",
        "leader = \"sX\" },\n  { name = \"p1\"",
    );
    assert!(StaticSource::from_toml(&text, &HashMap::new()).is_err());
}

#[test]
fn placement_for_unknown_partition_is_an_error() {
    let text = r#"
        [[zones]]
        name = "z"
        [[servers]]
        name = "a"
        addr = "127.0.0.1:1"
        zone = "z"
        [[tenants]]
        name = "t"
        [[tables]]
        tenant = "t"
        database = "d"
        name = "x"
        ddl = "CREATE TABLE x (k INT) PARTITION BY RANGE(k) (PARTITION lo VALUES LESS THAN (10), PARTITION hi VALUES LESS THAN MAXVALUE)"
        partitions = [ { name = "p0", leader = "a" } ]
    "#;
    let err = StaticSource::from_toml(text, &HashMap::new()).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.contains("unknown partition p0"), "{err}");
}

#[test]
fn subpartitioned_tablet_ids_and_explicit_ids() {
    let text = r#"
        [[zones]]
        name = "z"
        [[servers]]
        name = "a"
        addr = "127.0.0.1:1"
        zone = "z"
        [[tenants]]
        name = "t"
        [[tables]]
        tenant = "t"
        database = "d"
        name = "x"
        first_tablet_id = 100
        ddl = "CREATE TABLE x (a INT, b INT) PARTITION BY RANGE(a) SUBPARTITION BY HASH(b) SUBPARTITIONS 2 (PARTITION p0 VALUES LESS THAN (10), PARTITION p1 VALUES LESS THAN MAXVALUE)"
        partitions = [ { name = "p1sp1", tablet_id = 777, leader = "a" } ]
    "#;
    let src = StaticSource::from_toml(text, &HashMap::new()).unwrap();
    let meta = src.table(&TableKey::new("T", "D", "X")).unwrap();
    assert_eq!(meta.entry.part_num, 4);
    assert_eq!(meta.entry.tablet_ids(), [100, 101, 102, 777]);
    let loc =
        locate(meta.entry.scheme.as_ref().unwrap(), &[KeyValue::Int(50), KeyValue::Int(1)], &CastContext::default())
            .unwrap();
    assert_eq!((loc.name(), meta.entry.tablet_of(&loc)), ("p1sp1", Some(777)));
    assert_eq!(meta.tablets.len(), 1);
}

#[tokio::test]
async fn trait_answers() {
    let src = StaticSource::demo(&HashMap::new()).unwrap();
    let key = TableKey::new("SYS", "test", "t0");
    let meta = src.fetch_table(&key).await.unwrap();
    assert_eq!(meta.entry.key, key);
    let locs = src.fetch_tablets(&key, &[200_065, 1]).await.unwrap();
    assert_eq!(locs.len(), 1);
    assert_eq!(src.fetch_tenant_servers("sys").await.unwrap().servers.len(), 3);
    assert!(matches!(src.fetch_table(&TableKey::new("sys", "test", "zz")).await, Err(MetadataError::NotFound(_))));
    assert!(matches!(src.fetch_tenant_servers("other").await, Err(MetadataError::NotFound(_))));
}
