//! A session's memory of its table ([`RouteMemo`]) gives the routes the cache lookups give, and
//! is not used once the cache, the cluster model or the clock says the lookups could answer
//! otherwise. Demo topology: t0 is HASH(c1) PARTITIONS 8, p3's leader s2 (127.0.0.1:3312).

use std::time::Duration;

use super::tests::ctx;
use super::*;
use crate::topology::{Feedback, FeedbackScope, Replica, TabletLocation};

/// The demo planner's configuration (seed 7), table and tablet entries expiring after
/// `expiry_ms` (0: never).
fn config(expiry_ms: u64) -> RoutingConfig {
    let cache = crate::topology::CacheConfig { location_expiry_ms: expiry_ms, ..Default::default() };
    RoutingConfig { cache, ..super::tests::config(7) }
}

/// Routes `c1 = key` on t0 with the session's memory.
async fn route(planner: &Planner, memo: &mut RouteMemo, key: i64) -> Planned {
    let sql = format!("SELECT * FROM t0 WHERE c1 = {key}");
    let a = sql::analyze(&sql);
    planner.route(&a, &ctx(), memo, Instant::now()).await
}

/// Routes `c1 = key` until the route comes from memory: the first routes fill the cache, and a
/// route whose lookups changed it is not remembered. At most three.
async fn settled(planner: &Planner, memo: &mut RouteMemo, key: i64) -> Planned {
    for _ in 0..2 {
        let p = route(planner, memo, key).await;
        if p.remembered {
            return p;
        }
    }
    let p = route(planner, memo, key).await;
    assert!(p.remembered, "c1 = {key} is not remembered after three routes");
    p
}

fn server(p: &Planned) -> String {
    p.decision.as_ref().map(|d| d.server().to_string()).unwrap_or_else(|e| format!("error {e}"))
}

#[tokio::test]
async fn a_remembered_route_is_the_route_the_lookups_give() {
    let planner = Planner::from_config(&config(0)).await.unwrap();
    // The cache holds t0 and its tablets, and t1.
    let t1 = sql::analyze("SELECT * FROM t1 WHERE c1 = 1");
    planner.route(&t1, &ctx(), &mut RouteMemo::default(), Instant::now()).await;
    for key in 0..64 {
        route(&planner, &mut RouteMemo::default(), key).await;
    }
    let mut memo = RouteMemo::default();
    let mut remembered = 0;
    // Two passes over keys of every partition: each tablet is looked up once, in the first.
    for pass in 0..2 {
        for key in 0..64 {
            let from_memory = route(&planner, &mut memo, key).await;
            let looked_up = route(&planner, &mut RouteMemo::default(), key).await;
            assert!(!looked_up.remembered);
            assert!(pass == 0 || from_memory.remembered, "c1 = {key}: the second pass is remembered");
            remembered += usize::from(from_memory.remembered);
            assert_eq!(from_memory.decision, looked_up.decision, "c1 = {key}");
            assert_eq!(from_memory.location, looked_up.location, "c1 = {key}");
            assert_eq!(from_memory.tablet_id, looked_up.tablet_id, "c1 = {key}");
            assert_eq!(from_memory.table, looked_up.table, "c1 = {key}");
            assert_eq!(from_memory.cache, looked_up.cache, "c1 = {key}");
        }
    }
    assert_eq!(remembered, 128 - 8, "one lookup per tablet");
    // Another table (not partitioned): the memory of t0 does not answer for it; then both
    // are remembered.
    let other = planner.route(&t1, &ctx(), &mut memo, Instant::now()).await;
    assert!(!other.remembered);
    for key in 0..8 {
        let from_memory = planner.route(&t1, &ctx(), &mut memo, Instant::now()).await;
        assert!(from_memory.remembered, "t1");
        assert_eq!(
            from_memory.decision,
            planner.route(&t1, &ctx(), &mut RouteMemo::default(), Instant::now()).await.decision
        );
        assert!(route(&planner, &mut memo, key).await.remembered, "t0 still");
    }
}

#[tokio::test]
async fn a_new_leader_in_the_cache_is_routed_to_at_once() {
    let planner = Planner::from_config(&config(0)).await.unwrap();
    let mut memo = RouteMemo::default();
    let before = settled(&planner, &mut memo, 123).await;
    assert_eq!(server(&before), "127.0.0.1:3312", "p3's leader");
    // p3's leadership moves to s1.
    let key = before.table.as_deref().cloned().unwrap();
    let id = before.tablet_id.unwrap();
    let s1: std::net::SocketAddr = "127.0.0.1:3311".parse().unwrap();
    let s2: std::net::SocketAddr = "127.0.0.1:3312".parse().unwrap();
    let replica = |addr, role| Replica { addr, role, replica_type: crate::topology::ReplicaType::Full };
    let replicas = vec![replica(s1, crate::topology::Role::Leader), replica(s2, crate::topology::Role::Follower)];
    planner.locator().cache().fill_tablets(
        &key,
        &[id],
        vec![TabletLocation { tablet_id: id, replicas }],
        Instant::now(),
    );
    let after = route(&planner, &mut memo, 123).await;
    assert!(!after.remembered, "the cache changed");
    assert_eq!(server(&after), "127.0.0.1:3311", "the new leader");
    settled(&planner, &mut memo, 123).await;
}

#[tokio::test]
async fn an_entry_made_dirty_or_a_new_cluster_model_is_looked_up_again() {
    let planner = Planner::from_config(&config(0)).await.unwrap();
    let mut memo = RouteMemo::default();
    settled(&planner, &mut memo, 5).await;
    planner.locator().refresh_cluster().await.unwrap();
    assert!(!route(&planner, &mut memo, 5).await.remembered, "after a cluster refresh");
    let p = settled(&planner, &mut memo, 5).await;
    // A failure report makes the entries dirty: they are stale until refetched, never remembered.
    let scope = FeedbackScope { tenant: "sys".into(), table: p.table.as_deref().cloned(), tablet_id: p.tablet_id };
    planner.locator().feedback(&scope, Feedback::AllFailed);
    for _ in 0..3 {
        let after = route(&planner, &mut memo, 5).await;
        assert!(!after.remembered, "after feedback");
        assert_eq!(after.cache, Some(crate::metrics::CacheLookup::Stale));
    }
}

#[tokio::test(start_paused = true)]
async fn an_expired_entry_is_looked_up_again() {
    let planner = Planner::from_config(&config(1_000)).await.unwrap();
    let mut memo = RouteMemo::default();
    settled(&planner, &mut memo, 7).await;
    tokio::time::advance(Duration::from_millis(999)).await;
    assert!(route(&planner, &mut memo, 7).await.remembered, "not expired yet");
    tokio::time::advance(Duration::from_millis(1)).await;
    let expired = route(&planner, &mut memo, 7).await;
    assert!(!expired.remembered, "expired");
    assert_eq!(expired.cache, Some(crate::metrics::CacheLookup::Stale), "the lookup found the entry expired");
}

#[tokio::test]
async fn a_session_remembers_a_bounded_number_of_tablets() {
    // One table of 64 partitions, all led by one server.
    let dir = std::env::temp_dir().join(format!("route-memo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let partitions: Vec<String> = (0..64).map(|i| format!("{{ name = \"p{i}\", leader = \"s1\" }}")).collect();
    let topology = format!(
        "cluster = \"wide\"\n\
         [[zones]]\nname = \"zone1\"\nregion = \"r1\"\nidc = \"idc1\"\ntype = \"ReadWrite\"\n\
         [[servers]]\nname = \"s1\"\naddr = \"127.0.0.1:3311\"\nzone = \"zone1\"\n\
         [[tenants]]\nname = \"sys\"\nid = 1\nprimary_zone = \"zone1\"\n\
         [[tables]]\ntenant = \"sys\"\ndatabase = \"test\"\nname = \"wide\"\n\
         ddl = \"CREATE TABLE wide (id INT NOT NULL PRIMARY KEY) PARTITION BY HASH(id) PARTITIONS 64\"\n\
         partitions = [{}]\n",
        partitions.join(", ")
    );
    let path = dir.join("topology.toml");
    std::fs::write(&path, topology).unwrap();
    let cfg = RoutingConfig { topology: Some(path.display().to_string()), ..config(0) };
    let planner = Planner::from_config(&cfg).await.unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let mut memo = RouteMemo::default();
    let mut remembered = 0;
    // Keys in a scrambled order (a fixed linear congruential sequence): tablets come back.
    let mut state: u64 = 1;
    for _ in 0..640 {
        state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
        // The high bits: the low ones of this generator cycle through the 64 partitions in order.
        let key = state >> 16;
        let sql = format!("SELECT * FROM wide WHERE id = {key}");
        let a = sql::analyze(&sql);
        let p = planner.route(&a, &ctx(), &mut memo, Instant::now()).await;
        assert!(p.location.is_some(), "id = {key}: located");
        remembered += usize::from(p.remembered);
        assert!(memo.tablets() <= 32, "{} tablets remembered after id = {key}", memo.tablets());
    }
    // Half the tablets fit: about half the routes come from memory.
    assert!(remembered > 100, "{remembered} of 640 remembered");
}
