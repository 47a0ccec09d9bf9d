//! The cache: fills, tablet invalidation on re-creation, and response feedback.

use std::time::Duration;

use tokio::time::Instant;

use crate::metadata::StaticSource;
use crate::topology::{
    Action, CacheConfig, EntryState, Feedback, FeedbackScope, LocationCache, TableKey, TabletKey, TenantServers,
};

fn key() -> TableKey {
    TableKey::new("sys", "test", "t0")
}

fn tablet(id: u64) -> TabletKey {
    TabletKey { table: key(), tablet_id: id }
}

/// A cache holding t0 (with its 8 tablets) and the tenant server list, filled at `t0`.
fn filled(t0: Instant) -> LocationCache {
    let src = StaticSource::demo(&Default::default()).unwrap();
    let cache = LocationCache::new(CacheConfig::default());
    cache.fill_table(&key(), src.table(&key()).unwrap().clone(), t0);
    cache.fill_tenant(TenantServers { tenant: "sys".into(), servers: vec![] }, t0);
    cache
}

fn scope(tablet_id: Option<u64>) -> FeedbackScope {
    FeedbackScope { tenant: "sys".into(), table: Some(key()), tablet_id }
}

#[test]
fn table_fill_brings_its_tablets() {
    let t0 = Instant::now();
    let cache = filled(t0);
    assert_eq!(cache.tables.state(&key()), Some(EntryState::Avail));
    assert_eq!(cache.tablets.len(), 8);
    let p = cache.tablets.probe(&tablet(200065), t0);
    assert!(p.fresh);
    assert_eq!(p.value.unwrap().leader().map(|r| r.addr.port()), Some(3312));
    let all: Vec<u64> = cache.tablets_of(&key()).iter().map(|t| t.tablet_id).collect();
    assert_eq!(all, (200_062..200_070).collect::<Vec<_>>());
}

#[test]
fn recreated_table_drops_old_tablets() {
    let t0 = Instant::now();
    let cache = filled(t0);
    let src = StaticSource::demo(&Default::default()).unwrap();
    let mut meta = src.table(&key()).unwrap().clone();
    meta.entry.table_id = Some(999);
    meta.tablets.truncate(1);
    cache.fill_table(&key(), meta, t0);
    assert_eq!(cache.tablets.len(), 1);
}

#[test]
fn not_master_delays_the_refetch_of_the_tablet() {
    let t0 = Instant::now();
    let cache = filled(t0);
    let at = t0 + Duration::from_secs(30);
    let fx = cache.feedback(&scope(Some(200065)), Feedback::NotMaster, at);
    assert!(fx.tablet && !fx.table && !fx.tenant);
    assert_eq!(cache.tablets.state(&tablet(200065)), Some(EntryState::Dirty));
    assert_eq!(cache.tables.state(&key()), Some(EntryState::Avail));
    assert_eq!(cache.tablets.probe(&tablet(200065), at + Duration::from_secs(4)).action, Action::Use);
    assert_eq!(cache.tablets.probe(&tablet(200065), at + Duration::from_secs(5)).action, Action::Fetch);
}

#[test]
fn connect_failure_and_partition_miss_dirty_the_target() {
    let t0 = Instant::now();
    let cache = filled(t0);
    let later = t0 + Duration::from_secs(30);
    assert!(cache.feedback(&scope(Some(200062)), Feedback::PartitionMiss, later).tablet);
    assert_eq!(cache.tablets.probe(&tablet(200062), later).action, Action::Fetch, "last update is old: refetch now");
    assert!(cache.feedback(&scope(None), Feedback::ConnectFailed, later).table);
    assert_eq!(cache.tables.state(&key()), Some(EntryState::Dirty));
    let no_table = FeedbackScope { tenant: "sys".into(), table: None, tablet_id: None };
    assert!(cache.feedback(&no_table, Feedback::ConnectFailed, later).tenant);
}

#[test]
fn tenant_not_in_server_dirties_table_tablet_and_tenant() {
    let t0 = Instant::now();
    let cache = filled(t0);
    let fx = cache.feedback(&scope(Some(200063)), Feedback::from_server_error(5150).unwrap(), t0);
    assert!(fx.table && fx.tablet && fx.tenant);
    assert_eq!(cache.tenants.state(&"sys".to_string()), Some(EntryState::Dirty));
}

#[test]
fn partition_hit_renews() {
    let t0 = Instant::now();
    let cache = filled(t0);
    let at = t0 + Duration::from_secs(7);
    let fx = cache.feedback(&scope(Some(200064)), Feedback::PartitionHit, at);
    assert_eq!(fx, Default::default());
    let valid = cache.tablets.with(&tablet(200064), |e| e.last_valid()).flatten();
    assert_eq!(valid, Some(at));
    assert_eq!(cache.tablets.state(&tablet(200064)), Some(EntryState::Avail));
}

#[test]
fn error_codes() {
    assert_eq!(Feedback::from_server_error(4038), Some(Feedback::NotMaster));
    assert_eq!(Feedback::from_server_error(4124), Some(Feedback::ConnectFailed));
    assert_eq!(Feedback::from_server_error(5150), Some(Feedback::TenantNotInServer));
    assert_eq!(Feedback::from_server_error(1146), Some(Feedback::SchemaChanged));
    assert_eq!(Feedback::from_server_error(1735), Some(Feedback::SchemaChanged));
    assert_eq!(Feedback::from_server_error(1062), None);
}

#[test]
fn schema_change_dirties_the_table_entry() {
    let t0 = Instant::now();
    let cache = filled(t0);
    let later = t0 + Duration::from_secs(30);
    let fx = cache.feedback(&scope(Some(200063)), Feedback::SchemaChanged, later);
    assert!(fx.table && !fx.tablet && !fx.tenant);
    assert_eq!(cache.tables.probe(&key(), later).action, Action::Fetch);
}

#[test]
fn missing_tablets_in_a_batch_answer_are_failures() {
    let t0 = Instant::now();
    let cache = LocationCache::new(CacheConfig::default());
    cache.fill_tablets(&key(), &[1, 2], vec![crate::topology::TabletLocation { tablet_id: 1, replicas: vec![] }], t0);
    assert_eq!(cache.tablets.state(&tablet(1)), Some(EntryState::Avail));
    assert_eq!(cache.tablets.state(&tablet(2)), Some(EntryState::Dirty));
}
