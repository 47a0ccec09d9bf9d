//! `cargo xtask relay --uring`: the least relay on one thread with io_uring, as a `bench --cpu`
//! target (`relay-uring`) beside the blocking one. Each direction of a connection is a receive
//! linked to the send of what it received (the next receive waits for the send to finish, in the
//! kernel), so a relayed statement costs about two `io_uring_enter` calls instead of an epoll
//! relay's four socket calls and a wait. Completions run only when the thread asks for them
//! (`DEFER_TASKRUN`): no wake-up of the thread while it is working. It shows what a proxy's system
//! time could be with another I/O model (docs/performance.md §4).

use std::io;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, RawFd};

use anyhow::Context;
use io_uring::{opcode, squeue, types, IoUring};

/// Size of a direction's buffer: a receive takes at most this much before its send.
const BUF: usize = 64 * 1024;
/// Submission queue entries: two per direction of each pair, and the accept.
const ENTRIES: u32 = 1024;
/// The `user_data` of the accept.
const ACCEPT: u64 = u64::MAX;

/// One direction of a pair: what it receives from `from` it sends to `to`.
struct Leg {
    from: RawFd,
    to: RawFd,
    buf: Box<[u8]>,
    /// Bytes received and not yet sent, from `sent`.
    pending: usize,
    sent: usize,
    open: bool,
}

/// A client connection and its server connection.
struct Pair {
    _client: TcpStream,
    _server: TcpStream,
    legs: [Leg; 2],
    /// Entries submitted and not completed: the pair (its buffers) lives until none are left.
    inflight: usize,
}

/// Runs the relay on this thread until accepting fails.
pub fn serve(listener: &TcpListener, to: SocketAddr) -> anyhow::Result<()> {
    let mut ring: IoUring =
        IoUring::builder().setup_single_issuer().setup_defer_taskrun().build(ENTRIES).context("io_uring setup")?;
    let mut pairs: Vec<Option<Pair>> = Vec::new();
    let mut queue: Vec<squeue::Entry> = vec![accept(listener)];
    let mut done: Vec<(u64, i32)> = Vec::new();
    loop {
        push_all(&mut ring, &mut queue)?;
        ring.submit_and_wait(1).context("io_uring_enter")?;
        done.clear();
        done.extend(ring.completion().map(|c| (c.user_data(), c.result())));
        for &(data, res) in &done {
            if data == ACCEPT {
                queue.push(accept(listener));
                if res >= 0 {
                    // SAFETY: the kernel gave us this descriptor; the stream owns it from here.
                    let client = unsafe { TcpStream::from_raw_fd(res) };
                    if let Err(e) = open(client, to, &mut pairs, &mut queue) {
                        eprintln!("relay-uring: {e}");
                    }
                }
                continue;
            }
            completed(&mut pairs, data, res, &mut queue);
        }
    }
}

fn accept(listener: &TcpListener) -> squeue::Entry {
    opcode::Accept::new(types::Fd(listener.as_raw_fd()), std::ptr::null_mut(), std::ptr::null_mut())
        .build()
        .user_data(ACCEPT)
}

/// Submits what is queued, making room by submitting when the queue is full.
fn push_all(ring: &mut IoUring, queue: &mut Vec<squeue::Entry>) -> anyhow::Result<()> {
    for e in queue.drain(..) {
        // SAFETY: every entry points at a buffer of a pair that stays alive until the entry
        // completes (`inflight`), and at descriptors the pair owns.
        while unsafe { ring.submission().push(&e) }.is_err() {
            ring.submit().context("io_uring_enter")?;
        }
    }
    Ok(())
}

/// A new client: connect to the server and start both directions.
fn open(
    client: TcpStream,
    to: SocketAddr,
    pairs: &mut Vec<Option<Pair>>,
    queue: &mut Vec<squeue::Entry>,
) -> io::Result<()> {
    let server = TcpStream::connect(to)?;
    client.set_nodelay(true)?;
    server.set_nodelay(true)?;
    let leg = |from: &TcpStream, to: &TcpStream| Leg {
        from: from.as_raw_fd(),
        to: to.as_raw_fd(),
        buf: vec![0u8; BUF].into_boxed_slice(),
        pending: 0,
        sent: 0,
        open: true,
    };
    let legs = [leg(&client, &server), leg(&server, &client)];
    let slot = pairs.iter().position(Option::is_none).unwrap_or_else(|| {
        pairs.push(None);
        pairs.len() - 1
    });
    let mut pair = Pair { _client: client, _server: server, legs, inflight: 0 };
    for dir in 0..2 {
        queue.push(recv(&mut pair, slot, dir));
    }
    pairs[slot] = Some(pair);
    Ok(())
}

fn user_data(slot: usize, dir: usize, send: bool) -> u64 {
    ((slot as u64) << 2) | ((dir as u64) << 1) | u64::from(send)
}

fn recv(pair: &mut Pair, slot: usize, dir: usize) -> squeue::Entry {
    pair.inflight += 1;
    let leg = &mut pair.legs[dir];
    opcode::Recv::new(types::Fd(leg.from), leg.buf.as_mut_ptr(), BUF as u32)
        .build()
        .user_data(user_data(slot, dir, false))
}

/// The send of what is pending, linked to the next receive into the same buffer.
fn send_then_recv(pair: &mut Pair, slot: usize, dir: usize, queue: &mut Vec<squeue::Entry>) {
    pair.inflight += 1;
    let leg = &pair.legs[dir];
    let bytes = leg.buf[leg.sent..].as_ptr();
    let send = opcode::Send::new(types::Fd(leg.to), bytes, leg.pending as u32)
        .build()
        .flags(squeue::Flags::IO_LINK)
        .user_data(user_data(slot, dir, true));
    queue.push(send);
    queue.push(recv(pair, slot, dir));
}

/// One completion of a pair's direction.
fn completed(pairs: &mut [Option<Pair>], data: u64, res: i32, queue: &mut Vec<squeue::Entry>) {
    let (slot, dir, was_send) = ((data >> 2) as usize, ((data >> 1) & 1) as usize, data & 1 == 1);
    let Some(pair) = pairs.get_mut(slot).and_then(Option::as_mut) else { return };
    pair.inflight -= 1;
    match (was_send, res) {
        // The receive after a short or failed send was cancelled: the send's completion decides.
        (false, r) if r == -libc::ECANCELED => {}
        (false, r) if r <= 0 => end(pair, dir),
        (false, r) => {
            let leg = &mut pair.legs[dir];
            (leg.pending, leg.sent) = (r as usize, 0);
            send_then_recv(pair, slot, dir, queue);
        }
        (true, r) if r < 0 => end(pair, dir),
        (true, r) => {
            let leg = &mut pair.legs[dir];
            let n = r as usize;
            if n < leg.pending {
                // Short send: its linked receive was cancelled; send the rest, then receive.
                (leg.pending, leg.sent) = (leg.pending - n, leg.sent + n);
                send_then_recv(pair, slot, dir, queue);
            }
        }
    }
    if pair.inflight == 0 && pair.legs.iter().all(|l| !l.open) {
        pairs[slot] = None;
    }
}

/// The direction ended: its reader sees the end (write side shut), as the blocking relay does.
fn end(pair: &mut Pair, dir: usize) {
    let leg = &mut pair.legs[dir];
    if leg.open {
        leg.open = false;
        // SAFETY: `to` is a descriptor the pair owns, open until the pair is dropped.
        let to = std::mem::ManuallyDrop::new(unsafe { TcpStream::from_raw_fd(leg.to) });
        let _ = to.shutdown(Shutdown::Write);
    }
}
