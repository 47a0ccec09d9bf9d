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

use gateway_common::steer::STEER_SOCK_OPS_PROGRAM;

use super::{direct, SteerError, SteerSettings, Steering};
use crate::config::SteeringMode;
use crate::dataplane::modes::runtime::CgroupSource;
use crate::dataplane::status::{ProgramStatus, SteeringStatus};
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

    /// What `gateway dataplane status` shows of cgroup steering, read at each scrape.
    pub fn status_source(&self) -> CgroupSource {
        let steering = Arc::downgrade(&self.steering);
        Arc::new(move || {
            let steering = steering.upgrade()?;
            let s = steering.lock().ok()?;
            Some((programs_and_counters(&s), s.check()))
        })
    }
}

/// The attached programs (with their attach points) and the event counters.
fn programs_and_counters(s: &Steering) -> SteeringStatus {
    let mut st = SteeringStatus::default();
    let ports = s.targets().iter().map(|a| a.port()).chain(s.targets6().iter().map(|a| a.port()));
    st.ports = ports.collect::<std::collections::BTreeSet<u16>>().into_iter().collect();
    for p in s.programs() {
        for cg in s.app_cgroups() {
            st.programs.push(ProgramStatus {
                name: p.name.into(),
                kind: if p.name == STEER_SOCK_OPS_PROGRAM { "sock_ops" } else { "cgroup_sock_addr" }.into(),
                target: cg.display().to_string(),
                id: Some(p.id),
            });
        }
    }
    match s.stats() {
        Ok(c) => {
            st.counters = [
                ("redirected", c.redirected),
                ("redirected_ipv6", c.redirected6),
                ("from_containers", c.container),
                ("other_netns_not_steered", c.other_netns),
                ("skipped_self", c.skipped_self),
                ("fail_open", c.fail_open),
                ("refused", c.refused),
                ("established", c.established),
                ("original_dst", c.original_dst),
                ("peername", c.peername),
                ("direct", c.direct),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect();
        }
        Err(e) => tracing::warn!(error = %e, "reading the steering counters failed"),
    }
    st
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
/// `extra` are the further listeners (`[listen] extra_addresses`): steering can send connects to
/// any of them (IPv6, container addresses).
pub fn start(
    shared: &Arc<Shared>,
    listener: &TcpListener,
    extra: &[TcpListener],
) -> Result<Option<SteeringHandle>, SteerError> {
    let config = shared.config();
    let Some(dp) = config.dataplane.as_ref().filter(|d| d.mode == SteeringMode::Cgroup) else {
        return Ok(None);
    };
    let local = listener.local_addr().map_err(|source| SteerError::Cgroup { path: "listener".into(), source })?;
    let listeners: Vec<SocketAddr> =
        std::iter::once(local).chain(extra.iter().filter_map(|l| l.local_addr().ok())).collect();
    let settings = SteerSettings {
        listeners: listeners.clone(),
        container_addresses: dp.container_addresses.clone(),
        app_cgroups: dp.app_cgroups.clone(),
        fail_closed: dp.fail_closed,
    };
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
    let intercepted = targets(shared, &listeners);
    steering.set_targets(intercepted.iter().copied())?;
    report_check(&steering);
    match direct::blocked(&shared.config()) {
        None => steering.set_direct(&direct::configured(dp, &intercepted, local))?,
        Some(why) if dp.direct_route => tracing::warn!(reason = %why, "direct route disabled"),
        Some(_) => {}
    }
    let steering = Arc::new(Mutex::new(steering));
    let refresh = shared.planner.as_ref().map(|planner| {
        let period = shared.config().routing.as_ref().map_or(DEFAULT_REFRESH, |r| r.cache.cluster_refresh());
        spawn_refresh(Arc::clone(shared), planner.clone(), Arc::clone(&steering), listeners, period)
    });
    Ok(Some(SteeringHandle { steering, refresh }))
}

/// Logs the self-check at start: each cgroup and family at INFO, and loudly (WARN) whatever would
/// steer nothing: a missing or empty cgroup, programs the kernel does not report effective,
/// containers without a container address, intercepted destinations of a family without target.
fn report_check(steering: &Steering) {
    let check = steering.check();
    for c in &check.cgroups {
        let effective: Vec<&str> = c.programs.iter().filter(|(_, on)| *on).map(|(p, _)| p.as_str()).collect();
        tracing::info!(cgroup = %c.path, exists = c.exists, cgroup2 = c.cgroup2, processes = c.processes,
            other_netns = c.other_netns, effective = ?effective, "cgroup steering: application cgroup");
    }
    for f in &check.families {
        tracing::info!(family = %f.family, attached = f.attached, host = %f.host, containers = %f.container,
            intercepted = f.targets, "cgroup steering: family");
    }
    for warning in check.warnings() {
        tracing::warn!("cgroup steering: {warning}");
    }
}

/// Every intercepted destination: `[backend] address`, `[dataplane] intercept`, and each SQL
/// address of the topology, without the gateway's own listeners.
pub fn targets(shared: &Shared, listeners: &[SocketAddr]) -> BTreeSet<SocketAddr> {
    let mut set = BTreeSet::new();
    set.insert(shared.config().backend.address);
    if let Some(dp) = &shared.config().dataplane {
        set.extend(dp.intercept.iter().copied());
    }
    if let Some(p) = &shared.planner {
        set.extend(p.locator().cluster().servers().iter().map(|s| s.addr));
    }
    for l in listeners {
        set.remove(l);
    }
    set
}

/// Re-reads the cluster model periodically and updates the map when it changed.
fn spawn_refresh(
    shared: Arc<Shared>,
    planner: Planner,
    steering: Arc<Mutex<Steering>>,
    listeners: Vec<SocketAddr>,
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
            let wanted = targets(&shared, &listeners);
            // Computed before locking: it may wait for the tenant's server list.
            let routes = if direct_on {
                Some(direct::plan(&shared.config(), Some(&planner), &wanted, listeners[0]).await)
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
