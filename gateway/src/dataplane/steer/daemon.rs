//! Steering inside the daemon: attach at start when `[dataplane] mode = "cgroup"`, fill the target
//! map from the configuration and the topology, and follow cluster refreshes. With
//! `direct_route`, the direct-route map (`direct.rs`) is filled at start from the configured
//! entries and recomputed on every refresh tick (topology-derived entries come and go there).

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use super::{direct, SteerError, SteerSettings, Steering};
use crate::config::SteeringMode;
use crate::planner::Planner;
use crate::session::Shared;

/// How often the target map is compared with the topology when no `[routing]` period is known.
const DEFAULT_REFRESH: Duration = Duration::from_secs(10);

/// Attached steering plus the task that follows topology changes. Keep it for the daemon's
/// lifetime; dropping it detaches the programs (fail-open links) and stops the task.
#[derive(Debug)]
pub struct SteeringHandle {
    steering: Arc<Mutex<Steering>>,
    refresh: Option<JoinHandle<()>>,
}

impl SteeringHandle {
    /// The attached programs (e.g. to read [`Steering::stats`]).
    pub fn steering(&self) -> &Arc<Mutex<Steering>> {
        &self.steering
    }
}

impl Drop for SteeringHandle {
    fn drop(&mut self) {
        if let Some(task) = self.refresh.take() {
            task.abort();
        }
        if let Ok(s) = self.steering.lock() {
            match s.stats() {
                Ok(stats) => tracing::info!(?stats, "cgroup steering detached"),
                Err(e) => tracing::debug!(error = %e, "reading steering counters"),
            }
        }
    }
}

/// Starts cgroup steering when configured. `Ok(None)`: not configured, or eBPF is not available
/// here (logged; the gateway then runs userspace-only). Other failures are configuration or
/// system errors the caller should report.
pub fn start(shared: &Arc<Shared>, listener: &TcpListener) -> Result<Option<SteeringHandle>, SteerError> {
    let config = shared.config();
    let Some(dp) = config.dataplane.as_ref().filter(|d| d.mode == SteeringMode::Cgroup) else {
        return Ok(None);
    };
    let local = listener
        .local_addr()
        .map_err(|source| SteerError::Cgroup { path: "listener".into(), source })?;
    let settings = SteerSettings { listener: local, app_cgroups: dp.app_cgroups.clone(), fail_closed: dp.fail_closed };
    let mut steering = match Steering::attach(&settings, listener) {
        Ok(s) => s,
        Err(e) if e.is_unavailable() => {
            tracing::warn!(error = %e, listen = %local,
                "eBPF steering unavailable; running userspace-only: applications must connect to the \
                 listener themselves");
            return Ok(None);
        }
        Err(e) => return Err(e),
    };
    let intercepted = targets(shared, local);
    steering.set_targets(intercepted.iter().copied())?;
    match direct::blocked(&shared.config()) {
        None => steering.set_direct(&direct::configured(dp, &intercepted, local))?,
        Some(why) if dp.direct_route => tracing::warn!(reason = %why, "direct route disabled"),
        Some(_) => {}
    }
    let steering = Arc::new(Mutex::new(steering));
    let refresh = shared.planner.as_ref().map(|planner| {
        let period = shared.config().routing.as_ref().map_or(DEFAULT_REFRESH, |r| r.cache.cluster_refresh());
        spawn_refresh(Arc::clone(shared), planner.clone(), Arc::clone(&steering), local, period)
    });
    Ok(Some(SteeringHandle { steering, refresh }))
}

/// Every intercepted destination: `[backend] address`, `[dataplane] intercept`, and each SQL
/// address of the topology, without the gateway's own listener.
pub fn targets(shared: &Shared, listener: SocketAddr) -> BTreeSet<SocketAddr> {
    let mut set = BTreeSet::new();
    set.insert(shared.config().backend.address);
    if let Some(dp) = &shared.config().dataplane {
        set.extend(dp.intercept.iter().copied());
    }
    if let Some(p) = &shared.planner {
        set.extend(p.locator().cluster().servers().iter().map(|s| s.addr));
    }
    set.remove(&listener);
    set
}

/// Re-reads the cluster model periodically and updates the map when it changed.
fn spawn_refresh(
    shared: Arc<Shared>,
    planner: Planner,
    steering: Arc<Mutex<Steering>>,
    listener: SocketAddr,
    period: Duration,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut last = planner.locator().cluster();
        let direct_on = direct::blocked(&shared.config()).is_none();
        let mut tick = tokio::time::interval(period.max(Duration::from_millis(100)));
        loop {
            tick.tick().await;
            let now = planner.locator().cluster();
            let changed = !Arc::ptr_eq(&now, &last);
            last = now;
            if !changed && !direct_on {
                continue;
            }
            let wanted = targets(&shared, listener);
            // Computed before locking: it may wait for the tenant's server list.
            let routes = if direct_on {
                Some(direct::plan(&shared.config(), Some(&planner), &wanted, listener).await)
            } else {
                None
            };
            let Ok(mut s) = steering.lock() else { return };
            if changed {
                if let Err(e) = s.set_targets(wanted) {
                    tracing::warn!(error = %e, "updating intercepted destinations");
                }
            }
            if let Some(routes) = routes {
                if let Err(e) = s.set_direct(&routes) {
                    tracing::warn!(error = %e, "updating direct routes");
                }
            }
        }
    })
}
