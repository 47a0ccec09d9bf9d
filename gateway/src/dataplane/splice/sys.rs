//! Socket system calls the splice needs and the standard library lacks: the socket cookie, the
//! transmit progress of a TCP socket (for the drain check of P5 and the budget of P4).

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

/// Offset of `tcpi_bytes_acked` in `struct tcp_info` (include/uapi/linux/tcp.h, since 4.1):
/// 8 bytes of `u8` fields, 24 `u32` fields, then `tcpi_pacing_rate` and `tcpi_max_pacing_rate`.
const TCPI_BYTES_ACKED_OFFSET: usize = 8 + 24 * 4 + 2 * 8;

/// The socket cookie (`SO_COOKIE`), the key of the splice maps. It equals
/// `bpf_get_socket_cookie()` in the verdict program.
pub fn socket_cookie(fd: BorrowedFd<'_>) -> io::Result<u64> {
    let mut cookie: u64 = 0;
    let mut len = std::mem::size_of::<u64>() as libc::socklen_t;
    // SAFETY: `cookie` and `len` are valid for writes of the sizes given; the fd is borrowed
    // from an open socket for the duration of the call.
    let rc = unsafe {
        libc::getsockopt(fd.as_raw_fd(), libc::SOL_SOCKET, libc::SO_COOKIE, (&mut cookie as *mut u64).cast(), &mut len)
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(cookie)
}

/// Transmit progress of a TCP socket at one moment.
///
/// `tcpi_bytes_acked` and `SIOCOUTQ` come from two system calls, and ACKs that arrive between
/// them move bytes from the second to the first: `acked + unacked` read in that order
/// *understates* the write sequence by whatever was acknowledged in between. On loopback with a
/// reader catching up that can be megabytes if the thread is preempted between the two calls.
/// [`tx_progress`] therefore re-reads `tcpi_bytes_acked` after `SIOCOUTQ` (`acked_after`) and
/// retries while it moves, so that normally `acked == acked_after` and both bounds are exact.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TxProgress {
    /// Bytes acknowledged by the receiver (`tcpi_bytes_acked`; counts the SYN on some paths,
    /// so only differences are meaningful), read before `unacked`.
    pub acked: u64,
    /// Bytes in the write queue, sent or not, and not yet acknowledged (`SIOCOUTQ`).
    pub unacked: u64,
    /// `tcpi_bytes_acked` read again after `unacked` (`>= acked`).
    pub acked_after: u64,
}

impl TxProgress {
    /// Everything that has entered the write queue, as a lower bound: `acked + unacked` never
    /// exceeds the write sequence at the moment `unacked` was read (use it for anything that
    /// must err on the side of waiting or of a smaller budget).
    pub fn written(&self) -> u64 {
        self.acked + self.unacked
    }

    /// Upper bound of the same write sequence (at the moment `unacked` was read):
    /// `acked_after + unacked`. Equal to [`Self::written`] when no ACK arrived in between.
    pub fn written_max(&self) -> u64 {
        self.acked_after + self.unacked
    }
}

/// Attempts to read a [`TxProgress`] with no ACK between its two system calls.
const TX_PROGRESS_TRIES: usize = 8;

/// Reads `tcpi_bytes_acked`, `SIOCOUTQ`, then `tcpi_bytes_acked` again, retrying (a few times)
/// while the two `tcpi_bytes_acked` differ. `written()` never exceeds what has really been
/// written, so a drain check built on it errs on the side of waiting; when ACKs keep moving the
/// last attempt is returned with `written() <= true <= written_max()`.
pub fn tx_progress(fd: BorrowedFd<'_>) -> io::Result<TxProgress> {
    let mut acked = bytes_acked(fd)?;
    let mut tries = 0;
    loop {
        let unacked = outq(fd)?;
        let acked_after = bytes_acked(fd)?;
        tries += 1;
        if acked_after == acked || tries == TX_PROGRESS_TRIES {
            return Ok(TxProgress { acked, unacked, acked_after });
        }
        acked = acked_after;
    }
}

/// `SIOCOUTQ`: bytes in the write queue not yet acknowledged.
fn outq(fd: BorrowedFd<'_>) -> io::Result<u64> {
    let mut outq: libc::c_int = 0;
    // SAFETY: SIOCOUTQ (= TIOCOUTQ) writes one int through the valid pointer.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), libc::TIOCOUTQ, &mut outq as *mut libc::c_int) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(u64::try_from(outq).unwrap_or(0))
}

fn bytes_acked(fd: BorrowedFd<'_>) -> io::Result<u64> {
    let (info, len) = tcp_info(fd)?;
    let end = TCPI_BYTES_ACKED_OFFSET + 8;
    if len < end {
        return Err(io::Error::new(io::ErrorKind::Unsupported, "tcp_info without tcpi_bytes_acked"));
    }
    let mut raw = [0u8; 8];
    raw.copy_from_slice(&info[TCPI_BYTES_ACKED_OFFSET..end]);
    Ok(u64::from_ne_bytes(raw))
}

/// `tcpi_state` (`TCP_ESTABLISHED` = 1, …, `TCP_CLOSE` = 7).
pub fn tcp_state(fd: BorrowedFd<'_>) -> io::Result<u8> {
    let (info, _) = tcp_info(fd)?;
    Ok(info[0])
}

/// Raw `struct tcp_info` and the length the kernel filled in.
fn tcp_info(fd: BorrowedFd<'_>) -> io::Result<([u8; 256], usize)> {
    let mut info = [0u8; 256];
    let mut len = info.len() as libc::socklen_t;
    // SAFETY: `info` is valid for `len` bytes of writes; the kernel writes at most `len`.
    let rc = unsafe {
        libc::getsockopt(fd.as_raw_fd(), libc::IPPROTO_TCP, libc::TCP_INFO, info.as_mut_ptr().cast(), &mut len)
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((info, len as usize))
}

/// `FIONREAD`. On a socket in a sockmap, tcp_bpf answers with the bytes on the psock queue only,
/// i.e. exactly the bytes the verdict passed and nobody has read yet (docs/dataplane.md P1).
pub fn readable_bytes(fd: BorrowedFd<'_>) -> io::Result<usize> {
    let mut n: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int through the valid pointer.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), libc::FIONREAD, &mut n as *mut libc::c_int) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(usize::try_from(n).unwrap_or(0))
}

/// Non-blocking `recv` straight on the socket, bypassing tokio's readiness cache (the splice
/// supervisor manages readiness itself). `Ok(0)` is end of stream.
pub fn recv_nonblocking(fd: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<usize> {
    // SAFETY: `buf` is valid for `buf.len()` bytes of writes.
    let n = unsafe { libc::recv(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), libc::MSG_DONTWAIT) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n as usize)
}

/// Whether at least one byte can be read, without taking it (`MSG_PEEK`). On a socket in the
/// sockmap this also sees bytes that reached it before its insertion (docs/dataplane.md P1), which
/// `FIONREAD` does not count.
pub fn has_pending_bytes(fd: BorrowedFd<'_>) -> io::Result<bool> {
    let mut byte = [0u8; 1];
    // SAFETY: `byte` is valid for one byte of writes.
    let n = unsafe { libc::recv(fd.as_raw_fd(), byte.as_mut_ptr().cast(), 1, libc::MSG_PEEK | libc::MSG_DONTWAIT) };
    if n < 0 {
        let err = io::Error::last_os_error();
        return match err.kind() {
            io::ErrorKind::WouldBlock => Ok(false),
            _ => Err(err),
        };
    }
    // 0: end of stream, which is not a byte but is not a quiet peer either.
    Ok(true)
}

/// Whether the peer has shut down its sending side (`POLLRDHUP`) or the socket has an error
/// (`POLLERR`/`POLLHUP`), without reading.
pub fn hang_up(fd: BorrowedFd<'_>) -> io::Result<(bool, bool)> {
    let mut pfd = libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLRDHUP, revents: 0 };
    // SAFETY: one valid pollfd, zero timeout.
    let rc = unsafe { libc::poll(&mut pfd, 1, 0) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    let rdhup = pfd.revents & libc::POLLRDHUP != 0;
    let error = pfd.revents & (libc::POLLERR | libc::POLLHUP) != 0;
    Ok((rdhup, error))
}

/// `shutdown(fd, SHUT_WR)`: sends FIN once the write queue is flushed. `ENOTCONN` (the peer is
/// already gone) is not an error here.
pub fn shutdown_write(fd: BorrowedFd<'_>) -> io::Result<()> {
    // SAFETY: plain syscall on a borrowed, open fd.
    let rc = unsafe { libc::shutdown(fd.as_raw_fd(), libc::SHUT_WR) };
    if rc != 0 {
        let err = io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::ENOTCONN) {
            return Err(err);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::fd::AsFd;

    #[test]
    fn progress_counts_written_and_acked_bytes() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut a = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut b, _) = listener.accept().unwrap();
        let before = tx_progress(a.as_fd()).unwrap();
        a.write_all(&[7u8; 10_000]).unwrap();
        let mut got = vec![0u8; 10_000];
        b.read_exact(&mut got).unwrap();
        // Loopback acknowledges at once, but give the ACK a moment.
        let mut after = tx_progress(a.as_fd()).unwrap();
        for _ in 0..100 {
            if after.unacked == 0 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
            after = tx_progress(a.as_fd()).unwrap();
        }
        assert_eq!(after.written() - before.written(), 10_000);
        assert_eq!(after.acked - before.acked, 10_000);
        assert_ne!(socket_cookie(a.as_fd()).unwrap(), socket_cookie(b.as_fd()).unwrap());
    }
}
