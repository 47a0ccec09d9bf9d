//! The whole metrics page: recorded families, scrape-time snapshots and the data-plane families
//! (`dataplane::status`), in the Prometheus text format.

use super::text::Page;
use crate::dataplane::status::DataplaneStatus;
pub use crate::dataplane::status::SPLICE_FAMILIES;
use crate::session::Shared;

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
