//! COM_STMT_SEND_LONG_DATA chunks held by the gateway until the EXECUTE that consumes them, then
//! replayed on the connection that EXECUTE goes to.

use crate::protocol::command;

/// Long data of one statement, chunk by chunk in arrival order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LongData {
    chunks: Vec<(u16, Vec<u8>)>,
    bytes: usize,
}

impl LongData {
    /// Appends a chunk for parameter `param`.
    pub fn push(&mut self, param: u16, data: &[u8]) {
        self.bytes += data.len();
        self.chunks.push((param, data.to_vec()));
    }

    /// Whether parameter `param` has long data (its EXECUTE then carries no value for it).
    pub fn has(&self, param: u16) -> bool {
        self.chunks.iter().any(|(p, _)| *p == param)
    }

    /// The value of parameter `param`: its chunks joined.
    pub fn value(&self, param: u16) -> Vec<u8> {
        self.chunks.iter().filter(|(p, _)| *p == param).flat_map(|(_, d)| d.iter().copied()).collect()
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// Drops every chunk.
    pub fn clear(&mut self) {
        self.chunks.clear();
        self.bytes = 0;
    }

    /// The COM_STMT_SEND_LONG_DATA payloads to send, in order, for server statement `server_id`.
    pub fn packets(&self, server_id: u32) -> impl Iterator<Item = Vec<u8>> + '_ {
        self.chunks.iter().map(move |(param, data)| {
            let mut p = Vec::with_capacity(7 + data.len());
            p.push(command::STMT_SEND_LONG_DATA);
            p.extend_from_slice(&server_id.to_le_bytes());
            p.extend_from_slice(&param.to_le_bytes());
            p.extend_from_slice(data);
            p
        })
    }
}

/// Statement id, parameter number and data of a COM_STMT_SEND_LONG_DATA payload (command byte
/// first); `None` when shorter than its 6-byte header (the server ignores those too).
pub fn parse(payload: &[u8]) -> Option<(u32, u16, &[u8])> {
    let body = payload.get(1..)?;
    let head = body.get(..6)?;
    let id = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
    let param = u16::from_le_bytes([head[4], head[5]]);
    Some((id, param, &body[6..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_join_per_parameter_and_replay_in_order() {
        let mut ld = LongData::default();
        ld.push(1, b"ab");
        ld.push(0, b"x");
        ld.push(1, b"cd");
        assert_eq!(ld.value(1), b"abcd");
        assert_eq!(ld.value(0), b"x");
        assert!(!ld.has(2));
        assert_eq!(ld.bytes(), 5);
        let packets: Vec<_> = ld.packets(0x0102_0304).collect();
        assert_eq!(packets.len(), 3);
        assert_eq!(packets[0], [0x18, 4, 3, 2, 1, 1, 0, b'a', b'b']);
        assert_eq!(parse(&packets[2]), Some((0x0102_0304, 1, &b"cd"[..])));
        ld.clear();
        assert!(ld.is_empty() && ld.bytes() == 0);
    }

    #[test]
    fn short_packets_are_ignored() {
        assert_eq!(parse(&[0x18, 1, 0, 0, 0, 0]), None);
        assert_eq!(parse(&[0x18, 1, 0, 0, 0, 2, 0]), Some((1, 2, &b""[..])));
    }
}
