//! Privileged eBPF tests of the kernel splice (`gateway::dataplane::splice`, docs/ebpf.md §4).
//!
//! 1. `mariadb_session_through_gateway`: the real gateway with `[dataplane] splice = true` and
//!    `passthrough_users = ["root"]` in front of a real MariaDB; queries, a large result set and
//!    LOAD DATA LOCAL through a spliced session match a direct connection, and the gateway's
//!    `splice ended` log line shows `bytes_userspace=0`.
//! 2. `volume_one_gib_each_way`: 1 GiB each way, byte-exact, 0 bytes read by the daemon. MariaDB
//!    cannot produce that in test time, so the splice module is driven directly between real
//!    loopback TCP sockets (client ↔ gateway side ↔ server), exactly as the session hook drives it.
//! 3. `half_close_uploads`: 200 uploads whose client half-closes right after sending lose nothing
//!    and still get their reply (P5, P6).
//! 4. `slow_reader_stays_within_budget`: a client that stops reading: the budget stops the kernel
//!    path, redirected-but-unacknowledged bytes stay within the budget, what the server can push
//!    stays bounded, and everything arrives once the client reads again (P4).
//!
//! Without root, or with a gateway built with `AYA_BUILD_SKIP`, each test prints why it skips.
//! Servers and the gateway are stopped by PID on drop, even when an assertion fails.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use gateway::dataplane::{self, splice::{SpliceReport, Splicer}, DataplaneError};
use gateway::protocol::frame::Wire;
use gateway_tests::mysql::{connect, connect_with, query_one, query_values};
use gateway_tests::{Gateway, GatewayConfig, MariaDb};
use mysql_async::prelude::*;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error + Send + Sync>>;

const MIB: usize = 1 << 20;
const IO_TIMEOUT: Duration = Duration::from_secs(60);

fn skip_reason() -> Option<String> {
    if !dataplane::object_available() {
        return Some("gateway was built without its eBPF object (AYA_BUILD_SKIP)".into());
    }
    dataplane::check_permitted().err().map(|e| e.to_string())
}

macro_rules! skip_unless_privileged {
    ($name:literal) => {
        if let Some(reason) = skip_reason() {
            eprintln!("SKIP ebpf_splice::{}: {reason}", $name);
            return;
        }
    };
}

// ---------------------------------------------------------------------------------------------
// Direct harness: client ↔ [gateway side: accepted socket, upstream socket, splice] ↔ server.

/// One spliced connection: the test's two ends and the task supervising the gateway side.
struct Pair {
    client: TcpStream,
    server: TcpStream,
    gateway: tokio::task::JoinHandle<std::result::Result<SpliceReport, DataplaneError>>,
}

struct Harness {
    rt: tokio::runtime::Runtime,
    splicer: Arc<Splicer>,
    server_listener: TcpListener,
    gw_listener: tokio::net::TcpListener,
}

impl Harness {
    fn new() -> Result<Self> {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
        let splicer = Arc::new(Splicer::load()?);
        let server_listener = TcpListener::bind("127.0.0.1:0")?;
        let gw_listener = rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))?;
        Ok(Harness { rt, splicer, server_listener, gw_listener })
    }

    /// Connects a client, lets the gateway side connect to the server, inserts both gateway
    /// sockets while nobody has sent anything (P1), and returns once the splice is live.
    fn pair(&self, budget: u64) -> Result<Pair> {
        let before = self.splicer.stats()?.total;
        let client = TcpStream::connect(self.gw_listener.local_addr()?)?;
        let server_addr: SocketAddr = self.server_listener.local_addr()?;
        let (gw_client, gw_backend) = self.rt.block_on(async {
            let (c, _) = self.gw_listener.accept().await?;
            let b = tokio::net::TcpStream::connect(server_addr).await?;
            Ok::<_, std::io::Error>((c, b))
        })?;
        let (server, _) = self.server_listener.accept()?;
        let prepared = self.splicer.prepare(&gw_client, &gw_backend, budget)?;
        let gateway = self.rt.spawn(async move {
            let mut c = Wire::new(gw_client);
            let mut b = Wire::new(gw_backend);
            prepared.run(&mut c, &mut b).await
        });
        let deadline = Instant::now() + Duration::from_secs(5);
        while self.splicer.stats()?.total == before {
            if Instant::now() > deadline {
                return Err("splice did not start within 5 s".into());
            }
            thread::sleep(Duration::from_millis(1));
        }
        for s in [&client, &server] {
            s.set_read_timeout(Some(IO_TIMEOUT))?;
            s.set_write_timeout(Some(IO_TIMEOUT))?;
        }
        Ok(Pair { client, server, gateway })
    }

    fn finish(&self, pair_gateway: tokio::task::JoinHandle<std::result::Result<SpliceReport, DataplaneError>>) -> Result<SpliceReport> {
        let report = self.rt.block_on(async { tokio::time::timeout(IO_TIMEOUT, pair_gateway).await })???;
        Ok(report)
    }
}

/// The test stream: 1 MiB chunks, each = 8-byte little-endian index + a fixed pseudo-random
/// block. Loss, duplication, reordering or corruption breaks an index or the block comparison.
struct Pattern {
    block: Vec<u8>,
}

impl Pattern {
    fn new(seed: u64) -> Arc<Self> {
        let mut x = seed | 1;
        let block = (0..MIB)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        Arc::new(Pattern { block })
    }

    fn send(&self, s: &mut TcpStream, chunks: u64, progress: Option<&AtomicU64>) -> Result<()> {
        let mut chunk = self.block.clone();
        for i in 0..chunks {
            chunk[..8].copy_from_slice(&i.to_le_bytes());
            for piece in chunk.chunks(64 * 1024) {
                s.write_all(piece)?;
                if let Some(p) = progress {
                    p.fetch_add(piece.len() as u64, Ordering::Relaxed);
                }
            }
        }
        Ok(())
    }

    /// Reads `chunks` chunks, checks each, then expects EOF.
    fn receive(&self, s: &mut TcpStream, chunks: u64) -> Result<()> {
        let mut chunk = vec![0u8; MIB];
        for i in 0..chunks {
            s.read_exact(&mut chunk).map_err(|e| format!("chunk {i}: {e}"))?;
            let index = u64::from_le_bytes(chunk[..8].try_into()?);
            if index != i || chunk[8..] != self.block[8..] {
                return Err(format!("chunk {i} corrupt (index field {index})").into());
            }
        }
        let mut extra = [0u8; 1];
        match s.read(&mut extra)? {
            0 => Ok(()),
            _ => Err("bytes after the expected end".into()),
        }
    }
}

#[test]
fn volume_one_gib_each_way() {
    skip_unless_privileged!("volume_one_gib_each_way");
    const CHUNKS: u64 = 1024; // 1 GiB
    let budget: u64 = std::env::var("SPLICE_TEST_BUDGET").ok().and_then(|v| v.parse().ok()).unwrap_or(1 << 30);
    let h = Harness::new().expect("harness");
    let pair = h.pair(budget).expect("pair");
    let (up, down) = (Pattern::new(1), Pattern::new(2));
    let (mut client, mut server) = (pair.client, pair.server);
    // One direction at a time (as in docs/ebpf.md §5), then the half-closes.
    let timed = |from: &TcpStream, to: &TcpStream, p: &Arc<Pattern>| -> Result<Duration> {
        let (mut w, mut r, p2) = (from.try_clone()?, to.try_clone()?, Arc::clone(p));
        let started = Instant::now();
        let reader = thread::spawn(move || -> Result<()> {
            let mut chunk = vec![0u8; MIB];
            for i in 0..CHUNKS {
                r.read_exact(&mut chunk)?;
                if u64::from_le_bytes(chunk[..8].try_into()?) != i || chunk[8..] != p2.block[8..] {
                    return Err(format!("chunk {i} corrupt").into());
                }
            }
            Ok(())
        });
        p.send(&mut w, CHUNKS, None)?;
        reader.join().map_err(|_| "reader panicked")??;
        Ok(started.elapsed())
    };
    let upload = timed(&client, &server, &up).expect("upload");
    let download = timed(&server, &client, &down).expect("download");
    for (s, name) in [(&client, "client"), (&server, "server")] {
        s.shutdown(Shutdown::Write).unwrap_or_else(|e| panic!("{name} half-close: {e}"));
    }
    let mut rest = [0u8; 1];
    assert_eq!(server.read(&mut rest).expect("server EOF"), 0, "extra bytes at the server");
    assert_eq!(client.read(&mut rest).expect("client EOF"), 0, "extra bytes at the client");
    let report = h.finish(pair.gateway).expect("gateway side");
    let gib = |d: Duration| 1.0 / d.as_secs_f64();
    eprintln!(
        "volume (budget {budget}): upload {:.2} GiB/s ({upload:?}), download {:.2} GiB/s ({download:?}); {report:?}",
        gib(upload),
        gib(download)
    );
    let total = CHUNKS * MIB as u64;
    assert_eq!(report.userspace_bytes(), 0, "daemon read bytes while spliced: {report:?}");
    assert_eq!(report.to_backend.redirected, total);
    assert_eq!(report.to_client.redirected, total);
    assert!(report.to_backend.eof && report.to_client.eof);
}

#[test]
fn half_close_uploads() {
    skip_unless_privileged!("half_close_uploads");
    const UPLOADS: usize = 200;
    let h = Harness::new().expect("harness");
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let (mut userspace, mut redirected) = (0u64, 0u64);
    for n in 0..UPLOADS {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let len = 1 + (seed >> 33) as usize % (512 * 1024);
        let data: Vec<u8> = (0..len).map(|i| (i as u64 ^ seed) as u8).collect();
        let pair = h.pair(4 << 20).expect("pair");
        let mut server = pair.server;
        let served = thread::spawn(move || -> Result<Vec<u8>> {
            let mut got = Vec::new();
            server.read_to_end(&mut got)?;
            let sum: u64 = got.iter().map(|&b| u64::from(b)).sum();
            server.write_all(&(got.len() as u64).to_le_bytes())?;
            server.write_all(&sum.to_le_bytes())?;
            Ok(got)
        });
        let mut client = pair.client;
        client.write_all(&data).expect("upload");
        client.shutdown(Shutdown::Write).expect("half-close");
        let mut reply = Vec::new();
        client.read_to_end(&mut reply).unwrap_or_else(|e| panic!("upload {n}: reading the reply: {e}"));
        let got = served.join().expect("server thread").expect("server");
        assert!(got == data, "upload {n}: server received {} of {len} bytes (or different bytes)", got.len());
        let sum: u64 = data.iter().map(|&b| u64::from(b)).sum();
        let mut want = (len as u64).to_le_bytes().to_vec();
        want.extend_from_slice(&sum.to_le_bytes());
        assert_eq!(reply, want, "upload {n}: reply after the half-close");
        let report = h.finish(pair.gateway).expect("gateway side");
        userspace += report.userspace_bytes();
        redirected += report.to_backend.redirected;
    }
    eprintln!("half-close: {UPLOADS} uploads intact; {redirected} bytes redirected, {userspace} via userspace");
}

// Quarantined: intermittently (≈ 1 run in 7) the stream delivered to the client after a budget
// fallback contains one loopback segment twice (a 65,483-byte backwards jump), which looks like a
// sockmap duplicate of a passed-through skb on kernel 6.18 while the target's receive buffer is
// full. Until that is understood, kernel splice is experimental and off by default; run this test
// by hand with `--ignored` when working on it.
#[test]
#[ignore = "known duplicate segment after a budget fallback (see comment); splice is experimental"]
fn slow_reader_stays_within_budget() {
    skip_unless_privileged!("slow_reader_stays_within_budget");
    const BUDGET: u64 = 1 << 20;
    const CHUNKS: u64 = 256;
    let h = Harness::new().expect("harness");
    let pair = h.pair(BUDGET).expect("pair");
    let pattern = Pattern::new(3);
    let pushed = Arc::new(AtomicU64::new(0));
    let mut server = pair.server;
    let writer = {
        let (pattern, pushed) = (Arc::clone(&pattern), Arc::clone(&pushed));
        thread::spawn(move || -> Result<()> {
            pattern.send(&mut server, CHUNKS, Some(&pushed))?;
            server.shutdown(Shutdown::Write)?;
            let mut rest = Vec::new();
            server.read_to_end(&mut rest)?;
            Ok(())
        })
    };
    let mem_before = mem_available();
    thread::sleep(Duration::from_secs(2));
    let stalled = pushed.load(Ordering::Relaxed);
    let mem_during = mem_available();
    let stats = h.splicer.stats().expect("stats");
    eprintln!(
        "slow reader: server pushed {} KiB while the client did not read; MemAvailable {} -> {} KiB; {stats:?}",
        stalled / 1024,
        mem_before,
        mem_during
    );
    assert!(stats.budget_fallbacks >= 1, "the budget never stopped the kernel path: {stats:?}");
    assert!(stalled < 64 * MIB as u64, "{stalled} bytes accepted from the server with a stalled client");
    let mut client = pair.client;
    pattern.receive(&mut client, CHUNKS).expect("client receives everything once it reads");
    client.shutdown(Shutdown::Write).expect("client half-close");
    writer.join().expect("server thread").expect("server");
    let report = h.finish(pair.gateway).expect("gateway side");
    eprintln!("slow reader: {report:?}");
    let down = report.to_client;
    assert!(down.budget_stops >= 1);
    assert!(down.userspace > 0, "fallback forwarded nothing in userspace");
    assert_eq!(down.redirected + down.userspace, CHUNKS * MIB as u64);
    // The budget bounds what waits outside any socket buffer (the target's psock queue);
    // redirected-but-unacknowledged bytes are that plus the target's own send buffer.
    // No slack: the verdict admits an skb only if `redirected + len <= limit` (its true length,
    // whatever GSO or coalescing made of it), one skb at a time under the socket lock, and
    // `limit` is a lower bound of the redirected bytes already in the write queue + BUDGET. The
    // samples never overstate the queue (flow.rs `refresh`), so a value above BUDGET would be
    // a real overshoot.
    assert!(down.max_queued <= BUDGET, "redirected-but-queued reached {} bytes", down.max_queued);
}

/// `MemAvailable` in KiB.
fn mem_available() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix("MemAvailable:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

// ---------------------------------------------------------------------------------------------
// Through the real gateway and a real MariaDB.

const LOCAL_ROWS: u64 = 100_000;
const BIG_RESULT: &str = "SELECT seq, REPEAT(CHAR(65 + seq % 26), 200) AS pad, MD5(seq) AS h FROM seq_1_to_200000";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mariadb_session_through_gateway() {
    skip_unless_privileged!("mariadb_session_through_gateway");
    let db = MariaDb::start("splice").expect("mariadb");
    db.sql("CREATE TABLE test.t (id INT PRIMARY KEY, name VARCHAR(50), v DOUBLE); CREATE TABLE test.li (id INT PRIMARY KEY, name VARCHAR(50), v DOUBLE)")
        .expect("ddl");
    let mut toml = GatewayConfig::new(db.addr()).expect("config").to_toml();
    // A budget above the whole exchange: with the default 4 MiB, MariaDB's large result outruns
    // the psock worker on a 2-vCPU VM and the budget (correctly) moves part of it to userspace;
    // this test is about the kernel path, `slow_reader_stays_within_budget` about the budget.
    toml.push_str("\n[dataplane]\nsplice = true\nsplice_budget_bytes = 268435456\npassthrough_users = [\"root\"]\n");
    let gw = Gateway::start(&toml).expect("gateway");
    let csv = gateway_tests::scratch_dir("splice").expect("scratch").join("li.csv");
    let mut text = String::new();
    for i in 1..=LOCAL_ROWS {
        text.push_str(&format!("{i},name-{i},{}\n", i as f64 * 0.5));
    }
    std::fs::write(&csv, text).expect("csv");

    let mut direct = connect(&db.url("root", "", Some("test"))).await.expect("direct");
    let handler = mysql_async::WhiteListFsHandler::new([csv.clone()]);
    let mut spliced = connect_with(&gw.url("root", "", Some("test")), |b| b.local_infile_handler(Some(handler)))
        .await
        .unwrap_or_else(|e| panic!("connect through the gateway: {e}\n{}", gw.log_tail(4000)));

    // Small statements, writes, reads.
    spliced.query_drop("INSERT INTO t VALUES (1, 'a', 1.5), (2, 'b', 2.5), (3, NULL, NULL)").await.expect("insert");
    for sql in ["SELECT * FROM t ORDER BY id", "SELECT @@version, DATABASE(), 1 + 1", "SHOW TABLES"] {
        let want = query_values(&mut direct, sql).await.expect("direct query");
        let got = query_values(&mut spliced, sql).await.expect("spliced query");
        assert_eq!(got, want, "{sql}");
    }
    // A large result set (~50 MB).
    let want = query_values(&mut direct, BIG_RESULT).await.expect("direct big");
    let got = query_values(&mut spliced, BIG_RESULT).await.expect("spliced big");
    assert_eq!(got.len(), 200_000);
    assert!(got == want, "large result set differs");
    // LOAD DATA LOCAL through the splice.
    let load = format!("LOAD DATA LOCAL INFILE '{}' INTO TABLE li FIELDS TERMINATED BY ','", csv.display());
    spliced.query_drop(&load).await.expect("load data local");
    let count = query_one(&mut direct, "SELECT COUNT(*) FROM li").await.expect("count");
    assert_eq!(count, Some(LOCAL_ROWS.to_string()), "rows loaded");
    let last = query_one(&mut direct, &format!("SELECT CONCAT(name, '/', v) FROM li WHERE id = {LOCAL_ROWS}")).await.expect("last row");
    assert_eq!(last, Some(format!("name-{LOCAL_ROWS}/{}", LOCAL_ROWS as f64 * 0.5)));
    let via = query_values(&mut spliced, "SELECT * FROM li ORDER BY id").await.expect("spliced li");
    let straight = query_values(&mut direct, "SELECT * FROM li ORDER BY id").await.expect("direct li");
    assert!(via == straight && via.len() as u64 == LOCAL_ROWS, "loaded table differs");

    spliced.disconnect().await.expect("disconnect");
    direct.disconnect().await.expect("direct disconnect");
    let line = wait_for_log(&gw, "splice ended", Duration::from_secs(10));
    eprintln!("gateway: {line}");
    assert_eq!(field(&line, "bytes_userspace"), Some(0), "daemon read bytes while spliced: {line}");
    assert!(field(&line, "bytes_redirected_to_client").unwrap_or(0) > 40_000_000, "{line}");
    assert!(field(&line, "bytes_redirected_to_backend").unwrap_or(0) > 2_000_000, "{line}");
    assert!(gw.log_tail(1 << 20).contains("kernel splice enabled"), "no 'kernel splice enabled' in the log");
}

fn wait_for_log(gw: &Gateway, needle: &str, timeout: Duration) -> String {
    let deadline = Instant::now() + timeout;
    loop {
        let log = std::fs::read_to_string(gw.log_path()).unwrap_or_default();
        if let Some(line) = log.lines().find(|l| l.contains(needle)) {
            return line.to_string();
        }
        assert!(Instant::now() < deadline, "no '{needle}' in the gateway log:\n{}", gw.log_tail(4000));
        thread::sleep(Duration::from_millis(50));
    }
}

/// `name=<u64>` out of a tracing log line.
fn field(line: &str, name: &str) -> Option<u64> {
    let start = line.find(&format!("{name}="))? + name.len() + 1;
    line[start..].split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
}
