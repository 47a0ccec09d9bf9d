//! `cargo xtask relay --tokio` and `--hybrid`: the least relay on one tokio current-thread
//! runtime, a task per direction that receives and then sends what it received. `--tokio` makes
//! its socket calls one by one on tokio's readiness reactor (epoll), as the gateway's sessions do;
//! `--hybrid` waits for readiness the same way but queues the calls on an io_uring, submitted
//! together when the runtime is about to sleep ([`crate::relay_ring`]). Beside `relay-uring` (the
//! ring alone, each receive waiting in the kernel and linked to its send) they show how much of
//! io_uring's saving a session loop on tokio could keep (docs/performance.md §4).

use std::io::{ErrorKind, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::Arc;

use anyhow::Context;
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Size of a direction's buffer, as the other relays.
const BUF: usize = 64 * 1024;

/// How the relay's socket calls are made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Io {
    /// One `recv` / `send` system call each, on sockets the reactor says are ready.
    Epoll,
    /// The same calls queued on an io_uring, submitted together when the runtime parks.
    Ring,
}

/// Runs the relay on this thread until accepting fails.
pub fn serve(listener: &TcpListener, to: SocketAddr, io: Io) -> anyhow::Result<()> {
    let mut rt = tokio::runtime::Builder::new_current_thread();
    rt.enable_io();
    if io == Io::Ring {
        crate::relay_ring::install(1024).context("io_uring setup")?;
        rt.on_thread_park(crate::relay_ring::flush);
    }
    let rt = rt.build().context("tokio runtime")?;
    let listener = listener.try_clone().context("listener")?;
    listener.set_nonblocking(true)?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        loop {
            let (client, peer) = listener.accept().await.context("accepting")?;
            if let Err(e) = open(client, to, io) {
                eprintln!("relay: {peer}: {e}");
            }
        }
    })
}

/// A new client: connect to the server and start both directions.
fn open(client: tokio::net::TcpStream, to: SocketAddr, io: Io) -> std::io::Result<()> {
    let server = TcpStream::connect(to)?;
    server.set_nodelay(true)?;
    server.set_nonblocking(true)?;
    client.set_nodelay(true)?;
    match io {
        Io::Epoll => {
            let server = tokio::net::TcpStream::from_std(server)?;
            let (cr, cw) = client.into_split();
            let (sr, sw) = server.into_split();
            tokio::spawn(pump_epoll(cr, sw));
            tokio::spawn(pump_epoll(sr, cw));
        }
        Io::Ring => {
            let client = Arc::new(registered(client.into_std()?)?);
            let server = Arc::new(registered(server)?);
            tokio::spawn(pump_ring(client.clone(), server.clone()));
            tokio::spawn(pump_ring(server, client));
        }
    }
    Ok(())
}

/// `socket` in tokio's reactor, for its readiness only.
fn registered(socket: TcpStream) -> std::io::Result<AsyncFd<TcpStream>> {
    // SAFETY: the `AsyncFd` owns the socket, whose descriptor stays open and the same until the
    // `AsyncFd` is dropped.
    unsafe { AsyncFd::register(socket) }.map_err(|e| e.into_parts().1)
}

/// Copies `from` to `to` until `from` ends, then ends `to`'s write side.
async fn pump_epoll(mut from: tokio::net::tcp::OwnedReadHalf, mut to: tokio::net::tcp::OwnedWriteHalf) {
    let mut buf = vec![0u8; BUF];
    loop {
        match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if to.write_all(&buf[..n]).await.is_err() {
                    break;
                }
            }
        }
    }
    let _ = to.shutdown().await;
}

/// The same with the receives and sends on the ring.
async fn pump_ring(from: Arc<AsyncFd<TcpStream>>, to: Arc<AsyncFd<TcpStream>>) {
    let mut buf = vec![0u8; BUF];
    'relay: loop {
        let Ok(mut readable) = from.readable().await else { break };
        let (res, b) = crate::relay_ring::recv(from.as_raw_fd(), buf).await;
        buf = b;
        let n = match res {
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                readable.clear_ready();
                continue;
            }
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if n < buf.len() {
            // Drained: receive again after the reactor's next edge.
            readable.clear_ready();
        }
        let mut sent = 0;
        while sent < n {
            let (res, b) = crate::relay_ring::send(to.as_raw_fd(), buf, sent, n).await;
            buf = b;
            match res {
                Ok(k) if k > 0 => sent += k,
                // No room: wait for it, and send what fits with a plain call when it comes.
                Err(e) if e.kind() == ErrorKind::WouldBlock => loop {
                    let Ok(mut writable) = to.writable().await else { break 'relay };
                    match writable.try_io(|s| s.get_ref().write(&buf[sent..n])) {
                        Ok(Ok(k)) if k > 0 => {
                            sent += k;
                            break;
                        }
                        Ok(_) => break 'relay,
                        Err(_would_block) => continue,
                    }
                },
                _ => break 'relay,
            }
        }
    }
    let _ = to.get_ref().shutdown(Shutdown::Write);
}
