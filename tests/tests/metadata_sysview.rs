//! The OceanBase sys-view metadata source (docs/routing.md §12) against a real MariaDB that plays the
//! sys tenant: database `oceanbase` holds tables named and shaped like the views ODP reads
//! (`__all_virtual_proxy_schema`, `DBA_OB_SERVERS`, `DBA_OB_ZONES`, `DBA_OB_TENANTS`,
//! `CDB_OB_LS_LOCATIONS`, `__all_virtual_proxy_partition_info`, `__all_virtual_proxy_partition`,
//! `__all_virtual_proxy_sub_partition`, `__all_virtual_tablet_to_ls`), filled with a multi-zone
//! topology. `gateway::metadata::sysview::SysViewSource` runs ODP's statements over `mysql_async`
//! and the `Locator` turns them into placed replicas; the general log shows what was sent.
//!
//! Fixture: zones z1, z2 (region hz, IDCs hz-1/hz-2, ReadWrite) and z3 (region sh, ReadOnly);
//! servers 10.0.{1,2,3}.{1,2}:2881 (RPC 2882) plus one that never started (RPC port 0); tenants
//! sys (skipped), t1 (primary zone `z1;z2`), t2 (all log-stream leaders on 10.0.1.2), t3 (in a
//! locality change, skipped); `t1.db1.orders` HASH(id) PARTITIONS 8, `t1.db1.events`
//! RANGE(c1) SUBPARTITION BY HASH(c2) SUBPARTITIONS 2 (3 × 2 tablets), leaders spread over the
//! four read-write servers, one follower in the other read-write zone and one READONLY replica in
//! z3 per tablet; `t1.db1.dict` a non-partitioned duplicate table on all six servers. Partition
//! rows are inserted shuffled (no primary key: the table returns them in insertion order).
//!
//! Run: `cargo test -p gateway-tests --test metadata_sysview -- --nocapture`.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use gateway::metadata::information_schema::MysqlClient;
use gateway::metadata::sysview::SysViewSource;
use gateway::metadata::{MetadataError, MetadataSource};
use gateway::partition::{locate, CastContext, KeyValue, Location};
use gateway::topology::{
    CacheConfig, Feedback, FeedbackScope, Locator, ReplicaType, ServerStatus, TableKey, ZoneStatus, ZoneType,
};
use gateway_tests::{sys_tenant, MariaDb};
use tokio::time::Instant;

const RW: [&str; 4] = ["10.0.1.1", "10.0.1.2", "10.0.2.1", "10.0.2.2"];
const RO: [&str; 2] = ["10.0.3.1", "10.0.3.2"];
const ORDERS_ID: u64 = 500_001;
const EVENTS_ID: u64 = 500_002;

fn addr(ip: &str) -> SocketAddr {
    format!("{ip}:2881").parse().unwrap()
}

fn topology_sql() -> String {
    let mut sql = String::from(
        "INSERT INTO oceanbase.DBA_OB_ZONES (zone, status, idc, region, type) VALUES
           ('z1','ACTIVE','hz-1','hz','ReadWrite'), ('z2','ACTIVE','hz-2','hz','ReadWrite'),
           ('z3','ACTIVE','sh-1','sh','ReadOnly');
         INSERT INTO oceanbase.DBA_OB_TENANTS (tenant_id, tenant_name, tenant_type, primary_zone, locality, previous_locality, status) VALUES
           (1,'sys','SYS','RANDOM','FULL{1}@z1, FULL{1}@z2, FULL{1}@z3',NULL,'NORMAL'),
           (1002,'t1','USER','z1;z2','FULL{1}@z1, FULL{1}@z2, READONLY{1}@z3',NULL,'NORMAL'),
           (1004,'t2','USER','RANDOM','FULL{1}@z1, FULL{1}@z2, READONLY{1}@z3',NULL,'NORMAL'),
           (1006,'t3','USER','z1','FULL{1}@z1','FULL{1}@z2','NORMAL');
         INSERT INTO oceanbase.CDB_OB_LS_LOCATIONS (tenant_id, ls_id, svr_ip, sql_port, role) VALUES
           (1002,1,'10.0.1.1',2881,'LEADER'), (1002,1001,'10.0.1.1',2881,'LEADER'), (1002,1002,'10.0.2.1',2881,'LEADER'),
           (1002,1001,'10.0.2.1',2881,'FOLLOWER'), (1004,1,'10.0.2.1',2881,'LEADER'), (1004,1001,'10.0.1.2',2881,'LEADER'),
           (1004,1002,'10.0.1.2',2881,'LEADER'), (1004,1001,'10.0.2.2',2881,'FOLLOWER');
         INSERT INTO oceanbase.DBA_OB_SERVERS (svr_ip, svr_port, zone, sql_port, status, start_service_time, stop_time) VALUES
           ('10.0.9.9',0,'z1',0,'INACTIVE',NULL,NULL)",
    );
    for ip in RW.iter().chain(&RO) {
        let zone = format!("z{}", &ip[5..6]);
        sql.push_str(&format!(", ('{ip}',2882,'{zone}',2881,'ACTIVE',NOW(),NULL)"));
    }
    sql.push_str(";\n");
    sql
}

/// One `__all_virtual_proxy_schema` row.
#[allow(clippy::too_many_arguments)]
fn loc(
    table: &str,
    db: &str,
    tenant: &str,
    tablet: u64,
    ip: &str,
    table_id: u64,
    role: u8,
    part_num: u64,
    rtype: u8,
    dup: u8,
) -> String {
    format!("('{tenant}','{db}','{table}',{tablet},'{ip}',2881,{table_id},{role},{part_num},3,3,1700000000,{rtype},{dup},100,1002,0)")
}

/// Leader, follower (other read-write zone) and read-only replica of tablet number `k`.
fn placement(k: usize) -> [(&'static str, u8, u8); 3] {
    [(RW[k % 4], 1, 0), (RW[(k + 2) % 4], 2, 0), (RO[k % 2], 2, 16)]
}

fn locations_sql() -> String {
    let mut rows = Vec::new();
    for ip in RW.iter().chain(&RO) {
        rows.push(loc("__all_dummy", "oceanbase", "t1", 0, ip, 1, 2, 1, 0, 0));
    }
    for ip in ["10.0.1.2", "10.0.2.1", "10.0.3.1"] {
        rows.push(loc("__all_dummy", "oceanbase", "t2", 0, ip, 1, 2, 1, 0, 0));
    }
    for p in 0..8usize {
        for (ip, role, rtype) in placement(p) {
            rows.push(loc("orders", "db1", "t1", 200_001 + p as u64, ip, ORDERS_ID, role, 8, rtype, 0));
            if p == 0 {
                rows.push(loc("orders", "db1", "t1", 0, ip, ORDERS_ID, role, 8, rtype, 0));
            }
        }
    }
    for k in 0..6usize {
        for (ip, role, rtype) in placement(k + 1) {
            rows.push(loc("events", "db1", "t1", 200_101 + k as u64, ip, EVENTS_ID, role, 6, rtype, 0));
            if k == 0 {
                rows.push(loc("events", "db1", "t1", 0, ip, EVENTS_ID, role, 6, rtype, 0));
            }
        }
    }
    for (i, ip) in RW.iter().chain(&RO).enumerate() {
        let (role, rtype) = if i == 0 {
            (1, 0)
        } else if i < 4 {
            (2, 0)
        } else {
            (2, 16)
        };
        rows.push(loc("dict", "db1", "t1", 0, ip, 500_003, role, 1, rtype, 1));
    }
    format!("INSERT INTO oceanbase.__all_virtual_proxy_schema VALUES {};\n", rows.join(",\n"))
}

fn partitions_sql() -> String {
    let info = "INSERT INTO oceanbase.__all_virtual_proxy_partition_info (tenant_name, table_id, tenant_id, template_num,
          part_level, part_key_num, part_key_level, part_key_idx, part_key_name, part_key_type, part_key_collation_type,
          part_key_length, part_key_precision, part_key_scale, part_key_extra, part_key_expr, part_key_rowkey_idx,
          part_expr, sub_part_expr, part_type, part_num, part_space, sub_part_type, sub_part_num, sub_part_space, all_part_num)
        VALUES ('t1',500001,1002,0,1,1,1,0,'id',5,63,-1,20,0,'','',0,'id','',0,8,0,NULL,0,0,8),
               ('t1',500002,1002,0,2,2,2,2,'c2',5,63,-1,20,0,'','',1,'c1','c2',3,3,0,0,0,0,6),
               ('t1',500002,1002,0,2,2,1,1,'c1',4,63,-1,11,0,'','',2,'c1','c2',3,3,0,0,0,0,6);\n";
    let mut sql = info.to_string();
    let mut parts = Vec::new();
    for p in [5u64, 2, 7, 0, 3, 6, 1, 4] {
        parts.push(format!("('t1',{ORDERS_ID},{p},1002,'p{p}',0,'',NULL,'',NULL,{p},{},0,0,0)", 200_001 + p));
    }
    for (p, bound) in [(2u64, "MAXVALUE"), (0, "100"), (1, "1000")] {
        parts.push(format!("('t1',{EVENTS_ID},{p},1002,'p{p}',0,'',NULL,'{bound}',X'00',0,0,2,0,0)"));
    }
    sql.push_str(&format!("INSERT INTO oceanbase.__all_virtual_proxy_partition VALUES {};\n", parts.join(",\n")));
    let mut subs = Vec::new();
    for (p, sp) in [(1u64, 1u64), (2, 0), (0, 1), (1, 0), (2, 1), (0, 0)] {
        let tablet = 200_101 + 2 * p + sp;
        subs.push(format!("('t1',{EVENTS_ID},{p},{sp},1002,'p{p}sp{sp}',0,'',NULL,NULL,NULL,{sp},{tablet})"));
    }
    sql.push_str(&format!("INSERT INTO oceanbase.__all_virtual_proxy_sub_partition VALUES {};\n", subs.join(",\n")));
    let ls: Vec<String> = (0..8).map(|p| format!("(1002,{},{},{ORDERS_ID})", 200_001 + p, 1001 + p % 2)).collect();
    sql.push_str(&format!("INSERT INTO oceanbase.__all_virtual_tablet_to_ls VALUES {};\n", ls.join(", ")));
    sql
}

fn start_fixture() -> MariaDb {
    let db = MariaDb::start("metadata-sysview").expect("start mariadbd");
    let sql = format!("{}{}{}{}", sys_tenant::DDL, topology_sql(), locations_sql(), partitions_sql());
    db.cli().sql(&sql).expect("create the sys-view fixture");
    db
}

fn source(db: &MariaDb) -> SysViewSource<MysqlClient> {
    SysViewSource::new(MysqlClient::from_url(&db.url("root", "", None)).expect("url"), "obcluster")
}

fn at(scheme: &gateway::partition::TableScheme, vals: &[KeyValue]) -> Location {
    locate(scheme, vals, &CastContext::default()).expect("locate")
}

#[tokio::test]
async fn cluster_model_from_the_views() {
    let db = start_fixture();
    let cluster = source(&db).fetch_cluster().await.expect("cluster");
    let zones: Vec<_> = cluster
        .zones()
        .iter()
        .map(|z| (z.name.as_str(), z.region.as_str(), z.idc.as_str(), z.zone_type, z.status))
        .collect();
    assert_eq!(
        zones,
        [
            ("z1", "hz", "hz-1", ZoneType::ReadWrite, ZoneStatus::Active),
            ("z2", "hz", "hz-2", ZoneType::ReadWrite, ZoneStatus::Active),
            ("z3", "sh", "sh-1", ZoneType::ReadOnly, ZoneStatus::Active),
        ]
    );
    let regions: BTreeSet<&str> = cluster.zones().iter().map(|z| z.region.as_str()).collect();
    assert_eq!(regions.len(), 2);
    assert_eq!(cluster.servers().len(), 6, "the server with RPC port 0 is left out");
    let s = cluster.server(addr("10.0.2.2")).expect("10.0.2.2");
    assert_eq!(
        (s.name.as_str(), s.zone.as_str(), s.rpc_port, s.status, s.in_service, s.stopping),
        ("10.0.2.2:2881", "z2", Some(2882), ServerStatus::Active, true, false)
    );
    let tenants: Vec<&str> = cluster.tenants().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(tenants, ["t1", "t2"], "sys and the tenant in a locality change are skipped");
    let t1 = cluster.tenant("t1").unwrap();
    assert_eq!(
        (t1.id, t1.primary_zone.weight("z1"), t1.primary_zone.weight("z2"), t1.primary_zone.weight("z3")),
        (Some(1002), Some(0), Some(1), None)
    );
    assert_eq!(t1.single_leader, None, "t1's log-stream leaders are on two servers");
    assert_eq!(cluster.tenant("t2").unwrap().single_leader, Some(addr("10.0.1.2")));
    let log = db.general_log();
    assert!(log.contains("FROM oceanbase.DBA_OB_SERVERS WHERE svr_port > 0 ORDER BY zone LIMIT 9223372036854775807"));
    assert!(log
        .contains("/*+READ_CONSISTENCY(WEAK)*/ zone, status, 0 AS is_merging, region, idc AS spare4, type AS spare5"));
}

fn config() -> CacheConfig {
    CacheConfig { wait_missing_ms: 5_000, wait_stale_ms: 5_000, ..CacheConfig::default() }
}

#[tokio::test]
async fn tables_tablets_and_a_moved_leader() {
    let db = start_fixture();
    let locator = Locator::new(Arc::new(source(&db)), config());
    locator.refresh_cluster().await.expect("cluster");

    let t1: Vec<SocketAddr> = locator.tenant_placed("t1").await.expect("t1 servers").iter().map(|p| p.addr).collect();
    assert_eq!(t1.len(), 6);
    let mut t2: Vec<_> = locator
        .tenant_placed("t2")
        .await
        .expect("t2 servers")
        .iter()
        .map(|p| (p.addr, p.zone_name().to_string()))
        .collect();
    t2.sort();
    assert_eq!(
        t2,
        [
            (addr("10.0.1.2"), "z1".to_string()),
            (addr("10.0.2.1"), "z2".to_string()),
            (addr("10.0.3.1"), "z3".to_string())
        ]
    );

    // HASH(id) PARTITIONS 8: id 7 → p7 → tablet 200008 → leader 10.0.2.2 (z2), follower 10.0.1.2,
    // read-only replica 10.0.3.2.
    let orders = TableKey::new("t1", "db1", "orders");
    let entry = locator.table(&orders).await.value().cloned().expect("orders entry");
    assert_eq!((entry.table_id, entry.part_num, entry.duplicate), (Some(ORDERS_ID), 8, false));
    assert_eq!(entry.tablet_ids(), (200_001..=200_008).collect::<Vec<u64>>(), "partitions in position order");
    let scheme = entry.scheme.clone().expect("calculable");
    let loc = at(&scheme, &[KeyValue::Int(7)]);
    assert_eq!((&*loc.part_name, loc.tablet_id), ("p7", Some(200_008)));
    let reps = locator.replicas(&orders, Some(&loc)).await.expect("replicas");
    let leader = reps.leader().expect("leader");
    assert_eq!(
        (leader.replica.addr, leader.server.zone_name(), leader.server.region(), leader.server.idc()),
        (addr("10.0.2.2"), "z2", "hz", "hz-2")
    );
    let mut others: Vec<_> =
        reps.replicas.iter().skip(1).map(|r| (r.replica.addr, r.replica.replica_type, r.server.zone_type())).collect();
    others.sort_by_key(|o| o.0);
    assert_eq!(
        others,
        [
            (addr("10.0.1.2"), ReplicaType::Full, ZoneType::ReadWrite),
            (addr("10.0.3.2"), ReplicaType::ReadOnly, ZoneType::ReadOnly)
        ]
    );
    let mut leaders = BTreeSet::new();
    for id in 0..8 {
        let l = at(&scheme, &[KeyValue::Int(id)]);
        leaders.insert(
            locator.replicas(&orders, Some(&l)).await.expect("replicas").leader().expect("leader").replica.addr,
        );
    }
    assert_eq!(leaders.len(), 4, "leaders spread over the four read-write servers");

    // RANGE(c1) SUBPARTITION BY HASH(c2) SUBPARTITIONS 2, rows shuffled.
    let events = TableKey::new("t1", "db1", "events");
    let entry = locator.table(&events).await.value().cloned().expect("events entry");
    assert_eq!((entry.table_id, entry.part_num), (Some(EVENTS_ID), 6));
    let scheme = entry.scheme.clone().expect("calculable");
    assert_eq!(scheme.partitions.iter().map(|p| &*p.name).collect::<Vec<_>>(), ["p0", "p1", "p2"], "ordered by bound");
    let loc = at(&scheme, &[KeyValue::Int(150), KeyValue::Int(3)]);
    assert_eq!((loc.name(), loc.tablet_id), ("p1sp1", Some(200_104)));
    assert_eq!(at(&scheme, &[KeyValue::Int(-5), KeyValue::Int(4)]).tablet_id, Some(200_101));
    assert_eq!(at(&scheme, &[KeyValue::Int(5000), KeyValue::Int(2)]).name(), "p2sp0");
    let reps = locator.replicas(&events, Some(&loc)).await.expect("replicas");
    assert_eq!(reps.leader().expect("leader").replica.addr, addr(RW[(3 + 1) % 4]));

    // The duplicate, non-partitioned table: replicas on the entry, leader first.
    let dict = TableKey::new("t1", "db1", "dict");
    let reps = locator.replicas(&dict, None).await.expect("dict replicas");
    assert!(reps.table.duplicate && !reps.table.is_partitioned() && reps.tablet_id.is_none());
    assert_eq!(reps.replicas.len(), 6);
    assert_eq!(reps.leader().expect("leader").replica.addr, addr("10.0.1.1"));

    // Missing table: NotFound from the source, "not available" from the locator.
    assert!(matches!(
        source(&db).fetch_table(&TableKey::new("t1", "db1", "nope")).await,
        Err(MetadataError::NotFound(_))
    ));

    // Move the leader of tablet 200008 to 10.0.1.2; NOT_MASTER makes the entry dirty.
    let loc = at(&entry_scheme(&locator, &orders).await, &[KeyValue::Int(7)]);
    db.cli()
        .sql(
            "UPDATE oceanbase.__all_virtual_proxy_schema SET role = IF(svr_ip = '10.0.2.2', 2, 1) \
              WHERE table_name = 'orders' AND tablet_id = 200008 AND svr_ip IN ('10.0.2.2', '10.0.1.2')",
        )
        .expect("move leader");
    let scope = FeedbackScope { tenant: "t1".into(), table: Some(orders.clone()), tablet_id: Some(200_008) };
    assert!(locator.feedback(&scope, Feedback::NotMaster).tablet);
    let early = locator.replicas(&orders, Some(&loc)).await.expect("replicas");
    assert!(early.stale, "inside the minimum refetch interval the dirty entry serves as is");
    assert_eq!(early.leader().expect("leader").replica.addr, addr("10.0.2.2"));
    assert_eq!(tablet_queries(&db, 200_008), 1);

    // Injected clock: the same feedback stamped one minimum interval ago (no sleeping).
    let min_refetch = Duration::from_millis(config().min_refetch_ms);
    let earlier = Instant::now().checked_sub(min_refetch).expect("uptime above the interval");
    locator.cache().feedback(&scope, Feedback::NotMaster, earlier);
    let after = locator.replicas(&orders, Some(&loc)).await.expect("replicas");
    assert!(!after.stale && after.from_remote, "refetched");
    assert_eq!(after.leader().expect("leader").replica.addr, addr("10.0.1.2"));
    assert_eq!(tablet_queries(&db, 200_008), 2, "the tablet statement ran again on the server");

    // Server state changes show after the next cluster refresh.
    db.cli()
        .sql("UPDATE oceanbase.DBA_OB_SERVERS SET status = 'INACTIVE', stop_time = NOW() WHERE svr_ip = '10.0.3.2'")
        .expect("stop server");
    locator.refresh_cluster().await.expect("refresh");
    let s = locator.cluster().server(addr("10.0.3.2")).cloned().expect("still listed");
    assert_eq!((s.status, s.stopping), (ServerStatus::Inactive, true));
}

async fn entry_scheme(locator: &Locator, key: &TableKey) -> gateway::partition::TableScheme {
    locator.table(key).await.value().and_then(|e| e.scheme.clone()).expect("scheme")
}

/// How many times the server received the single-tablet statement for `tablet`.
fn tablet_queries(db: &MariaDb, tablet: u64) -> usize {
    db.general_log().matches(&format!("AND A.tablet_id = {tablet} ORDER BY A.role ASC")).count()
}
