//! Counters sharded by thread: a thread adds to cells of its own with a plain load and store (no
//! atomic read-modify-write, and no cache line another core writes), and a reading sums the
//! shards. The per-statement counters of every routed statement are recorded this way: on
//! shared cells, every statement of every worker took the same cache lines from the other
//! cores.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Threads that get a shard of their own, in the order they first record. Later threads share
/// one more shard, with atomic adds.
const OWN_SHARDS: usize = 32;
/// Cells in a 64-byte cache line.
const LINE: usize = 8;

/// The next thread's shard.
static NEXT_SHARD: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// This thread's shard (`usize::MAX` until it first records).
    static SHARD: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// This thread's shard: below [`OWN_SHARDS`] it is this thread's alone, for the life of the
/// process (an index is never handed out twice); [`OWN_SHARDS`] is the shared one.
fn shard() -> usize {
    SHARD.with(|s| {
        let mut i = s.get();
        if i == usize::MAX {
            i = NEXT_SHARD.fetch_add(1, Ordering::Relaxed).min(OWN_SHARDS);
            s.set(i);
        }
        i
    })
}

/// `width` counters, one row of cells per shard.
#[derive(Debug)]
pub struct Sharded {
    width: usize,
    /// Cells from one row to the next: the width and at least a cache line more, so that no
    /// line holds cells of two rows.
    stride: usize,
    cells: Box<[AtomicU64]>,
}

impl Sharded {
    /// `width` counters at zero.
    pub fn new(width: usize) -> Self {
        let stride = (width + LINE).div_ceil(LINE) * LINE;
        let cells = (0..stride * (OWN_SHARDS + 1)).map(|_| AtomicU64::new(0)).collect();
        Sharded { width, stride, cells }
    }

    /// Adds `n` to counter `slot` (ignored when out of range).
    pub fn add(&self, slot: usize, n: u64) {
        if slot >= self.width {
            return;
        }
        let shard = shard();
        let Some(cell) = self.cells.get(shard * self.stride + slot) else { return };
        if shard < OWN_SHARDS {
            // The only writer of this cell: a load and a store add exactly.
            cell.store(cell.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
        } else {
            cell.fetch_add(n, Ordering::Relaxed);
        }
    }

    /// Counter `slot`: the sum over the shards.
    pub fn get(&self, slot: usize) -> u64 {
        if slot >= self.width {
            return 0;
        }
        self.cells.iter().skip(slot).step_by(self.stride).fold(0, |sum, c| sum.wrapping_add(c.load(Ordering::Relaxed)))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn adds_from_many_threads_are_all_counted() {
        // More threads than own shards: the later ones share the last shard.
        let counters = Arc::new(Sharded::new(3));
        let threads: Vec<_> = (0..OWN_SHARDS + 8)
            .map(|_| {
                let c = Arc::clone(&counters);
                std::thread::spawn(move || {
                    for _ in 0..1000 {
                        c.add(0, 1);
                        c.add(2, 5);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("thread");
        }
        let n = (OWN_SHARDS + 8) as u64 * 1000;
        assert_eq!((counters.get(0), counters.get(1), counters.get(2)), (n, 0, 5 * n));
        counters.add(3, 1);
        assert_eq!(counters.get(3), 0, "out of range");
    }

    #[test]
    fn rows_share_no_cache_line() {
        let c = Sharded::new(8);
        assert!(c.stride >= c.width + LINE && c.stride.is_multiple_of(LINE), "{c:?}");
    }
}
