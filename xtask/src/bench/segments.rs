//! `cargo xtask bench --cpu`: TCP segments the machine sent per statement (`Tcp: OutSegs` of
//! `/proc/net/snmp`) over one sysbench run. A statement and its answer are one segment each way
//! on every leg: 2 direct, 4 through a relay. More means a relay split an answer into several
//! writes or the stack sent pure ACKs; either costs a loopback transmit and receive each.
//!
//! The counter is the whole network namespace's, like `host us/stmt`: the benchmark is the only
//! traffic on the machine while a run lasts.

/// The namespace's `Tcp: OutSegs` so far; `None` if `/proc/net/snmp` cannot be read.
pub fn read() -> Option<u64> {
    parse_out_segs(&std::fs::read_to_string("/proc/net/snmp").ok()?)
}

/// `OutSegs` from the text of `/proc/net/snmp`: a `Tcp:` line of names followed by a `Tcp:` line
/// of values, matched by position.
fn parse_out_segs(snmp: &str) -> Option<u64> {
    let mut tcp = snmp.lines().filter(|l| l.starts_with("Tcp:"));
    let (names, values) = (tcp.next()?, tcp.next()?);
    let at = names.split_whitespace().position(|n| n == "OutSegs")?;
    values.split_whitespace().nth(at)?.parse().ok()
}

/// Segments per statement between two readings; `None` without statements.
pub fn per_statement(before: u64, after: u64, statements: u64) -> Option<f64> {
    (statements > 0).then(|| after.saturating_sub(before) as f64 / statements as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[test]
    fn out_segs_is_matched_by_column_name() {
        // The Tcp lines of a real /proc/net/snmp (kernel 6.18), between other protocols' lines.
        let snmp = "Ip: Forwarding DefaultTTL\nIp: 1 64\n\
                    Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails EstabResets CurrEstab InSegs OutSegs RetransSegs InErrs OutRsts InCsumErrors\n\
                    Tcp: 1 200 120000 -1 191 134 11 16 0 3858605 3852338 1 0 67 0\n\
                    Udp: InDatagrams NoPorts\nUdp: 5 6\n";
        assert_eq!(parse_out_segs(snmp), Some(3_852_338));
        assert_eq!(parse_out_segs("Tcp: InSegs\nTcp: 5\n"), None, "no OutSegs column");
        assert_eq!(parse_out_segs("Tcp: OutSegs InSegs\n"), None, "no values line");
        // 100,000 columns before OutSegs: one pass over each line, no nesting to bound.
        let wide = format!("Tcp: {} OutSegs\nTcp: {} 42\n", vec!["X"; 100_000].join(" "), vec!["0"; 100_000].join(" "));
        assert_eq!(parse_out_segs(&wide), Some(42));
        assert_eq!(per_statement(1_000, 1_400, 100), Some(4.0));
        assert_eq!(per_statement(1_000, 1_400, 0), None);
    }

    #[test]
    fn counts_this_machines_segments() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let mut client = std::net::TcpStream::connect(listener.local_addr().expect("addr")).expect("connect");
        let (mut server, _) = listener.accept().expect("accept");
        client.set_nodelay(true).expect("nodelay");
        let before = read().expect("/proc/net/snmp");
        let mut byte = [0u8; 1];
        for _ in 0..10 {
            client.write_all(b"q").expect("write");
            server.read_exact(&mut byte).expect("read");
        }
        let after = read().expect("again");
        assert!(after >= before + 10, "10 one-byte writes with TCP_NODELAY sent {} segments", after - before);
    }
}
