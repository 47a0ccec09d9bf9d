//! The executor of a session thread: runs its tasks until none can go on, then submits their
//! socket operations and waits for the next completions in one `io_uring_enter`.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Wake, Waker};

use io_uring::{opcode, types};
use tracing::{error, warn};

use super::ops;

type BoxFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

thread_local! {
    /// The executor this thread runs (its [`Inner`]), while it runs one.
    static RUNNING: Cell<*const Inner> = const { Cell::new(std::ptr::null()) };
    /// Tasks woken on their own thread (by completions, or by each other): queued without the
    /// shared queue's lock or a look at `sleeping`, since the thread polls them before it sleeps.
    static LOCAL: RefCell<VecDeque<Arc<Task>>> = const { RefCell::new(VecDeque::new()) };
}

/// What the thread and the tasks' wakers share.
pub(super) struct Inner {
    /// Tasks woken and not yet polled.
    queue: Mutex<VecDeque<Arc<Task>>>,
    /// The thread is (about to be) asleep in `io_uring_enter`: a waker on another thread must
    /// write the eventfd, whose read is always in the ring.
    sleeping: AtomicBool,
    /// Ends the thread once its queue is empty (the handle was dropped).
    stop: AtomicBool,
    eventfd: OwnedFd,
}

impl Inner {
    pub(super) fn new() -> std::io::Result<Arc<Inner>> {
        // SAFETY: eventfd(2) returns a new descriptor or -1.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: a fresh descriptor nobody else owns.
        let eventfd = unsafe { OwnedFd::from_raw_fd(fd) };
        Ok(Arc::new(Inner {
            queue: Mutex::new(VecDeque::new()),
            sleeping: AtomicBool::new(false),
            stop: AtomicBool::new(false),
            eventfd,
        }))
    }

    fn queue(&self) -> MutexGuard<'_, VecDeque<Arc<Task>>> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `future` on the thread.
    pub(super) fn spawn(self: &Arc<Self>, future: BoxFuture) {
        let task =
            Arc::new(Task { future: Mutex::new(Some(future)), queued: AtomicBool::new(true), inner: self.clone() });
        self.queue().push_back(task);
        self.notify();
    }

    /// Asks the thread to end once it has nothing to run.
    pub(super) fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        self.sleeping.store(true, Ordering::SeqCst);
        self.notify();
    }

    /// Wakes the thread if it sleeps (or is about to).
    fn notify(&self) {
        if self.sleeping.swap(false, Ordering::SeqCst) {
            let one: u64 = 1;
            // SAFETY: writes 8 bytes from a live u64 to our eventfd. Nothing to do on failure:
            // the counter is only full if the thread has not read it yet, so it will wake.
            unsafe { libc::write(self.eventfd.as_raw_fd(), std::ptr::from_ref(&one).cast(), 8) };
        }
    }
}

/// A spawned future and whether it is in the queue.
struct Task {
    future: Mutex<Option<BoxFuture>>,
    queued: AtomicBool,
    inner: Arc<Inner>,
}

impl Wake for Task {
    fn wake(self: Arc<Self>) {
        if self.queued.swap(true, Ordering::AcqRel) {
            return;
        }
        if RUNNING.with(Cell::get) == Arc::as_ptr(&self.inner) {
            LOCAL.with(|q| q.borrow_mut().push_back(self));
            return;
        }
        let inner = self.inner.clone();
        inner.queue().push_back(self);
        inner.notify();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.clone().wake();
    }
}

/// Runs the thread's tasks until [`Inner::stop`]; the ring is installed on this thread.
pub(super) fn run(inner: &Arc<Inner>) {
    // The eventfd read's buffer outlives the thread (8 bytes per thread): the read may still be
    // in the kernel when the loop ends.
    let counter: &'static mut [u8; 8] = Box::leak(Box::new([0u8; 8]));
    let mut wakers = Vec::new();
    // Swapped with the queues each turn, so that none is allocated again once grown.
    let mut batch = VecDeque::new();
    if let Err(e) = arm_wake_read(inner, counter) {
        error!(error = %e, "session thread: cannot watch its eventfd");
        return;
    }
    RUNNING.with(|r| r.set(Arc::as_ptr(inner)));
    loop {
        std::mem::swap(&mut batch, &mut *inner.queue());
        for task in batch.drain(..) {
            poll_task(&task);
        }
        // What the completions and the tasks above woke: a task woken again while this runs
        // is queued for the next turn.
        LOCAL.with(|q| std::mem::swap(&mut batch, &mut *q.borrow_mut()));
        for task in batch.drain(..) {
            poll_task(&task);
        }
        inner.sleeping.store(true, Ordering::SeqCst);
        let idle = inner.queue().is_empty() && LOCAL.with(|q| q.borrow().is_empty());
        if !idle {
            inner.sleeping.store(false, Ordering::SeqCst);
        } else if inner.stop.load(Ordering::SeqCst) {
            break;
        }
        let woken = ops::enter(idle, &mut wakers);
        inner.sleeping.store(false, Ordering::SeqCst);
        match woken {
            Ok(true) => {
                if let Err(e) = arm_wake_read(inner, counter) {
                    error!(error = %e, "session thread: cannot watch its eventfd");
                    break;
                }
            }
            Ok(false) => {}
            Err(e) => {
                error!(error = %e, "session thread: io_uring_enter failed");
                break;
            }
        }
        for w in wakers.drain(..) {
            w.wake();
        }
    }
    RUNNING.with(|r| r.set(std::ptr::null()));
}

/// Keeps a read of the eventfd in the ring, so that another thread's wake ends the wait.
fn arm_wake_read(inner: &Inner, counter: &mut [u8; 8]) -> std::io::Result<()> {
    let entry =
        opcode::Read::new(types::Fd(inner.eventfd.as_raw_fd()), counter.as_mut_ptr(), 8).build().user_data(ops::WAKE);
    // SAFETY: `counter` is never freed and is plain bytes.
    unsafe { ops::submit_untracked(&entry) }
}

/// Polls a woken task once; a finished or panicking task is dropped.
fn poll_task(task: &Arc<Task>) {
    task.queued.store(false, Ordering::Release);
    let mut slot = task.future.lock().unwrap_or_else(PoisonError::into_inner);
    let Some(future) = slot.as_mut() else { return };
    let waker = Waker::from(task.clone());
    let mut cx = Context::from_waker(&waker);
    match std::panic::catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(&mut cx))) {
        Ok(Poll::Pending) => {}
        Ok(Poll::Ready(())) => *slot = None,
        Err(_) => {
            warn!("a session task panicked; its session is dropped");
            *slot = None;
        }
    }
}
