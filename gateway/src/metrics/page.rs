//! The whole metrics page: recorded families, scrape-time snapshots and the data-plane families
//! (`dataplane::status`), in the Prometheus text format.

use super::text::Page;
use crate::dataplane::status::DataplaneStatus;
use crate::session::Shared;

/// Data-plane splice families with their types and help, written without samples when no splice
/// engine reports (so that a scrape always names them; `DataplaneStatus::from_prometheus`
/// still reads "not reported"). Names as in `dataplane/status.rs` (checked by a test).
pub const SPLICE_FAMILIES: [(&str, &str, &str); 6] = [
    ("gateway_splice_active_connections", "gauge", "Connection pairs spliced in the kernel now."),
    ("gateway_splice_connections_total", "counter", "Connection pairs spliced since start."),
    ("gateway_splice_kernel_bytes_total", "counter", "Bytes forwarded by the kernel between spliced sockets."),
    ("gateway_splice_budget_fallbacks_total", "counter", "Fallbacks to userspace forwarding over the redirect budget."),
    ("gateway_splice_wakeups_total", "counter", "Kernel wake-ups of the daemon for bytes passed to userspace."),
    ("gateway_splice_wakeups_lost_total", "counter", "Kernel wake-ups lost to a full ring buffer."),
];

/// Renders every family of `shared`, followed by `dataplane`'s when given.
pub fn render(shared: &Shared, dataplane: Option<&DataplaneStatus>) -> String {
    let mut page = Page::default();
    shared.metrics.write(&mut page);
    super::snapshot::write(shared, &mut page);
    if let Some(st) = dataplane {
        page.raw(&st.to_prometheus());
        if st.splice.is_none() {
            for (name, kind, help) in SPLICE_FAMILIES {
                page.family(name, kind, help);
            }
        }
    }
    page.finish()
}
