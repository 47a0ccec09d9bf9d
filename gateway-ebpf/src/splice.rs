//! Kernel splice of pinned sessions (docs/ebpf.md §4.2).
//!
//! `splice_verdict` (`sk_skb/stream_verdict`, attached to `SPLICE_SOCKS`, verdict-only mode) runs
//! on the receive path of every socket in the map. For a socket whose flow has a `SPLICE_PEER`
//! entry it redirects the skb to the transmit side (egress) of the peer socket, as long as
//! userspace has caught up with everything passed earlier and the redirect budget allows it
//! (P4). In every other case it returns `SK_PASS` and the bytes are read by the daemon:
//!
//! * zero-length skbs (the FIN-only skb of `tcp_read_skb`): redirecting them breaks the peer
//!   (P6);
//! * no `SPLICE_PEER` entry: not spliced (yet), or unspliced (P2);
//! * `passed != forwarded`: userspace still owns bytes of this flow; a redirect now would let
//!   later bytes overtake them;
//! * over budget, or the kernel refused the redirect.
//!
//! Counters are plain increments: each flow entry has a single writer (the verdict of its source
//! socket, serialised by the socket lock) and the totals are per-CPU (docs/ebpf.md §8).

use aya_ebpf::{
    helpers::bpf_get_socket_cookie,
    macros::{map, stream_verdict},
    maps::{HashMap, PerCpuArray, SockHash},
    programs::SkBuffContext,
    EbpfContext as _,
};
use gateway_common::splice::{
    SpliceFlow, SplicePeer, SpliceTotals, SPLICE_DIRECTIONS, SPLICE_MAX_SOCKETS,
};

/// `SK_PASS` / `SK_DROP` of `enum sk_action`.
const SK_PASS: u32 = 1;

#[map(name = "SPLICE_SOCKS")]
static SPLICE_SOCKS: SockHash<u64> = SockHash::with_max_entries(SPLICE_MAX_SOCKETS, 0);

#[map(name = "SPLICE_PEER")]
static SPLICE_PEER: HashMap<u64, SplicePeer> = HashMap::with_max_entries(SPLICE_MAX_SOCKETS, 0);

#[map(name = "SPLICE_FLOW")]
static SPLICE_FLOW: HashMap<u64, SpliceFlow> = HashMap::with_max_entries(SPLICE_MAX_SOCKETS, 0);

#[map(name = "SPLICE_TOTALS")]
static SPLICE_TOTALS: PerCpuArray<SpliceTotals> =
    PerCpuArray::with_max_entries(SPLICE_DIRECTIONS, 0);

#[stream_verdict]
pub fn splice_verdict(ctx: SkBuffContext) -> u32 {
    let len = u64::from(ctx.len());
    if len == 0 {
        return SK_PASS; // P6
    }
    // SAFETY: `ctx.as_ptr()` is the `__sk_buff` this program was called with.
    let cookie = unsafe { bpf_get_socket_cookie(ctx.as_ptr()) };
    let Some(flow) = SPLICE_FLOW.get_ptr_mut(cookie) else {
        return SK_PASS;
    };
    // SAFETY: a successful lookup returns a pointer valid for this program run; the entry has a
    // single writer, this verdict (see the module docs).
    let flow = unsafe { &mut *flow };
    // SAFETY: same as above; the value is copied out at once (userspace replaces it wholesale).
    let Some(terms) = (unsafe { SPLICE_PEER.get(cookie) }).copied() else {
        flow.passed += len;
        return SK_PASS;
    };
    if flow.passed != terms.forwarded {
        flow.passed += len;
        return SK_PASS;
    }
    if flow.redirected + len > terms.limit {
        flow.passed += len;
        flow.budget_stops += 1;
        count(terms.direction, 0, 1);
        return SK_PASS;
    }
    let mut peer = terms.peer;
    let verdict = SPLICE_SOCKS.redirect_skb(&ctx, &mut peer, 0);
    if verdict != i64::from(SK_PASS) {
        // The target left the map (closed): hand the bytes to userspace, which sees the error.
        flow.passed += len;
        flow.redirect_failures += 1;
        return SK_PASS;
    }
    flow.redirected += len;
    flow.redirected_skbs += 1;
    count(terms.direction, len, 0);
    SK_PASS
}

#[inline(always)]
fn count(direction: u32, bytes: u64, budget_stops: u64) {
    if let Some(t) = SPLICE_TOTALS.get_ptr_mut(direction) {
        // SAFETY: valid per-CPU slot for this run; only this CPU writes it.
        unsafe {
            (*t).redirected_bytes += bytes;
            (*t).budget_stops += budget_stops;
        }
    }
}
