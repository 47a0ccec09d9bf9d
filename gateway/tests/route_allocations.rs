//! A routed statement's planning allocates nothing once its session remembers the table: the
//! route (partition, candidates, decision) and the attempt order are counted by an allocator
//! that sees this thread's allocations only (docs/performance.md §3).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use gateway::config::RoutingConfig;
use gateway::planner::{Planned, Planner, RouteMemo, StatementContext};
use gateway::sql;
use tokio::time::Instant;

/// Counts the allocations of the thread that turned counting on.
struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static COUNT: Cell<usize> = const { Cell::new(0) };
}

fn note() {
    // `try_with`: the thread's locals may be gone while it exits.
    let _ = COUNTING.try_with(|on| {
        if on.get() {
            let _ = COUNT.try_with(|c| c.set(c.get() + 1));
        }
    });
}

// SAFETY: every call is passed on to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        // SAFETY: the caller's contract, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The allocations `f` makes on this thread.
fn allocations<T>(f: impl FnOnce() -> T) -> (T, usize) {
    COUNT.with(|c| c.set(0));
    COUNTING.with(|on| on.set(true));
    let out = f();
    COUNTING.with(|on| on.set(false));
    (out, COUNT.with(Cell::get))
}

/// Polls `fut` once: the remembered route never waits.
fn ready<T>(fut: impl Future<Output = T>) -> T {
    let mut cx = Context::from_waker(Waker::noop());
    match pin!(fut).poll(&mut cx) {
        Poll::Ready(v) => v,
        Poll::Pending => panic!("a remembered route waited"),
    }
}

fn demo_planner() -> (tokio::runtime::Runtime, Planner) {
    let config = RoutingConfig::demo(None);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let planner = rt.block_on(Planner::from_config(&config)).expect("demo topology");
    (rt, planner)
}

#[test]
fn a_remembered_point_select_is_routed_without_allocating() {
    let (rt, planner) = demo_planner();
    let _in_runtime = rt.enter();
    let ctx = StatementContext {
        tenant: "sys".into(),
        database: Some("test".into()),
        autocommit: true,
        ..Default::default()
    };
    let mut memo = RouteMemo::default();
    // t0 is HASH(c1) PARTITIONS 8 over three servers, one per zone.
    let first = sql::analyze("SELECT c FROM t0 WHERE c1=5017");
    let planned: Planned = rt.block_on(planner.route(&first, &ctx, &mut memo, Instant::now()));
    // The first lookup fills the location cache; the next finds it there, fresh, and the
    // session remembers what it found.
    let again = rt.block_on(planner.route(&first, &ctx, &mut memo, Instant::now()));
    assert!(!again.remembered && again.cache.is_some());
    let decision = planned.decision.as_ref().expect("a route");
    assert!(planned.location.is_some(), "the statement names its partition");
    // A strong read: the leader, then the other read-write zone's replica (zone3 is read-only).
    assert_eq!(decision.order().count(), 2, "candidates in order");
    let part = planned.location.as_ref().map(|l| l.part_idx);
    drop(planned);
    // Another key of the same partition (HASH of an integer is its value mod 8): the partition
    // computed again, its candidates remembered, the decision made again.
    let next = sql::analyze("SELECT c FROM t0 WHERE c1=5025");
    let (planned, n) = allocations(|| ready(planner.route(&next, &ctx, &mut memo, Instant::now())));
    assert!(planned.remembered, "the session's memory served the second statement");
    assert_eq!(planned.location.as_ref().map(|l| l.part_idx), part);
    assert_eq!(n, 0, "allocations routing a remembered point select");
    let ((), n) = allocations(|| drop(planned));
    assert_eq!(n, 0);
}
