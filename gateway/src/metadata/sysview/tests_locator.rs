//! The sys-view source behind the `Locator` on paused virtual time: NOT_MASTER feedback and the
//! minimum refetch interval, the periodic cluster refresh, tenant placement.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use super::fake::{topology, FakeSys};
use super::SysViewSource;
use crate::partition::{locate, CastContext, KeyValue};
use crate::topology::{CacheConfig, Feedback, FeedbackScope, Locator, ServerStatus, TableKey};

fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

/// A locator over the fake sys tenant; stale lookups wait up to 1 s for their refetch.
async fn setup() -> (Arc<FakeSys>, Locator) {
    let fake = Arc::new(FakeSys::default());
    *fake.views.lock().unwrap() = topology();
    let config = CacheConfig { wait_stale_ms: 1_000, ..CacheConfig::default() };
    let locator = Locator::new(Arc::new(SysViewSource::new(Arc::clone(&fake), "obcluster")), config);
    locator.refresh_cluster().await.unwrap();
    (fake, locator)
}

async fn settle() {
    for _ in 0..20 {
        tokio::task::yield_now().await;
    }
}

#[tokio::test(start_paused = true)]
async fn not_master_refetches_the_tablet_after_the_minimum_interval() {
    let (fake, locator) = setup().await;
    let key = TableKey::new("t1", "db1", "orders");
    let table = locator.table(&key).await;
    let scheme = table.value().unwrap().scheme.clone().unwrap();
    let loc = locate(&scheme, &[KeyValue::Int(7)], &CastContext::default()).unwrap();
    assert_eq!((&*loc.part_name, loc.tablet_id), ("p3", Some(200_004)));
    let before = locator.replicas(&key, Some(&loc)).await.unwrap();
    let leader = before.leader().unwrap();
    assert_eq!(
        (leader.replica.addr, leader.server.zone_name(), leader.server.region()),
        (addr("10.0.2.2:2881"), "z2", "hz")
    );
    assert!(before.from_remote);

    fake.set_role(200_004, "10.0.2.2", 2);
    fake.set_role(200_004, "10.0.1.2", 1);
    let scope = FeedbackScope { tenant: "t1".into(), table: Some(key.clone()), tablet_id: Some(200_004) };
    assert!(locator.feedback(&scope, Feedback::NotMaster).tablet);
    let fetches = fake.count("A.tablet_id = 200004");

    tokio::time::advance(Duration::from_millis(4_999)).await;
    let early = locator.replicas(&key, Some(&loc)).await.unwrap();
    assert!(early.stale, "dirty, refetch not due yet");
    assert_eq!(early.leader().unwrap().replica.addr, addr("10.0.2.2:2881"));
    assert_eq!(fake.count("A.tablet_id = 200004"), fetches, "no refetch inside the interval");

    tokio::time::advance(Duration::from_millis(1)).await;
    let after = locator.replicas(&key, Some(&loc)).await.unwrap();
    assert!(!after.stale && after.from_remote);
    assert_eq!(after.leader().unwrap().replica.addr, addr("10.0.1.2:2881"));
    assert_eq!(fake.count("A.tablet_id = 200004"), fetches + 1);
}

#[tokio::test(start_paused = true)]
async fn cluster_refresh_every_fifteen_seconds() {
    let (fake, locator) = setup().await;
    let handle = locator.spawn_cluster_refresh();
    settle().await;
    let zones = fake.count("DBA_OB_ZONES");
    fake.views.lock().unwrap().servers[5][4] = Some("INACTIVE".into());
    tokio::time::advance(Duration::from_millis(14_999)).await;
    settle().await;
    assert_eq!(fake.count("DBA_OB_ZONES"), zones);
    assert_eq!(locator.cluster().server(addr("10.0.3.2:2881")).unwrap().status, ServerStatus::Active);
    tokio::time::advance(Duration::from_millis(1)).await;
    settle().await;
    assert_eq!(fake.count("DBA_OB_ZONES"), zones + 1);
    assert_eq!(locator.cluster().server(addr("10.0.3.2:2881")).unwrap().status, ServerStatus::Inactive);
    handle.abort();
}

#[tokio::test(start_paused = true)]
async fn tenant_servers_are_placed_in_zones() {
    let (_fake, locator) = setup().await;
    let placed = locator.tenant_placed("t1").await.unwrap();
    assert_eq!(placed.len(), 6);
    let read_only: Vec<_> = placed.iter().filter(|p| p.zone_type().is_read_only()).map(|p| p.addr).collect();
    assert_eq!(read_only, [addr("10.0.3.1:2881"), addr("10.0.3.2:2881")]);
    assert_eq!(locator.tenant("t1").unwrap().primary_zone.weight("z2"), Some(1));
}
