//! Kernel splice of pinned sessions (docs/dataplane.md §3): map names, keys and values shared by the
//! `splice_verdict` program and the daemon's `dataplane::splice` module.
//!
//! Every map is keyed by socket cookie (`SO_COOKIE` in userspace, `bpf_get_socket_cookie` in the
//! program). A *flow* is one direction of a spliced session, named after its **source** socket
//! (the socket whose receive path runs the verdict): client→backend is the flow of the client
//! socket, backend→client the flow of the backend socket.
//!
//! Ownership of the maps is split so that neither side ever overwrites the other's fields:
//! [`SPLICE_PEER_MAP`] is written only by userspace, [`SPLICE_FLOW_MAP`] only by the program
//! (userspace creates each entry zeroed before the socket enters [`SPLICE_SOCKS_MAP`], reads it,
//! and deletes it after the session).

/// Name of the `stream_verdict` program attached to [`SPLICE_SOCKS_MAP`].
pub const SPLICE_VERDICT_PROGRAM: &str = "splice_verdict";

/// `SockHash<u64>`: socket cookie → socket. Every spliceable socket is inserted while its peer is
/// silent (P1) and stays until it is closed (P2/P3).
pub const SPLICE_SOCKS_MAP: &str = "SPLICE_SOCKS";
/// `HashMap<u64, SplicePeer>`: source cookie → where its bytes go and on what terms. Written by
/// userspace only; no entry = not spliced, the verdict passes to userspace (P2).
pub const SPLICE_PEER_MAP: &str = "SPLICE_PEER";
/// `HashMap<u64, SpliceFlow>`: source cookie → what the verdict did with its bytes. Written by
/// the program only (userspace creates and deletes entries).
pub const SPLICE_FLOW_MAP: &str = "SPLICE_FLOW";
/// `PerCpuArray<SpliceTotals>` with [`SPLICE_TOTALS_SLOTS`] slots: one per direction, indexed by
/// `SPLICE_DIR_*`, then [`SPLICE_SLOT_WAKEUPS`].
pub const SPLICE_TOTALS_MAP: &str = "SPLICE_TOTALS";
/// `RingBuf` of [`SpliceWake`] records: the verdict posts one when it passes bytes of a spliced
/// flow that userspace had caught up with (a fallback episode begins), so the flow's supervisor
/// wakes at once instead of on its next look.
pub const SPLICE_EVENTS_MAP: &str = "SPLICE_EVENTS";
/// Size of [`SPLICE_EVENTS_MAP`] in bytes (a power-of-2 number of pages): 4,096 records of 16
/// bytes (8 of header), far more than the flows that can start a fallback episode at once.
pub const SPLICE_EVENTS_BYTES: u32 = 64 * 1024;

/// Capacity of [`SPLICE_SOCKS_MAP`], [`SPLICE_PEER_MAP`] and [`SPLICE_FLOW_MAP`].
pub const SPLICE_MAX_SOCKETS: u32 = 16_384;

/// Direction slot: bytes from the client towards the backend.
pub const SPLICE_DIR_TO_BACKEND: u32 = 0;
/// Direction slot: bytes from the backend towards the client.
pub const SPLICE_DIR_TO_CLIENT: u32 = 1;
/// Number of direction slots in [`SPLICE_TOTALS_MAP`].
pub const SPLICE_DIRECTIONS: u32 = 2;
/// Slot of [`SPLICE_TOTALS_MAP`] that counts wake-ups (`SpliceTotals::wakeups`, `wakeups_lost`):
/// a wake-up can be posted before the verdict knows the flow's direction (a stripped head).
pub const SPLICE_SLOT_WAKEUPS: u32 = SPLICE_DIRECTIONS;
/// Number of slots in [`SPLICE_TOTALS_MAP`].
pub const SPLICE_TOTALS_SLOTS: u32 = SPLICE_DIRECTIONS + 1;

/// Value of [`SPLICE_PEER_MAP`]: the terms of one flow, set by userspace.
///
/// The verdict redirects an skb of `len` bytes to `peer` only when
/// 1. every byte it passed to userspace earlier has been forwarded by userspace
///    (`SpliceFlow::passed == forwarded`), so redirected bytes never overtake them; and
/// 2. `SpliceFlow::redirected + len <= limit` (the redirect budget, P4).
///
/// Otherwise it returns `SK_PASS`: the bytes stay on the source socket for userspace, whose
/// reads are bounded by the receive buffer, so TCP flow control works again.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SplicePeer {
    /// Cookie of the target socket (key in [`SPLICE_SOCKS_MAP`]).
    pub peer: u64,
    /// Redirect budget: the verdict's `redirected` counter may not pass this value. Userspace
    /// sets it to "redirected bytes acknowledged by the target's receiver + budget".
    pub limit: u64,
    /// Bytes of this flow that the verdict passed and userspace has since written to the target.
    pub forwarded: u64,
    /// `SPLICE_DIR_*` slot for [`SPLICE_TOTALS_MAP`].
    pub direction: u32,
    /// Explicit padding (keeps the layout free of implicit holes).
    pub _pad: u32,
}

/// Value of [`SPLICE_FLOW_MAP`]: the verdict's own counters for one source socket.
///
/// Only the verdict of the source socket writes it, and the kernel runs a socket's verdict
/// serialised under the socket lock, so plain increments are exact (no atomics on bpfel, docs/dataplane.md §5).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpliceFlow {
    /// Bytes redirected to the peer (`REDIR_BYTES` of docs/dataplane.md P5).
    pub redirected: u64,
    /// Bytes passed to userspace since the entry was created (not spliced yet, over budget, or
    /// waiting for userspace to catch up). Zero-length skbs are not counted.
    pub passed: u64,
    /// Times the budget stopped redirecting (a fallback episode starts).
    pub budget_stops: u64,
    /// Redirects the kernel refused (target gone); those bytes were passed instead.
    pub redirect_failures: u64,
    /// skbs redirected.
    pub redirected_skbs: u64,
    /// TCP sequence number just after the last byte the verdict has seen (valid once
    /// `seq_known != 0`). See P11 in the program's docs: `tcp_read_skb` can hand over an skb
    /// whose head repeats bytes already delivered.
    pub next_seq: u32,
    /// Whether `next_seq` has been set (by the first non-empty skb after insertion).
    pub seq_known: u32,
    /// skbs whose head repeated bytes already delivered (a retransmission overlapping data
    /// received before).
    pub overlaps: u64,
    /// Repeated bytes the verdict stripped (or dropped with a wholly repeated skb).
    pub overlap_bytes: u64,
    /// skbs whose repeated head could not be stripped; they were passed to userspace, which
    /// must end the session instead of forwarding them.
    pub overlaps_unfixed: u64,
    /// skbs that started past `next_seq` (bytes the verdict never saw; never expected).
    pub seq_gaps: u64,
    /// Wake-ups posted to [`SPLICE_EVENTS_MAP`] (one per fallback episode).
    pub wakeups: u64,
    /// Wake-ups that did not fit in [`SPLICE_EVENTS_MAP`]; the flow's slow look finds those bytes.
    pub wakeups_lost: u64,
}

/// Record of [`SPLICE_EVENTS_MAP`]: the flow whose supervisor should look now.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpliceWake {
    /// Cookie of the flow's source socket.
    pub cookie: u64,
}

/// Value of [`SPLICE_TOTALS_MAP`]: process-wide counters of one direction on one CPU.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpliceTotals {
    /// Bytes redirected in the kernel.
    pub redirected_bytes: u64,
    /// Times the budget stopped redirecting.
    pub budget_stops: u64,
    /// Wake-ups posted to [`SPLICE_EVENTS_MAP`] ([`SPLICE_SLOT_WAKEUPS`] only).
    pub wakeups: u64,
    /// Wake-ups that did not fit in [`SPLICE_EVENTS_MAP`] ([`SPLICE_SLOT_WAKEUPS`] only).
    pub wakeups_lost: u64,
}

impl SpliceTotals {
    /// Adds another slot's counts (saturating), e.g. to sum per-CPU values.
    pub fn add(&mut self, other: &SpliceTotals) {
        self.redirected_bytes = self.redirected_bytes.saturating_add(other.redirected_bytes);
        self.budget_stops = self.budget_stops.saturating_add(other.budget_stops);
        self.wakeups = self.wakeups.saturating_add(other.wakeups);
        self.wakeups_lost = self.wakeups_lost.saturating_add(other.wakeups_lost);
    }
}

// SAFETY: the four types are `#[repr(C)]`, made only of `u64`/`u32` fields laid out without
// implicit padding, and every bit pattern is valid, so they can cross BPF map memory.
#[cfg(feature = "user")]
unsafe impl aya::Pod for SplicePeer {}
#[cfg(feature = "user")]
unsafe impl aya::Pod for SpliceFlow {}
#[cfg(feature = "user")]
unsafe impl aya::Pod for SpliceTotals {}
#[cfg(feature = "user")]
unsafe impl aya::Pod for SpliceWake {}
