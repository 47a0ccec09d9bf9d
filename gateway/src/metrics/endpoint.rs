//! The `[metrics] address` endpoint: the full metrics page over the data plane's minimal HTTP
//! server (`dataplane/modes/metrics.rs`), stopped when dropped.

use std::net::SocketAddr;
use std::sync::{Arc, Weak};

use tokio::task::JoinHandle;

use crate::dataplane::modes::metrics::{self as http, RenderFn};
use crate::dataplane::modes::runtime::Runtime;
use crate::dataplane::DataplaneError;
use crate::session::Shared;

/// A running endpoint; dropping it stops serving.
#[derive(Debug)]
pub struct Endpoint {
    task: JoinHandle<()>,
}

impl Endpoint {
    /// Binds `addr` and serves the page of `shared` and `dataplane`. Both are held weakly, so the
    /// endpoint never delays the data plane's detach at shutdown.
    pub async fn start(
        addr: SocketAddr,
        shared: Weak<Shared>,
        dataplane: Weak<Runtime>,
    ) -> Result<Self, DataplaneError> {
        let listener = http::bind(addr).await?;
        let bound = listener.local_addr().unwrap_or(addr);
        let render: RenderFn = Arc::new(move || {
            let Some(shared) = shared.upgrade() else { return String::new() };
            let status = dataplane.upgrade().map(|d| d.status());
            super::page::render(&shared, status.as_ref())
        });
        tracing::info!(addr = %bound, "metrics on http://{bound}/metrics");
        Ok(Endpoint { task: http::serve_text(listener, render) })
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.task.abort();
    }
}
