//! Batched socket calls on an io_uring under a tokio current-thread runtime, for `cargo xtask
//! relay --hybrid`. tokio's reactor (epoll) still says when a socket is ready; the receives and
//! sends of every task that ran are queued on the thread's ring (the gateway's session-thread
//! ring, `gateway::dataplane::ring::ops`) and submitted in one `io_uring_enter` when the runtime
//! is about to sleep (`on_thread_park`). Each is nonblocking (`MSG_DONTWAIT`), so it completes
//! inside that call and its task runs before the runtime sleeps.
//!
//! Nothing waits in the kernel: on this kernel (6.18) a completion that arrives later is noticed
//! only on a 16 ms grid by a thread asleep in `epoll_wait`, whether through the ring's eventfd
//! (`DEFER_TASKRUN`) or task work (without it). A receive left armed in the ring made every round
//! trip through such a relay take 16–32 ms (docs/performance.md §4).

use std::future::Future;
use std::io;
use std::os::fd::RawFd;
use std::pin::Pin;
use std::task::{Context, Poll};

use gateway::dataplane::ring::ops;
use io_uring::{opcode, squeue, types};

/// Sets up this thread's ring; call [`flush`] from the runtime's `on_thread_park`.
pub fn install(entries: u32) -> io::Result<()> {
    ops::install(entries)
}

/// Submits what is queued in one `io_uring_enter`, takes every completion and wakes its task
/// (the runtime's `on_thread_park`: the woken tasks run before it sleeps).
pub fn flush() {
    let mut wakers = Vec::new();
    if let Err(e) = ops::enter(false, &mut wakers) {
        eprintln!("relay-hybrid: io_uring_enter: {e}");
    }
    for w in wakers {
        w.wake();
    }
}

/// Receives from `fd` into `buf` (its whole length) without waiting: the count or error
/// (`WouldBlock` when nothing is there), and the buffer.
pub fn recv(fd: RawFd, mut buf: Vec<u8>) -> Op {
    let entry = opcode::Recv::new(types::Fd(fd), buf.as_mut_ptr(), buf.len() as u32).flags(libc::MSG_DONTWAIT).build();
    Op::start(entry, buf)
}

/// Sends `buf[from..to]` on `fd` without waiting: the count sent or error (`WouldBlock` when the
/// socket has no room), and the buffer.
pub fn send(fd: RawFd, buf: Vec<u8>, from: usize, to: usize) -> Op {
    let entry = opcode::Send::new(types::Fd(fd), buf[from..to].as_ptr(), (to - from) as u32)
        .flags(libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL)
        .build();
    Op::start(entry, buf)
}

/// A queued operation; it owns the buffer the kernel reads or writes until it completes.
pub struct Op {
    /// The operation's slot, or why it could not be queued (no ring on this thread).
    slot: Result<usize, i32>,
    buf: Option<Vec<u8>>,
}

impl Op {
    fn start(entry: squeue::Entry, buf: Vec<u8>) -> Op {
        // SAFETY: the entry's buffer is owned by the returned `Op` and, if that is dropped
        // first, by the slot (`ops::orphan`), until the completion.
        let slot = unsafe { ops::submit(entry) }.map_err(|_| -libc::ENXIO);
        Op { slot, buf: Some(buf) }
    }
}

impl Future for Op {
    type Output = (io::Result<usize>, Vec<u8>);

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let res = match self.slot {
            Ok(slot) => std::task::ready!(ops::poll(slot, cx)),
            Err(e) => e,
        };
        self.slot = Err(-libc::EINVAL);
        let buf = self.buf.take().unwrap_or_default();
        let res = if res < 0 { Err(io::Error::from_raw_os_error(-res)) } else { Ok(res as usize) };
        Poll::Ready((res, buf))
    }
}

impl Drop for Op {
    fn drop(&mut self) {
        if let (Ok(slot), Some(buf)) = (self.slot, self.buf.take()) {
            ops::orphan(slot, buf);
        }
    }
}
