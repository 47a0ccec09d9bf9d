//! Hang-ups of a spliced direction: its source socket, out of tokio's reactor, in an epoll
//! instance of its own that listens for the peer's FIN and for errors, not for bytes.
//!
//! A socket in the sockmap wakes its waiters for every segment it receives, redirected or not
//! (docs/dataplane.md P7): measured under sysbench point selects, with the socket in tokio's
//! reactor 1.1 wake-ups and ~10 system calls per statement (9–25 µs of daemon CPU per
//! statement). That wake-up (`sock_def_readable`) is keyed `EPOLLIN`, and epoll drops a keyed
//! wake-up that matches none of an item's events before it wakes anyone. So the socket is
//! watched for `EPOLLRDHUP` only (errors and hang-ups are always reported): redirected segments
//! and passed bytes wake no one, the FIN (`sock_def_wakeup`, unkeyed) and errors
//! (`EPOLLERR`) do, at once. Passed bytes reach the supervisor through the verdict's own
//! wake-ups (`wakeups.rs`). The epoll descriptor itself sits in tokio's reactor ([`AsyncFd`]): it
//! is readable when its socket has an event.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use tokio::io::unix::AsyncFd;

/// The peer's FIN; errors and hang-ups are always reported. Not `EPOLLIN`: see the module docs.
/// A condition wakes [`Watch::wait`] once (tokio sees the epoll descriptor edge-triggered): the
/// supervisor then looks on its timer until it has handled it.
const INTEREST: u32 = libc::EPOLLRDHUP as u32;

/// One source socket, watched for hang-ups and errors.
pub(super) struct Watch {
    epoll: AsyncFd<OwnedFd>,
}

impl Watch {
    /// A watch on `socket`. The caller keeps `socket` open for as long as the watch lives.
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
        Ok(Watch { epoll })
    }

    /// Waits until the socket has hung up (FIN received) or has an error.
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
    async fn bytes_do_not_wake_it_a_hang_up_does() {
        let (mut peer, watched) = pair();
        let w = Watch::new(watched.as_raw_fd()).expect("watch");
        assert!(!woke(&w).await, "woke with nothing sent");
        // The wake-up of a received segment is keyed EPOLLIN: it must not reach this watch.
        for _ in 0..3 {
            peer.write_all(b"x").expect("send");
        }
        assert!(!woke(&w).await, "bytes woke a hang-up watch");
        drop(peer);
        assert!(woke(&w).await, "no wake for the peer's FIN");
    }

    #[tokio::test]
    async fn a_reset_wakes_it() {
        let (peer, watched) = pair();
        let w = Watch::new(watched.as_raw_fd()).expect("watch");
        // SO_LINGER 0: close sends RST instead of FIN.
        let linger = libc::linger { l_onoff: 1, l_linger: 0 };
        // SAFETY: a valid socket and a valid `linger` for the duration of the call.
        let rc = unsafe {
            libc::setsockopt(
                peer.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_LINGER,
                (&linger as *const libc::linger).cast(),
                std::mem::size_of::<libc::linger>() as libc::socklen_t,
            )
        };
        assert_eq!(rc, 0, "SO_LINGER");
        drop(peer);
        assert!(woke(&w).await, "no wake for the peer's reset");
    }
}
