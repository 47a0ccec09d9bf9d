//! The ring of a session thread and its table of operations: each submitted entry has a slot,
//! whose index is the entry's `user_data`, holding the task to wake or the result. Public for
//! `cargo xtask relay --hybrid`, a benchmark relay that drives such a ring from tokio.

use std::cell::RefCell;
use std::io;
use std::os::fd::RawFd;
use std::task::{Context, Poll, Waker};

use io_uring::{cqueue, opcode, squeue, types, IoUring};

use super::provided::Provided;

/// The `user_data` of the entries that are not in the table (the executor's wake-up read).
pub const WAKE: u64 = u64::MAX;

/// One operation's place in the table.
enum Slot {
    Free,
    /// Submitted: wake this task when it completes.
    Waiting(Option<Waker>),
    /// Completed with this result and these flags, not yet taken.
    Done(i32, u32),
    /// Its owner was dropped while the kernel still had its buffer: kept until the completion.
    Orphan(#[allow(dead_code)] Vec<u8>),
}

/// The thread's ring and its operations.
struct Ring {
    ring: IoUring,
    slots: Vec<Slot>,
    free: Vec<usize>,
    /// The receive buffers the kernel picks from, where it has buffer rings.
    provided: Option<Provided>,
    /// Where peeks ([`submit_peek`]) put the byte they see: never read, never freed (a peek
    /// may still be in the kernel when the ring goes).
    scratch: *mut u8,
}

impl Ring {
    /// Gives back the provided buffer a completion with `flags` carries, if any.
    fn recycle(&mut self, flags: u32) {
        give_back(&mut self.provided, flags);
    }
}

/// Gives back the provided buffer a completion with `flags` carries, if any.
fn give_back(provided: &mut Option<Provided>, flags: u32) {
    if let (Some(bid), Some(p)) = (cqueue::buffer_select(flags), provided.as_mut()) {
        p.recycle(bid);
    }
}

thread_local! {
    static RING: RefCell<Option<Ring>> = const { RefCell::new(None) };
}

/// Sets up this thread's ring. Completions are only run when the thread asks for them
/// (`DEFER_TASKRUN`): the thread is never interrupted while it works, and it waits for them in
/// `io_uring_enter` alone (docs/performance.md §4: a thread asleep elsewhere misses them).
pub fn install(entries: u32) -> io::Result<()> {
    // TASKRUN_FLAG: the ring says when completions wait for the thread (`enter` without a wait
    // must then still call the kernel, or a thread never idle would never see them).
    let ring = IoUring::builder().setup_single_issuer().setup_defer_taskrun().setup_taskrun_flag().build(entries)?;
    // Without buffer rings (before 5.19) every receive names its stream's own buffer.
    let provided = Provided::register(&ring).ok();
    let scratch = Box::into_raw(Box::new(0u8));
    RING.with(|r| *r.borrow_mut() = Some(Ring { ring, slots: Vec::new(), free: Vec::new(), provided, scratch }));
    Ok(())
}

/// Whether receives on this thread may name the provided buffers' group instead of a buffer.
pub fn provides() -> bool {
    RING.with(|r| r.try_borrow().is_ok_and(|r| r.as_ref().is_some_and(|r| r.provided.is_some())))
}

/// Whether this thread has a ring (a session thread).
pub fn installed() -> bool {
    RING.with(|r| r.try_borrow().map(|r| r.is_some()).unwrap_or(true))
}

/// Queues `entry`, whose buffer the caller keeps alive and untouched until the slot completes
/// or is [`orphan`]ed with it; returns the slot. Fails on a thread without a ring.
///
/// # Safety
/// The memory `entry` points at must stay valid until its completion has been taken with
/// [`poll`], or be handed to [`orphan`].
pub unsafe fn submit(entry: squeue::Entry) -> io::Result<usize> {
    RING.with(|r| {
        let mut r = r.try_borrow_mut().map_err(|_| not_here())?;
        let r = r.as_mut().ok_or_else(not_here)?;
        let slot = r.free.pop().unwrap_or_else(|| {
            r.slots.push(Slot::Free);
            r.slots.len() - 1
        });
        r.slots[slot] = Slot::Waiting(None);
        let entry = entry.user_data(slot as u64);
        // SAFETY: the caller keeps the entry's memory valid until its completion.
        while unsafe { r.ring.submission().push(&entry) }.is_err() {
            // Full: submit what is queued to make room; completions are taken by the executor.
            r.ring.submit()?;
        }
        Ok(slot)
    })
}

/// Queues a peek of one byte of `fd` that never waits (`MSG_PEEK | MSG_DONTWAIT`); returns its
/// slot. Its result is `-EAGAIN` while nothing waits to be read, 0 at the end of the stream and 1
/// when bytes wait (the byte goes to the thread's scratch byte). Entries are issued in the order
/// they are queued and this one completes when issued: it sees the socket as it was before any
/// entry queued after it.
pub fn submit_peek(fd: RawFd) -> io::Result<usize> {
    let scratch =
        RING.with(|r| r.try_borrow().ok().and_then(|r| r.as_ref().map(|r| r.scratch))).ok_or_else(not_here)?;
    let entry = opcode::Recv::new(types::Fd(fd), scratch, 1).flags(libc::MSG_PEEK | libc::MSG_DONTWAIT).build();
    // SAFETY: the scratch byte lives as long as the thread (never freed), and nothing reads it.
    unsafe { submit(entry) }
}

/// Queues an entry that is not in the table (its `user_data` is set by the caller).
///
/// # Safety
/// As [`submit`]: its memory must stay valid until it completes.
pub unsafe fn submit_untracked(entry: &squeue::Entry) -> io::Result<()> {
    RING.with(|r| {
        let mut r = r.try_borrow_mut().map_err(|_| not_here())?;
        let r = r.as_mut().ok_or_else(not_here)?;
        // SAFETY: as the caller promised.
        while unsafe { r.ring.submission().push(entry) }.is_err() {
            r.ring.submit()?;
        }
        Ok(())
    })
}

/// Whether `slot`'s operation completed (its result is not taken); an unknown slot counts as
/// completed, for [`poll`] to report.
pub fn finished(slot: usize) -> bool {
    RING.with(|r| {
        let r = r.borrow();
        let Some(r) = r.as_ref() else { return true };
        !matches!(r.slots.get(slot), Some(Slot::Waiting(_)))
    })
}

/// As [`finished`], keeping the task's waker when not: it is woken when the operation completes.
pub fn finished_or_wait(slot: usize, cx: &Context<'_>) -> bool {
    RING.with(|r| {
        let mut r = r.borrow_mut();
        let Some(r) = r.as_mut() else { return true };
        match r.slots.get_mut(slot) {
            Some(Slot::Waiting(w)) => {
                keep_waker(w, cx);
                false
            }
            _ => true,
        }
    })
}

/// Keeps the task's waker in a slot, unless it has it already (no clone per poll).
fn keep_waker(w: &mut Option<Waker>, cx: &Context<'_>) {
    if !w.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
        *w = Some(cx.waker().clone());
    }
}

/// The result of `slot` (the slot is freed), or `Pending` with the task's waker kept.
pub fn poll(slot: usize, cx: &Context<'_>) -> Poll<i32> {
    poll_received(slot, cx, |_| ())
}

/// As [`poll`], for a receive that may have taken a provided buffer: `sink` gets the bytes it
/// received into one (before the buffer goes back to the kernel).
pub fn poll_received(slot: usize, cx: &Context<'_>, sink: impl FnOnce(&[u8])) -> Poll<i32> {
    RING.with(|r| {
        let mut r = r.borrow_mut();
        let Some(r) = r.as_mut() else { return Poll::Ready(-libc::ENXIO) };
        match r.slots.get_mut(slot) {
            Some(Slot::Done(res, flags)) => {
                let (res, flags) = (*res, *flags);
                r.slots[slot] = Slot::Free;
                r.free.push(slot);
                if let (Some(bid), Some(p), Ok(n)) =
                    (cqueue::buffer_select(flags), r.provided.as_ref(), usize::try_from(res))
                {
                    sink(p.bytes(bid, n));
                }
                r.recycle(flags);
                Poll::Ready(res)
            }
            Some(Slot::Waiting(w)) => {
                keep_waker(w, cx);
                Poll::Pending
            }
            Some(Slot::Free | Slot::Orphan(_)) | None => Poll::Ready(-libc::EINVAL),
        }
    })
}

/// The owner of `slot` is gone: `buf`, which the kernel may still use, lives in the slot until
/// the completion. Where the table cannot be reached, the buffer is leaked rather than freed
/// under the kernel.
pub fn orphan(slot: usize, buf: Vec<u8>) {
    RING.with(|r| {
        let Ok(mut r) = r.try_borrow_mut() else { return std::mem::forget(buf) };
        let Some(r) = r.as_mut() else { return std::mem::forget(buf) };
        match r.slots.get(slot) {
            Some(&Slot::Done(_, flags)) => {
                r.slots[slot] = Slot::Free;
                r.free.push(slot);
                r.recycle(flags);
            }
            Some(Slot::Waiting(_)) => r.slots[slot] = Slot::Orphan(buf),
            Some(Slot::Free | Slot::Orphan(_)) | None => std::mem::forget(buf),
        }
    });
}

/// Submits what is queued (if anything) and, when `wait`, sleeps until at least one completion;
/// then records every completion and returns the wakers of their tasks and whether the wake-up
/// read completed.
pub fn enter(wait: bool, wakers: &mut Vec<Waker>) -> io::Result<bool> {
    RING.with(|r| {
        let mut r = r.try_borrow_mut().map_err(|_| not_here())?;
        let Ring { ring, slots, free, provided, .. } = r.as_mut().ok_or_else(not_here)?;
        // Without a wait, nothing queued and no completion waiting for the thread there is no
        // call to make: the completions the kernel already posted are read from the ring's
        // memory. (`submit` runs the waiting ones: it asks for events when the flag is up.)
        let submitted = if wait {
            ring.submit_and_wait(1)
        } else if ring.submission().is_empty() && !ring.submission().taskrun() && !ring.submission().cq_overflow() {
            Ok(0)
        } else {
            ring.submit()
        };
        match submitted {
            Ok(_) => {}
            // A signal, or completions to take first: take them and come back.
            Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR | libc::EBUSY | libc::EAGAIN)) => {}
            Err(e) => return Err(e),
        }
        let mut woken = false;
        for cqe in ring.completion() {
            if cqe.user_data() == WAKE {
                woken = true;
                continue;
            }
            if let (Some(bid), Some(p)) = (cqueue::buffer_select(cqe.flags()), provided.as_mut()) {
                p.taken(bid);
            }
            let Ok(i) = usize::try_from(cqe.user_data()) else { continue };
            let Some(slot) = slots.get_mut(i) else { continue };
            match std::mem::replace(slot, Slot::Done(cqe.result(), cqe.flags())) {
                Slot::Waiting(w) => wakers.extend(w),
                Slot::Orphan(_) | Slot::Free | Slot::Done(..) => {
                    // Nobody takes this completion: a buffer it took goes straight back.
                    *slot = Slot::Free;
                    free.push(i);
                    give_back(provided, cqe.flags());
                }
            }
        }
        Ok(woken)
    })
}

/// How many provided buffers completions handed to this thread and its streams have not given
/// back (`None` without provided buffers).
#[cfg(test)]
pub(crate) fn provided_out() -> Option<usize> {
    RING.with(|r| r.try_borrow().ok().and_then(|r| r.as_ref().and_then(|r| r.provided.as_ref().map(Provided::out))))
}

/// Submits what is queued without waiting (before a descriptor they name is closed).
pub fn submit_queued() {
    RING.with(|r| {
        if let Ok(mut r) = r.try_borrow_mut() {
            if let Some(r) = r.as_mut() {
                if !r.ring.submission().is_empty() {
                    let _ = r.ring.submit();
                }
            }
        }
    });
}

/// Drops the thread's ring at the executor's end. Orphaned and provided buffers are leaked: the
/// kernel cancels their operations after the ring's descriptor is closed, not before.
pub fn uninstall() {
    RING.with(|r| {
        if let Ok(mut r) = r.try_borrow_mut() {
            if let Some(ring) = r.take() {
                for slot in ring.slots {
                    if let Slot::Orphan(buf) = slot {
                        std::mem::forget(buf);
                    }
                }
                drop(ring.ring);
                // `Provided` never frees its memory.
            }
        }
    });
}

/// The error of an operation on a thread without a ring.
fn not_here() -> io::Error {
    io::Error::other("io_uring operation outside a session thread")
}
