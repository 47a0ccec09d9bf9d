//! Kernel splice of pinned sessions (docs/dataplane.md §3).
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
//! **Repeated bytes (P11).** In verdict-only mode the kernel's `tcp_read_skb` hands each skb of
//! the receive queue to the verdict *whole*. TCP queues a retransmitted segment that partially
//! overlaps data already received (`seq < rcv_nxt < end_seq`) without trimming it: a normal
//! `recvmsg` skips the old head through `copied_seq`, `tcp_read_skb` does not. Without care the
//! head would be delivered twice (seen on 6.18 as one 65,483-byte loopback segment repeated,
//! under the retransmissions a stalled reader provokes). So the verdict tracks the next sequence
//! number of each flow (`TCP_SKB_CB(skb)->seq` is `__sk_buff.cb[0]` for sk_skb programs) and
//! strips any repeated head with `bpf_skb_adjust_room`; the rest of the skb is passed to
//! userspace (never redirected: the case is rare, and it keeps the verifier's path count low).
//! An skb that repeats only old bytes is dropped. If the head cannot be
//! stripped the skb is passed and counted in `overlaps_unfixed`; userspace then ends the session
//! rather than forward a repeated byte.
//!
//! **Wake-ups.** The daemon does not watch a spliced socket for bytes (every redirected segment
//! would wake it, P7). When the verdict passes bytes of a spliced flow whose earlier passed
//! bytes userspace has all forwarded (a budget stop, a refused redirect, a stripped head), it
//! posts the flow's cookie to `SPLICE_EVENTS`, and the flow's supervisor reads them at once.
//! Bytes passed while userspace still owes some need no wake-up: it reads on until `FIONREAD`
//! is zero, and it publishes `forwarded` before each of those reads.
//!
//! Counters are plain increments: each flow entry has a single writer (the verdict of its source
//! socket, serialised by the socket lock) and the totals are per-CPU (docs/dataplane.md §5).

use aya_ebpf::{
    helpers::bpf_get_socket_cookie,
    macros::{map, stream_verdict},
    maps::{HashMap, PerCpuArray, RingBuf, SockHash},
    programs::SkBuffContext,
    EbpfContext as _,
};
use gateway_common::splice::{
    SpliceFlow, SplicePeer, SpliceTotals, SpliceWake, SPLICE_EVENTS_BYTES, SPLICE_MAX_SOCKETS, SPLICE_SLOT_WAKEUPS,
    SPLICE_TOTALS_SLOTS,
};

/// `SK_PASS` / `SK_DROP` of `enum sk_action`.
const SK_PASS: u32 = 1;
const SK_DROP: u32 = 0;
/// `BPF_RB_FORCE_WAKEUP`: notify the reader for every record (records are rare: one per
/// fallback episode).
const BPF_RB_FORCE_WAKEUP: u64 = 2;
/// Largest head one `bpf_skb_adjust_room` call strips from an sk_skb (net/core/filter.c).
const TRIM_STEP: u32 = 0xfff;
/// Calls per skb: strips up to 32 × 4095 bytes (~128 KiB, more than one GSO segment).
const TRIM_STEPS: u32 = 32;

#[map(name = "SPLICE_SOCKS")]
static SPLICE_SOCKS: SockHash<u64> = SockHash::with_max_entries(SPLICE_MAX_SOCKETS, 0);

#[map(name = "SPLICE_PEER")]
static SPLICE_PEER: HashMap<u64, SplicePeer> = HashMap::with_max_entries(SPLICE_MAX_SOCKETS, 0);

#[map(name = "SPLICE_FLOW")]
static SPLICE_FLOW: HashMap<u64, SpliceFlow> = HashMap::with_max_entries(SPLICE_MAX_SOCKETS, 0);

#[map(name = "SPLICE_TOTALS")]
static SPLICE_TOTALS: PerCpuArray<SpliceTotals> = PerCpuArray::with_max_entries(SPLICE_TOTALS_SLOTS, 0);

#[map(name = "SPLICE_EVENTS")]
static SPLICE_EVENTS: RingBuf = RingBuf::with_byte_size(SPLICE_EVENTS_BYTES, 0);

#[stream_verdict]
pub fn splice_verdict(ctx: SkBuffContext) -> u32 {
    if ctx.len() == 0 {
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
    match strip_repeated_head(&ctx, flow) {
        Head::New => {}
        Head::AllOld => return SK_DROP,
        // Passed, not redirected: rare, and it keeps the verifier's path count small.
        Head::Stripped | Head::Unfixed => {
            flow.passed += u64::from(ctx.len());
            wake(cookie, flow);
            return SK_PASS;
        }
    }
    let len = u64::from(ctx.len());
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
        wake(cookie, flow);
        return SK_PASS;
    }
    let mut peer = terms.peer;
    let verdict = SPLICE_SOCKS.redirect_skb(&ctx, &mut peer, 0);
    if verdict != i64::from(SK_PASS) {
        // The target left the map (closed): hand the bytes to userspace, which sees the error.
        flow.passed += len;
        flow.redirect_failures += 1;
        wake(cookie, flow);
        return SK_PASS;
    }
    flow.redirected += len;
    flow.redirected_skbs += 1;
    count(terms.direction, len, 0);
    SK_PASS
}

/// What is left of an skb once bytes the flow already delivered are stripped (P11).
enum Head {
    /// Nothing was repeated.
    New,
    /// The repeated head is gone; new bytes remain.
    Stripped,
    /// Every byte was delivered before: drop the skb.
    AllOld,
    /// A repeated head could not be stripped (counted in `overlaps_unfixed`).
    Unfixed,
}

/// Advances the flow's sequence tracking past this skb and strips a repeated head (P11).
#[inline(always)]
fn strip_repeated_head(ctx: &SkBuffContext, flow: &mut SpliceFlow) -> Head {
    let len = ctx.len();
    // `TCP_SKB_CB(skb)->seq`: sk_skb programs see `skb->cb` from its first byte.
    let seq = ctx.skb.cb()[0];
    let known = flow.seq_known != 0;
    let repeated = flow.next_seq.wrapping_sub(seq) as i32;
    if !known || repeated <= 0 {
        if known && repeated < 0 {
            flow.seq_gaps += 1;
        }
        flow.next_seq = seq.wrapping_add(len);
        flow.seq_known = 1;
        return Head::New;
    }
    let repeated = repeated as u32;
    flow.overlaps += 1;
    if repeated >= len {
        flow.overlap_bytes += u64::from(len);
        return Head::AllOld;
    }
    flow.next_seq = seq.wrapping_add(len);
    if trim_head(ctx, repeated) {
        flow.overlap_bytes += u64::from(repeated);
        Head::Stripped
    } else {
        flow.overlaps_unfixed += 1;
        Head::Unfixed
    }
}

/// Removes `n` bytes from the front of the skb; false if they could not all be removed.
#[inline(always)]
fn trim_head(ctx: &SkBuffContext, n: u32) -> bool {
    let mut left = n;
    for _ in 0..TRIM_STEPS {
        if left == 0 {
            break;
        }
        let step = if left > TRIM_STEP { TRIM_STEP } else { left };
        // mode 0 = BPF_ADJ_ROOM_NET, the only mode sk_skb accepts; a negative size pulls the head.
        if ctx.adjust_room(-(step as i32), 0, 0).is_err() {
            return false;
        }
        left -= step;
    }
    left == 0
}

/// Asks the flow's supervisor to look now: it has passed bytes to read (module docs).
#[inline(always)]
fn wake(cookie: u64, flow: &mut SpliceFlow) {
    let posted = SPLICE_EVENTS.output::<SpliceWake>(&SpliceWake { cookie }, BPF_RB_FORCE_WAKEUP).is_ok();
    if posted {
        flow.wakeups += 1;
    } else {
        flow.wakeups_lost += 1;
    }
    if let Some(t) = SPLICE_TOTALS.get_ptr_mut(SPLICE_SLOT_WAKEUPS) {
        // SAFETY: valid per-CPU slot for this run; only this CPU writes it.
        unsafe {
            if posted {
                (*t).wakeups += 1;
            } else {
                (*t).wakeups_lost += 1;
            }
        }
    }
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
