//! Server leg framing: a server's answer relayed frame by frame (`session::relay` with the
//! `ResponseTracker`) for every answer shape, with a LOCAL INFILE exchange from the client side.
//! Input: flags, chunk count, chunk sizes, client byte count, server bytes, client bytes.
//! Whatever the server sends, every byte consumed from it reaches the client exactly once, and the
//! packets are also given to the OK / ERR / EOF / greeting / prepare-OK / session-track parsers.
#![no_main]

use gateway::protocol::caps;
use gateway::protocol::command::Shape;
use gateway::protocol::frame::{header, Wire, HEADER};
use gateway::protocol::handshake::Greeting;
use gateway::protocol::message::{eof_status, terminator_status, ErrPacket, OkPacket};
use gateway::protocol::response::{ok_status, ResponseTracker};
use gateway::session::prepared::answer::PrepareOk;
use gateway::session::relay;
use gateway::session::state::changes;
use gateway_fuzz::{block_on, framing_header, ChunkedStream};
use libfuzzer_sys::fuzz_target;

const SHAPES: [Shape; 6] = [Shape::None, Shape::Single, Shape::Results, Shape::Fetch, Shape::Prepare, Shape::FieldList];

fuzz_target!(|data: &[u8]| {
    let Some((flags, chunks, rest)) = framing_header(data) else {
        return;
    };
    // The last `clen` bytes are the client's (LOCAL INFILE data); 0xFF cannot separate them, it
    // starts every ERR packet.
    let Some((&clen, rest)) = rest.split_first() else {
        return;
    };
    let (server, client) = rest.split_at(rest.len().saturating_sub(usize::from(clen)));
    let shape = SHAPES[usize::from(flags % 8) % SHAPES.len()];
    let deprecate_eof = flags & 0x10 != 0;
    let hold_last = flags & 0x20 != 0;
    packets(server);

    let mut tracker = ResponseTracker::new(shape, deprecate_eof);
    if tracker.is_done() {
        return;
    }
    let mut backend = Wire::new(ChunkedStream::new(server, chunks));
    let mut front = Wire::new(ChunkedStream::new(client, chunks));
    let result = block_on(async {
        if hold_last {
            relay::answer_holding_last(&mut backend, &mut front, &mut tracker, &mut None).await
        } else {
            relay::answer(&mut backend, &mut front, &mut tracker, &mut None).await.map(|()| None)
        }
    });
    if let Ok(held) = result {
        let consumed = backend.io.position() - backend.buf.len();
        let held = held.map_or(0, |h| h.len());
        assert_eq!(front.io.written + held, consumed, "relayed bytes differ from the bytes consumed");
        if let Some(ok) = &tracker.last_ok {
            let _ = OkPacket::parse(ok, caps::SUPPORTED);
        }
    }
});

/// Every complete frame of the stream through the packet parsers of the server leg.
fn packets(mut s: &[u8]) {
    while let Some((len, _)) = header(s) {
        let Some(p) = s.get(HEADER..HEADER + len) else {
            return;
        };
        let _ = Greeting::parse(p);
        let _ = OkPacket::parse(p, caps::SUPPORTED);
        if let Ok(ok) = OkPacket::parse(p, caps::PROTOCOL_41 | caps::SESSION_TRACK) {
            let _ = changes(&ok.session_state);
        }
        let _ = OkPacket::parse(p, 0);
        let _ = ErrPacket::parse(p);
        let _ = eof_status(p);
        let _ = terminator_status(p, true);
        let _ = terminator_status(p, false);
        let _ = ok_status(p);
        let _ = PrepareOk::parse(p);
        let _ = changes(p);
        s = &s[HEADER + len..];
    }
}
