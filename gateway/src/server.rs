//! The listener: accepts clients, spawns one session task each, reloads the configuration on
//! SIGHUP and drains on SIGINT/SIGTERM ([`drain`]).

pub(crate) mod drain;

use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::signal::unix::{signal, SignalKind};
use tracing::{error, info, warn};

use crate::live_config::LiveConfig;
use crate::session::{self, Shared};

/// Errors that stop the gateway.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The listen address could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// Configured address.
        addr: std::net::SocketAddr,
        /// Cause.
        source: std::io::Error,
    },
    /// The configured topology could not be loaded.
    #[error("topology: {0}")]
    Topology(crate::metadata::MetadataError),
    /// Signal handler installation failed.
    #[error("signal handling: {0}")]
    Signal(std::io::Error),
    /// `[dataplane] mode = "cgroup"` could not be set up (eBPF being unavailable is not an error).
    #[error("cgroup steering: {0}")]
    Steering(crate::dataplane::steer::SteerError),
    /// `[dataplane] mode = "router"` / `"sk_lookup"` or the metrics endpoint could not be set up
    /// (eBPF being unavailable is not an error).
    #[error("data plane: {0}")]
    Dataplane(crate::dataplane::DataplaneError),
    /// The `[metrics] address` endpoint could not be bound.
    #[error("metrics endpoint: {0}")]
    Metrics(crate::dataplane::DataplaneError),
}

/// Runs the gateway until SIGINT or SIGTERM, then drains: stops accepting, ends idle sessions,
/// lets running statements finish for `[listen] shutdown_grace_secs`, and returns.
pub async fn run(live: LiveConfig) -> Result<(), ServerError> {
    let config = live.get();
    let addr = config.listen.address;
    let listener = TcpListener::bind(addr).await.map_err(|source| ServerError::Bind { addr, source })?;
    let mut extra = Vec::new();
    for &addr in &config.listen.extra_addresses {
        extra.push(TcpListener::bind(addr).await.map_err(|source| ServerError::Bind { addr, source })?);
    }
    // The static topology, when configured, is the default cluster; `[[clusters]]` are set up
    // at their first login (`clusters`).
    let planner = match config.routing.as_ref().filter(|r| r.topology.is_some()) {
        Some(r) => Some(crate::planner::Planner::from_config(r).await.map_err(ServerError::Topology)?),
        None => None,
    };
    // Servers, zones and tenants are re-read every `cluster_refresh_ms` (default 15 s).
    let _refresh = planner.as_ref().map(|p| p.locator().spawn_cluster_refresh());
    let shared = Arc::new(Shared::with_live(live, planner));
    // Routed sessions borrow pooled server connections; idle ones past the idle timeout are
    // closed in the background too, not only when found on reuse.
    let _reaper = shared.clusters.routed().then(|| spawn_pool_reaper(shared.clone()));
    probe_backend(&shared).await;
    // Held until return: dropping it stops the io_uring session threads (after the drain).
    let _session_threads = start_session_threads(&shared);
    // Held until return: dropping it detaches the steering programs (fail-open).
    let _steering = crate::dataplane::steer::start(&shared, &listener, &extra).map_err(ServerError::Steering)?;
    // Router / sk_lookup steering and the /metrics endpoint; dropping it at return detaches the
    // program and removes the VIP local routes.
    let dataplane = crate::dataplane::modes::runtime::Runtime::start(&shared.config(), &listener)
        .await
        .map(Arc::new)
        .map_err(ServerError::Dataplane)?;
    if let Some(steering) = &_steering {
        dataplane.set_cgroup_source(steering.status_source());
    }
    // `[metrics] address`: every gateway family plus the data-plane ones; stops at return.
    let _metrics = match shared.config().metrics.address {
        Some(addr) => Some(
            crate::metrics::endpoint::Endpoint::start(addr, Arc::downgrade(&shared), Arc::downgrade(&dataplane))
                .await
                .map_err(ServerError::Metrics)?,
        ),
        None => None,
    };
    info!(%addr, extra = ?shared.config().listen.extra_addresses, backend = %shared.config().backend.address, "gateway listening");
    let mut term = signal(SignalKind::terminate()).map_err(ServerError::Signal)?;
    let mut hup = signal(SignalKind::hangup()).map_err(ServerError::Signal)?;
    loop {
        tokio::select! {
            accepted = accept_any(&listener, &extra) => match accepted {
                Ok((stream, peer)) => {
                    tokio::spawn(session::accept::serve(stream, peer, shared.clone()));
                }
                // Out of file descriptors and the like: keep serving the existing sessions.
                Err(e) => {
                    warn!(error = %e, "accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                }
            },
            _ = hup.recv() => reload(&shared),
            _ = tokio::signal::ctrl_c() => { info!("SIGINT: stopping"); break; }
            _ = term.recv() => { info!("SIGTERM: stopping"); break; }
        }
    }
    // New connections are refused from here on.
    drop(listener);
    drop(extra);
    drain(&shared).await;
    Ok(())
}

/// `[listen] session_io = "io_uring"` (the default): starts the session threads sessions will run on
/// (`dataplane::ring`), as many as `worker_threads` (default one per two CPUs). `None`: epoll,
/// also where io_uring is not available (logged).
fn start_session_threads(shared: &Shared) -> Option<crate::dataplane::ring::SessionThreads> {
    let config = shared.config();
    if config.listen.session_io != crate::config::SessionIo::IoUring {
        return None;
    }
    let cpus = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    let n = config.listen.worker_threads.unwrap_or((cpus / 2).max(1));
    match crate::dataplane::ring::SessionThreads::start(n, &tokio::runtime::Handle::current()) {
        Ok(threads) => {
            info!(threads = threads.len(), "sessions run on io_uring session threads");
            let _ = shared.session_threads.set(threads.spawner());
            Some(threads)
        }
        Err(e) => {
            warn!(error = %e, "io_uring is not available; sessions use epoll");
            None
        }
    }
}

/// The next client of any listener (`[listen] address` first, then `extra_addresses`).
async fn accept_any(
    main: &TcpListener,
    extra: &[TcpListener],
) -> std::io::Result<(tokio::net::TcpStream, std::net::SocketAddr)> {
    std::future::poll_fn(|cx| {
        for l in std::iter::once(main).chain(extra) {
            if let std::task::Poll::Ready(r) = l.poll_accept(cx) {
                return std::task::Poll::Ready(r);
            }
        }
        std::task::Poll::Pending
    })
    .await
}

/// SIGHUP: re-reads and validates the file and swaps it in; an invalid file changes nothing.
fn reload(shared: &Shared) {
    match shared.live.reload() {
        Ok(kept) => {
            for setting in kept {
                warn!(setting, "config reload: this setting needs restart; the running value is kept");
            }
            info!(users = shared.config().users.len(), "SIGHUP: configuration reloaded");
        }
        Err(e) => error!(error = %e, "SIGHUP: config reload rejected; the running configuration is kept"),
    }
}

/// Ends idle sessions, waits for running statements up to the grace period.
async fn drain(shared: &Shared) {
    let grace = std::time::Duration::from_secs(shared.config().listen.shutdown_grace_secs);
    info!(
        sessions = shared.drain.open(),
        grace_secs = grace.as_secs(),
        "draining: not accepting, idle sessions closed"
    );
    let left = shared.drain.shutdown(grace).await;
    if left > 0 {
        warn!(sessions = left, "grace period over: closing the remaining sessions");
    } else {
        info!("all sessions ended");
    }
}

/// Closes expired idle pooled connections every few seconds (until the process ends).
fn spawn_pool_reaper(shared: Arc<Shared>) -> tokio::task::JoinHandle<()> {
    let every = std::time::Duration::from_secs(shared.pool.config().idle_timeout_secs.clamp(1, 30));
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        loop {
            tick.tick().await;
            let n = shared.pool.reap_idle();
            if n > 0 {
                tracing::debug!(closed = n, "idle pooled connections closed");
            }
        }
    })
}

/// Reads the backend's greeting once so that clients are greeted with its version and
/// capabilities from the first connection on.
async fn probe_backend(shared: &Shared) {
    match session::backend::connect(shared.config().backend.address, shared.config().connect_timeout()).await {
        Ok((_, greeting)) => {
            info!(version = %greeting.server_version, "backend reachable");
            shared.learn_profile(&greeting);
        }
        Err(e) => warn!(error = %e, "backend not reachable at start; will retry per connection"),
    }
}
