//! One direction of a spliced session: its budget, its userspace fallback and its drain check.
//!
//! Byte accounting towards the target socket `dst`, from the moment of the splice (`base`):
//!
//! ```text
//! written(dst) - base.written()  ==  user_written  +  redirected (once drained)
//! user_written = pre-splice bytes from the gateway's buffer + passed bytes forwarded by us
//! ```
//!
//! The verdict redirects only while `passed == forwarded`, so while this flow holds passed bytes
//! `redirected` cannot move: wait until the kernel has written all of it (drain), write ours,
//! publish the new `forwarded`, and the verdict takes over again with the next skb.
//!
//! The daemon should cost nothing while the kernel forwards. Both sockets are out of tokio's
//! reactor, and the source is watched for its FIN and errors only ([`Watch`]: redirected
//! segments do not wake it, P7). Bytes the verdict passes wake the flow through the verdict's
//! own wake-ups ([`Registration`]). What is left for a timer is the budget: the supervisor looks
//! at the flow's progress at half the time the flow would take to use its headroom up at its
//! last rate (P4), at most every [`MAX_LOOK`]; a look also catches a wake-up the ring buffer
//! could not hold.

use std::io;
use std::net::TcpStream;
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use gateway_common::splice::{SpliceFlow, SplicePeer};

use super::sys::{self, TxProgress};
use super::wakeups::Registration;
use super::watch::Watch;
use super::Splicer;
use crate::dataplane::DataplaneError;

/// Shortest interval between two looks at a flow.
const MIN_LOOK: Duration = Duration::from_millis(1);
/// Longest interval between two looks at a flow: how long passed bytes wait when their wake-up
/// did not fit in the ring buffer (FIN, errors and wake-ups themselves are not waited for).
const MAX_LOOK: Duration = Duration::from_secs(1);
/// Longest pause between two drain checks.
const MAX_DRAIN_PAUSE: Duration = Duration::from_millis(5);
/// Userspace forwarding buffer.
const CHUNK: usize = 256 * 1024;
/// `TCP_CLOSE` in `tcpi_state`.
const TCP_CLOSE: u8 = 7;

/// What happened in one direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowReport {
    /// Bytes the kernel redirected.
    pub redirected: u64,
    /// Bytes the daemon read from the source and wrote itself after the splice began.
    pub userspace: u64,
    /// Bytes already in the gateway's read buffer when the splice began (forwarded first).
    pub presplice: u64,
    /// Times the budget stopped the kernel path.
    pub budget_stops: u64,
    /// Redirects the kernel refused.
    pub redirect_failures: u64,
    /// Largest "redirected but not yet in the target's write queue" amount seen at a refresh
    /// (each sample a lower bound of the queue at that moment, never an overstatement); the
    /// verdict keeps the queue itself at or below the budget.
    pub max_queued: u64,
    /// Largest "redirected but not acknowledged by the receiver" amount seen at a refresh
    /// (the queued bytes plus the target's send buffer).
    pub max_unacked: u64,
    /// Whether the source's EOF was propagated (FIN sent to the target after draining).
    pub eof: bool,
    /// skbs whose head repeated bytes already delivered (a retransmission overlapping data
    /// received before, P11); the verdict stripped the repeated head.
    pub overlaps: u64,
    /// Repeated bytes the verdict stripped.
    pub overlap_bytes: u64,
    /// skbs whose repeated head the verdict could not strip (the session is ended).
    pub overlaps_unfixed: u64,
    /// skbs that started past the next expected sequence number (never expected).
    pub seq_gaps: u64,
    /// Times the verdict woke the supervisor (it passed bytes).
    pub wakeups: u64,
    /// Wake-ups the ring buffer could not hold (the next look found those bytes).
    pub wakeups_lost: u64,
}

/// One direction: `src` → `dst`.
pub(super) struct Flow<'a> {
    pub splicer: &'a Splicer,
    pub src: &'a TcpStream,
    pub dst: &'a TcpStream,
    /// `src`'s FIN and errors.
    pub watch: Watch,
    /// The verdict's wake-ups for this flow (it passed bytes).
    pub wakeups: Registration,
    pub src_cookie: u64,
    pub terms: SplicePeer,
    pub budget: u64,
    /// `dst`'s progress when the splice began.
    pub base: TxProgress,
    /// Bytes we wrote to `dst` since `base`.
    pub user_written: u64,
    pub report: FlowReport,
}

impl Flow<'_> {
    /// Supervises until the source's EOF has been propagated, or an error.
    ///
    /// Reads only what `FIONREAD` reports, i.e. bytes the verdict passed: a plain read on an
    /// empty psock queue may fall through to `tcp_recvmsg` and take bytes the verdict has not
    /// seen, whose successors it could then redirect ahead of them. Readiness is only a hint
    /// (P7: a socket in a sockmap wakes for redirected data too, reads then give `EAGAIN`).
    pub async fn run(&mut self) -> Result<FlowReport, DataplaneError> {
        let mut buf = vec![0u8; CHUNK];
        let mut pace = Pace::default();
        loop {
            tokio::select! {
                hung_up = self.watch.wait() => hung_up.map_err(io_err("waiting for the source"))?,
                () = self.wakeups.woken() => {}
                () = tokio::time::sleep(pace.next_look) => {}
            }
            let flow = self.refresh()?;
            let forwarded = self.forward_passed(&mut buf).await?;
            if let Some(e) = self.src.take_error().map_err(io_err("SO_ERROR on the source"))? {
                return Err(io_err("source")(e));
            }
            let (closed, _) = sys::hang_up(self.src.as_fd()).map_err(io_err("polling the source"))?;
            // EOF counts only once every byte before the FIN has been handled: all passed bytes
            // forwarded (none left on the psock queue or its backlog).
            if closed && self.flow()?.passed == self.terms.forwarded && self.src_drained()? {
                self.drain().await?;
                sys::shutdown_write(self.dst.as_fd()).map_err(io_err("shutdown towards the target"))?;
                self.report.eof = true;
                let flow = self.flow()?;
                self.record(&flow);
                return Ok(self.report);
            }
            // A hang-up not handled yet (bytes before the FIN still moving) wakes the watch
            // only once: look again soon.
            pace.next(&flow, self.terms.limit, forwarded || closed);
        }
    }

    /// Reads and forwards what the verdict passed; `true` if there was any.
    async fn forward_passed(&mut self, buf: &mut [u8]) -> Result<bool, DataplaneError> {
        let mut any = false;
        loop {
            let passed = sys::readable_bytes(self.src.as_fd()).map_err(io_err("FIONREAD on the source"))?;
            if passed == 0 {
                return Ok(any);
            }
            // After FIONREAD: the verdict ran for every byte it counts (socket lock).
            self.refuse_repeated_bytes()?;
            match sys::recv_nonblocking(self.src.as_fd(), &mut buf[..passed.min(CHUNK)]) {
                Ok(0) => return Ok(any),
                Ok(n) => {
                    any = true;
                    self.forward(&buf[..n]).await?;
                }
                Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted) => return Ok(any),
                Err(e) => return Err(io_err("reading the source")(e)),
            }
        }
    }

    /// Fails if the verdict passed an skb whose repeated head it could not strip (P11): its
    /// bytes wait on the psock queue, and forwarding them would repeat bytes at the target.
    fn refuse_repeated_bytes(&mut self) -> Result<(), DataplaneError> {
        let flow = self.flow()?;
        if flow.overlaps_unfixed == 0 {
            return Ok(());
        }
        self.record(&flow);
        let source = io::Error::new(io::ErrorKind::InvalidData, "retransmitted bytes the verdict could not strip");
        Err(DataplaneError::Socket { op: "reading the source", source })
    }

    /// No passed byte waits on the source's psock queue.
    fn src_drained(&self) -> Result<bool, DataplaneError> {
        Ok(sys::readable_bytes(self.src.as_fd()).map_err(io_err("FIONREAD on the source"))? == 0)
    }

    /// Forwards bytes the verdict passed: after everything redirected before them is written.
    async fn forward(&mut self, data: &[u8]) -> Result<(), DataplaneError> {
        self.drain().await?;
        write_all_detached(self.dst, data).await.map_err(io_err("forwarding passed bytes"))?;
        let n = data.len() as u64;
        self.user_written += n;
        self.report.userspace += n;
        self.terms.forwarded += n;
        self.splicer.userspace_bytes.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        self.refresh()?;
        self.publish()
    }

    /// Waits until `dst` has taken every byte redirected to it (in its write queue or beyond).
    async fn drain(&mut self) -> Result<(), DataplaneError> {
        let mut pause = Duration::from_micros(50);
        loop {
            let flow = self.flow()?;
            let target = self.base.written() + self.user_written + flow.redirected;
            let now = sys::tx_progress(self.dst.as_fd()).map_err(io_err("reading the target's progress"))?;
            if now.written() >= target {
                return Ok(());
            }
            if sys::tcp_state(self.dst.as_fd()).map_err(io_err("reading the target's state"))? == TCP_CLOSE {
                return Err(io_err("draining")(io::ErrorKind::BrokenPipe.into()));
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(MAX_DRAIN_PAUSE);
        }
    }

    /// Raises the budget limit from the target's progress (P4) and returns the counters.
    ///
    /// The budget bounds what the kernel holds *outside* the target socket: redirected bytes
    /// still queued on the target's psock, which no socket buffer accounts for (cilium#6431).
    /// Once in the target's write queue, bytes are ordinary TCP send-buffer memory, bounded by
    /// `SO_SNDBUF` and subject to flow control. So `limit = redirected bytes written + budget`;
    /// redirected-but-unacknowledged bytes stay within `budget + SO_SNDBUF`.
    fn refresh(&mut self) -> Result<SpliceFlow, DataplaneError> {
        // Counters first, progress second: `redirected` only grows and so does the target's
        // progress, so the samples below never overstate the queue at the moment of the
        // progress read.
        let flow = self.flow()?;
        let now = sys::tx_progress(self.dst.as_fd()).map_err(io_err("reading the target's progress"))?;
        // `base` and `now` are each known within [written(), written_max()] (sys::TxProgress;
        // normally exact). The limit takes the lowest estimate of the redirected bytes that
        // reached the write queue, so it can only be too low: the psock queue never passes the
        // budget. The samples take the highest, so they never overstate the queue: with the
        // lower bound an ACK between the two progress reads would count acknowledged bytes as
        // still queued (an artefact of up to the target's send buffer, seen as 512 KiB).
        let ours_min = self.base.written() + self.user_written;
        let ours_max = self.base.written_max() + self.user_written;
        let written = now.written().saturating_sub(ours_max);
        let written_max = now.written_max().saturating_sub(ours_min);
        // Ours are subtracted in full, which can only understate the acknowledged redirected bytes.
        let acked = now.acked_after.saturating_sub(ours_min);
        self.report.max_queued = self.report.max_queued.max(flow.redirected.saturating_sub(written_max));
        self.report.max_unacked = self.report.max_unacked.max(flow.redirected.saturating_sub(acked));
        let limit = written + self.budget;
        if limit > self.terms.limit {
            self.terms.limit = limit;
            self.publish()?;
        }
        self.record(&flow);
        Ok(flow)
    }

    fn record(&mut self, flow: &SpliceFlow) {
        self.report.redirected = flow.redirected;
        self.report.budget_stops = flow.budget_stops;
        self.report.redirect_failures = flow.redirect_failures;
        self.report.overlaps = flow.overlaps;
        self.report.overlap_bytes = flow.overlap_bytes;
        self.report.overlaps_unfixed = flow.overlaps_unfixed;
        self.report.seq_gaps = flow.seq_gaps;
        self.report.wakeups = flow.wakeups;
        self.report.wakeups_lost = flow.wakeups_lost;
    }

    fn flow(&self) -> Result<SpliceFlow, DataplaneError> {
        self.splicer.lock_maps()?.flow(self.src_cookie)
    }

    fn publish(&self) -> Result<(), DataplaneError> {
        self.splicer.lock_maps()?.set_terms(self.src_cookie, self.terms)
    }
}

/// `write_all` on a socket out of tokio's reactor: when its send buffer is full (rare: only for
/// bytes the verdict passed), waits with growing pauses, as the drain check does.
async fn write_all_detached(s: &TcpStream, mut data: &[u8]) -> io::Result<()> {
    let mut pause = Duration::from_micros(50);
    while !data.is_empty() {
        match io::Write::write(&mut &*s, data) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => {
                data = &data[n..];
                pause = Duration::from_micros(50);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(MAX_DRAIN_PAUSE);
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// When a flow next looks at its progress.
#[derive(Debug)]
struct Pace {
    /// Interval until the next look.
    next_look: Duration,
    /// `redirected` and the time at the previous look.
    last: Option<(u64, Instant)>,
}

impl Default for Pace {
    fn default() -> Pace {
        Pace { next_look: MIN_LOOK, last: None }
    }
}

impl Pace {
    /// After a look: `soon` when it found bytes the verdict passed or a hang-up to handle.
    fn next(&mut self, flow: &SpliceFlow, limit: u64, soon: bool) {
        let now = Instant::now();
        let moved = self.last.map_or(0, |(redirected, _)| flow.redirected.saturating_sub(redirected));
        let over = self.last.map_or(Duration::ZERO, |(_, at)| now - at);
        self.last = Some((flow.redirected, now));
        let backed_off = (self.next_look * 2).clamp(MIN_LOOK, MAX_LOOK);
        self.next_look = if soon {
            // A fallback episode (budget, refused redirect) or a hang-up: look again soon.
            MIN_LOOK
        } else if moved == 0 {
            backed_off
        } else {
            let headroom = limit.saturating_sub(flow.redirected);
            refresh_interval(moved, over, headroom).min(backed_off)
        };
    }
}

/// For a flow that redirected `bytes` over `over` and has `headroom` left under its budget
/// limit: half the time it would take to use the headroom up at that rate, at least
/// [`MIN_LOOK`].
fn refresh_interval(bytes: u64, over: Duration, headroom: u64) -> Duration {
    let rate = bytes as f64 / over.as_secs_f64().max(1e-6);
    let secs = headroom as f64 / 2.0 / rate.max(1.0);
    Duration::from_secs_f64(secs.clamp(MIN_LOOK.as_secs_f64(), 3600.0))
}

/// `write_all` through a shared reference (both directions use both sockets), before the
/// sockets leave tokio's reactor (activation).
pub(super) async fn write_all(s: &tokio::net::TcpStream, mut data: &[u8]) -> io::Result<()> {
    while !data.is_empty() {
        s.writable().await?;
        match s.try_write(data) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => data = &data[n..],
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn io_err(op: &'static str) -> impl Fn(io::Error) -> DataplaneError {
    move |source| DataplaneError::Socket { op, source }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(redirected: u64) -> SpliceFlow {
        SpliceFlow { redirected, ..SpliceFlow::default() }
    }

    #[test]
    fn looks_back_off_to_the_cap_whether_the_flow_moves_or_not() {
        let (mut moving, mut still) = (Pace::default(), Pace::default());
        let mut redirected = 0;
        for _ in 0..20 {
            redirected += 1000;
            // Headroom for hours at any rate: only the cap bounds the interval.
            moving.next(&flow(redirected), u64::MAX / 4, false);
            still.next(&flow(5), u64::MAX / 4, false);
        }
        assert_eq!(moving.next_look, MAX_LOOK, "a slow flow with a large budget");
        assert_eq!(still.next_look, MAX_LOOK);
        still.next(&flow(5), 1 << 30, true);
        assert_eq!(still.next_look, MIN_LOOK, "bytes were passed: look again soon");
    }

    #[test]
    fn a_flow_near_its_budget_is_looked_at_sooner() {
        let mut p = Pace::default();
        p.next(&flow(0), 1 << 30, false);
        p.next_look = MAX_LOOK;
        std::thread::sleep(Duration::from_millis(2));
        // 1 MiB in ~2 ms with 64 KiB of headroom left: well under the 2 ms before.
        p.next(&flow(1 << 20), (1 << 20) + (64 << 10), false);
        assert!(p.next_look < Duration::from_millis(5), "{:?}", p.next_look);
    }
}
