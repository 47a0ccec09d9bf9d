//! Kernel splice of pinned sessions (docs/dataplane.md §3): once a session's backend is fixed for
//! good, the kernel forwards its bytes between the client and the backend socket; the daemon only
//! supervises.
//!
//! * [`Splicer`] owns the eBPF object with the `splice_verdict` program attached to the
//!   `SPLICE_SOCKS` sockhash, and the maps (see `gateway_common::splice`). One per process:
//!   [`Splicer::global`].
//! * [`Splicer::prepare`] inserts both sockets of a session while both peers are silent (P1):
//!   the client waits for the login OK, the backend for the first command.
//! * [`Prepared::run`] splices them (sets `SPLICE_PEER` both ways) and supervises until both sides
//!   have closed: it watches for EOF and errors (P7: `EAGAIN`/`EINTR` are not EOF), refreshes the
//!   redirect budget from the targets' ACK progress (P4), forwards in userspace whatever the
//!   verdict passed (budget exceeded; the verdict wakes it, [`wakeups`]), and propagates FIN only
//!   after the drain check (P5).
//!   Sockets stay in the map until they are closed (P2/P3).
//!
//! Two kinds of sessions are spliced: passthrough users' (1:1 from login, `session/proxy.rs`)
//! and routed sessions once they are pinned to one server connection for good, at the end of
//! the answer that pinned them ([`prepare_pinned`], `session/routed/splice.rs`).
//!
//! TLS sessions are never spliced (docs/dataplane.md §3): [`Eligibility`] refuses them.
//!
//! **P11, repeated bytes.** The kernel hands the verdict each received skb whole
//! (`tcp_read_skb`), including the head of a retransmitted segment that repeats bytes already
//! received (`seq < rcv_nxt < end_seq`; an ordinary `recvmsg` would skip them through
//! `copied_seq`). Seen on 6.18 as one 65,483-byte loopback segment delivered twice after the
//! retransmissions a stalled reader provokes. The verdict tracks each flow's next TCP sequence
//! number and strips a repeated head before anything else (`gateway-ebpf/src/splice.rs`); if it
//! cannot, [`Prepared::run`] ends the session instead of forwarding a repeated byte. The
//! tracking starts at the first skb after insertion, which is safe because sockets are inserted
//! at a quiet point, with everything the peer sent already acknowledged (P1).

mod flow;
mod maps;
mod session;
pub(crate) mod sys;
mod wakeups;
mod watch;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use aya::{maps::RingBuf, programs::SkSkb, Ebpf};
use gateway_common::splice::{SPLICE_EVENTS_MAP, SPLICE_VERDICT_PROGRAM};

pub use session::{prepare_pinned, prepare_session, Prepared, SpliceReport};
pub use sys::TxProgress;

use super::{load_object, DataplaneError};
use crate::config::DataplaneConfig;
use maps::SpliceMaps;
use wakeups::Wakeups;

/// Process-wide splice counters at one moment (for `gateway dataplane status` and metrics).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpliceStats {
    /// Sessions spliced right now.
    pub active: u64,
    /// Sessions spliced since start.
    pub total: u64,
    /// Bytes the kernel redirected from clients to backends.
    pub redirected_to_backend: u64,
    /// Bytes the kernel redirected from backends to clients.
    pub redirected_to_client: u64,
    /// Times the redirect budget stopped the kernel path (a userspace fallback episode began).
    pub budget_fallbacks: u64,
    /// Bytes of spliced sessions that the daemon read and forwarded itself (fallbacks, bytes
    /// that arrived before the splice took effect).
    pub userspace_bytes: u64,
    /// Wake-ups the verdict posted to a flow's supervisor (bytes passed to userspace).
    pub wakeups: u64,
    /// Wake-ups that did not fit in the ring buffer: those bytes waited for the flow's next look.
    pub wakeups_lost: u64,
}

/// Why a session is or is not spliced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Eligibility {
    /// Splice it.
    Splice,
    /// `[dataplane] splice` is off or absent.
    Disabled,
    /// The user is not in `[dataplane] passthrough_users`: the session is routed per statement.
    NotPinned,
    /// The client leg is TLS: the two legs carry different bytes (docs/dataplane.md §3).
    Tls,
}

impl Eligibility {
    /// The splice rule for a session: enabled, pinned (a passthrough user), and not TLS.
    pub fn of(config: Option<&DataplaneConfig>, user: &str, tls: bool) -> Self {
        let Some(cfg) = config.filter(|c| c.splice) else {
            return Self::Disabled;
        };
        if tls {
            return Self::Tls;
        }
        if !cfg.passthrough_users.iter().any(|u| u == user) {
            return Self::NotPinned;
        }
        Self::Splice
    }

    /// The splice rule for a routed session that has just been pinned to one server connection
    /// for good (the session checks the protocol conditions itself,
    /// `session/routed/splice.rs`): splice and `splice_pinned` on, not TLS.
    pub fn of_pinned(config: Option<&DataplaneConfig>, tls: bool) -> Self {
        let Some(_) = config.filter(|c| c.splice && c.splice_pinned) else {
            return Self::Disabled;
        };
        if tls {
            return Self::Tls;
        }
        Self::Splice
    }
}

/// The loaded splice program and its maps.
pub struct Splicer {
    /// Owns the program; dropping it would detach the verdict (docs/dataplane.md §5). Only held.
    _ebpf: Mutex<Ebpf>,
    maps: Mutex<SpliceMaps>,
    /// Reads the verdict's wake-ups (`SPLICE_EVENTS`) and wakes the flows they name.
    wakeups: Wakeups,
    active: AtomicU64,
    total: AtomicU64,
    userspace_bytes: AtomicU64,
}

impl Splicer {
    /// Loads the object, attaches `splice_verdict` to `SPLICE_SOCKS` (verdict-only mode).
    pub fn load() -> Result<Self, DataplaneError> {
        let mut ebpf = load_object()?;
        let maps = SpliceMaps::take(&mut ebpf)?;
        let ring = ebpf.take_map(SPLICE_EVENTS_MAP).ok_or(DataplaneError::MapMissing { name: SPLICE_EVENTS_MAP })?;
        let ring = RingBuf::try_from(ring)
            .map_err(|e| DataplaneError::Map { name: SPLICE_EVENTS_MAP, source: Box::new(e) })?;
        let wakeups = Wakeups::start(ring)
            .map_err(|source| DataplaneError::Socket { op: "starting the splice wake-up reader", source })?;
        let program: &mut SkSkb = ebpf
            .program_mut(SPLICE_VERDICT_PROGRAM)
            .and_then(|p| p.try_into().ok())
            .ok_or(DataplaneError::ProgramMissing { name: SPLICE_VERDICT_PROGRAM })?;
        let program_error =
            |e| DataplaneError::Program { name: SPLICE_VERDICT_PROGRAM, source: Box::new(e) }.classify();
        program.load().map_err(program_error)?;
        program.attach(maps.socks_fd()).map_err(program_error)?;
        tracing::debug!("splice verdict attached");
        Ok(Splicer {
            _ebpf: Mutex::new(ebpf),
            maps: Mutex::new(maps),
            wakeups,
            active: AtomicU64::new(0),
            total: AtomicU64::new(0),
            userspace_bytes: AtomicU64::new(0),
        })
    }

    /// The process-wide splicer, loaded on first use. The first call logs whether splicing is
    /// available; when it is not (no eBPF object, no privilege, old kernel) every later call
    /// returns the same reason and sessions stay in userspace.
    pub fn global() -> Result<Arc<Splicer>, &'static str> {
        static GLOBAL: OnceLock<Result<Arc<Splicer>, String>> = OnceLock::new();
        let loaded = GLOBAL.get_or_init(|| match Splicer::load() {
            Ok(s) => {
                tracing::info!("kernel splice enabled for pinned sessions");
                Ok(Arc::new(s))
            }
            Err(e) => {
                let reason = e.to_string();
                tracing::warn!(
                    reason = %reason,
                    "kernel splice disabled: pinned sessions are relayed in userspace"
                );
                Err(reason)
            }
        });
        loaded.as_ref().map(Arc::clone).map_err(String::as_str)
    }

    /// Counters summed over CPUs and sessions.
    pub fn stats(&self) -> Result<SpliceStats, DataplaneError> {
        let totals = self.lock_maps()?.totals()?;
        Ok(SpliceStats {
            active: self.active.load(Ordering::Relaxed),
            total: self.total.load(Ordering::Relaxed),
            redirected_to_backend: totals.to_backend.redirected_bytes,
            redirected_to_client: totals.to_client.redirected_bytes,
            budget_fallbacks: totals.to_backend.budget_stops + totals.to_client.budget_stops,
            userspace_bytes: self.userspace_bytes.load(Ordering::Relaxed),
            wakeups: totals.wakes.wakeups,
            wakeups_lost: totals.wakes.wakeups_lost,
        })
    }

    fn lock_maps(&self) -> Result<std::sync::MutexGuard<'_, SpliceMaps>, DataplaneError> {
        self.maps.lock().map_err(|_| DataplaneError::Poisoned("splice maps"))
    }
}

impl std::fmt::Debug for Splicer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Splicer")
            .field("active", &self.active.load(Ordering::Relaxed))
            .field("total", &self.total.load(Ordering::Relaxed))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(splice: bool, users: &[&str]) -> DataplaneConfig {
        let users: Vec<String> = users.iter().map(|u| format!("\"{u}\"")).collect();
        let text = format!("splice = {splice}\npassthrough_users = [{}]\n", users.join(","));
        toml::from_str(&text).unwrap()
    }

    #[test]
    fn eligibility_rules() {
        let on = cfg(true, &["root"]);
        assert_eq!(Eligibility::of(None, "root", false), Eligibility::Disabled);
        assert_eq!(Eligibility::of(Some(&cfg(false, &["root"])), "root", false), Eligibility::Disabled);
        assert_eq!(Eligibility::of(Some(&on), "app", false), Eligibility::NotPinned);
        assert_eq!(Eligibility::of(Some(&on), "root", true), Eligibility::Tls);
        assert_eq!(Eligibility::of(Some(&on), "root", false), Eligibility::Splice);
        assert_eq!(Eligibility::of_pinned(Some(&on), false), Eligibility::Splice);
        assert_eq!(Eligibility::of_pinned(Some(&on), true), Eligibility::Tls);
        assert_eq!(Eligibility::of_pinned(None, false), Eligibility::Disabled);
        assert_eq!(Eligibility::of_pinned(Some(&cfg(false, &[])), false), Eligibility::Disabled);
        let off: DataplaneConfig = toml::from_str("splice = true\nsplice_pinned = false\n").unwrap();
        assert_eq!(Eligibility::of_pinned(Some(&off), false), Eligibility::Disabled);
    }
}
