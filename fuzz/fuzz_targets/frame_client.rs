//! Client leg framing: `Wire::read_packet` / `read_frame_exact` over a stream split at arbitrary
//! places. Every packet read must be within the limit and re-frame to exactly the bytes consumed.
#![no_main]

use gateway::protocol::frame::{encode_packet, Wire};
use gateway_fuzz::{block_on, framing_header, ChunkedStream};
use libfuzzer_sys::fuzz_target;

/// Packet size limits tried (chosen by the first byte).
const MAX: [usize; 6] = [0, 1, 4, 64, 1024, usize::MAX];

fuzz_target!(|data: &[u8]| {
    let Some((flags, chunks, stream)) = framing_header(data) else {
        return;
    };
    let max = MAX[usize::from(flags >> 1) % MAX.len()];
    let mut wire = Wire::new(ChunkedStream::new(stream, chunks));
    block_on(async {
        let mut consumed = 0usize;
        for i in 0..64 {
            let read =
                if i == 0 && flags & 1 != 0 { wire.read_frame_exact(max).await } else { wire.read_packet(max).await };
            let Ok(p) = read else { break };
            assert!(p.payload.len() <= max, "packet of {} bytes over the limit {max}", p.payload.len());
            let now = wire.io.position() - wire.buf.len();
            let mut framed = Vec::new();
            let next = encode_packet(&mut framed, p.first_seq, &p.payload);
            assert_eq!(next, p.last_seq.wrapping_add(1), "sequence ids of a re-framed packet");
            assert!(framed[..] == stream[consumed..now], "re-framed packet differs from the bytes read");
            consumed = now;
        }
    });
});
