//! A spliced session: the two sockets' insertion (P1), the splice itself, supervision of both
//! directions until both have closed, cleanup and the per-session report.

use std::os::fd::{AsFd, AsRawFd};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use gateway_common::splice::{SplicePeer, SPLICE_DIR_TO_BACKEND, SPLICE_DIR_TO_CLIENT};
use tokio::net::TcpStream;

use super::flow::{Flow, FlowReport};
use super::watch::Watch;
use super::{flow, sys, Eligibility, Splicer, TxProgress};
use crate::config::DataplaneConfig;
use crate::dataplane::DataplaneError;
use crate::protocol::frame::Wire;
use crate::tls::Stream;

/// What a spliced session did, per direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpliceReport {
    /// Client → backend.
    pub to_backend: FlowReport,
    /// Backend → client.
    pub to_client: FlowReport,
    /// From the splice to the end of supervision.
    pub duration: Duration,
}

impl SpliceReport {
    /// Bytes the daemon read and forwarded itself while the session was spliced.
    pub fn userspace_bytes(&self) -> u64 {
        self.to_backend.userspace + self.to_client.userspace
    }
}

/// Both sockets of a session are in the sockhash (not yet spliced: the verdict passes every
/// byte to the daemon, which reads as usual). Dropping it without [`Prepared::run`] removes the
/// flow entries; the sockets leave the map when they are closed.
#[derive(Debug)]
pub struct Prepared {
    splicer: Arc<Splicer>,
    client: u64,
    backend: u64,
    budget: u64,
    live: Option<Live>,
    /// Counted in the splicer's `active` sessions (from activation until supervision ends, or
    /// the session is dropped, e.g. cancelled by KILL CONNECTION).
    counted: bool,
}

/// Accounting fixed when the splice took effect ([`Prepared::activate`]).
#[derive(Debug, Clone, Copy)]
struct Live {
    client_base: TxProgress,
    backend_base: TxProgress,
    /// Bytes the daemon wrote to the backend / the client after the bases were taken.
    to_backend_user: u64,
    to_client_user: u64,
    to_backend_early: u64,
    to_client_early: u64,
    started: Instant,
}

impl Splicer {
    /// Inserts a session's sockets. Call it while neither peer can send: before the last
    /// response the client waits for (the login OK), with nothing outstanding on the backend
    /// (P1). `budget` bounds redirected-but-unacknowledged bytes per direction (P4).
    pub fn prepare(
        self: &Arc<Self>,
        client: &TcpStream,
        backend: &TcpStream,
        budget: u64,
    ) -> Result<Prepared, DataplaneError> {
        let cookie = |s: &TcpStream| {
            sys::socket_cookie(s.as_fd()).map_err(|source| DataplaneError::Socket { op: "SO_COOKIE", source })
        };
        let (c, b) = (cookie(client)?, cookie(backend)?);
        let mut maps = self.lock_maps()?;
        maps.insert_socket(c, client)?;
        if let Err(e) = maps.insert_socket(b, backend) {
            maps.forget(c);
            return Err(e);
        }
        Ok(Prepared {
            splicer: Arc::clone(self),
            client: c,
            backend: b,
            budget: budget.max(1),
            live: None,
            counted: false,
        })
    }
}

/// The session hook: applies the splice rule ([`Eligibility`]) and prepares the splice. `None`
/// when the session stays in userspace (the reason is logged).
pub fn prepare_session(
    config: Option<&DataplaneConfig>,
    user: &str,
    tls: bool,
    client: &TcpStream,
    backend: &TcpStream,
) -> Option<Prepared> {
    let eligibility = Eligibility::of(config, user, tls);
    if eligibility != Eligibility::Splice {
        if eligibility == Eligibility::Tls {
            tracing::debug!("TLS session: not spliced");
        }
        return None;
    }
    insert(config, client, backend)
}

/// The hook of a routed session pinned for good ([`Eligibility::of_pinned`]): inserts the
/// client socket and the pinned server connection's socket. Call it at a quiet point only:
/// the answer that pinned the session complete on the server side, its last bytes not yet
/// written to the client. `None` when the session stays in userspace (splice off, TLS, no
/// splicer, map error; logged). The caller checks afterwards that the client is still silent
/// (`sys::has_pending_bytes`, P1).
pub fn prepare_pinned(
    config: Option<&DataplaneConfig>,
    tls: bool,
    client: &TcpStream,
    backend: &TcpStream,
) -> Option<Prepared> {
    if Eligibility::of_pinned(config, tls) != Eligibility::Splice {
        return None;
    }
    insert(config, client, backend)
}

/// Inserts an eligible session's two sockets with the configured budget; `None` (logged) when
/// there is no splicer or the maps refuse them: the session stays in userspace.
fn insert(config: Option<&DataplaneConfig>, client: &TcpStream, backend: &TcpStream) -> Option<Prepared> {
    let budget = config.map_or(0, |c| c.splice_budget_bytes);
    let splicer = Splicer::global().ok()?;
    match splicer.prepare(client, backend, budget) {
        Ok(p) => Some(p),
        Err(e) => {
            tracing::warn!(error = %e, "cannot splice this session; relaying in userspace");
            None
        }
    }
}

impl Prepared {
    /// Makes the splice take effect: forwards what the wires already buffered, publishes
    /// `SPLICE_PEER` both ways, and only then writes `last_response` (the login OK) to the
    /// client, so that the client's next bytes already meet the splice (docs/dataplane.md §3).
    pub async fn activate(
        &mut self,
        client: &mut Wire<Stream>,
        backend: &mut Wire<Stream>,
        last_response: &[u8],
    ) -> Result<(), DataplaneError> {
        let progress = |s: &TcpStream| {
            sys::tx_progress(s.as_fd()).map_err(|source| DataplaneError::Socket { op: "TCP_INFO", source })
        };
        let early_up = client.buf.split();
        let early_down = backend.buf.split();
        let (client_io, backend_io) = plain(client, backend)?;
        let (client_base, backend_base) = (progress(client_io)?, progress(backend_io)?);
        flow::write_all(backend_io, &early_up).await.map_err(sock_err("forwarding buffered bytes"))?;
        flow::write_all(client_io, &early_down).await.map_err(sock_err("forwarding buffered bytes"))?;
        let terms = |peer, direction| SplicePeer { peer, direction, limit: self.budget, ..Default::default() };
        {
            let mut maps = self.splicer.lock_maps()?;
            maps.set_terms(self.client, terms(self.backend, SPLICE_DIR_TO_BACKEND))?;
            maps.set_terms(self.backend, terms(self.client, SPLICE_DIR_TO_CLIENT))?;
        }
        flow::write_all(client_io, last_response).await.map_err(sock_err("writing the last response"))?;
        self.live = Some(Live {
            client_base,
            backend_base,
            to_backend_user: early_up.len() as u64,
            to_client_user: (early_down.len() + last_response.len()) as u64,
            to_backend_early: early_up.len() as u64,
            to_client_early: early_down.len() as u64,
            started: Instant::now(),
        });
        self.splicer.active.fetch_add(1, Ordering::Relaxed);
        self.splicer.total.fetch_add(1, Ordering::Relaxed);
        self.counted = true;
        tracing::debug!(client = self.client, backend = self.backend, "session spliced");
        Ok(())
    }

    /// Supervises the spliced session until both directions have closed ([`Self::activate`]
    /// first if that has not happened). Logs the per-session counters at `info`
    /// (`bytes_userspace=` is what the daemon read itself while spliced).
    pub async fn run(
        mut self,
        client: &mut Wire<Stream>,
        backend: &mut Wire<Stream>,
    ) -> Result<SpliceReport, DataplaneError> {
        let live = match self.live {
            Some(live) => live,
            None => {
                self.activate(client, backend, &[]).await?;
                self.live.ok_or(DataplaneError::Poisoned("splice activation"))?
            }
        };
        let splicer = Arc::clone(&self.splicer);
        // Out of tokio's reactor for good: the flows watch their sources themselves (watch.rs).
        let (client_io, backend_io) = detach(client, backend)?;
        let watch = |s: &std::net::TcpStream| Watch::new(s.as_raw_fd()).map_err(sock_err("watching a spliced socket"));
        let (up_watch, down_watch) = (watch(&client_io)?, watch(&backend_io)?);
        let flow = |src, dst, watch, src_cookie: u64, peer, direction, base, user_written, early| Flow {
            splicer: &splicer,
            src,
            dst,
            watch,
            wakeups: splicer.wakeups.register(src_cookie),
            src_cookie,
            terms: SplicePeer { peer, direction, limit: self.budget, ..Default::default() },
            budget: self.budget,
            base,
            user_written,
            report: FlowReport { presplice: early, ..Default::default() },
        };
        let (c, b) = (self.client, self.backend);
        let mut up = flow(
            &client_io,
            &backend_io,
            up_watch,
            c,
            b,
            SPLICE_DIR_TO_BACKEND,
            live.backend_base,
            live.to_backend_user,
            live.to_backend_early,
        );
        let mut down = flow(
            &backend_io,
            &client_io,
            down_watch,
            b,
            c,
            SPLICE_DIR_TO_CLIENT,
            live.client_base,
            live.to_client_user,
            live.to_client_early,
        );
        let result = tokio::try_join!(up.run(), down.run());
        splicer.active.fetch_sub(1, Ordering::Relaxed);
        let report = SpliceReport { to_backend: up.report, to_client: down.report, duration: live.started.elapsed() };
        self.counted = false;
        log_report(&report, result.as_ref().err());
        result.map(|_| report)
    }
}

/// The two TCP sockets, when neither leg is TLS (a TLS session is never spliced: the callers
/// check [`Eligibility`] first; this is the last guard).
fn plain<'w>(
    client: &'w Wire<Stream>,
    backend: &'w Wire<Stream>,
) -> Result<(&'w TcpStream, &'w TcpStream), DataplaneError> {
    match (client.io.plain(), backend.io.plain()) {
        (Some(c), Some(b)) => Ok((c, b)),
        _ => Err(DataplaneError::Socket {
            op: "splicing a TLS session",
            source: std::io::Error::other("TLS sessions are never spliced"),
        }),
    }
}

/// Takes both sockets out of tokio's reactor (the wires are left detached).
fn detach(
    client: &mut Wire<Stream>,
    backend: &mut Wire<Stream>,
) -> Result<(std::net::TcpStream, std::net::TcpStream), DataplaneError> {
    plain(client, backend)?;
    let take = |w: &mut Wire<Stream>| match w.io.detach() {
        Some(Ok(s)) => Ok(s),
        Some(Err(e)) => Err(sock_err("leaving the reactor")(e)),
        None => Err(sock_err("leaving the reactor")(std::io::Error::other("not a plain socket"))),
    };
    Ok((take(client)?, take(backend)?))
}

fn sock_err(op: &'static str) -> impl Fn(std::io::Error) -> DataplaneError {
    move |source| DataplaneError::Socket { op, source }
}

impl Drop for Prepared {
    fn drop(&mut self) {
        if self.counted {
            // Supervision did not finish (the session was cancelled): its sockets close now.
            self.splicer.active.fetch_sub(1, Ordering::Relaxed);
            tracing::info!(
                client = self.client,
                backend = self.backend,
                "splice cancelled (session ended by the gateway)"
            );
        }
        if let Ok(mut maps) = self.splicer.lock_maps() {
            maps.forget(self.client);
            maps.forget(self.backend);
        }
    }
}

fn log_report(r: &SpliceReport, error: Option<&DataplaneError>) {
    let (up, down) = (&r.to_backend, &r.to_client);
    tracing::info!(
        bytes_redirected_to_backend = up.redirected,
        bytes_redirected_to_client = down.redirected,
        bytes_userspace = r.userspace_bytes(),
        bytes_presplice = up.presplice + down.presplice,
        budget_stops = up.budget_stops + down.budget_stops,
        redirect_failures = up.redirect_failures + down.redirect_failures,
        wakeups = up.wakeups + down.wakeups,
        wakeups_lost = up.wakeups_lost + down.wakeups_lost,
        repeated_bytes_stripped = up.overlap_bytes + down.overlap_bytes,
        repeated_unfixed = up.overlaps_unfixed + down.overlaps_unfixed,
        max_queued_to_backend = up.max_queued,
        max_queued_to_client = down.max_queued,
        max_unacked_to_backend = up.max_unacked,
        max_unacked_to_client = down.max_unacked,
        duration_ms = r.duration.as_millis() as u64,
        error = error.map(tracing::field::display),
        "splice ended"
    );
}
