//! Entry state transitions with hand-driven time.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use crate::topology::entry::{Action, Entry, EntryPolicy, EntryState};

fn policy() -> EntryPolicy {
    EntryPolicy { min_refetch: Duration::from_secs(5), fetch_timeout: Duration::from_secs(2), expiry: None }
}

fn secs(t0: Instant, s: u64) -> Instant {
    t0 + Duration::from_secs(s)
}

#[test]
fn born_building_avail() {
    let t0 = Instant::now();
    let mut e: Entry<u32> = Entry::new(t0);
    assert_eq!(e.state(), EntryState::Born);
    let p = e.probe(t0, &policy());
    assert_eq!((p.action, p.value.is_none(), e.state()), (Action::Fetch, true, EntryState::Building));
    let p = e.probe(t0, &policy());
    assert_eq!(p.action, Action::Wait, "a second lookup joins the fetch in progress");
    e.fill(Arc::new(7), t0);
    let p = e.probe(t0, &policy());
    assert_eq!((p.action, p.fresh, p.value.as_deref()), (Action::Use, true, Some(&7)));
    assert_eq!(e.state(), EntryState::Avail);
}

#[test]
fn dirty_waits_for_min_refetch_since_last_update() {
    let t0 = Instant::now();
    let mut e: Entry<u32> = Entry::new(t0);
    e.fill(Arc::new(1), t0);
    assert!(e.set_dirty());
    assert!(!e.set_dirty(), "set dirty is a compare-and-swap from AVAIL");
    let p = e.probe(secs(t0, 4), &policy());
    assert_eq!((p.action, p.fresh, p.value.as_deref()), (Action::Use, false, Some(&1)));
    assert_eq!(e.state(), EntryState::Dirty);
    let p = e.probe(secs(t0, 5), &policy());
    assert_eq!((p.action, p.value.as_deref()), (Action::Fetch, Some(&1)), "the old value keeps serving");
    assert_eq!(e.state(), EntryState::Updating);
    e.fill(Arc::new(2), secs(t0, 5));
    assert_eq!(e.state(), EntryState::Avail);
}

#[test]
fn dirty_long_after_fill_refetches_at_once() {
    let t0 = Instant::now();
    let mut e: Entry<u32> = Entry::new(t0);
    e.fill(Arc::new(1), t0);
    e.set_dirty();
    assert_eq!(e.probe(secs(t0, 60), &policy()).action, Action::Fetch);
}

#[test]
fn delay_update_stamps_the_update_time() {
    let t0 = Instant::now();
    let mut e: Entry<u32> = Entry::new(t0);
    e.fill(Arc::new(1), t0);
    assert!(e.delay_update(secs(t0, 100)));
    assert_eq!(e.last_update(), secs(t0, 100));
    assert_eq!(e.probe(secs(t0, 104), &policy()).action, Action::Use);
    assert_eq!(e.probe(secs(t0, 105), &policy()).action, Action::Fetch);
    assert!(!e.delay_update(secs(t0, 106)), "no delay update while UPDATING");
}

#[test]
fn failed_build_is_negative_cached_for_min_refetch() {
    let t0 = Instant::now();
    let mut e: Entry<u32> = Entry::new(t0);
    assert_eq!(e.probe(t0, &policy()).action, Action::Fetch);
    e.fail("no such table".into(), secs(t0, 1));
    assert_eq!(e.state(), EntryState::Dirty);
    assert_eq!(e.last_error(), Some("no such table"));
    let p = e.probe(secs(t0, 3), &policy());
    assert_eq!((p.action, p.value.is_none()), (Action::Use, true));
    assert_eq!(e.probe(secs(t0, 6), &policy()).action, Action::Fetch);
    assert_eq!(e.state(), EntryState::Building);
}

#[test]
fn failed_refresh_keeps_the_old_value() {
    let t0 = Instant::now();
    let mut e: Entry<u32> = Entry::new(t0);
    e.fill(Arc::new(1), t0);
    e.set_dirty();
    assert_eq!(e.probe(secs(t0, 10), &policy()).action, Action::Fetch);
    e.fail("timeout".into(), secs(t0, 11));
    let p = e.probe(secs(t0, 12), &policy());
    assert_eq!((p.action, p.fresh, p.value.as_deref()), (Action::Use, false, Some(&1)));
}

#[test]
fn lost_fetch_is_restarted_after_fetch_timeout() {
    let t0 = Instant::now();
    let mut e: Entry<u32> = Entry::new(t0);
    e.probe(t0, &policy());
    assert_eq!(e.probe(secs(t0, 1), &policy()).action, Action::Wait);
    assert_eq!(e.probe(secs(t0, 2), &policy()).action, Action::Fetch);
}

#[test]
fn expiry_turns_avail_into_a_refetch() {
    let t0 = Instant::now();
    let p = EntryPolicy { expiry: Some(Duration::from_secs(60)), ..policy() };
    let mut e: Entry<u32> = Entry::new(t0);
    e.fill(Arc::new(1), t0);
    assert!(e.probe(secs(t0, 59), &p).fresh);
    let probe = e.probe(secs(t0, 60), &p);
    assert_eq!((probe.action, probe.fresh, probe.value.as_deref()), (Action::Fetch, false, Some(&1)));
    assert_eq!(e.state(), EntryState::Updating);
}

#[test]
fn delete_then_rebuild() {
    let t0 = Instant::now();
    let mut e: Entry<u32> = Entry::new(t0);
    e.fill(Arc::new(1), t0);
    e.delete();
    assert_eq!((e.state(), e.value().is_none()), (EntryState::Deleted, true));
    assert_eq!(e.probe(t0, &policy()).action, Action::Fetch);
    assert_eq!(e.state(), EntryState::Building);
}

#[test]
fn renew_moves_last_valid_only_when_avail() {
    let t0 = Instant::now();
    let mut e: Entry<u32> = Entry::new(t0);
    e.fill(Arc::new(1), t0);
    e.renew(secs(t0, 3));
    assert_eq!(e.last_valid(), Some(secs(t0, 3)));
    e.set_dirty();
    e.renew(secs(t0, 4));
    assert_eq!(e.last_valid(), Some(secs(t0, 3)));
}

#[test]
fn state_names() {
    let names: Vec<&str> = [
        EntryState::Born,
        EntryState::Building,
        EntryState::Avail,
        EntryState::Dirty,
        EntryState::Updating,
        EntryState::Deleted,
    ]
    .iter()
    .map(|s| s.name())
    .collect();
    assert_eq!(names, ["BORN", "BUILDING", "AVAIL", "DIRTY", "UPDATING", "DELETED"]);
}
