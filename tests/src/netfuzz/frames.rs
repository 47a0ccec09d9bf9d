//! Frames as the fuzzer puts them on the wire: a header whose length field may lie about the
//! payload that follows, a sequence id that may be wrong, and the byte-level mutations on them.

use crate::workload::Rng;

/// Largest frame payload; a frame of exactly this length is continued by the next one.
pub const MAX_FRAME: usize = 0xFF_FFFF;

/// One frame: `len` is what the header says, `payload` what is actually sent after it.
#[derive(Debug, Clone)]
pub struct Frame {
    pub len: u32,
    pub seq: u8,
    pub payload: Vec<u8>,
}

impl Frame {
    /// A frame whose header tells the truth.
    pub fn honest(seq: u8, payload: Vec<u8>) -> Frame {
        Frame { len: payload.len() as u32, seq, payload }
    }
}

/// The frames of one logical packet starting at `seq`, split at 16 MiB like a real client
/// (an empty frame ends a packet whose length is a multiple of 16 MiB).
pub fn packet(seq: u8, payload: &[u8]) -> Vec<Frame> {
    let mut out = Vec::new();
    let mut seq = seq;
    let mut rest = payload;
    loop {
        let n = rest.len().min(MAX_FRAME);
        out.push(Frame::honest(seq, rest[..n].to_vec()));
        seq = seq.wrapping_add(1);
        rest = &rest[n..];
        if n < MAX_FRAME {
            return out;
        }
    }
}

/// The bytes on the wire.
pub fn encode(frames: &[Frame]) -> Vec<u8> {
    let mut out = Vec::with_capacity(frames.iter().map(|f| f.payload.len() + 4).sum());
    for f in frames {
        out.extend_from_slice(&f.len.to_le_bytes()[..3]);
        out.push(f.seq);
        out.extend_from_slice(&f.payload);
    }
    out
}

/// A byte-level mutation of a frame list; returns its label.
pub fn mutate(rng: &mut Rng, frames: &mut Vec<Frame>, bytes_cut: &mut Option<usize>) -> String {
    if frames.is_empty() {
        return "none".into();
    }
    let i = rng.below(frames.len() as u64) as usize;
    let f = &mut frames[i];
    match rng.below(10) {
        0 | 1 => {
            let flips = 1 + rng.below(4);
            for _ in 0..flips {
                if !f.payload.is_empty() {
                    let at = rng.below(f.payload.len() as u64) as usize;
                    f.payload[at] ^= 1 << rng.below(8);
                }
            }
            format!("bitflip x{flips} frame {i}")
        }
        2 => {
            let keep = rng.below(f.payload.len() as u64 + 1) as usize;
            f.payload.truncate(keep);
            f.len = keep as u32;
            format!("shorten frame {i} to {keep}")
        }
        3 => {
            // The header claims more or fewer bytes than follow.
            let lie = match rng.below(4) {
                0 => f.len.saturating_add(1 + rng.below(16) as u32),
                1 => f.len.saturating_sub(1 + rng.below(16) as u32),
                2 => MAX_FRAME as u32,
                _ => rng.below(MAX_FRAME as u64 + 1) as u32,
            } & 0xFF_FFFF;
            f.len = lie;
            format!("length lie frame {i}: {lie} for {}", f.payload.len())
        }
        4 => {
            let seq = rng.below(256) as u8;
            f.seq = seq;
            format!("seq {seq} on frame {i}")
        }
        5 => {
            let total: usize = frames.iter().map(|f| f.payload.len() + 4).sum();
            let at = rng.below(total as u64) as usize;
            *bytes_cut = Some(at);
            format!("stream cut at byte {at} of {total}")
        }
        6 => {
            let n = 1 + rng.below(8) as usize;
            let at = rng.below(f.payload.len() as u64 + 1) as usize;
            let junk: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
            f.payload.splice(at..at, junk);
            if rng.chance(70) {
                f.len = f.payload.len() as u32;
            }
            format!("insert {n} bytes in frame {i} at {at}")
        }
        7 => {
            let copy = f.clone();
            frames.insert(i, copy);
            format!("duplicate frame {i}")
        }
        8 => {
            frames.remove(i);
            format!("drop frame {i}")
        }
        _ => {
            if !f.payload.is_empty() {
                let at = rng.below(f.payload.len() as u64) as usize;
                f.payload[at] = *rng.pick(&[0x00, 0xff, 0xfe, 0xfb, 0xfc, 0xfd, 0x80, 0x7f]);
            }
            format!("interesting byte in frame {i}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_split_at_16_mib_with_an_empty_last_frame() {
        let p = packet(0, &vec![1u8; MAX_FRAME]);
        assert_eq!(p.len(), 2);
        assert_eq!((p[0].len as usize, p[0].seq, p[1].len, p[1].seq), (MAX_FRAME, 0, 0, 1));
        let wire = encode(&packet(3, b"ab"));
        assert_eq!(wire, vec![2, 0, 0, 3, b'a', b'b']);
    }
}
