//! Wake-ups of a spliced direction: its source socket, out of tokio's reactor, in an epoll
//! instance of its own with a one-shot interest, so the daemon sleeps while the kernel forwards.
//!
//! A socket in the sockmap signals "readable" for every segment it receives, redirected or not
//! (docs/ebpf.md P7). Left in tokio's reactor, a spliced session woke the daemon once per packet
//! each way: measured 1.1 `epoll_wait` returns, 1.1 context switches and ~10 system calls per
//! statement, 9–25 µs of daemon CPU per statement under sysbench point selects. Here the interest
//! is `EPOLLONESHOT`: one wake disarms it, and [`Watch::arm`] re-arms it when the supervisor wants
//! to hear again. Re-arming re-checks the socket, so nothing that happened meanwhile (bytes the
//! verdict passed, a hang-up) is lost, only noticed later. The epoll descriptor itself sits in
//! tokio's reactor ([`AsyncFd`]): it is readable when its one socket has an event.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use tokio::io::unix::AsyncFd;

/// What the supervisor listens for: bytes (those the verdict passed, or data before the splice
/// took effect), the peer's FIN, errors and hang-ups (always reported).
const INTEREST: u32 = (libc::EPOLLIN | libc::EPOLLRDHUP | libc::EPOLLONESHOT) as u32;

/// One source socket watched with a one-shot interest.
pub(super) struct Watch {
    epoll: AsyncFd<OwnedFd>,
    socket: RawFd,
}

impl Watch {
    /// Watches `socket` (armed). The caller keeps `socket` open for as long as the watch lives.
    pub fn new(socket: RawFd) -> io::Result<Watch> {
        // SAFETY: plain syscall; the returned descriptor is owned below.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a fresh descriptor nothing else owns.
        let owned = unsafe { OwnedFd::from_raw_fd(fd) };
        ctl(owned.as_raw_fd(), libc::EPOLL_CTL_ADD, socket)?;
        // SAFETY: an `OwnedFd` keeps its descriptor open and unchanged until it is dropped,
        // which happens only when the `AsyncFd` is.
        let epoll = unsafe { AsyncFd::register_with_interest(owned, tokio::io::Interest::READABLE) }
            .map_err(|e| e.into_parts().1)?;
        Ok(Watch { epoll, socket })
    }

    /// Waits until the armed socket has an event; the interest is disarmed when this returns.
    pub async fn wait(&self) -> io::Result<()> {
        loop {
            let mut guard = self.epoll.readable().await?;
            if self.take()? {
                // The one-shot item is disarmed: the epoll descriptor stays quiet until re-armed.
                guard.clear_ready();
                return Ok(());
            }
            guard.clear_ready();
        }
    }

    /// Re-arms the interest. An event already pending (bytes, FIN, error) wakes [`Self::wait`]
    /// at once.
    pub fn arm(&self) -> io::Result<()> {
        ctl(self.epoll.get_ref().as_raw_fd(), libc::EPOLL_CTL_MOD, self.socket)
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
    async fn one_shot_until_rearmed_and_nothing_is_lost() {
        let (mut peer, watched) = pair();
        let w = Watch::new(watched.as_raw_fd()).expect("watch");
        assert!(!woke(&w).await, "woke with nothing sent");
        peer.write_all(b"x").expect("send");
        assert!(woke(&w).await, "no wake for a byte");
        // Disarmed: more bytes do not wake it …
        peer.write_all(b"y").expect("send");
        assert!(!woke(&w).await, "woke while disarmed");
        // … and re-arming with bytes still waiting wakes at once.
        w.arm().expect("arm");
        assert!(woke(&w).await, "re-arming lost the pending bytes");
    }

    #[tokio::test]
    async fn a_hang_up_wakes_it() {
        let (peer, watched) = pair();
        let w = Watch::new(watched.as_raw_fd()).expect("watch");
        drop(peer);
        assert!(woke(&w).await, "no wake for the peer's FIN");
    }
}
