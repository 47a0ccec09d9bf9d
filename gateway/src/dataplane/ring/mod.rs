//! Session threads on io_uring (`[listen] session_io = "io_uring"`): each runs the command
//! loops of 1:1 and routed sessions on its own executor, which waits for socket completions in
//! `io_uring_enter` instead of for readiness in epoll. One call submits the receives and sends of
//! every session that ran and sleeps until the next completes, where the epoll loop makes a call
//! for each and one to wait (docs/performance.md §4).
//!
//! A session thread has tokio's runtime entered: what a session does rarely (its login, connects,
//! timers) still uses tokio, driven by the runtime's own thread. Its sockets become
//! [`RingStream`]s for the command loop; a routed session's pooled server connections become
//! ones while it uses or parks them, and go back to tokio when they leave it
//! (docs/architecture.md §4).

mod executor;
pub mod ops;
mod provided;
mod stream;
#[cfg(test)]
mod tests;

use std::future::Future;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

pub use stream::RingStream;

/// Submission queue entries of a thread's ring: what a turn of its loop may queue before the
/// entries are submitted early to make room.
const ENTRIES: u32 = 1024;

/// The session threads; dropping this stops and joins them (never drop it on one of them).
pub struct SessionThreads {
    threads: Vec<(Arc<executor::Inner>, Option<JoinHandle<()>>)>,
    spawner: Spawner,
}

/// Puts sessions on the threads, in turn (cheap to clone; it does not keep the threads alive).
#[derive(Clone)]
pub struct Spawner {
    threads: Arc<[Arc<executor::Inner>]>,
    next: Arc<AtomicUsize>,
}

impl Spawner {
    /// Runs `future` on the next thread.
    pub fn spawn<F: Future<Output = ()> + Send + 'static>(&self, future: F) {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.threads.len().max(1);
        if let Some(inner) = self.threads.get(i) {
            inner.spawn(Box::pin(future));
        }
    }
}

impl std::fmt::Debug for Spawner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spawner").field("threads", &self.threads.len()).finish()
    }
}

impl SessionThreads {
    /// Starts `n` threads (at least one), each with its ring and with `runtime` entered. Fails
    /// where io_uring is not available (an old kernel, `kernel.io_uring_disabled`, seccomp).
    pub fn start(n: usize, runtime: &tokio::runtime::Handle) -> io::Result<SessionThreads> {
        let mut threads = Vec::new();
        for i in 0..n.max(1) {
            let inner = executor::Inner::new()?;
            let (ready_tx, ready_rx) = std::sync::mpsc::channel();
            let (run, handle) = (inner.clone(), runtime.clone());
            let join = std::thread::Builder::new().name(format!("gateway-ring-{i}")).spawn(move || {
                let _tokio = handle.enter();
                let installed = ops::install(ENTRIES);
                let ok = installed.is_ok();
                let _ = ready_tx.send(installed);
                if ok {
                    executor::run(&run);
                    ops::uninstall();
                }
            })?;
            let installed = ready_rx.recv().map_err(|_| io::Error::other("session thread ended at start"));
            threads.push((inner, Some(join)));
            if let Err(e) = installed.and_then(|r| r) {
                // Stops and joins what was started.
                drop(SessionThreads::of(threads));
                return Err(e);
            }
        }
        Ok(SessionThreads::of(threads))
    }

    fn of(threads: Vec<(Arc<executor::Inner>, Option<JoinHandle<()>>)>) -> SessionThreads {
        let inners: Vec<_> = threads.iter().map(|(inner, _)| inner.clone()).collect();
        let spawner = Spawner { threads: inners.into(), next: Arc::new(AtomicUsize::new(0)) };
        SessionThreads { threads, spawner }
    }

    /// Runs `future` on one of the threads, in turn.
    pub fn spawn<F: Future<Output = ()> + Send + 'static>(&self, future: F) {
        self.spawner.spawn(future);
    }

    /// What puts sessions on these threads.
    pub fn spawner(&self) -> Spawner {
        self.spawner.clone()
    }

    /// How many threads run.
    pub fn len(&self) -> usize {
        self.threads.len()
    }

    /// Whether none runs (never, once started).
    pub fn is_empty(&self) -> bool {
        self.threads.is_empty()
    }
}

impl Drop for SessionThreads {
    fn drop(&mut self) {
        for (inner, _) in &self.threads {
            inner.stop();
        }
        for (_, join) in &mut self.threads {
            if let Some(join) = join.take() {
                let _ = join.join();
            }
        }
    }
}

/// Whether this thread is a session thread: a socket may become a [`RingStream`] here, and is
/// then used here only.
pub fn on_session_thread() -> bool {
    ops::installed()
}
