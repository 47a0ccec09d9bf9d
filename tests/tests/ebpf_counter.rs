//! Privileged eBPF test: the MySQL-port counter (TC ingress) on a veth between two test-owned netns.
//!
//! Layout (everything is created by the test and deleted by a drop guard, even on failure):
//!
//! ```text
//!  netns gwt-ebpf-<pid>-srv                 netns gwt-ebpf-<pid>-cli
//!  gwt0 192.0.2.1/24  <──── veth ────>  gwt1 192.0.2.2/24
//!  port_counter on gwt0 ingress              client threads
//!  listeners :3306 (MySQL), :8080
//! ```
//!
//! Without root, or with a gateway built with `AYA_BUILD_SKIP`, the test prints why it skips.

use gateway_tests::{ebpf_unmet, skip_if};
use std::{
    io::{Read, Write},
    net::{Shutdown, SocketAddr, TcpListener, TcpStream},
    path::{Path, PathBuf},
    thread,
    time::{Duration, Instant},
};

use gateway::dataplane::{self, PortCounter, PortCounterSnapshot};
use gateway_tests::netns::{ip, Netns};

const MYSQL_PORT: u16 = 3306;
const OTHER_PORT: u16 = 8080;
const SRV_IF: &str = "gwt0";
const CLI_IF: &str = "gwt1";
const SRV_ADDR: &str = "192.0.2.1";
const CLI_ADDR: &str = "192.0.2.2";
/// Request payload: one segment (below any MSS on a 1500-byte veth).
const REQUEST_LEN: usize = 1000;
const RESPONSE_LEN: usize = 3000;
/// Ethernet + IPv4 + TCP headers without options: the least a counted packet adds.
const MIN_HEADERS: u64 = 14 + 20 + 20;
const IO_TIMEOUT: Duration = Duration::from_secs(5);

type Result<T> = std::result::Result<T, Box<dyn std::error::Error + Send + Sync>>;

#[test]
fn counts_mysql_port_traffic_on_veth_ingress() {
    skip_if!("ebpf_counter", skip_reason());
    let pid = std::process::id();
    let nets = create_namespaces(pid).unwrap_or_else(|e| panic!("creating netns/veth: {e}"));
    let srv = nets.path(0);
    let cli = nets.path(1);
    // The counter is attached, used and detached on a thread inside the server namespace, so
    // the interface name resolves there; a panic unwinds there too, detaching the program.
    let outcome = thread::spawn(move || -> Result<Option<String>> {
        dataplane::netns::enter_thread(&srv)?;
        scenario(cli)
    })
    .join();
    drop(nets);
    match outcome {
        Ok(Ok(None)) => {}
        Ok(Ok(Some(reason))) => gateway_tests::skip::skip("ebpf_counter", &reason),
        Ok(Err(e)) => panic!("ebpf counter scenario failed: {e}"),
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

/// Runs inside the server namespace. `Ok(Some(reason))` = eBPF turned out to be unavailable.
fn scenario(cli_ns: PathBuf) -> Result<Option<String>> {
    let mut counter = match PortCounter::attach(SRV_IF) {
        Ok(c) => c,
        Err(e) if e.is_unavailable() => return Ok(Some(e.to_string())),
        Err(e) => return Err(format!("attach: {e} ({:?})", std::error::Error::source(&e)).into()),
    };
    counter.set_ports(&[MYSQL_PORT])?;
    assert_eq!(counter.ports()?, vec![MYSQL_PORT]);
    assert_eq!(counter.snapshot()?, PortCounterSnapshot::default(), "fresh maps start at zero");

    let mysql = listen(MYSQL_PORT)?;
    let other = listen(OTHER_PORT)?;

    // 1. Traffic on a port outside the set: seen by the program, not counted as MySQL.
    exchange(&other, &cli_ns)?;
    settle();
    let after_other = counter.snapshot()?;
    eprintln!("after non-MySQL exchange: {after_other:?}");
    assert_eq!(after_other.mysql, Default::default(), "non-MySQL traffic counted as MySQL");
    assert_counted(&after_other.other_tcp, "other TCP");

    // 2. Traffic on the MySQL port: counted.
    exchange(&mysql, &cli_ns)?;
    settle();
    let after_mysql = counter.snapshot()?;
    eprintln!("after MySQL exchange: {after_mysql:?}");
    assert_counted(&after_mysql.mysql, "MySQL");

    // 3. Port removed from the set: the same traffic now lands in the other slot.
    counter.set_ports(&[])?;
    assert!(counter.ports()?.is_empty());
    exchange(&mysql, &cli_ns)?;
    settle();
    let after_removal = counter.snapshot()?;
    eprintln!("after removing the port: {after_removal:?}");
    assert_eq!(after_removal.mysql, after_mysql.mysql, "counted after the port was removed");
    let extra = after_removal.other_tcp.packets - after_mysql.other_tcp.packets;
    assert!(extra >= 3, "only {extra} packets counted as other TCP after removal");

    counter.detach()?;
    Ok(None)
}

/// Checks the client→server segments of one exchange: SYN, handshake ACK, request (at least).
fn assert_counted(c: &gateway::dataplane::TrafficCounters, what: &str) {
    assert!(c.packets >= 3, "{what}: {} packets, expected >= 3 (SYN, ACK, request)", c.packets);
    let min_bytes = REQUEST_LEN as u64 + 3 * MIN_HEADERS;
    assert!(c.bytes >= min_bytes, "{what}: {} bytes, expected >= {min_bytes}", c.bytes);
}

/// Lets the last ACKs of a closed connection cross the veth before the counters are read.
fn settle() {
    thread::sleep(Duration::from_millis(200));
}

fn listen(port: u16) -> Result<TcpListener> {
    let listener = TcpListener::bind((SRV_ADDR, port))?;
    listener.set_nonblocking(true)?;
    Ok(listener)
}

/// One request/response from the client namespace to `listener`: the client sends
/// `REQUEST_LEN` bytes and half-closes, the server answers `RESPONSE_LEN` bytes and closes.
fn exchange(listener: &TcpListener, cli_ns: &Path) -> Result<()> {
    let target: SocketAddr = listener.local_addr()?;
    let cli_ns = cli_ns.to_path_buf();
    let client = thread::spawn(move || -> Result<usize> {
        dataplane::netns::enter_thread(&cli_ns)?;
        let mut s = TcpStream::connect_timeout(&target, IO_TIMEOUT)?;
        s.set_read_timeout(Some(IO_TIMEOUT))?;
        s.set_write_timeout(Some(IO_TIMEOUT))?;
        assert_eq!(s.local_addr()?.ip().to_string(), CLI_ADDR);
        s.write_all(&[b'q'; REQUEST_LEN])?;
        s.shutdown(Shutdown::Write)?;
        let mut response = Vec::new();
        s.read_to_end(&mut response)?;
        Ok(response.len())
    });
    let served = serve_one(listener);
    let received = client.join().map_err(|_| "client thread panicked")??;
    let request = served?;
    assert_eq!(request, REQUEST_LEN, "server received");
    assert_eq!(received, RESPONSE_LEN, "client received");
    Ok(())
}

/// Accepts one connection (bounded wait), reads the request to EOF, answers, closes.
fn serve_one(listener: &TcpListener) -> Result<usize> {
    let deadline = Instant::now() + IO_TIMEOUT;
    let mut s = loop {
        match listener.accept() {
            Ok((s, _)) => break s,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock && Instant::now() < deadline => {
                thread::sleep(Duration::from_millis(5));
            }
            Err(e) => return Err(format!("accept on {:?}: {e}", listener.local_addr()).into()),
        }
    };
    s.set_nonblocking(false)?;
    s.set_read_timeout(Some(IO_TIMEOUT))?;
    s.set_write_timeout(Some(IO_TIMEOUT))?;
    let mut request = Vec::new();
    s.read_to_end(&mut request)?;
    s.write_all(&[b'r'; RESPONSE_LEN])?;
    Ok(request.len())
}

/// Why this file's tests cannot run here, or `None`.
fn skip_reason() -> Option<String> {
    ebpf_unmet!()
}

/// Two network namespaces joined by a veth pair, deleted when the returned guard is dropped
/// (which also deletes the veth).
fn create_namespaces(pid: u32) -> Result<Netns> {
    let srv = format!("gwt-ebpf-{pid}-srv");
    let cli = format!("gwt-ebpf-{pid}-cli");
    // Leftovers of an earlier run with the same PID belong to this test: `Netns` removes them.
    let me = Netns::create(&[srv.clone(), cli.clone()])?;
    ip(&["-n", &srv, "link", "add", SRV_IF, "type", "veth", "peer", "name", CLI_IF, "netns", &cli])?;
    ip(&["-n", &srv, "addr", "add", &format!("{SRV_ADDR}/24"), "dev", SRV_IF])?;
    ip(&["-n", &cli, "addr", "add", &format!("{CLI_ADDR}/24"), "dev", CLI_IF])?;
    for (ns, dev) in [(&srv, SRV_IF), (&cli, CLI_IF)] {
        ip(&["-n", ns, "link", "set", "lo", "up"])?;
        ip(&["-n", ns, "link", "set", dev, "up"])?;
    }
    Ok(me)
}
