//! Wake-ups of a spliced direction: its source socket, out of tokio's reactor, in an epoll
//! instance of its own that the supervisor adds it to only while the flow is idle.
//!
//! A socket in the sockmap wakes its waiters for every segment it receives, redirected or not
//! (docs/dataplane.md P7). For a redirected segment the socket does not poll readable, so epoll finds
//! no event and puts the waiting thread back to sleep inside `epoll_wait`: no system call is seen,
//! but every packet costs the daemon a wake-up and a context switch. Measured under sysbench point
//! selects: with the socket in tokio's reactor, 1.1 wake-ups and ~10 system calls per statement
//! (9–25 µs of daemon CPU per statement); with it in a one-shot epoll set, still 0.4–0.8 silent
//! wake-ups per statement (one-shot items are only disarmed when an event is delivered, which a
//! redirected segment never is). So a moving flow is not watched at all ([`Watch::deafen`]): the
//! supervisor looks on a timer. An idle flow is watched ([`Watch::listen`]) so that a FIN or bytes
//! the verdict passed wake it at once. The epoll descriptor itself sits in tokio's reactor
//! ([`AsyncFd`]): it is readable when its socket has an event.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use tokio::io::unix::AsyncFd;

/// What an idle flow listens for: bytes (those the verdict passed), the peer's FIN; errors and
/// hang-ups are always reported. Level-triggered: a condition that lasts is seen again.
const INTEREST: u32 = (libc::EPOLLIN | libc::EPOLLRDHUP) as u32;

/// One source socket, watched while the flow is idle.
pub(super) struct Watch {
    epoll: AsyncFd<OwnedFd>,
    socket: RawFd,
    listening: bool,
}

impl Watch {
    /// A watch on `socket`, not listening yet. The caller keeps `socket` open for as long as the
    /// watch lives.
    pub fn new(socket: RawFd) -> io::Result<Watch> {
        // SAFETY: plain syscall; the returned descriptor is owned below.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a fresh descriptor nothing else owns.
        let owned = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: an `OwnedFd` keeps its descriptor open and unchanged until it is dropped,
        // which happens only when the `AsyncFd` is.
        let epoll = unsafe { AsyncFd::register_with_interest(owned, tokio::io::Interest::READABLE) }
            .map_err(|e| e.into_parts().1)?;
        Ok(Watch { epoll, socket, listening: false })
    }

    /// Whether the socket is in the set.
    pub fn is_listening(&self) -> bool {
        self.listening
    }

    /// Puts the socket in the set. A condition already present (bytes, FIN, error) makes
    /// [`Self::wait`] return at once.
    pub fn listen(&mut self) -> io::Result<()> {
        if !self.listening {
            ctl(self.epoll.get_ref().as_raw_fd(), libc::EPOLL_CTL_ADD, self.socket)?;
            self.listening = true;
        }
        Ok(())
    }

    /// Takes the socket out of the set: its packets no longer wake the daemon.
    pub fn deafen(&mut self) -> io::Result<()> {
        if self.listening {
            ctl(self.epoll.get_ref().as_raw_fd(), libc::EPOLL_CTL_DEL, self.socket)?;
            self.listening = false;
        }
        Ok(())
    }

    /// Waits until the socket (listened to) has an event. Never returns while not listening.
    pub async fn wait(&self) -> io::Result<()> {
        loop {
            let mut guard = self.epoll.readable().await?;
            let got = self.take()?;
            guard.clear_ready();
            if got {
                return Ok(());
            }
        }
    }

    /// Collects the event, if any, without blocking.
    fn take(&self) -> io::Result<bool> {
        let mut event = libc::epoll_event { events: 0, u64: 0 };
        // SAFETY: one valid epoll_event for the kernel to fill; zero timeout.
        let n = unsafe { libc::epoll_wait(self.epoll.get_ref().as_raw_fd(), &mut event, 1, 0) };
        match n {
            n if n > 0 => Ok(true),
            0 => Ok(false),
            _ => {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    Ok(false)
                } else {
                    Err(e)
                }
            }
        }
    }
}

fn ctl(epoll: RawFd, op: libc::c_int, socket: RawFd) -> io::Result<()> {
    let mut event = libc::epoll_event { events: INTEREST, u64: 0 };
    // SAFETY: valid descriptors and a valid epoll_event for the duration of the call.
    let rc = unsafe { libc::epoll_ctl(epoll, op, socket, &mut event) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::time::Duration;

    /// A connected pair of non-blocking std sockets on loopback.
    fn pair() -> (std::net::TcpStream, std::net::TcpStream) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let a = std::net::TcpStream::connect(listener.local_addr().expect("addr")).expect("connect");
        let (b, _) = listener.accept().expect("accept");
        b.set_nonblocking(true).expect("nonblocking");
        (a, b)
    }

    async fn woke(w: &Watch) -> bool {
        tokio::time::timeout(Duration::from_millis(200), w.wait()).await.is_ok()
    }

    #[tokio::test]
    async fn hears_only_while_listening_and_nothing_is_lost() {
        let (mut peer, watched) = pair();
        let mut w = Watch::new(watched.as_raw_fd()).expect("watch");
        w.listen().expect("listen");
        assert!(!woke(&w).await, "woke with nothing sent");
        peer.write_all(b"x").expect("send");
        assert!(woke(&w).await, "no wake for a byte");
        // Deaf: bytes do not wake it …
        w.deafen().expect("deafen");
        peer.write_all(b"y").expect("send");
        assert!(!woke(&w).await, "woke while deaf");
        // … and listening again with bytes waiting wakes at once.
        w.listen().expect("listen");
        assert!(woke(&w).await, "listening again lost the pending bytes");
    }

    #[tokio::test]
    async fn a_hang_up_wakes_it() {
        let (peer, watched) = pair();
        let mut w = Watch::new(watched.as_raw_fd()).expect("watch");
        w.listen().expect("listen");
        drop(peer);
        assert!(woke(&w).await, "no wake for the peer's FIN");
    }
}
