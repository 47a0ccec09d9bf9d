//! The locator on paused virtual time: fetch on miss, bounded waits, stale answers, replicas.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use crate::metadata::{MetaFuture, MetadataError, MetadataSource, StaticSource};
use crate::partition::{locate, CastContext, KeyValue};
use crate::topology::{
    CacheConfig, Cluster, Feedback, FeedbackScope, Locator, Lookup, ReplicaType, Role, TableKey, TableMeta,
    TabletLocation, TenantServers, ZoneType,
};

/// The demo topology behind a configurable delay, with call counters and a failure switch.
struct SlowSource {
    inner: StaticSource,
    delay: Duration,
    table_calls: AtomicUsize,
    tablet_calls: AtomicUsize,
    fail: AtomicBool,
}

impl SlowSource {
    fn new(delay_ms: u64) -> Arc<SlowSource> {
        Arc::new(SlowSource {
            inner: StaticSource::demo(&HashMap::new()).unwrap(),
            delay: Duration::from_millis(delay_ms),
            table_calls: AtomicUsize::new(0),
            tablet_calls: AtomicUsize::new(0),
            fail: AtomicBool::new(false),
        })
    }

    async fn pause(&self) -> Result<(), MetadataError> {
        tokio::time::sleep(self.delay).await;
        if self.fail.load(Ordering::SeqCst) {
            return Err(MetadataError::Connect("switched off".into()));
        }
        Ok(())
    }
}

impl MetadataSource for SlowSource {
    fn name(&self) -> &'static str {
        "slow"
    }
    fn fetch_cluster(&self) -> MetaFuture<'_, Cluster> {
        self.inner.fetch_cluster()
    }
    fn fetch_tenant_servers<'a>(&'a self, tenant: &'a str) -> MetaFuture<'a, TenantServers> {
        Box::pin(async move {
            self.pause().await?;
            self.inner.fetch_tenant_servers(tenant).await
        })
    }
    fn fetch_table<'a>(&'a self, key: &'a TableKey) -> MetaFuture<'a, TableMeta> {
        Box::pin(async move {
            self.table_calls.fetch_add(1, Ordering::SeqCst);
            self.pause().await?;
            let mut meta = self.inner.fetch_table(key).await?;
            meta.tablets.clear(); // make tablet lookups go to the source too
            Ok(meta)
        })
    }
    fn fetch_tablets<'a>(&'a self, key: &'a TableKey, ids: &'a [u64]) -> MetaFuture<'a, Vec<TabletLocation>> {
        Box::pin(async move {
            self.tablet_calls.fetch_add(1, Ordering::SeqCst);
            self.pause().await?;
            self.inner.fetch_tablets(key, ids).await
        })
    }
}

fn t0_key() -> TableKey {
    TableKey::new("sys", "test", "T0")
}

async fn locator(src: &Arc<SlowSource>) -> Locator {
    let l = Locator::new(src.clone(), CacheConfig::default());
    l.refresh_cluster().await.unwrap();
    l
}

#[tokio::test(start_paused = true)]
async fn miss_waits_for_the_fetch_then_hits() {
    let src = SlowSource::new(100);
    let loc = locator(&src).await;
    let start = Instant::now();
    let first = loc.table(&t0_key()).await;
    assert!(matches!(first, Lookup::Found { from_remote: true, .. }), "{first:?}");
    assert_eq!(start.elapsed(), Duration::from_millis(100));
    let second = loc.table(&t0_key()).await;
    assert!(matches!(second, Lookup::Found { from_remote: false, .. }));
    assert_eq!(src.table_calls.load(Ordering::SeqCst), 1);
}

#[tokio::test(start_paused = true)]
async fn slow_fetch_is_not_waited_for_beyond_the_bound() {
    let src = SlowSource::new(2_000);
    let loc = locator(&src).await;
    let start = Instant::now();
    let r = loc.table(&t0_key()).await;
    assert!(matches!(r, Lookup::NotAvailable(_)), "{r:?}");
    assert_eq!(start.elapsed(), Duration::from_millis(500), "wait_missing_ms bounds the lookup");
    // A concurrent lookup joins the same fetch instead of starting another.
    let again = loc.table(&t0_key()).await;
    assert!(matches!(again, Lookup::NotAvailable(_)));
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(matches!(loc.table(&t0_key()).await, Lookup::Found { .. }));
    assert_eq!(src.table_calls.load(Ordering::SeqCst), 1);
}

#[tokio::test(start_paused = true)]
async fn dirty_entry_serves_stale_and_refreshes_in_background() {
    let src = SlowSource::new(100);
    let loc = locator(&src).await;
    let filled = loc.table(&t0_key()).await;
    assert!(filled.value().is_some());
    let scope = FeedbackScope { tenant: "sys".into(), table: Some(t0_key()), tablet_id: None };
    loc.feedback(&scope, Feedback::NotMaster);
    // Within the 5 s minimum refetch interval: stale, no fetch.
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert!(loc.table(&t0_key()).await.is_stale());
    assert_eq!(src.table_calls.load(Ordering::SeqCst), 1);
    // Due: the lookup answers at once with the stale entry (wait_stale_ms = 0) and starts a refetch.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let start = Instant::now();
    assert!(loc.table(&t0_key()).await.is_stale());
    assert_eq!(start.elapsed(), Duration::ZERO);
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert!(matches!(loc.table(&t0_key()).await, Lookup::Found { from_remote: false, .. }));
    assert_eq!(src.table_calls.load(Ordering::SeqCst), 2);
}

#[tokio::test(start_paused = true)]
async fn failed_fetch_is_retried_only_after_the_interval() {
    let src = SlowSource::new(10);
    src.fail.store(true, Ordering::SeqCst);
    let loc = locator(&src).await;
    let r = loc.table(&t0_key()).await;
    assert!(matches!(&r, Lookup::NotAvailable(why) if why.contains("switched off")), "{r:?}");
    assert!(matches!(loc.table(&t0_key()).await, Lookup::NotAvailable(_)));
    assert_eq!(src.table_calls.load(Ordering::SeqCst), 1, "negative entry: no refetch before 5 s");
    src.fail.store(false, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(matches!(loc.table(&t0_key()).await, Lookup::Found { from_remote: true, .. }));
    assert_eq!(src.table_calls.load(Ordering::SeqCst), 2);
}

fn addr(port: u16) -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], port))
}

#[tokio::test(start_paused = true)]
async fn replicas_of_a_located_row() {
    let src = SlowSource::new(1);
    let loc = locator(&src).await;
    let table = loc.table(&t0_key()).await.value().cloned().unwrap();
    let scheme = table.scheme.as_ref().unwrap();
    let row = locate(scheme, &[KeyValue::Int(123)], &CastContext::default()).unwrap();
    assert_eq!((row.name(), row.tablet_id), ("p3", Some(200_065)));
    let reps = loc.replicas(&t0_key(), Some(&row)).await.unwrap();
    assert_eq!(reps.tablet_id, Some(200_065));
    assert!(reps.from_remote, "the tablet entry was fetched on demand");
    let leader = reps.leader().unwrap();
    assert_eq!(leader.replica.addr, addr(3312));
    assert_eq!(
        (leader.server.name(), leader.server.zone_name(), leader.server.region(), leader.server.idc()),
        ("s2".to_string(), "zone2", "sh", "idc2")
    );
    let ro = reps.replicas.iter().find(|r| r.replica.replica_type == ReplicaType::ReadOnly).unwrap();
    assert_eq!(
        (ro.replica.role, ro.server.zone_type(), ro.server.region()),
        (Role::Follower, ZoneType::ReadOnly, "hz")
    );
    assert_eq!(reps.replicas.len(), 3);
    assert_eq!(src.tablet_calls.load(Ordering::SeqCst), 1);
}

#[tokio::test(start_paused = true)]
async fn non_partitioned_table_and_tenant_servers() {
    let src = SlowSource::new(1);
    let loc = locator(&src).await;
    let reps = loc.replicas(&TableKey::new("sys", "test", "t1"), None).await.unwrap();
    assert_eq!((reps.tablet_id, reps.leader().map(|r| r.replica.addr)), (None, Some(addr(3311))));
    let servers = loc.tenant_placed("sys").await.unwrap();
    let zones: Vec<&str> = servers.iter().map(|s| s.zone_name()).collect();
    assert_eq!(zones, ["zone1", "zone2", "zone3"]);
    assert_eq!(loc.tenant("SYS").map(|t| t.primary_zone.weight("zone3")), Some(Some(1)));
    let missing = loc.replicas(&TableKey::new("sys", "test", "nope"), None).await;
    assert!(missing.is_err());
}

#[tokio::test(start_paused = true)]
async fn cluster_refresh_task_stops_with_the_locator() {
    let src = SlowSource::new(1);
    let loc = Locator::new(src.clone(), CacheConfig::default());
    let task = loc.spawn_cluster_refresh();
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(loc.cluster().servers().len(), 3);
    drop(loc);
    tokio::time::sleep(Duration::from_secs(25)).await;
    assert!(task.is_finished());
}
