//! sk_lookup mode (docs/dataplane.md §2): `vip_lookup`, attached to a whole network namespace.
//!
//! For a TCP connection to a `VIP:port` in `VIP_CIDRS` (maps defined in router.rs) the program
//! selects the gateway listener from slot 0 of `LISTENER`, whatever address that listener is bound
//! to; the accepted socket's local address is the VIP:port the client dialled. Everything else
//! continues with the normal socket lookup. The VIP must already be local (a `local` route or an
//! address), which userspace sets up: sk_lookup never makes a non-local address local.

use aya_ebpf::{bindings::sk_action::SK_PASS, macros::sk_lookup, programs::SkLookupContext};
use gateway_common::router::{LISTENER_SLOT, STAT_LOOKUP_FAILED, STAT_LOOKUP_REDIRECTED, STAT_NO_LISTENER};

use crate::router::{bump, is_vip, LISTENER};

const AF_INET: u32 = 2;
const IPPROTO_TCP: u32 = 6;
/// `-ENOENT` from `redirect_sk_lookup`: the listener slot is empty.
const NO_ENTRY: i32 = -2;

#[sk_lookup]
pub fn vip_lookup(ctx: SkLookupContext) -> u32 {
    // SAFETY: the kernel hands the program a valid `bpf_sk_lookup` context for its whole run;
    // these fields are readable for every sk_lookup program.
    let (family, protocol, local_ip4, local_port) = unsafe {
        let l = &*ctx.lookup;
        (l.family, l.protocol, l.local_ip4, l.local_port)
    };
    if family != AF_INET || protocol != IPPROTO_TCP {
        return SK_PASS;
    }
    // `local_ip4` is in network byte order; `local_port` in host byte order (docs/dataplane.md §5).
    let port = (local_port as u16).to_be_bytes();
    if !is_vip(local_ip4.to_ne_bytes(), port) {
        return SK_PASS;
    }
    match LISTENER.redirect_sk_lookup(&ctx, LISTENER_SLOT, 0) {
        Ok(()) => bump(STAT_LOOKUP_REDIRECTED),
        Err(NO_ENTRY) => bump(STAT_NO_LISTENER),
        Err(_) => bump(STAT_LOOKUP_FAILED),
    }
    SK_PASS
}
