//! A TCP connection whose receives and sends go through the session thread's ring, behind
//! tokio's `AsyncRead` / `AsyncWrite`. A receive waits in the kernel until data comes, holding
//! no buffer: the kernel picks one of the thread's provided buffers when the data is there, and
//! the stream copies it out at once. A write is copied and sent behind the caller's back (at
//! most one send in flight), so that the sends and receives of every session that ran are
//! submitted together.

use std::io;
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::pin::Pin;
use std::task::{Context, Poll};

use io_uring::{opcode, squeue, types};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::{ops, provided};

/// The first receive buffer of a stream that receives into its own (where the kernel has no
/// buffer rings, or none was free); it doubles (up to [`MAX_RECV`]) each time a receive fills
/// it. Smaller, a read_write range select's answer (about 14 KB) took several receives and as
/// many sends: 4 KiB made 4.5 TCP segments per statement instead of 4.0
/// (docs/performance.md §3).
const FIRST_RECV: usize = 16 * 1024;
/// The largest receive buffer (as the relay's batches).
const MAX_RECV: usize = 64 * 1024;

/// The receive a stream has in flight.
#[derive(Debug, Clone, Copy)]
enum Recv {
    /// Into a provided buffer the kernel picks when data comes.
    Provided(usize),
    /// Into the stream's own `rbuf`.
    Own(usize),
}

impl Recv {
    /// The receive's slot in the thread's table.
    fn slot(&self) -> usize {
        match *self {
            Recv::Provided(slot) | Recv::Own(slot) => slot,
        }
    }
}

/// The liveness check a stream's next send carries ([`RingStream::check_on_send`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    None,
    /// Asked for: the next send is queued behind a peek.
    OnSend,
    /// The peek's slot.
    Peek(usize),
    /// The peek found the connection closed, or with bytes nobody asked for, before the send it
    /// went with: every read fails ([`RingStream::stale`]).
    Stale,
}

/// The largest send buffer kept after its send.
const KEEP_SEND: usize = 64 * 1024;

/// A connection of a session thread (its operations are on that thread's ring).
#[derive(Debug)]
pub struct RingStream {
    sock: TcpStream,
    /// Received bytes not yet read are `rbuf[rstart..rend]`; the kernel has `rbuf` while
    /// `recv` is [`Recv::Own`]. With provided buffers it only holds what a read left over.
    rbuf: Vec<u8>,
    rstart: usize,
    rend: usize,
    recv: Option<Recv>,
    /// Receives name the thread's provided buffers; `false` where it has none.
    provided: bool,
    /// No provided buffer was free for the last receive: the next one uses `rbuf`.
    own_next: bool,
    /// The peer closed its side (a receive returned 0).
    eof: bool,
    /// Bytes accepted and not yet sent are `wbuf[wsent..]`; the kernel has `wbuf` while `send`
    /// is set.
    wbuf: Vec<u8>,
    wsent: usize,
    send: Option<usize>,
    /// A send failed after its bytes were accepted: the next write or flush reports it.
    failed: Option<io::Error>,
    check: Check,
}

impl RingStream {
    /// Takes over `sock` (made blocking: the ring waits for it).
    pub fn new(sock: TcpStream) -> io::Result<RingStream> {
        sock.set_nonblocking(false)?;
        let provided = ops::provides();
        Ok(RingStream {
            sock,
            rbuf: if provided { Vec::new() } else { vec![0; FIRST_RECV] },
            rstart: 0,
            rend: 0,
            recv: None,
            provided,
            own_next: false,
            eof: false,
            wbuf: Vec::new(),
            wsent: 0,
            send: None,
            failed: None,
            check: Check::None,
        })
    }

    /// The peer's address.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.sock.peer_addr()
    }

    /// The socket (options and addresses only; never read or write it directly).
    pub fn socket(&self) -> &TcpStream {
        &self.sock
    }

    /// Whether no operation of the stream is in the ring and nothing received waits to be read:
    /// then the stream is a socket and nothing else, which any thread may close or take back
    /// ([`RingStream::into_std`]). A send whose completion came is taken here (on the stream's
    /// own thread, without waiting); `false` while one is still in the kernel.
    pub fn settle(&mut self) -> bool {
        self.take_sent() && self.usable_as_known()
    }

    /// Whether nothing the stream knows makes it unusable: no receive in the ring, no failure,
    /// nothing received unread, no end, not stale. The completions of a send and of a peek
    /// that came are taken first; a peek still in flight makes it `false`, a send does not.
    fn usable_as_known(&mut self) -> bool {
        self.take_sent();
        self.take_check()
            && self.check != Check::Stale
            && self.recv.is_none()
            && self.failed.is_none()
            && self.rstart == self.rend
            && !self.eof
    }

    /// Whether the stream looks usable now, with no system call: nothing received is unread and
    /// no failure or end is known. Its next send then goes behind a peek queued in the same
    /// ring ([`ops::submit_peek`]), which sees the socket as the send finds it: when the server
    /// had closed the connection or spoken unasked, every read fails and [`RingStream::stale`]
    /// says so: the request went to a connection that could not run it, and may go again on
    /// another. What [`RingStream::quiet`] asks with a system call, for a stream reused at once
    /// on its own thread.
    pub fn check_on_send(&mut self) -> bool {
        if !self.usable_as_known() {
            return false;
        }
        self.check = Check::OnSend;
        true
    }

    /// Whether the peek of the last [checked send](RingStream::check_on_send) found the
    /// connection closed, or bytes nobody asked for, before the send.
    pub fn stale(&self) -> bool {
        self.check == Check::Stale
    }

    /// Takes the peek's result if it came, without waiting; whether no peek is in flight now.
    fn take_check(&mut self) -> bool {
        self.poll_check(&Context::from_waker(std::task::Waker::noop())).is_ready()
    }

    /// Waits for the peek in flight, if any; `Err` once it found the connection stale.
    fn poll_check(&mut self, cx: &Context<'_>) -> Poll<io::Result<()>> {
        if let Check::Peek(slot) = self.check {
            let res = std::task::ready!(ops::poll(slot, cx));
            // 0: closed; 1: bytes wait; an error: reset. Only -EAGAIN says it was quiet.
            self.check = if res == -libc::EAGAIN { Check::None } else { Check::Stale };
        }
        if self.check == Check::Stale {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::ConnectionAborted,
                "the server had closed the connection, or spoken unasked, before the request",
            )));
        }
        Poll::Ready(Ok(()))
    }

    /// Takes the completion of the send in flight if it came, without waiting; whether no send
    /// is in flight now. A short or failed send is kept as the stream's failure.
    fn take_sent(&mut self) -> bool {
        let Some(slot) = self.send else { return true };
        let Poll::Ready(res) = ops::poll(slot, &Context::from_waker(std::task::Waker::noop())) else { return false };
        self.send = None;
        match result(res) {
            Ok(n) if self.wsent + n >= self.wbuf.len() => self.wsent = self.wbuf.len(),
            // Its bytes never all left (a blocking send with MSG_WAITALL is short only on error).
            Ok(_) => self.failed = Some(io::ErrorKind::WriteZero.into()),
            Err(e) => self.failed = Some(e),
        }
        true
    }

    /// Waits until no send (nor the peek of a checked one) is in flight (what
    /// [`RingStream::settle`] needs of the sends); `Err` for a send that failed, or a stale
    /// connection.
    pub fn poll_sends_done(&mut self, cx: &Context<'_>) -> Poll<io::Result<()>> {
        std::task::ready!(self.poll_sent(cx))?;
        self.poll_check(cx)
    }

    /// The socket, made nonblocking, once the stream is [settled](RingStream::settle); else the
    /// stream as it was.
    #[allow(clippy::result_large_err)] // The stream itself, back whole: once per connection leaving a ring.
    pub fn into_std(mut self) -> Result<TcpStream, RingStream> {
        if !self.settle() || self.sock.set_nonblocking(true).is_err() {
            return Err(self);
        }
        (self.rbuf, self.wbuf) = (Vec::new(), Vec::new());
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: `this` is never used or dropped after the socket is read out of it, once; the
        // buffers it owned are empty (nothing to leak) and no operation names the socket.
        Ok(unsafe { std::ptr::read(&this.sock) })
    }

    /// Whether nothing waits to be read, not even the end of the stream (one peek without
    /// blocking): an idle server connection never speaks first. A send may still be in flight
    /// (a command without an answer, COM_STMT_CLOSE, just written); a receive may not.
    pub fn quiet(&mut self) -> bool {
        if !self.usable_as_known() {
            return false;
        }
        let mut byte = 0u8;
        // SAFETY: the descriptor is open for the borrow of `self`; the buffer is 1 byte; MSG_PEEK
        // consumes nothing and MSG_DONTWAIT never blocks the blocking socket.
        let n = unsafe {
            libc::recv(self.sock.as_raw_fd(), (&mut byte as *mut u8).cast(), 1, libc::MSG_PEEK | libc::MSG_DONTWAIT)
        };
        n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::WouldBlock
    }

    /// Reads into `buf` what was received, waiting for the receive in flight or starting one.
    /// `Ready` with nothing put at the end of the stream.
    fn poll_recv(&mut self, cx: &Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        if self.check != Check::None {
            if matches!(self.check, Check::Peek(_)) && self.recv.is_none() && self.rstart == self.rend && !self.eof {
                // The answer's receive goes in with the send, as without a check.
                self.recv = Some(self.start_recv()?);
            }
            // The peek completed before the send went: its result is in before any answer. So
            // the task waits on the receive alone (one wake per answer, not one more for the
            // peek) and takes both once the receive is in.
            if let (Check::Peek(peek), Some(recv)) = (self.check, &self.recv) {
                if !ops::finished(peek) && !ops::finished_or_wait(recv.slot(), cx) {
                    return Poll::Pending;
                }
            }
            std::task::ready!(self.poll_check(cx))?;
        }
        loop {
            if self.rstart < self.rend {
                let n = buf.remaining().min(self.rend - self.rstart);
                buf.put_slice(&self.rbuf[self.rstart..self.rstart + n]);
                self.rstart += n;
                if self.provided && self.rstart == self.rend {
                    // Leftovers only: an idle stream keeps no buffer.
                    (self.rbuf, self.rstart, self.rend) = (Vec::new(), 0, 0);
                }
                return Poll::Ready(Ok(()));
            }
            if self.eof {
                return Poll::Ready(Ok(()));
            }
            match self.recv {
                None => self.recv = Some(self.start_recv()?),
                Some(Recv::Own(slot)) => {
                    let res = std::task::ready!(ops::poll(slot, cx));
                    self.recv = None;
                    self.received_own(result(res)?);
                }
                Some(Recv::Provided(slot)) => {
                    let (rbuf, rend) = (&mut self.rbuf, &mut self.rend);
                    let res = std::task::ready!(ops::poll_received(slot, cx, |data| {
                        let n = buf.remaining().min(data.len());
                        buf.put_slice(&data[..n]);
                        if n < data.len() {
                            rbuf.extend_from_slice(&data[n..]);
                            *rend = rbuf.len();
                        }
                    }));
                    self.recv = None;
                    match result(res) {
                        Ok(0) => self.eof = true,
                        Ok(_) => return Poll::Ready(Ok(())),
                        Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => self.own_next = true,
                        Err(e) => return Poll::Ready(Err(e)),
                    }
                }
            }
        }
    }

    /// Starts a receive: into a provided buffer, or into `rbuf` (made big enough).
    fn start_recv(&mut self) -> io::Result<Recv> {
        let fd = types::Fd(self.sock.as_raw_fd());
        if self.provided && !std::mem::take(&mut self.own_next) {
            let entry = opcode::Recv::new(fd, std::ptr::null_mut(), len32(provided::SIZE))
                .buf_group(provided::GROUP)
                .build()
                .flags(squeue::Flags::BUFFER_SELECT);
            // SAFETY: the entry names no memory of ours; the kernel's buffer is the ring's.
            return Ok(Recv::Provided(unsafe { ops::submit(entry) }?));
        }
        if self.rbuf.len() < FIRST_RECV {
            self.rbuf = vec![0; FIRST_RECV];
        }
        let entry = opcode::Recv::new(fd, self.rbuf.as_mut_ptr(), len32(self.rbuf.len())).build();
        // SAFETY: `rbuf` is neither touched nor freed while `recv` is set; a drop hands it to the
        // slot (`Drop`).
        Ok(Recv::Own(unsafe { ops::submit(entry) }?))
    }

    /// `n` bytes came into `rbuf`.
    fn received_own(&mut self, n: usize) {
        if n == 0 {
            self.eof = true;
            return;
        }
        (self.rstart, self.rend) = (0, n);
        if !self.provided && n == self.rbuf.len() && n < MAX_RECV {
            // Filled: the next one may take more. Only grown while nothing is pending.
            let mut bigger = vec![0; n * 2];
            bigger[..n].copy_from_slice(&self.rbuf[..n]);
            self.rbuf = bigger;
        }
    }

    /// Waits until no send is in flight (sending what a short send left); `Err` for a failed one.
    fn poll_sent(&mut self, cx: &Context<'_>) -> Poll<io::Result<()>> {
        while let Some(slot) = self.send {
            let res = std::task::ready!(ops::poll(slot, cx));
            self.send = None;
            match result(res) {
                Ok(0) => self.failed = Some(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    self.wsent += n;
                    if self.wsent < self.wbuf.len() {
                        self.start_send()?;
                    }
                }
                Err(e) => self.failed = Some(e),
            }
        }
        match self.failed.take() {
            Some(e) => {
                // Reported once; later writes find the socket's own error.
                Poll::Ready(Err(e))
            }
            None => Poll::Ready(Ok(())),
        }
    }

    fn start_send(&mut self) -> io::Result<()> {
        if self.check == Check::OnSend {
            self.check = Check::Peek(ops::submit_peek(self.sock.as_raw_fd())?);
        }
        let rest = &self.wbuf[self.wsent..];
        let entry = opcode::Send::new(types::Fd(self.sock.as_raw_fd()), rest.as_ptr(), len32(rest.len()))
            .flags(libc::MSG_NOSIGNAL | libc::MSG_WAITALL)
            .build();
        // SAFETY: `wbuf` is neither touched nor freed while `send` is set; a drop hands it to the
        // slot (`Drop`).
        self.send = Some(unsafe { ops::submit(entry) }?);
        Ok(())
    }
}

impl AsyncRead for RingStream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        self.get_mut().poll_recv(cx, buf)
    }
}

impl AsyncWrite for RingStream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        std::task::ready!(this.poll_sent(cx))?;
        if data.is_empty() {
            return Poll::Ready(Ok(0));
        }
        if this.wbuf.capacity() > KEEP_SEND {
            this.wbuf = Vec::new();
        }
        this.wbuf.clear();
        this.wbuf.extend_from_slice(data);
        this.wsent = 0;
        this.start_send()?;
        Poll::Ready(Ok(data.len()))
    }

    /// The bytes are with the ring: submitted at the thread's next `io_uring_enter`, before it
    /// sleeps. A send that failed since is reported here.
    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        Poll::Ready(this.failed.take().map_or(Ok(()), Err))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        std::task::ready!(this.poll_sent(cx))?;
        Poll::Ready(this.sock.shutdown(Shutdown::Write))
    }
}

impl Drop for RingStream {
    fn drop(&mut self) {
        let peek = match self.check {
            Check::Peek(slot) => Some(slot),
            _ => None,
        };
        if self.recv.is_none() && self.send.is_none() && peek.is_none() {
            return;
        }
        if let Some(slot) = peek {
            // It names no memory of the stream's.
            ops::orphan(slot, Vec::new());
        }
        if let Some(recv) = self.recv.take() {
            // The receive would wait for data that may never come, keeping the socket open:
            // shutting the read side ends it now; the close follows its completion (which gives
            // back a provided buffer it took).
            let _ = self.sock.shutdown(Shutdown::Read);
            match recv {
                Recv::Provided(slot) => ops::orphan(slot, Vec::new()),
                Recv::Own(slot) => ops::orphan(slot, std::mem::take(&mut self.rbuf)),
            }
        }
        if let Some(slot) = self.send.take() {
            // The send finishes in the kernel; the socket closes after it.
            ops::orphan(slot, std::mem::take(&mut self.wbuf));
        }
        // Entries still queued name the descriptor by number: the kernel must take the socket
        // before the number is closed and perhaps reused.
        ops::submit_queued();
    }
}

/// A completion's result as a count or an error.
fn result(res: i32) -> io::Result<usize> {
    usize::try_from(res).map_err(|_| io::Error::from_raw_os_error(-res))
}

/// A buffer length as the entry's 32-bit length (buffers are far smaller).
fn len32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}
