//! A fixed-bucket latency histogram sharded by thread ([`super::sharded`]): recording is a
//! bucket search over a short constant table and two adds to the thread's own cells, no lock
//! and no allocation.

use std::time::Duration;

use super::sharded::Sharded;

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
    /// One count per bucket (the last is `+Inf`), then the sum in nanoseconds.
    cells: Sharded,
}

impl Histogram {
    /// An empty histogram over `bounds` (ascending, nanoseconds).
    pub fn new(bounds: &'static [u64]) -> Self {
        Histogram { bounds, cells: Sharded::new(bounds.len() + 2) }
    }

    /// Records one observation.
    pub fn observe(&self, d: Duration) {
        let nanos = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        let slot = self.bounds.iter().position(|&b| nanos <= b).unwrap_or(self.bounds.len());
        self.cells.add(slot, 1);
        self.cells.add(self.sum_slot(), nanos);
    }

    fn sum_slot(&self) -> usize {
        self.bounds.len() + 1
    }

    /// Writes the `_bucket` (cumulative), `_sum` (seconds) and `_count` samples of `name`.
    pub fn write(&self, page: &mut Page, name: &str, help: &str) {
        page.family(name, "histogram", help);
        let mut cumulative = 0u64;
        let bucket = format!("{name}_bucket");
        for i in 0..=self.bounds.len() {
            cumulative += self.cells.get(i);
            let le = match self.bounds.get(i) {
                Some(&b) => seconds(b).to_string(),
                None => "+Inf".to_owned(),
            };
            page.sample(&bucket, &[("le", &le)], cumulative);
        }
        page.sample_f64(&format!("{name}_sum"), &[], seconds(self.cells.get(self.sum_slot())));
        page.sample(&format!("{name}_count"), &[], cumulative);
    }
}

fn seconds(nanos: u64) -> f64 {
    nanos as f64 / 1e9
}
