//! `cargo xtask relay`: the least a userspace TCP relay can do, as a `bench --cpu` target. Each
//! accepted connection gets a connection to the server and one thread per direction, each a
//! blocking `read` then `write_all` of what it read: no parsing, no reactor, no timers. It makes the
//! four socket calls a relayed statement needs and nothing else, so its CPU per statement shows
//! how much of a proxy's cost is its own work. It switches context twice per statement whatever
//! the load: with many clients an epoll loop, which serves several sessions per wake-up, costs
//! less (docs/performance.md §2).

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};

use anyhow::Context;

/// Options of `cargo xtask relay`.
#[derive(clap::Args, Debug)]
pub struct RelayArgs {
    /// Address to listen on.
    #[arg(long)]
    listen: SocketAddr,
    /// Address of the server every connection is relayed to.
    #[arg(long)]
    to: SocketAddr,
    /// One thread with io_uring instead of two blocking threads per connection
    /// ([`crate::relay_uring`]).
    #[arg(long, conflicts_with_all = ["tokio", "hybrid"])]
    uring: bool,
    /// One tokio current-thread runtime on its readiness reactor (epoll), as the gateway's
    /// sessions ([`crate::relay_tokio`]).
    #[arg(long, conflicts_with = "hybrid")]
    tokio: bool,
    /// One tokio current-thread runtime whose receives and sends go through an io_uring
    /// ([`crate::relay_ring`]).
    #[arg(long)]
    hybrid: bool,
}

/// The relays that read no MySQL, for reading each proxy's cost against (`cargo xtask relay`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RelayKind {
    /// A thread per direction, blocking calls.
    Blocking,
    /// One tokio current-thread runtime on epoll, as the gateway's sessions (`--tokio`).
    Tokio,
    /// The same runtime with its receives and sends on an io_uring (`--hybrid`).
    Hybrid,
    /// One thread on an io_uring alone, each receive linked to its send (`--uring`).
    Uring,
}

impl RelayKind {
    /// Every kind, in the order the bench runs them.
    pub const ALL: [RelayKind; 4] = [RelayKind::Blocking, RelayKind::Tokio, RelayKind::Hybrid, RelayKind::Uring];

    /// Its `bench --cpu` target name.
    pub fn target(self) -> &'static str {
        match self {
            RelayKind::Blocking => "relay",
            RelayKind::Tokio => "relay-tokio",
            RelayKind::Hybrid => "relay-hybrid",
            RelayKind::Uring => "relay-uring",
        }
    }

    /// The `cargo xtask relay` flag that selects it.
    pub fn flag(self) -> Option<&'static str> {
        match self {
            RelayKind::Blocking => None,
            RelayKind::Tokio => Some("--tokio"),
            RelayKind::Hybrid => Some("--hybrid"),
            RelayKind::Uring => Some("--uring"),
        }
    }

    /// Whether it needs io_uring (left out of the bench where io_uring is off).
    pub fn uses_io_uring(self) -> bool {
        matches!(self, RelayKind::Hybrid | RelayKind::Uring)
    }

    /// The kind the command line asks for (`--uring`, `--tokio`, `--hybrid`; none: blocking).
    fn of(args: &RelayArgs) -> RelayKind {
        // clap lets at most one of them through.
        match (args.uring, args.tokio, args.hybrid) {
            (true, _, _) => RelayKind::Uring,
            (_, true, _) => RelayKind::Tokio,
            (_, _, true) => RelayKind::Hybrid,
            _ => RelayKind::Blocking,
        }
    }
}

/// Runs the relay until the process is stopped.
pub fn run(args: &RelayArgs) -> anyhow::Result<()> {
    let kind = RelayKind::of(args);
    if kind.uses_io_uring() {
        // Before listening: where io_uring is off (a seccomp filter, `kernel.io_uring_disabled`)
        // the bench sees no port and leaves the target out.
        io_uring::IoUring::new(2).context("io_uring is not available")?;
    }
    let listener = TcpListener::bind(args.listen).with_context(|| format!("listening on {}", args.listen))?;
    println!("{}: {} -> {}", kind.target(), args.listen, args.to);
    match kind {
        RelayKind::Blocking => serve(&listener, args.to),
        RelayKind::Tokio => crate::relay_tokio::serve(&listener, args.to, crate::relay_tokio::Io::Epoll),
        RelayKind::Hybrid => crate::relay_tokio::serve(&listener, args.to, crate::relay_tokio::Io::Ring),
        RelayKind::Uring => crate::relay_uring::serve(&listener, args.to),
    }
}

/// Accepts connections on `listener` and relays each to `to`, until accepting fails.
pub fn serve(listener: &TcpListener, to: SocketAddr) -> anyhow::Result<()> {
    loop {
        let (client, peer) = listener.accept().context("accepting")?;
        match TcpStream::connect(to) {
            Ok(server) => {
                if let Err(e) = pair(client, server) {
                    eprintln!("relay: {peer}: {e}");
                }
            }
            // The client sees its connection closed, as a relay with no server would show it.
            Err(e) => eprintln!("relay: {peer}: connecting to {to}: {e}"),
        }
    }
}

/// One thread per direction between `client` and `server`.
fn pair(client: TcpStream, server: TcpStream) -> std::io::Result<()> {
    client.set_nodelay(true)?;
    server.set_nodelay(true)?;
    let (client2, server2) = (client.try_clone()?, server.try_clone()?);
    std::thread::spawn(move || pump(client, server));
    std::thread::spawn(move || pump(server2, client2));
    Ok(())
}

/// Copies `from` to `to` until `from` ends, then ends `to`'s write side (its reader sees EOF).
fn pump(mut from: TcpStream, mut to: TcpStream) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if to.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relays_both_ways_and_passes_the_end_on() {
        check_relay(serve);
    }

    #[test]
    fn the_io_uring_relay_relays_both_ways_and_passes_the_end_on() {
        if let Err(e) = io_uring::IoUring::new(2) {
            println!("SKIP: io_uring is not available here: {e}");
            return;
        }
        check_relay(crate::relay_uring::serve);
    }

    #[test]
    fn the_tokio_relay_relays_both_ways_and_passes_the_end_on() {
        check_relay(|l, to| crate::relay_tokio::serve(l, to, crate::relay_tokio::Io::Epoll));
        check_bulk(|l, to| crate::relay_tokio::serve(l, to, crate::relay_tokio::Io::Epoll));
    }

    #[test]
    fn the_hybrid_relay_relays_both_ways_and_passes_the_end_on() {
        if let Err(e) = io_uring::IoUring::new(2) {
            println!("SKIP: io_uring is not available here: {e}");
            return;
        }
        check_relay(|l, to| crate::relay_tokio::serve(l, to, crate::relay_tokio::Io::Ring));
        // More than the sockets hold: the relay's sends find no room and must wait for it.
        check_bulk(|l, to| crate::relay_tokio::serve(l, to, crate::relay_tokio::Io::Ring));
    }

    /// 16 MiB from the server through a relay served by `serve`, every byte in order, then EOF.
    fn check_bulk(serve: fn(&TcpListener, SocketAddr) -> anyhow::Result<()>) {
        const LEN: usize = 16 << 20;
        let byte = |i: usize| (i % 251) as u8;
        let server = TcpListener::bind("127.0.0.1:0").expect("bind server");
        let to = server.local_addr().expect("server addr");
        std::thread::spawn(move || {
            let (mut s, _) = server.accept().expect("accept");
            let data: Vec<u8> = (0..LEN).map(byte).collect();
            s.write_all(&data).expect("bulk");
        });
        let relay = TcpListener::bind("127.0.0.1:0").expect("bind relay");
        let at = relay.local_addr().expect("relay addr");
        std::thread::spawn(move || serve(&relay, to));
        let mut c = TcpStream::connect(at).expect("connect to the relay");
        let mut got = Vec::with_capacity(LEN);
        c.read_to_end(&mut got).expect("read to the end");
        assert_eq!(got.len(), LEN, "every byte arrived, then the end");
        assert!(got.iter().enumerate().all(|(i, &b)| b == byte(i)), "in order");
    }

    /// 100 requests and answers through a relay served by `serve`, then the ends both ways.
    fn check_relay(serve: fn(&TcpListener, SocketAddr) -> anyhow::Result<()>) {
        // A server that answers each 4-byte request with its bytes reversed, until EOF.
        let server = TcpListener::bind("127.0.0.1:0").expect("bind server");
        let to = server.local_addr().expect("server addr");
        let answered = std::thread::spawn(move || {
            let (mut s, _) = server.accept().expect("accept");
            let (mut req, mut n) = ([0u8; 4], 0);
            while s.read_exact(&mut req).is_ok() {
                req.reverse();
                s.write_all(&req).expect("answer");
                n += 1;
            }
            n
        });
        let relay = TcpListener::bind("127.0.0.1:0").expect("bind relay");
        let at = relay.local_addr().expect("relay addr");
        std::thread::spawn(move || serve(&relay, to));

        let mut c = TcpStream::connect(at).expect("connect to the relay");
        let mut answer = [0u8; 4];
        for i in 0..100u8 {
            c.write_all(&[i, 1, 2, 3]).expect("request");
            c.read_exact(&mut answer).expect("answer");
            assert_eq!(answer, [3, 2, 1, i]);
        }
        c.shutdown(Shutdown::Write).expect("half-close");
        assert_eq!(answered.join().expect("server thread"), 100, "the server saw every request, then EOF");
        assert_eq!(c.read(&mut answer).expect("read after the server ended"), 0, "the server's end came back");
    }
}
