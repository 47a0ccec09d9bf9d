//! A fixed-bucket latency histogram on relaxed atomics: recording is a bucket search over a
//! short constant table and two `fetch_add`s, no lock and no allocation.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::text::Page;

/// Upper bounds (`le`) of the route-decision histogram, in nanoseconds: 10 µs … 100 ms.
pub const ROUTE_DECISION_BUCKETS: &[u64] = &[
    10_000,
    25_000,
    50_000,
    100_000,
    250_000,
    500_000,
    1_000_000,
    2_500_000,
    5_000_000,
    10_000_000,
    25_000_000,
    50_000_000,
    100_000_000,
];

/// Upper bounds (`le`) of the end-to-end statement histogram, in nanoseconds: 100 µs … 10 s.
pub const STATEMENT_BUCKETS: &[u64] = &[
    100_000,
    250_000,
    500_000,
    1_000_000,
    2_500_000,
    5_000_000,
    10_000_000,
    25_000_000,
    50_000_000,
    100_000_000,
    250_000_000,
    500_000_000,
    1_000_000_000,
    2_500_000_000,
    5_000_000_000,
    10_000_000_000,
];

/// Observations per bucket (not cumulative; the last slot is `+Inf`) and their sum.
#[derive(Debug)]
pub struct Histogram {
    bounds: &'static [u64],
    counts: Box<[AtomicU64]>,
    sum_nanos: AtomicU64,
}

impl Histogram {
    /// An empty histogram over `bounds` (ascending, nanoseconds).
    pub fn new(bounds: &'static [u64]) -> Self {
        let counts = (0..=bounds.len()).map(|_| AtomicU64::new(0)).collect();
        Histogram { bounds, counts, sum_nanos: AtomicU64::new(0) }
    }

    /// Records one observation.
    pub fn observe(&self, d: Duration) {
        let nanos = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        let slot = self.bounds.iter().position(|&b| nanos <= b).unwrap_or(self.bounds.len());
        if let Some(c) = self.counts.get(slot) {
            c.fetch_add(1, Ordering::Relaxed);
        }
        self.sum_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    /// Writes the `_bucket` (cumulative), `_sum` (seconds) and `_count` samples of `name`.
    pub fn write(&self, page: &mut Page, name: &str, help: &str) {
        page.family(name, "histogram", help);
        let mut cumulative = 0u64;
        let bucket = format!("{name}_bucket");
        for (i, c) in self.counts.iter().enumerate() {
            cumulative += c.load(Ordering::Relaxed);
            let le = match self.bounds.get(i) {
                Some(&b) => seconds(b).to_string(),
                None => "+Inf".to_owned(),
            };
            page.sample(&bucket, &[("le", &le)], cumulative);
        }
        page.sample_f64(&format!("{name}_sum"), &[], seconds(self.sum_nanos.load(Ordering::Relaxed)));
        page.sample(&format!("{name}_count"), &[], cumulative);
    }
}

fn seconds(nanos: u64) -> f64 {
    nanos as f64 / 1e9
}
