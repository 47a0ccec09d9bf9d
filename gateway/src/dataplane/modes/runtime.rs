//! The daemon's data-plane runtime: attaches the configured VIP steering mode next to the
//! listener, serves `/metrics`, and detaches everything when dropped (the server's loop returns
//! on SIGINT/SIGTERM, so this runs at every clean shutdown).
//!
//! When eBPF is not permitted or not built in, the gateway logs why and keeps running as a
//! userspace-only proxy (clients must then connect to `[listen]` themselves); the status reports
//! the reason. A configuration the data plane cannot use (bad VIP range, missing interface) stops
//! the start with an error instead.

use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::{Arc, Mutex};

use tokio::task::JoinHandle;

use super::super::status::{DataplaneStatus, EbpfState, SpliceStatus, SteeringStatus};
use super::super::steer_status::CgroupSteering;
use super::super::DataplaneError;
use super::metrics::{self, StatusFn};
use super::{VipPlan, VipSteering};
use crate::config::{Config, SteeringMode};

/// Reports the splice engine's counters at scrape time (see [`Runtime::set_splice_source`]).
pub type SpliceSource = Arc<dyn Fn() -> Option<SpliceStatus> + Send + Sync>;

/// Reports cgroup steering at scrape time (see [`Runtime::set_cgroup_source`]): its programs and
/// counters, and its self-check.
pub type CgroupSource = Arc<dyn Fn() -> Option<(SteeringStatus, CgroupSteering)> + Send + Sync>;

type Shared<T> = Arc<Mutex<Option<T>>>;

/// Attached steering and the metrics endpoint of one daemon.
pub struct Runtime {
    base: DataplaneStatus,
    steering: Shared<VipSteering>,
    splice: Shared<SpliceSource>,
    cgroup: Shared<CgroupSource>,
    metrics: Option<(SocketAddr, JoinHandle<()>)>,
}

impl Runtime {
    /// Attaches the mode of `config` with `listener` as the steering target (router and sk_lookup
    /// modes) and starts the metrics endpoint if `metrics_address` is set.
    pub async fn start(config: &Config, listener: &impl AsRawFd) -> Result<Self, DataplaneError> {
        let mut base =
            DataplaneStatus { pid: std::process::id(), mode: mode_name(config).into(), ..Default::default() };
        if let Some(dp) = &config.dataplane {
            base.interface = dp.router_interface.clone().filter(|_| dp.mode == SteeringMode::Router);
            base.vip_cidrs = dp.vip_cidrs.clone();
        }
        let steering = match VipPlan::from_config(config)? {
            None => None,
            Some(plan) => match VipSteering::attach(plan, listener) {
                Ok(s) => {
                    base.ebpf = EbpfState::Active;
                    Some(s)
                }
                Err(e) if e.is_unavailable() => {
                    tracing::warn!(
                        mode = %base.mode,
                        reason = %e,
                        "eBPF data plane unavailable: running as a userspace-only proxy; clients must connect to the listen address themselves"
                    );
                    base.ebpf = EbpfState::Unavailable(e.to_string());
                    None
                }
                Err(e) => return Err(e),
            },
        };
        let mut me = Self {
            base,
            steering: Arc::new(Mutex::new(steering)),
            splice: Arc::new(Mutex::new(None)),
            cgroup: Arc::new(Mutex::new(None)),
            metrics: None,
        };
        if config.dataplane.as_ref().is_some_and(|d| d.splice) {
            me.set_splice_source(Arc::new(splice_status));
        }
        if let Some(addr) = config.dataplane.as_ref().and_then(|d| d.metrics_address) {
            let listener = metrics::bind(addr).await?;
            let bound = listener.local_addr().unwrap_or(addr);
            tracing::info!(addr = %bound, "data-plane metrics on http://{bound}/metrics");
            me.metrics = Some((bound, metrics::serve(listener, me.status_fn())));
        }
        Ok(me)
    }

    /// Registers the source of the splice counters for status and metrics. [`Runtime::start`]
    /// registers the splice engine's `SpliceStats` when `[dataplane] splice` is on; without one,
    /// status shows "splice: not reported".
    pub fn set_splice_source(&self, source: SpliceSource) {
        if let Ok(mut s) = self.splice.lock() {
            *s = Some(source);
        }
    }

    /// Registers cgroup steering (mode `cgroup`) for status and metrics.
    pub fn set_cgroup_source(&self, source: CgroupSource) {
        if let Ok(mut s) = self.cgroup.lock() {
            *s = Some(source);
        }
    }

    /// Address the metrics endpoint listens on, if any.
    pub fn metrics_address(&self) -> Option<SocketAddr> {
        self.metrics.as_ref().map(|(a, _)| *a)
    }

    /// The status at this moment.
    pub fn status(&self) -> DataplaneStatus {
        (self.status_fn())()
    }

    fn status_fn(&self) -> StatusFn {
        let base = self.base.clone();
        let steering = self.steering.clone();
        let splice = self.splice.clone();
        let cgroup = self.cgroup.clone();
        Arc::new(move || {
            let mut st = base.clone();
            if let Ok(guard) = steering.lock() {
                if let Some(s) = guard.as_ref() {
                    match s.status() {
                        Ok(v) => st.steering = Some(v),
                        Err(e) => tracing::warn!(error = %e, "reading the steering status failed"),
                    }
                }
            }
            let source = splice.lock().ok().and_then(|s| s.clone());
            st.splice = source.and_then(|f| f());
            let source = cgroup.lock().ok().and_then(|s| s.clone());
            if let Some((steering, check)) = source.and_then(|f| f()) {
                st.ebpf = EbpfState::Active;
                st.steering = Some(steering);
                st.cgroup = Some(check);
            }
            st
        })
    }

    fn stop(&mut self) {
        if let Some((_, task)) = self.metrics.take() {
            task.abort();
        }
        let steering = self.steering.lock().ok().and_then(|mut s| s.take());
        if let Some(s) = steering {
            if let Err(e) = s.detach() {
                tracing::warn!(error = %e, "detaching the data plane failed");
            }
        }
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.stop();
    }
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime").field("base", &self.base).field("metrics", &self.metrics_address()).finish()
    }
}

/// The splice engine's counters (`SpliceStats`), once it is loaded; `None` while it is not
/// available (no privilege, no object), in which case sessions stay in userspace.
fn splice_status() -> Option<SpliceStatus> {
    let splicer = super::super::splice::Splicer::global().ok()?;
    match splicer.stats() {
        Ok(s) => Some(SpliceStatus {
            active: s.active,
            spliced_total: s.total,
            kernel_bytes: s.redirected_to_backend.saturating_add(s.redirected_to_client),
            budget_fallbacks: s.budget_fallbacks,
            wakeups: s.wakeups,
            wakeups_lost: s.wakeups_lost,
        }),
        Err(e) => {
            tracing::warn!(error = %e, "reading the splice counters failed");
            None
        }
    }
}

fn mode_name(config: &Config) -> &'static str {
    match config.dataplane.as_ref().map(|d| d.mode).unwrap_or_default() {
        SteeringMode::Off => "off",
        SteeringMode::Cgroup => "cgroup",
        SteeringMode::Router => "router",
        SteeringMode::SkLookup => "sk_lookup",
    }
}
