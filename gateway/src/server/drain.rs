//! Graceful shutdown: sessions learn at a statement boundary that the gateway is stopping, and
//! the server waits until they have all ended or the grace period has run out.

use std::time::Duration;

use tokio::sync::watch;

/// The stop signal and the count of open client sessions.
#[derive(Debug)]
pub struct Drain {
    stop: watch::Sender<bool>,
    open: watch::Sender<usize>,
}

impl Default for Drain {
    fn default() -> Self {
        Drain { stop: watch::channel(false).0, open: watch::channel(0).0 }
    }
}

/// Counts one client session as open until dropped.
#[derive(Debug)]
pub struct SessionGuard<'a>(&'a Drain);

impl Drop for SessionGuard<'_> {
    fn drop(&mut self) {
        self.0.open.send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl Drain {
    /// A session started; it counts as open until the guard is dropped.
    pub fn enter(&self) -> SessionGuard<'_> {
        self.open.send_modify(|n| *n += 1);
        SessionGuard(self)
    }

    /// Whether shutdown has begun.
    pub fn is_stopping(&self) -> bool {
        *self.stop.borrow()
    }

    /// Resolves once shutdown has begun (sessions select on it while waiting for a command).
    pub async fn stopping(&self) {
        let mut rx = self.stop.subscribe();
        if rx.wait_for(|s| *s).await.is_err() {
            std::future::pending::<()>().await;
        }
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
        self.stop.send_replace(true);
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
                let _g = d.enter();
                d.stopping().await;
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
}
