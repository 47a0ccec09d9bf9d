//! Statement text, row parsing (good and bad rows), bounds, scheme assembly from shuffled rows,
//! and the source end to end over the fake sys tenant.

use std::net::SocketAddr;

use super::bounds;
use super::cluster;
use super::fake::{row, topology, FakeSys};
use super::location::{self, LocationRow};
use super::part_info::PartInfo;
use super::partitions::{scheme, PartRow};
use super::sql;
use super::SysViewSource;
use crate::metadata::{MetadataError, MetadataSource};
use crate::partition::{locate, BoundSpec, CastContext, ColumnType, KeyValue, PartExpr, PartFunc, PartitionError};
use crate::topology::{ReplicaType, Role, ServerStatus, TableKey, ZoneStatus, ZoneType};

fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

fn invalid<T: std::fmt::Debug>(r: Result<T, MetadataError>) -> String {
    match r {
        Err(MetadataError::Invalid(m)) => m,
        other => panic!("expected Invalid, got {other:?}"),
    }
}

#[test]
fn statements_are_odps() {
    assert_eq!(
        sql::table_entry("t'1", "db1", "orders"),
        "SELECT /*+READ_CONSISTENCY(WEAK)*/ A.tablet_id, A.svr_ip, A.sql_port, A.table_id, A.role, A.part_num, \
         A.replica_num, A.schema_version, A.replica_type, A.dup_replica_type, A.table_type, B.svr_port as svr_port \
         FROM oceanbase.__all_virtual_proxy_schema A inner join oceanbase.DBA_OB_SERVERS B \
         ON A.svr_ip = B.svr_ip and A.sql_port = B.sql_port WHERE A.tenant_name = 't''1' AND A.database_name = 'db1' \
         AND A.table_name = 'orders' AND A.tablet_id = 0 ORDER BY A.role ASC LIMIT 9223372036854775807"
    );
    assert!(sql::tablets("t", "d", "x", &[3, 4])
        .contains("AND A.tablet_id IN (3, 4) ORDER BY A.tablet_id, A.role ASC LIMIT"));
    assert!(sql::tenant_servers("t").contains(
        "A.database_name = 'oceanbase' AND A.table_name = '__all_dummy' AND A.sql_port > 0 ORDER BY A.tablet_id ASC, role ASC"
    ));
    assert!(sql::partition_info(7, "t")
        .ends_with("WHERE table_id = 7 and tenant_name = 't' order by part_key_idx LIMIT 16"));
    assert!(sql::partitions(7, "t").contains("WHERE tenant_name = 't' LIMIT 1) LIMIT 1), -1) as ls_id"));
    assert!(
        sql::sub_partitions(7, "t").ends_with("WHERE A.table_id = 7 AND A.tenant_name = 't'LIMIT 9223372036854775807")
    );
    assert!(sql::servers().contains("WHERE svr_port > 0 ORDER BY zone LIMIT"));
    assert!(sql::tenants().ends_with("where previous_locality is null and tenant_id != 1"));
    assert!(sql::single_leaders(&[1002, 1004]).contains("tenant_id IN (1002, 1004)) s"));
}

#[test]
fn cluster_rows() {
    let z = cluster::zone(&row(&["z3", "ACTIVE", "0", "sh", "NULL", "ReadOnly"])).unwrap();
    assert_eq!(
        (z.region.as_str(), z.idc.as_str(), z.zone_type, z.status),
        ("sh", "", ZoneType::ReadOnly, ZoneStatus::Active)
    );
    let z = cluster::zone(&row(&["z4", "INACTIVE", "0", "hz", "hz-c", "NULL"])).unwrap();
    assert_eq!((z.zone_type, z.status), (ZoneType::ReadWrite, ZoneStatus::Inactive));
    let s = cluster::server(&row(&["10.0.1.1", "2882", "2881", "z1", "INACTIVE", "1", "1"])).unwrap();
    assert_eq!(
        (s.addr, s.rpc_port, s.status, s.in_service, s.stopping),
        (addr("10.0.1.1:2881"), Some(2882), ServerStatus::Inactive, true, true)
    );
    assert_eq!(s.name, "10.0.1.1:2881");
    let t = cluster::tenant(&row(&["t1", "1002", "FULL{1}@z1", "NULL", "z1;z2", "NORMAL"])).unwrap();
    assert_eq!((t.id, t.primary_zone.weight("z2")), (Some(1002), Some(1)));
    assert_eq!(
        cluster::single_leader(&row(&["t2", "10.0.1.1:2881", "1"])).unwrap(),
        Some(("t2".into(), addr("10.0.1.1:2881")))
    );
    assert_eq!(cluster::single_leader(&row(&["t1", "10.0.1.1:2881", "0"])).unwrap(), None);
    assert_eq!(cluster::single_leader(&row(&["NULL", "10.0.1.1:2881", "1"])).unwrap(), None);
}

#[test]
fn bad_cluster_rows_are_errors() {
    assert!(invalid(cluster::zone(&row(&["z1", "NULL", "0", "hz", "a", "ReadWrite"]))).contains("status"));
    assert!(invalid(cluster::zone(&row(&["z1", "MELTED", "0", "hz", "a", "ReadWrite"]))).contains("MELTED"));
    assert!(invalid(cluster::zone(&row(&["z1", "ACTIVE"]))).contains("expected 6"));
    assert!(invalid(cluster::server(&row(&["10.0.1.x", "2882", "2881", "z1", "ACTIVE", "1", "0"]))).contains("svr_ip"));
    assert!(
        invalid(cluster::server(&row(&["10.0.1.1", "2882", "70000", "z1", "ACTIVE", "1", "0"]))).contains("svr_port")
    );
    assert!(invalid(cluster::server(&row(&["10.0.1.1", "2882", "0", "z1", "ACTIVE", "1", "0"]))).contains("port 0"));
    assert!(invalid(cluster::server(&row(&["10.0.1.1", "2882", "2881", "z1", "ACTIVE", "2", "0"]))).contains("boolean"));
    assert!(invalid(cluster::tenant(&row(&["t1", "-3", "", "NULL", "", "NORMAL"]))).contains("negative"));
    assert!(invalid(cluster::single_leader(&row(&["t2", "nowhere", "1"]))).contains("leader_addr"));
}

#[test]
fn location_rows() {
    let r = |cells: &[&str]| LocationRow::parse(&row(cells));
    let leader = r(&["7", "10.0.1.1", "2881", "500001", "1", "4", "3", "NULL", "0", "0", "3", "2882"]).unwrap();
    assert_eq!((leader.schema_version, leader.table_type().name()), (None, "USER TABLE"));
    let ro = r(&["7", "10.0.3.1", "2881", "500001", "2", "4", "3", "1", "16", "1", "NULL", "2882"]).unwrap();
    assert!(ro.duplicate);
    let placeholder = r(&["0", "0.0.0.0", "0", "500001", "1", "4", "3", "1", "0", "0", "3", "NULL"]).unwrap();
    assert_eq!(placeholder.addr, None);
    let no_role = r(&["7", "10.0.2.1", "2881", "500001", "0", "4", "3", "1", "0", "0", "3", "2882"]).unwrap();
    let reps = location::replicas([&ro, &placeholder, &no_role, &leader]);
    assert_eq!(reps.len(), 2, "placeholder and invalid role skipped");
    assert_eq!((reps[0].role, reps[1].replica_type), (Role::Leader, ReplicaType::ReadOnly), "leader first");
    let other = r(&["8", "10.0.2.1", "2881", "500001", "1", "4", "3", "1", "0", "0", "3", "2882"]).unwrap();
    let tablets = location::tablet_locations(&[other.clone(), ro, leader, placeholder], &[7, 8, 9]);
    assert_eq!(tablets.iter().map(|t| (t.tablet_id, t.replicas.len())).collect::<Vec<_>>(), [(7, 2), (8, 1)]);
    assert!(
        invalid(r(&["7", "10.0.1.1", "2881", "500001", "NULL", "4", "3", "1", "0", "0", "3", "2882"])).contains("role")
    );
    assert!(invalid(r(&["x", "10.0.1.1", "2881", "500001", "1", "4", "3", "1", "0", "0", "3", "2882"]))
        .contains("tablet_id"));
    assert!(invalid(r(&["7", "10.0.1.1", "2881"])).contains("expected 12"));
}

/// A partition-info row: level, part_type, sub_type, expr, sub_expr, part_num, key level, idx,
/// name, ObObjType, collation.
#[allow(clippy::too_many_arguments)]
fn info_row(
    level: &str,
    pt: &str,
    spt: &str,
    e: &str,
    se: &str,
    n: &str,
    kl: &str,
    ki: &str,
    name: &str,
    ty: &str,
    coll: &str,
) -> Vec<Option<String>> {
    row(&["0", level, "2", e, se, pt, n, spt, "6", kl, ki, name, ty, coll, "32", "10", "2", "", ""])
}

#[test]
fn part_info_columns_and_levels() {
    let rows = vec![
        info_row("2", "3", "0", "c1", "c2", "3", "2", "2", "c2", "5", "63"),
        info_row("2", "3", "0", "c1", "c2", "3", "1", "1", "c1", "4", "63"),
    ];
    let info = PartInfo::parse(&rows).unwrap().unwrap();
    assert_eq!(info.keys.iter().map(|k| k.name.as_str()).collect::<Vec<_>>(), ["c1", "c2"], "part_key_idx order");
    assert_eq!(info.level1().unwrap().func, PartFunc::Range);
    assert_eq!(info.level2().unwrap().unwrap().func, PartFunc::Hash);
    let cols = info.columns();
    assert_eq!(
        (cols[0].ty.clone(), cols[1].ty.clone()),
        (ColumnType::Int { bytes: 4, unsigned: false }, ColumnType::Int { bytes: 8, unsigned: false })
    );
    let key = PartInfo::parse(&[info_row("1", "2", "NULL", "", "", "4", "1", "0", "k", "22", "45")]).unwrap().unwrap();
    assert_eq!((key.level1().unwrap().func, key.primary_key()), (PartFunc::KeyImplicit, vec!["k".to_string()]));
    assert_eq!(key.columns()[0].ty, ColumnType::VarChar { len: 32 });
    assert_eq!(key.columns()[0].collation, "utf8mb4_general_ci");
    let classic_date =
        PartInfo::parse(&[info_row("1", "1", "NULL", "d", "", "4", "1", "0", "d", "19", "63")]).unwrap().unwrap();
    assert!(matches!(classic_date.columns()[0].ty, ColumnType::Other(_)), "classic DATE under KEY is not calculated");
    let expr =
        PartInfo::parse(&[info_row("1", "0", "NULL", "c1+1", "", "4", "1", "0", "c1", "4", "63")]).unwrap().unwrap();
    assert!(matches!(expr.level1().unwrap().expr, PartExpr::Expression(_)));
    assert!(PartInfo::parse(&[]).unwrap().is_none());
    assert!(invalid(PartInfo::parse(&[info_row("3", "0", "NULL", "c", "", "4", "1", "0", "c", "4", "63")]))
        .contains("part_level"));
    assert!(invalid(PartInfo::parse(&[info_row("1", "NULL", "NULL", "c", "", "4", "1", "0", "c", "4", "63")]))
        .contains("part_type"));
}

#[test]
fn bound_texts() {
    assert_eq!(bounds::range("MAXVALUE").unwrap(), BoundSpec::LessThan(vec![None]));
    assert_eq!(
        bounds::range("'m',5").unwrap(),
        BoundSpec::LessThan(vec![Some(KeyValue::str("m")), Some(KeyValue::Int(5))])
    );
    assert_eq!(bounds::range("'a,b', MAXVALUE").unwrap(), BoundSpec::LessThan(vec![Some(KeyValue::str("a,b")), None]));
    assert_eq!(bounds::list("NULL,4").unwrap(), BoundSpec::In(vec![vec![KeyValue::Null], vec![KeyValue::Int(4)]]));
    assert_eq!(
        bounds::list("(1,'a'),(2,'b')").unwrap(),
        BoundSpec::In(vec![vec![KeyValue::Int(1), KeyValue::str("a")], vec![KeyValue::Int(2), KeyValue::str("b")]])
    );
    assert_eq!(bounds::list("DEFAULT").unwrap(), BoundSpec::Default);
    for bad in ["", "1,,2", "(1", "1 2", "DEFAULT,1", "abc"] {
        assert!(bounds::list(bad).is_err(), "{bad}");
    }
    assert!(bounds::bound(PartFunc::Range, None).is_err());
    assert_eq!(bounds::bound(PartFunc::Hash, None).unwrap(), BoundSpec::None);
}

fn part(tablet: u64, id: i64, name: &str, subs: &str, bound: &str, pos: &str) -> PartRow {
    PartRow::partition(&row(&[&tablet.to_string(), "1001", &id.to_string(), name, "", subs, bound, pos])).unwrap()
}

fn sub(tablet: u64, pid: i64, sid: i64, name: &str, pos: &str) -> PartRow {
    PartRow::sub_partition(&row(&[
        &tablet.to_string(),
        "1001",
        &pid.to_string(),
        &sid.to_string(),
        name,
        "",
        "NULL",
        pos,
    ]))
    .unwrap()
}

#[test]
fn hash_partitions_follow_their_position_not_row_order() {
    let info =
        PartInfo::parse(&[info_row("1", "0", "NULL", "id", "", "4", "1", "0", "id", "5", "63")]).unwrap().unwrap();
    let rows: Vec<PartRow> = [2u64, 0, 3, 1]
        .iter()
        .map(|&p| part(200 + p, p as i64, &format!("p{p}"), "0", "NULL", &p.to_string()))
        .collect();
    let sc = scheme("orders", &info, &rows, &[]).unwrap();
    assert_eq!(
        sc.partitions.iter().map(|p| p.tablet_id).collect::<Vec<_>>(),
        [Some(200), Some(201), Some(202), Some(203)]
    );
    let loc = locate(&sc, &[KeyValue::Int(7)], &CastContext::default()).unwrap();
    assert_eq!((&*loc.part_name, loc.tablet_id), ("p3", Some(203)));
    let mut gap = rows.clone();
    gap[0].position = Some(9);
    assert!(invalid(scheme("orders", &info, &gap, &[])).contains("position"));
    let mut none = rows.clone();
    none[1].position = None;
    assert!(invalid(scheme("orders", &info, &none, &[])).contains("NULL"));
    assert!(invalid(scheme("orders", &info, &rows[..3], &[])).contains("part_num 4"));
}

#[test]
fn range_hash_two_levels_from_shuffled_rows() {
    let info = PartInfo::parse(&[
        info_row("2", "3", "0", "c1", "c2", "3", "1", "1", "c1", "4", "63"),
        info_row("2", "3", "0", "c1", "c2", "3", "2", "2", "c2", "5", "63"),
    ])
    .unwrap()
    .unwrap();
    let parts = vec![
        part(0, 2, "p2", "2", "MAXVALUE", "0"),
        part(0, 0, "p0", "2", "100", "0"),
        part(0, 1, "p1", "2", "1000", "0"),
    ];
    let mut subs = Vec::new();
    for (pid, sid) in [(1, 1), (2, 0), (0, 1), (1, 0), (2, 1), (0, 0)] {
        subs.push(sub(300 + 10 * pid as u64 + sid as u64, pid, sid, &format!("p{pid}sp{sid}"), &sid.to_string()));
    }
    let sc = scheme("events", &info, &parts, &subs).unwrap();
    assert_eq!(sc.partitions.iter().map(|p| &*p.name).collect::<Vec<_>>(), ["p0", "p1", "p2"]);
    let loc = locate(&sc, &[KeyValue::Int(150), KeyValue::Int(3)], &CastContext::default()).unwrap();
    assert_eq!((loc.name(), loc.tablet_id), ("p1sp1", Some(311)));
    let loc = locate(&sc, &[KeyValue::Int(-5), KeyValue::Int(4)], &CastContext::default()).unwrap();
    assert_eq!((loc.name(), loc.tablet_id), ("p0sp0", Some(300)));
    assert!(invalid(scheme("events", &info, &parts, &subs[1..])).contains("sub_part_num"));
    let mut orphan = subs.clone();
    orphan[0].part_id = 9;
    assert!(invalid(scheme("events", &info, &parts, &orphan)).contains("no parent"));
}

#[test]
fn not_calculable_partitioning_is_a_partition_error() {
    let interval =
        PartInfo::parse(&[info_row("1", "7", "NULL", "c1", "", "1", "1", "0", "c1", "4", "63")]).unwrap().unwrap();
    let rows = vec![part(200, 0, "p0", "0", "10", "0")];
    assert!(matches!(
        scheme("t", &interval, &rows, &[]),
        Err(MetadataError::Partition(PartitionError::Unsupported(_)))
    ));
    let range =
        PartInfo::parse(&[info_row("1", "3", "NULL", "c1", "", "1", "1", "0", "c1", "4", "63")]).unwrap().unwrap();
    let garbage = vec![part(200, 0, "p0", "0", "10 20", "0")];
    assert!(matches!(scheme("t", &range, &garbage, &[]), Err(MetadataError::Partition(_))));
}

#[tokio::test]
async fn source_over_the_fake_sys_tenant() {
    let fake = FakeSys::default();
    *fake.views.lock().unwrap() = topology();
    let src = SysViewSource::new(fake, "obcluster");
    let cluster = src.fetch_cluster().await.unwrap();
    assert_eq!((cluster.name.as_str(), cluster.zones().len(), cluster.servers().len()), ("obcluster", 3, 6));
    assert_eq!(cluster.tenant("t2").unwrap().single_leader, Some(addr("10.0.1.1:2881")));
    assert_eq!(cluster.tenant("t1").unwrap().single_leader, None);
    let servers = src.fetch_tenant_servers("t1").await.unwrap();
    assert_eq!(servers.servers.len(), 6);
    assert!(matches!(src.fetch_tenant_servers("nobody").await, Err(MetadataError::NotFound(_))));
    let key = TableKey::new("t1", "db1", "orders");
    let meta = src.fetch_table(&key).await.unwrap();
    assert_eq!(
        (meta.entry.table_id, meta.entry.part_num, meta.entry.tablet_ids()),
        (Some(500_001), 4, vec![200_001, 200_002, 200_003, 200_004])
    );
    assert!(meta.entry.replicas.is_empty() && meta.tablets.is_empty());
    let locs = src.fetch_tablets(&key, &[200_004, 200_002, 999]).await.unwrap();
    assert_eq!(locs.iter().map(|l| l.tablet_id).collect::<Vec<_>>(), [200_002, 200_004]);
    assert_eq!(locs[0].leader().unwrap().addr, addr("10.0.1.2:2881"));
    assert!(src.client().log.lock().unwrap().last().unwrap().contains("A.tablet_id IN (200004, 200002, 999)"));
    assert!(matches!(src.fetch_table(&TableKey::new("t1", "db1", "nope")).await, Err(MetadataError::NotFound(_))));
    src.client().views.lock().unwrap().no_ls_locations = true;
    assert!(src.fetch_cluster().await.unwrap().tenant("t2").unwrap().single_leader.is_none(), "optional query");
    src.client().views.lock().unwrap().servers[0][3] = Some("z9".into());
    assert!(matches!(src.fetch_cluster().await, Err(MetadataError::Topology(_))), "server in an unknown zone");
}
