//! The measuring client of `cargo xtask bench-dataplane`, run as a child process (hidden
//! subcommand `dataplane-client`) so that it can be placed in a cgroup before it opens a socket.
//!
//! One connection: log in as root, check the path (does the server see this socket's own port,
//! i.e. no proxy in between?), read a bulk result set discarding it, then time COM_PING round
//! trips. Results are printed as `key=value` lines.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use gateway_tests::raw::RawConn;

/// Options of the hidden `dataplane-client` subcommand.
#[derive(clap::Args, Debug)]
pub struct ClientArgs {
    /// Address to dial.
    #[arg(long)]
    addr: SocketAddr,
    /// cgroup v2 directory to move into first (its `cgroup.procs`).
    #[arg(long)]
    cgroup: Option<std::path::PathBuf>,
    /// Rows of 1 MiB in the bulk result set (0: skip).
    #[arg(long, default_value_t = 1024)]
    bulk_rows: u32,
    /// Timed COM_PING round trips (after 500 untimed ones).
    #[arg(long, default_value_t = 20000)]
    pings: u32,
}

/// Runs the client; prints `key=value` lines.
pub fn run(args: &ClientArgs) -> anyhow::Result<()> {
    if let Some(cg) = &args.cgroup {
        let procs = cg.join("cgroup.procs");
        std::fs::write(&procs, std::process::id().to_string())
            .with_context(|| format!("joining {}", procs.display()))?;
    }
    let mut conn =
        RawConn::login(args.addr, "root", "", Some("test")).with_context(|| format!("login at {}", args.addr))?;
    let local = conn.stream().local_addr()?;
    let peer = conn.stream().peer_addr()?;
    println!("peer={peer}");
    println!("sock={local}");
    let seen = server_sees(&mut conn)?;
    println!("server_sees={seen}");
    let direct = seen.rsplit_once(':').map(|(_, p)| p) == Some(local.port().to_string().as_str());
    println!("no_proxy={direct}");
    if args.bulk_rows > 0 {
        let (bytes, secs) = bulk(conn.stream(), args.bulk_rows)?;
        println!("bulk_bytes={bytes}");
        println!("bulk_secs={secs:.6}");
        println!("bulk_mb_s={:.1}", bytes as f64 / secs / 1e6);
    }
    if args.pings > 0 {
        let mut lat = pings(conn.stream(), args.pings)?;
        let total: f64 = lat.iter().sum();
        lat.sort_by(f64::total_cmp);
        let pct = |p: f64| lat[((lat.len() - 1) as f64 * p).round() as usize];
        println!("ping_p50_us={:.1}", pct(0.50));
        println!("ping_p99_us={:.1}", pct(0.99));
        println!("ping_rps={:.0}", lat.len() as f64 / (total / 1e6));
    }
    Ok(())
}

/// `host` of this connection in the server's processlist (`ip:port` of the peer it talks to).
fn server_sees(conn: &mut RawConn) -> anyhow::Result<String> {
    let packets = conn.query("SELECT host FROM information_schema.processlist WHERE id = CONNECTION_ID()")?;
    // column count, column definition, EOF, row, EOF
    let row = packets.get(3).context("processlist query returned no row")?;
    let len = usize::from(*row.first().context("empty row")?);
    let text = row.get(1..1 + len).context("short row")?;
    Ok(String::from_utf8_lossy(text).into_owned())
}

/// Sends the bulk query and reads the whole result set, discarding the payload. Returns the bytes
/// read (headers included) and the seconds from sending to the final EOF.
fn bulk(stream: &mut TcpStream, rows: u32) -> anyhow::Result<(u64, f64)> {
    let sql = format!("SELECT REPEAT('x', 1048576) FROM seq_1_to_{rows}");
    let start = Instant::now();
    send_command(stream, 0x03, sql.as_bytes())?;
    let mut r = BufReader::with_capacity(1 << 20, &*stream);
    let mut bytes = 0u64;
    let (first, len) = header(&mut r, &mut bytes)?;
    if first == 0xff {
        bail!("bulk query failed: {}", String::from_utf8_lossy(&take(&mut r, len, &mut bytes)?));
    }
    skip(&mut r, len - 1, &mut bytes)?;
    // Column definitions up to the EOF, then rows up to the EOF (no DEPRECATE_EOF requested).
    for phase in 0..2 {
        loop {
            let (first, len) = header(&mut r, &mut bytes)?;
            if first == 0xff {
                bail!(
                    "bulk query failed (phase {phase}): {}",
                    String::from_utf8_lossy(&take(&mut r, len, &mut bytes)?)
                );
            }
            skip(&mut r, len - 1, &mut bytes)?;
            if first == 0xfe && len < 9 {
                break;
            }
        }
    }
    Ok((bytes, start.elapsed().as_secs_f64()))
}

/// `count` COM_PING round trips after 500 untimed ones; latencies in µs.
fn pings(stream: &mut TcpStream, count: u32) -> anyhow::Result<Vec<f64>> {
    const PING: [u8; 5] = [1, 0, 0, 0, 0x0e];
    let mut reply = [0u8; 64];
    let mut lat = Vec::with_capacity(count as usize);
    for i in 0..count + 500 {
        let t = Instant::now();
        stream.write_all(&PING)?;
        let mut h = [0u8; 4];
        stream.read_exact(&mut h)?;
        let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
        if len > reply.len() {
            bail!("unexpected COM_PING reply of {len} bytes");
        }
        stream.read_exact(&mut reply[..len])?;
        if reply[0] != 0 {
            bail!("COM_PING answered with {:02x?}", &reply[..len]);
        }
        if i >= 500 {
            lat.push(t.elapsed().as_secs_f64() * 1e6);
        }
    }
    Ok(lat)
}

fn send_command(stream: &mut TcpStream, cmd: u8, body: &[u8]) -> anyhow::Result<()> {
    let len = body.len() + 1;
    if len >= 0xff_ffff {
        bail!("command too long");
    }
    let mut p = Vec::with_capacity(len + 4);
    p.extend_from_slice(&(len as u32).to_le_bytes()[..3]);
    p.push(0);
    p.push(cmd);
    p.extend_from_slice(body);
    stream.write_all(&p)?;
    stream.set_read_timeout(Some(Duration::from_secs(120)))?;
    Ok(())
}

/// Reads a packet header and the payload's first byte: (first byte, payload length).
fn header(r: &mut impl BufRead, bytes: &mut u64) -> anyhow::Result<(u8, usize)> {
    let mut h = [0u8; 5];
    r.read_exact(&mut h).context("reading a packet header")?;
    *bytes += 5;
    let len = u32::from_le_bytes([h[0], h[1], h[2], 0]) as usize;
    if len == 0 || len >= 0xff_ffff {
        bail!("unsupported packet length {len}");
    }
    Ok((h[4], len))
}

fn skip(r: &mut impl BufRead, mut n: usize, bytes: &mut u64) -> anyhow::Result<()> {
    while n > 0 {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            bail!("connection closed inside a packet");
        }
        let k = buf.len().min(n);
        r.consume(k);
        n -= k;
        *bytes += k as u64;
    }
    Ok(())
}

fn take(r: &mut impl BufRead, len: usize, bytes: &mut u64) -> anyhow::Result<Vec<u8>> {
    let mut v = vec![0u8; len.saturating_sub(1)];
    r.read_exact(&mut v)?;
    *bytes += v.len() as u64;
    Ok(v)
}
