//! Batched socket calls on an io_uring under a tokio current-thread runtime, for `cargo xtask
//! relay --hybrid`. tokio's reactor (epoll) still says when a socket is ready; the receives and
//! sends of every task that ran are queued on the thread's ring and submitted in one
//! `io_uring_enter` when the runtime is about to sleep (`on_thread_park`). Each is nonblocking
//! (`MSG_DONTWAIT`), so it completes inside that call and its task runs before the runtime sleeps.
//!
//! Nothing waits in the kernel: on this kernel (6.18) a completion that arrives later is noticed
//! only on a 16 ms grid by a thread asleep in `epoll_wait`, whether through the ring's eventfd
//! (`DEFER_TASKRUN`) or task work (without it). A receive left armed in the ring made every round
//! trip through such a relay take 16–32 ms (docs/performance.md §4).

use std::cell::RefCell;
use std::future::Future;
use std::io;
use std::os::fd::RawFd;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

use io_uring::{opcode, squeue, types, IoUring};

/// One operation's place in the ring's table; its index is the entry's `user_data`.
enum Slot {
    Free,
    /// Queued or submitted: wake this task when it completes.
    Waiting(Option<Waker>),
    /// Completed with this result, not yet taken.
    Done(i32),
    /// Its future was dropped while the kernel still had its buffer: kept until the completion.
    Orphan(#[allow(dead_code)] Vec<u8>),
}

struct Ring {
    ring: IoUring,
    slots: Vec<Slot>,
    free: Vec<usize>,
}

thread_local! {
    static RING: RefCell<Option<Ring>> = const { RefCell::new(None) };
}

/// Sets up this thread's ring; call [`flush`] from the runtime's `on_thread_park`.
pub fn install(entries: u32) -> io::Result<()> {
    let ring = IoUring::builder().setup_single_issuer().setup_defer_taskrun().build(entries)?;
    RING.with(|r| *r.borrow_mut() = Some(Ring { ring, slots: Vec::new(), free: Vec::new() }));
    Ok(())
}

/// Submits what is queued in one `io_uring_enter`, takes every completion and wakes its task
/// (the runtime's `on_thread_park`: the woken tasks run before it sleeps).
pub fn flush() {
    let mut wakers = Vec::new();
    RING.with(|r| {
        let Ok(mut r) = r.try_borrow_mut() else { return };
        let Some(Ring { ring, slots, free }) = r.as_mut() else { return };
        if !ring.submission().is_empty() {
            if let Err(e) = ring.submit() {
                eprintln!("relay-hybrid: io_uring_enter: {e}");
            }
        }
        for cqe in ring.completion() {
            let i = cqe.user_data() as usize;
            match std::mem::replace(&mut slots[i], Slot::Done(cqe.result())) {
                Slot::Waiting(w) => wakers.extend(w),
                Slot::Orphan(_) | Slot::Free | Slot::Done(_) => {
                    slots[i] = Slot::Free;
                    free.push(i);
                }
            }
        }
    });
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
    slot: usize,
    buf: Option<Vec<u8>>,
}

impl Op {
    fn start(entry: squeue::Entry, buf: Vec<u8>) -> Op {
        let slot = RING.with(|r| {
            let mut r = r.borrow_mut();
            let r = r.as_mut()?;
            let slot = r.free.pop().unwrap_or_else(|| {
                r.slots.push(Slot::Free);
                r.slots.len() - 1
            });
            r.slots[slot] = Slot::Waiting(None);
            let entry = entry.user_data(slot as u64);
            // SAFETY: the entry's buffer is owned by the returned `Op` and, if that is dropped
            // first, by the slot (`Orphan`), until the completion.
            while unsafe { r.ring.submission().push(&entry) }.is_err() {
                // Full: submit now; the completions are taken at the next flush.
                let _ = r.ring.submit();
            }
            Some(slot)
        });
        // Without a ring on this thread the operation fails at its first poll.
        Op { slot: slot.unwrap_or(usize::MAX), buf: Some(buf) }
    }
}

impl Future for Op {
    type Output = (io::Result<usize>, Vec<u8>);

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let slot = self.slot;
        let done = RING.with(|r| {
            let mut r = r.borrow_mut();
            let Some(r) = r.as_mut() else { return Some(-libc::ENXIO) };
            match r.slots.get_mut(slot) {
                None => Some(-libc::ENXIO),
                Some(Slot::Done(res)) => {
                    let res = *res;
                    r.slots[slot] = Slot::Free;
                    r.free.push(slot);
                    Some(res)
                }
                Some(Slot::Waiting(w)) => {
                    if !w.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                        *w = Some(cx.waker().clone());
                    }
                    None
                }
                Some(Slot::Free | Slot::Orphan(_)) => Some(-libc::EINVAL),
            }
        });
        let Some(res) = done else { return Poll::Pending };
        self.slot = usize::MAX;
        let buf = self.buf.take().unwrap_or_default();
        let res = if res < 0 { Err(io::Error::from_raw_os_error(-res)) } else { Ok(res as usize) };
        Poll::Ready((res, buf))
    }
}

impl Drop for Op {
    fn drop(&mut self) {
        let Some(buf) = self.buf.take() else { return };
        let slot = self.slot;
        RING.with(|r| {
            // Where the slot cannot be reached, the buffer is leaked rather than freed under the
            // kernel.
            let Ok(mut r) = r.try_borrow_mut() else { return std::mem::forget(buf) };
            let Some(r) = r.as_mut() else { return std::mem::forget(buf) };
            match r.slots.get(slot) {
                Some(Slot::Done(_)) => {
                    r.slots[slot] = Slot::Free;
                    r.free.push(slot);
                }
                Some(_) => r.slots[slot] = Slot::Orphan(buf),
                None => {}
            }
        });
    }
}
