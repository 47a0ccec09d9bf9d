//! Bad input from raw TCP clients. For each case the gateway must answer with a clear ERR packet or
//! close the connection cleanly (EOF; a reset only where closing is the expected answer), and keep
//! serving: after every case a fresh client works and the gateway process is alive.
//!
//! The gateway runs with `max_packet_size = 1 MiB`.

use std::io::Write;
use std::net::Shutdown;
use std::sync::OnceLock;

use gateway_tests::mysql::{connect, query_one};
use gateway_tests::raw::{cmd, Outcome, RawConn};
use gateway_tests::stack::{shared, Stack, PEER_TIMEOUT};

const MAX_PACKET: usize = 1 << 20;

static STACK: OnceLock<Result<Stack, String>> = OnceLock::new();

fn stack() -> &'static Stack {
    shared(&STACK, || Stack::start("malformed", |_| Ok(()), |c| c.max_packet_size(MAX_PACKET)))
}

fn frame(len: usize, seq: u8) -> Vec<u8> {
    let mut h = (len as u32).to_le_bytes()[..3].to_vec();
    h.push(seq);
    h
}

fn login(s: &Stack) -> RawConn {
    RawConn::login(s.gw.addr(), "root", "", None)
        .unwrap_or_else(|e| panic!("raw login through the gateway: {e:#}\n{}", s.gw_log()))
}

/// The peer must have closed: EOF, or a reset (acceptable where closing is the answer).
fn assert_closed(o: Outcome, case: &str, s: &Stack) {
    assert!(
        matches!(o, Outcome::Closed | Outcome::Reset),
        "{case}: expected the connection to be closed, got {o:?}\n{}",
        s.gw_log()
    );
}

/// The peer must answer with an ERR packet or close; anything else (silence, a non-error packet)
/// fails. Returns the error, if one came.
fn assert_err_or_close(c: &mut RawConn, case: &str, s: &Stack) -> Option<gateway_tests::raw::ErrPacket> {
    let o = c.outcome(PEER_TIMEOUT);
    eprintln!("{case}: {o:?}");
    match o {
        Outcome::Err(e) => {
            // After an error in the handshake the server closes.
            assert_closed(c.outcome(PEER_TIMEOUT), &format!("{case} (after {e})"), s);
            Some(e)
        }
        Outcome::Closed | Outcome::Reset => None,
        o => panic!("{case}: expected an ERR packet or a close, got {o:?}\n{}", s.gw_log()),
    }
}

/// A fresh client works through the gateway and the process is alive.
async fn assert_serving(s: &Stack, after: &str) {
    assert!(s.gw.is_running(), "gateway died after {after}\n{}", s.gw_log());
    let mut c = connect(&s.gw_url("root", "", None))
        .await
        .unwrap_or_else(|e| panic!("login after {after}: {e:?}\n{}", s.gw_log()));
    assert_eq!(
        query_one(&mut c, "SELECT 'still serving'").await.unwrap().as_deref(),
        Some("still serving"),
        "after {after}"
    );
    c.disconnect().await.unwrap();
}

fn truncated_header_then_close(s: &Stack) {
    let mut c = RawConn::connect(s.gw.addr()).unwrap();
    c.stream().write_all(&[0x20, 0x00]).unwrap();
    c.stream().shutdown(Shutdown::Write).unwrap();
    assert_err_or_close(&mut c, "truncated header then close", s);
    // Also in the command phase.
    let mut c = login(s);
    c.stream().write_all(&[0x05]).unwrap();
    c.stream().shutdown(Shutdown::Write).unwrap();
    assert_closed(c.outcome(PEER_TIMEOUT), "truncated header after login", s);
}

fn wrong_sequence_in_handshake_response(s: &Stack) {
    let mut c = RawConn::connect(s.gw.addr()).unwrap();
    let resp = c.handshake_response("root", "", None);
    c.set_seq(5);
    c.write_packet(&resp).unwrap();
    let e = assert_err_or_close(&mut c, "wrong sequence id in the handshake response", s);
    if let Some(e) = e {
        assert!(e.code >= 1000, "{e}");
    }
}

fn length_beyond_max_packet_after_login(s: &Stack) {
    // Just below the limit works.
    let mut c = login(s);
    let fits = format!("SELECT LENGTH('{}')", "a".repeat(MAX_PACKET - 100));
    let r = c.query(&fits).unwrap_or_else(|e| panic!("query of {} bytes: {e:#}\n{}", fits.len(), s.gw_log()));
    assert!(gateway_tests::raw::parse_err(&r[0]).is_none(), "{:?}", gateway_tests::raw::parse_err(&r[0]));
    // Twice the limit: ERR 1153, then the connection is closed.
    let len = 2 * MAX_PACKET;
    let mut payload = vec![cmd::QUERY];
    payload.extend_from_slice(format!("SELECT LENGTH('{}')", "b".repeat(len - 20)).as_bytes());
    payload.truncate(len);
    let mut w = c.stream().try_clone().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = w.write_all(&frame(len, 0));
        let _ = w.write_all(&payload);
    });
    match c.outcome(PEER_TIMEOUT) {
        Outcome::Err(e) => {
            assert_eq!(e.code, 1153, "{e}");
            assert!(e.message.contains("max_allowed_packet"), "{e}");
        }
        o => {
            panic!("packet of {len} bytes over a {MAX_PACKET}-byte limit: expected ERR 1153, got {o:?}\n{}", s.gw_log())
        }
    }
    assert_closed(c.outcome(PEER_TIMEOUT), "after ERR 1153", s);
    writer.join().unwrap();
}

fn garbage_after_greeting(s: &Stack) {
    // A well-framed handshake response full of garbage.
    let mut c = RawConn::connect(s.gw.addr()).unwrap();
    let garbage: Vec<u8> = (0..64u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    c.set_seq(1);
    c.write_packet(&garbage).unwrap();
    assert_err_or_close(&mut c, "garbage handshake response", s);
    // An HTTP request on the MySQL port: the "header" claims 5.5 MB, over max_packet_size.
    let mut c = RawConn::connect(s.gw.addr()).unwrap();
    c.stream().write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\n\r\n").unwrap();
    assert_err_or_close(&mut c, "HTTP request instead of a handshake response", s);
    // A tiny packet (shorter than any handshake response).
    let mut c = RawConn::connect(s.gw.addr()).unwrap();
    c.set_seq(1);
    c.write_packet(&[0x01]).unwrap();
    assert_err_or_close(&mut c, "one-byte handshake response", s);
}

fn unknown_command(s: &Stack) {
    let mut c = login(s);
    c.command(0xee, b"").unwrap();
    match c.outcome(PEER_TIMEOUT) {
        Outcome::Err(e) => {
            assert_eq!(e.code, 1047, "{e}");
            assert!(e.message.contains("Unknown command"), "{e}");
        }
        o => panic!("unknown command 0xee: expected ERR 1047, got {o:?}\n{}", s.gw_log()),
    }
    // Like the server, the gateway keeps the connection usable.
    let r = c
        .query("SELECT 'after unknown command'")
        .unwrap_or_else(|e| panic!("query after ERR 1047: {e:#}\n{}", s.gw_log()));
    assert!(r.iter().any(|p| p.ends_with(b"after unknown command")), "{r:?}");
}

fn disconnect_mid_packet(s: &Stack) {
    let marker = format!("mid-packet-marker-{}", std::process::id());
    let mut c = login(s);
    let sql = format!("SELECT '{marker}', '{}'", "x".repeat(200));
    let mut p = vec![cmd::QUERY];
    p.extend_from_slice(sql.as_bytes());
    c.stream().write_all(&frame(p.len(), 0)).unwrap();
    c.stream().write_all(&p[..p.len() / 2]).unwrap();
    c.stream().shutdown(Shutdown::Write).unwrap();
    assert_closed(c.outcome(PEER_TIMEOUT), "client gone mid-packet", s);
    drop(c);
    // Half a statement never reaches the backend.
    assert!(!s.db.general_log().contains(&marker), "a truncated packet was forwarded to the backend");
}

fn quit_closes(s: &Stack) {
    let mut c = login(s);
    c.command(cmd::QUIT, b"").unwrap();
    assert_closed(c.outcome(PEER_TIMEOUT), "COM_QUIT", s);
}

#[tokio::test]
async fn truncated_header() {
    let s = stack();
    truncated_header_then_close(s);
    assert_serving(s, "truncated header").await;
}

#[tokio::test]
async fn wrong_sequence_id() {
    let s = stack();
    wrong_sequence_in_handshake_response(s);
    assert_serving(s, "wrong sequence id").await;
}

#[tokio::test]
async fn over_max_packet_size() {
    let s = stack();
    length_beyond_max_packet_after_login(s);
    assert_serving(s, "packet over max_packet_size").await;
}

#[tokio::test]
async fn garbage() {
    let s = stack();
    garbage_after_greeting(s);
    assert_serving(s, "garbage").await;
}

#[tokio::test]
async fn unknown_command_is_1047() {
    let s = stack();
    unknown_command(s);
    assert_serving(s, "unknown command").await;
}

#[tokio::test]
async fn client_disconnects_mid_packet() {
    let s = stack();
    disconnect_mid_packet(s);
    assert_serving(s, "disconnect mid-packet").await;
}

#[tokio::test]
async fn com_quit() {
    let s = stack();
    quit_closes(s);
    assert_serving(s, "COM_QUIT").await;
}

/// All cases back to back on one gateway, then a normal client and the PID check.
#[tokio::test]
async fn all_cases_then_still_serving() {
    let s = stack();
    truncated_header_then_close(s);
    wrong_sequence_in_handshake_response(s);
    length_beyond_max_packet_after_login(s);
    garbage_after_greeting(s);
    unknown_command(s);
    disconnect_mid_packet(s);
    quit_closes(s);
    // Many aborted handshakes at once.
    for _ in 0..50 {
        let c = RawConn::connect(s.gw.addr()).unwrap();
        drop(c);
    }
    assert_serving(s, "all malformed-input cases").await;
}
