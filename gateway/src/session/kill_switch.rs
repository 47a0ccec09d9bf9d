//! A session's kill switch: set once by another session's `KILL CONNECTION`, watched by the
//! session between (and during) its statements.
//!
//! The session waits on it around every statement (the next command, every read of an answer),
//! so a wait must be cheap. A `watch` channel registered and removed a `Notify` waiter on every
//! wait (about 1,100 instructions per statement, 9 % of a 1:1 statement). Here a wait is an
//! atomic load. A pending wait leaves its waker under a lock, once: each holder of the switch
//! remembers the waker it left and the list's drain count then, and while neither changed its
//! waits touch no lock (a lock is two atomic read-modify-writes, and a session waited on two
//! switches per statement).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

/// Distinct wakers kept at most; a further one wakes and drops them all (they register again
/// when polled), so waiters from many tasks cannot grow the list without bound.
const MAX_WAKERS: usize = 8;

/// A shared, set-once kill flag with wake-ups. Clones share the flag; each clone remembers its
/// own waits.
#[derive(Debug, Default)]
pub struct KillSwitch {
    state: Arc<State>,
    /// The waker this holder left in the list, if it is still there.
    left: Option<Left>,
}

impl Clone for KillSwitch {
    /// The same switch; the clone has waited for nothing yet.
    fn clone(&self) -> Self {
        KillSwitch { state: Arc::clone(&self.state), left: None }
    }
}

#[derive(Debug, Default)]
struct State {
    set: AtomicBool,
    /// How many times the list was emptied (a fire, an overflow): a waker left before the last
    /// emptying is no longer listed.
    drains: AtomicU64,
    wakers: Mutex<Vec<Waker>>,
}

/// A waker a holder left in the list, and the list's drain count when it did.
#[derive(Debug)]
struct Left {
    waker: Waker,
    drains: u64,
}

impl KillSwitch {
    /// A switch not set.
    pub fn new() -> KillSwitch {
        KillSwitch::default()
    }

    /// Sets the switch and wakes every waiter. Setting it again does nothing more.
    pub fn fire(&self) {
        self.state.set.store(true, Ordering::SeqCst);
        let wakers = {
            let mut list = self.state.lock();
            // Counted before anyone is woken: a woken task polls again and sees it.
            self.state.drains.fetch_add(1, Ordering::Release);
            std::mem::take(&mut *list)
        };
        wakers.into_iter().for_each(Waker::wake);
    }

    /// Whether the switch is set.
    pub fn is_set(&self) -> bool {
        self.state.set.load(Ordering::SeqCst)
    }

    /// Resolves once the switch is set (at once if it is).
    pub fn fired(&mut self) -> Fired<'_> {
        Fired(self)
    }

    /// Whether `waker` is listed by this holder's last registration.
    fn listed(&self, waker: &Waker) -> bool {
        self.left
            .as_ref()
            .is_some_and(|l| l.drains == self.state.drains.load(Ordering::Acquire) && l.waker.will_wake(waker))
    }
}

impl State {
    fn lock(&self) -> MutexGuard<'_, Vec<Waker>> {
        self.wakers.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Leaves `waker` to be woken by [`KillSwitch::fire`], unless an equivalent one is there.
    fn register(&self, waker: &Waker) -> Left {
        let mut wakers = self.lock();
        if !wakers.iter().any(|w| w.will_wake(waker)) {
            if wakers.len() >= MAX_WAKERS {
                // Spurious wake-ups only: each woken waiter polls again and registers anew.
                self.drains.fetch_add(1, Ordering::Release);
                std::mem::take(&mut *wakers).into_iter().for_each(Waker::wake);
            }
            wakers.push(waker.clone());
        }
        Left { waker: waker.clone(), drains: self.drains.load(Ordering::Relaxed) }
    }
}

/// The future of [`KillSwitch::fired`].
#[derive(Debug)]
pub struct Fired<'a>(&'a mut KillSwitch);

impl Future for Fired<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let switch = &mut *self.0;
        if switch.is_set() {
            return Poll::Ready(());
        }
        // Still listed: nothing emptied the list since this holder left this task's waker, so
        // a fire will find it (an emptying wakes what it takes, and counts before it wakes).
        if !switch.listed(cx.waker()) {
            switch.left = Some(switch.state.register(cx.waker()));
        }
        // A `fire` between the first load and the registration may have taken the wakers
        // before ours was there: its store is seen here (it came before its lock).
        if switch.is_set() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;
    use std::task::Wake;
    use std::time::Duration;

    use super::*;

    /// A waker that counts its wake-ups.
    #[derive(Default)]
    struct Counter(AtomicUsize);

    impl Wake for Counter {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn poll(k: &mut KillSwitch, waker: &Waker) -> Poll<()> {
        let mut f = k.fired();
        Pin::new(&mut f).poll(&mut Context::from_waker(waker))
    }

    #[test]
    fn a_waiter_is_woken_once_by_the_kill_and_then_ready() {
        let mut k = KillSwitch::new();
        let counter = Arc::new(Counter::default());
        let waker = Waker::from(counter.clone());
        assert!(poll(&mut k, &waker).is_pending());
        assert!(poll(&mut k, &waker).is_pending(), "a second wait of the same task");
        assert_eq!(k.state.lock().len(), 1, "the same task's waker is kept once");
        // Another holder of the same task's waker finds it listed (under the lock).
        let mut other = k.clone();
        assert!(poll(&mut other, &waker).is_pending());
        assert_eq!(k.state.lock().len(), 1);
        assert!(!k.is_set());
        k.fire();
        assert_eq!(counter.0.load(Ordering::SeqCst), 1);
        assert!(k.is_set());
        assert!(poll(&mut k, &waker).is_ready());
        k.fire();
        assert_eq!(counter.0.load(Ordering::SeqCst), 1, "nobody waits any more");
    }

    #[test]
    fn every_task_waiting_is_woken() {
        let mut k = KillSwitch::new();
        let counters: Vec<Arc<Counter>> = (0..3).map(|_| Arc::new(Counter::default())).collect();
        for c in &counters {
            assert!(poll(&mut k, &Waker::from(c.clone())).is_pending());
        }
        k.clone().fire();
        assert!(counters.iter().all(|c| c.0.load(Ordering::SeqCst) == 1));
    }

    #[test]
    fn many_tasks_cannot_grow_the_waker_list_and_none_is_lost() {
        let mut k = KillSwitch::new();
        let counters: Vec<Arc<Counter>> = (0..3 * MAX_WAKERS).map(|_| Arc::new(Counter::default())).collect();
        for c in &counters {
            assert!(poll(&mut k, &Waker::from(c.clone())).is_pending());
            assert!(k.state.lock().len() <= MAX_WAKERS);
        }
        k.fire();
        // Every waiter was woken: by the kill, or earlier by an overflow (then it polls again).
        assert!(counters.iter().all(|c| c.0.load(Ordering::SeqCst) >= 1));
    }

    #[test]
    fn a_waiter_emptied_out_of_the_list_leaves_its_waker_again() {
        let mut k = KillSwitch::new();
        let mine = Arc::new(Counter::default());
        let waker = Waker::from(mine.clone());
        assert!(poll(&mut k, &waker).is_pending());
        assert!(k.listed(&waker), "a later wait of this task takes no lock");
        // Other tasks overflow the list: it is emptied, this task woken.
        let mut others = k.clone();
        let counters: Vec<Arc<Counter>> = (0..MAX_WAKERS).map(|_| Arc::new(Counter::default())).collect();
        for c in &counters {
            assert!(poll(&mut others, &Waker::from(c.clone())).is_pending());
        }
        assert_eq!(mine.0.load(Ordering::SeqCst), 1, "woken by the overflow");
        assert!(!k.listed(&waker), "the overflow emptied the list");
        // Its next wait leaves the waker again, so the kill still reaches it.
        assert!(poll(&mut k, &waker).is_pending());
        assert!(k.listed(&waker));
        k.fire();
        assert_eq!(mine.0.load(Ordering::SeqCst), 2, "woken by the kill");
        assert!(!k.listed(&waker), "the kill emptied the list");
    }

    #[tokio::test]
    async fn a_kill_from_another_thread_ends_the_wait() {
        let mut k = KillSwitch::new();
        let killer = k.clone();
        let wait = tokio::spawn(async move { k.fired().await });
        tokio::task::yield_now().await;
        std::thread::spawn(move || killer.fire()).join().unwrap();
        tokio::time::timeout(Duration::from_secs(10), wait).await.expect("the kill was not seen").unwrap();
    }
}
