//! Connections a routed session keeps between its statements (parked, as ODP's client sessions
//! keep their server sessions): the session's next statement to the same key takes its own
//! connection back without the key's idle list, whose lock every session of the key takes, and
//! without a return to it. The pool takes a parked connection back for another request when the
//! key has no idle connection and no free slot ([`KeyPool::take_parked`]), so parking never
//! makes a request wait that would not have waited before.
//!
//! A parked connection keeps its slot and counts as in use. It is parked only while its key has a
//! free slot and no request waits for one; on a full key it goes to the idle list as before.
//! Otherwise, with more sessions than connections, every statement would take another session's
//! parked connection and reset it (COM_RESET_CONNECTION): measured with eight sysbench threads
//! over two connections per key, that halved the throughput; sharing through the idle list
//! prefers the connection a client used last. A parked connection is handed to the idle list (and
//! a waiter) when a request began to wait while it was being parked: a waiter counts itself, then
//! looks at the parked ones; a parker parks, then looks at the count; with a full fence on both
//! sides at least one of them sees the other.

use std::sync::atomic::{fence, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Instant;

use super::{Idle, KeyPool, PooledConn};

/// One session's parking spot for one key (an entry of its [`super::Homes`]).
#[derive(Default)]
pub(super) struct Spot {
    parked: Mutex<Option<Parked>>,
}

/// A parked connection and when it was parked (its idle time, for the checks on reuse).
pub(super) struct Parked {
    pub conn: PooledConn,
    pub since: Instant,
}

impl Parked {
    /// The connection as an idle one of the pool (it keeps its slot, its last client and its
    /// idle time).
    pub fn into_idle(self) -> Option<Idle> {
        self.conn.into_idle(self.since)
    }
}

impl Spot {
    /// A spot of `home`, registered there so that the pool can take back what it holds.
    pub fn new(home: &KeyPool) -> Arc<Spot> {
        let spot = Arc::new(Spot::default());
        home.register_spot(Arc::downgrade(&spot));
        spot
    }

    /// Parks `conn` (of `home`), unless the key is full or a request waits for one of its
    /// connections: then it goes back to the idle list, whose return tells a waiter.
    /// `since`: when the connection became idle.
    pub fn park(&self, home: &KeyPool, conn: PooledConn, since: Instant) {
        if home.waiting.load(Ordering::SeqCst) > 0 || home.slots.available_permits() == 0 {
            drop(conn);
            return;
        }
        let earlier = match self.parked.lock() {
            Ok(mut parked) => parked.replace(Parked { conn, since }),
            Err(_) => return,
        };
        drop(earlier);
        fence(Ordering::SeqCst);
        if home.waiting.load(Ordering::SeqCst) > 0 {
            // A request began to wait meanwhile, and may have looked before it was parked.
            drop(self.take());
        }
    }

    /// The parked connection, for its session.
    pub fn take(&self) -> Option<Parked> {
        self.parked.lock().ok()?.take()
    }

    /// The parked connection, for another request, unless its session is taking it right now.
    fn take_if_free(&self) -> Option<Parked> {
        self.parked.try_lock().ok()?.take()
    }
}

/// The parking spots of one key: registered once per session and key, forgotten lazily.
#[derive(Default)]
pub(super) struct Spots {
    list: Vec<Weak<Spot>>,
    /// The list's length after the last sweep of spots whose session is gone: the next sweep
    /// waits until it has doubled, so that a registration costs O(1) amortised.
    swept: usize,
}

impl Spots {
    fn live(&self) -> impl Iterator<Item = Arc<Spot>> + '_ {
        self.list.iter().filter_map(Weak::upgrade)
    }
}

impl KeyPool {
    /// Lists `spot` among the key's parking spots (once per session and key).
    fn register_spot(&self, spot: Weak<Spot>) {
        let mut spots = self.spots.lock().unwrap_or_else(|e| e.into_inner());
        if spots.list.len() >= (2 * spots.swept).max(16) {
            spots.list.retain(|s| s.strong_count() > 0);
            spots.swept = spots.list.len();
        }
        spots.list.push(spot);
    }

    /// Closes the parked connections that `close` picks (by their idle time) and are not being
    /// taken back right now; returns how many.
    pub(super) fn close_parked(&self, close: impl Fn(Instant) -> bool) -> usize {
        let Ok(spots) = self.spots.lock() else { return 0 };
        let mut n = 0;
        for spot in spots.live() {
            let Ok(mut parked) = spot.parked.try_lock() else { continue };
            if parked.as_ref().is_some_and(|p| close(p.since)) {
                // Its connection and slot go with the idle form, unreturned.
                drop(parked.take().and_then(Parked::into_idle));
                n += 1;
            }
        }
        n
    }

    /// Connections parked now (those whose session is not taking them back at this moment).
    pub(super) fn parked_count(&self) -> usize {
        let Ok(spots) = self.spots.lock() else { return 0 };
        let parked = |s: &Arc<Spot>| s.parked.try_lock().is_ok_and(|p| p.is_some());
        spots.live().filter(parked).count()
    }

    /// A connection parked by some session, taken for another request (which resets it: its
    /// last client is the other session).
    pub(super) fn take_parked(&self) -> Option<Idle> {
        // Counted waiters fence before they look (see the module docs).
        fence(Ordering::SeqCst);
        let taken = self.spots.lock().ok()?.live().find_map(|s| s.take_if_free());
        taken.and_then(Parked::into_idle)
    }
}
