//! Wake-ups from the verdict: a thread reads `SPLICE_EVENTS` and wakes the flow each record names.
//!
//! A spliced flow is not watched for bytes (every redirected segment would wake the daemon, P7),
//! so bytes the verdict passes to userspace (a budget stop, a refused redirect) would wait for the
//! flow's next look. Instead the verdict posts the flow's cookie to a BPF ring buffer when such an
//! episode begins (`gateway-ebpf/src/splice.rs`), and [`Wakeups`] wakes that flow's supervisor.
//! The reader is a plain thread blocked in `poll`, not a task: it serves every runtime the
//! splicer is used from, and it costs nothing while no flow falls back.

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsFd, AsRawFd};
use std::sync::{Arc, Mutex, PoisonError};

use aya::maps::{MapData, RingBuf};
use gateway_common::splice::SpliceWake;
use tokio::sync::Notify;

/// The flows waiting for wake-ups, by source cookie.
#[derive(Debug, Default)]
struct Registry {
    flows: Mutex<HashMap<u64, Arc<Notify>>>,
}

impl Registry {
    fn wake(&self, cookie: u64) {
        let flows = self.flows.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(notify) = flows.get(&cookie) {
            // Stores a permit if the flow is not waiting right now: the wake-up is not lost.
            notify.notify_one();
        }
    }
}

/// The reader thread and the registry it serves. Dropping it stops the thread.
#[derive(Debug)]
pub(super) struct Wakeups {
    registry: Arc<Registry>,
    /// Dropped first: the reader sees the pipe's end and returns.
    stop: Option<io::PipeWriter>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Wakeups {
    /// Starts the reader of `ring`.
    pub fn start(ring: RingBuf<MapData>) -> io::Result<Wakeups> {
        let registry = Arc::new(Registry::default());
        let (stop_reader, stop) = io::pipe()?;
        let served = Arc::clone(&registry);
        let thread = std::thread::Builder::new()
            .name("splice-wakeups".into())
            .spawn(move || read_until_stopped(ring, &served, stop_reader))?;
        Ok(Wakeups { registry, stop: Some(stop), thread: Some(thread) })
    }

    /// Registers the flow whose source is `cookie`; it is woken until the registration is dropped.
    pub fn register(&self, cookie: u64) -> Registration {
        let notify = Arc::new(Notify::new());
        let mut flows = self.registry.flows.lock().unwrap_or_else(PoisonError::into_inner);
        flows.insert(cookie, Arc::clone(&notify));
        Registration { registry: Arc::clone(&self.registry), cookie, notify }
    }
}

impl Drop for Wakeups {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// One flow's wake-ups.
#[derive(Debug)]
pub(super) struct Registration {
    registry: Arc<Registry>,
    cookie: u64,
    notify: Arc<Notify>,
}

impl Registration {
    /// Completes when the verdict has asked for this flow since the last call.
    pub async fn woken(&self) {
        self.notify.notified().await;
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut flows = self.registry.flows.lock().unwrap_or_else(PoisonError::into_inner);
        if flows.get(&self.cookie).is_some_and(|n| Arc::ptr_eq(n, &self.notify)) {
            flows.remove(&self.cookie);
        }
    }
}

/// Reads records until `stop` ends. The ring buffer polls readable while it holds records
/// (level-triggered), so a record posted between the last read and `poll` is not missed.
fn read_until_stopped(mut ring: RingBuf<MapData>, registry: &Registry, stop: io::PipeReader) {
    loop {
        while let Some(record) = ring.next() {
            match parse(&record) {
                Some(wake) => registry.wake(wake.cookie),
                None => tracing::warn!(len = record.len(), "splice wake-up record of an unexpected size"),
            }
        }
        match wait(ring.as_fd().as_raw_fd(), stop.as_fd().as_raw_fd()) {
            Ok(Ready::Records) => {}
            Ok(Ready::Stopped) => return,
            Err(e) => {
                // Flows still find passed bytes on their own (slower) looks.
                tracing::warn!(error = %e, "splice wake-ups stopped");
                return;
            }
        }
    }
}

// `parse` reads a record as exactly one `u64`, the layout of `SpliceWake`.
const _: () = assert!(std::mem::size_of::<SpliceWake>() == 8);

/// A record's flow, if it has the layout of [`SpliceWake`] (one `u64`).
fn parse(record: &[u8]) -> Option<SpliceWake> {
    let cookie = <[u8; 8]>::try_from(record).ok()?;
    Some(SpliceWake { cookie: u64::from_ne_bytes(cookie) })
}

/// What ended a [`wait`].
enum Ready {
    Records,
    Stopped,
}

/// Blocks until the ring has records or the stop pipe's writer is gone.
fn wait(ring: libc::c_int, stop: libc::c_int) -> io::Result<Ready> {
    let mut fds = [
        libc::pollfd { fd: ring, events: libc::POLLIN, revents: 0 },
        libc::pollfd { fd: stop, events: libc::POLLIN, revents: 0 },
    ];
    loop {
        // SAFETY: two valid pollfds for the kernel to fill; no timeout.
        let rc = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
        if rc >= 0 {
            break;
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    if fds[1].revents != 0 {
        return Ok(Ready::Stopped);
    }
    if fds[0].revents & (libc::POLLERR | libc::POLLNVAL) != 0 {
        return Err(io::Error::other("the ring buffer's descriptor failed"));
    }
    Ok(Ready::Records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_names_its_flow_and_odd_sizes_are_refused() {
        let cookie = 0x0102_0304_0506_0708u64;
        assert_eq!(parse(&cookie.to_ne_bytes()), Some(SpliceWake { cookie }));
        assert_eq!(parse(&[1, 2, 3]), None);
        assert_eq!(parse(&[0u8; 16]), None);
    }

    #[tokio::test]
    async fn a_wake_up_before_the_wait_is_kept_and_goes_only_to_its_flow() {
        let registry = Arc::new(Registry::default());
        let wakeups = |cookie| {
            let notify = Arc::new(Notify::new());
            registry.flows.lock().expect("lock").insert(cookie, Arc::clone(&notify));
            Registration { registry: Arc::clone(&registry), cookie, notify }
        };
        let (a, b) = (wakeups(1), wakeups(2));
        registry.wake(1);
        registry.wake(99); // nobody's: ignored
        let soon = std::time::Duration::from_millis(100);
        assert!(tokio::time::timeout(soon, a.woken()).await.is_ok(), "the permit was lost");
        assert!(tokio::time::timeout(soon, b.woken()).await.is_err(), "woke the wrong flow");
        drop(a);
        assert!(!registry.flows.lock().expect("lock").contains_key(&1), "a dropped registration stays");
    }
}
