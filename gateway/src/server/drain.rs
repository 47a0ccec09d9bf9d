//! Graceful shutdown: sessions learn at a statement boundary that the gateway is stopping, and
//! the server waits until they have all ended or the grace period has run out.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::watch;

use crate::session::kill_switch::KillSwitch;

/// The stop flag and the count of open client sessions.
///
/// Each open session has its own switch, fired by [`Drain::shutdown`]: a session waits on it
/// around every command, and waiting on a switch costs far less than subscribing to a
/// process-wide signal each time.
#[derive(Debug)]
pub struct Drain {
    stop: AtomicBool,
    open: watch::Sender<usize>,
    sessions: Mutex<HashMap<u32, KillSwitch>>,
}

impl Default for Drain {
    fn default() -> Self {
        Drain { stop: AtomicBool::new(false), open: watch::channel(0).0, sessions: Mutex::default() }
    }
}

/// Counts one client session as open until dropped.
#[derive(Debug)]
pub struct SessionGuard<'a> {
    drain: &'a Drain,
    id: u32,
}

impl Drop for SessionGuard<'_> {
    fn drop(&mut self) {
        self.drain.sessions().remove(&self.id);
        self.drain.open.send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl Drain {
    /// Session `id` started; it counts as open until the guard is dropped, and its switch
    /// ([`Drain::switch`]) fires when shutdown begins (at once if it has).
    pub fn enter(&self, id: u32) -> SessionGuard<'_> {
        self.open.send_modify(|n| *n += 1);
        let switch = KillSwitch::new();
        self.sessions().insert(id, switch.clone());
        // `shutdown` sets the flag before it fires the switches it finds: a session entering at
        // that moment is either among them or sees the flag here.
        if self.is_stopping() {
            switch.fire();
        }
        SessionGuard { drain: self, id }
    }

    /// Counts session `id`, entered on another thread whose guard is then forgotten, until the
    /// returned guard is dropped (a session moving to a session thread: its count and switch
    /// stay as they are).
    pub fn take_over(&self, id: u32) -> SessionGuard<'_> {
        SessionGuard { drain: self, id }
    }

    /// The switch of open session `id` that fires when shutdown begins; a switch that never fires
    /// if the session is not open.
    pub fn switch(&self, id: u32) -> KillSwitch {
        self.sessions().get(&id).cloned().unwrap_or_default()
    }

    fn sessions(&self) -> MutexGuard<'_, HashMap<u32, KillSwitch>> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether shutdown has begun.
    pub fn is_stopping(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// ER_SERVER_SHUTDOWN, the answer to a command that arrives while the gateway drains.
    pub fn shutdown_err() -> crate::protocol::message::ErrPacket {
        crate::protocol::message::ErrPacket::with_state(1053, b"08S01", "Server shutdown in progress")
    }

    /// Open client sessions.
    pub fn open(&self) -> usize {
        *self.open.borrow()
    }

    /// Tells every session to end at its next statement boundary, then waits until they have
    /// ended or `grace` has passed. Returns the sessions still open.
    pub async fn shutdown(&self, grace: Duration) -> usize {
        self.stop.store(true, Ordering::SeqCst);
        let switches: Vec<KillSwitch> = self.sessions().values().cloned().collect();
        switches.iter().for_each(KillSwitch::fire);
        let mut rx = self.open.subscribe();
        let _ = tokio::time::timeout(grace, rx.wait_for(|n| *n == 0)).await;
        self.open()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn waits_for_open_sessions_within_the_grace_period() {
        let d = std::sync::Arc::new(Drain::default());
        assert_eq!(d.shutdown(Duration::from_secs(5)).await, 0);
        let d = std::sync::Arc::new(Drain::default());
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let session = {
            let d = d.clone();
            tokio::spawn(async move {
                let _g = d.enter(7);
                d.switch(7).fired().await;
                let _ = rx.await;
            })
        };
        tokio::task::yield_now().await;
        assert_eq!(d.open(), 1);
        // Still open after the grace period: reported.
        assert_eq!(d.shutdown(Duration::from_secs(1)).await, 1);
        let _ = tx.send(());
        let _ = session.await;
        assert_eq!(d.shutdown(Duration::from_secs(1)).await, 0);
    }

    #[tokio::test]
    async fn every_open_session_switch_fires_at_shutdown_even_one_entering_late() {
        let d = Drain::default();
        let g1 = d.enter(1);
        let (one, unknown) = (d.switch(1), d.switch(99));
        assert!(!one.is_set());
        assert_eq!(d.shutdown(Duration::from_millis(10)).await, 1);
        assert!(one.is_set(), "an open session is told at shutdown");
        assert!(!unknown.is_set(), "a session that never entered has a switch of its own");
        let g2 = d.enter(2);
        assert!(d.switch(2).is_set(), "a session entering during shutdown is told at once");
        drop((g1, g2));
        assert_eq!(d.open(), 0);
        assert!(!d.switch(1).is_set(), "a closed session's switch is gone");
    }
}
