//! Text result sets the gateway answers itself (EXPLAIN ROUTE, internal SHOW commands).

use super::buf::{put_lenenc, put_lenenc_bytes};
use super::frame::encode_packet;
use super::message::{OkPacket, EOF};
use super::{caps, status};

/// MYSQL_TYPE_VAR_STRING.
const TYPE_VAR_STRING: u8 = 0xFD;
/// MYSQL_TYPE_LONGLONG.
const TYPE_LONGLONG: u8 = 0x08;
/// utf8mb4_general_ci.
const UTF8MB4: u16 = 45;
/// The binary pseudo-collation, used for numbers.
const BINARY: u16 = 63;

/// Type of a result column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnKind {
    /// Text (VARCHAR).
    Text,
    /// 64-bit integer.
    Int,
}

/// A complete text-protocol result set.
#[derive(Debug, Clone, Default)]
pub struct TextResultSet {
    /// Column names and types.
    pub columns: Vec<(String, ColumnKind)>,
    /// Rows; `None` is SQL NULL.
    pub rows: Vec<Vec<Option<String>>>,
}

impl TextResultSet {
    /// An empty result with these text columns.
    pub fn with_text_columns(names: &[&str]) -> Self {
        TextResultSet { columns: names.iter().map(|n| (n.to_string(), ColumnKind::Text)).collect(), rows: Vec::new() }
    }

    /// Frames the whole answer (column count, definitions, rows, terminators) starting at `seq`.
    pub fn encode(&self, seq: u8, client_caps: u32, server_status: u16) -> Vec<u8> {
        let deprecate_eof = client_caps & caps::DEPRECATE_EOF != 0;
        let mut out = Vec::new();
        let mut payload = Vec::new();
        put_lenenc(&mut payload, self.columns.len() as u64);
        let mut seq = encode_packet(&mut out, seq, &payload);
        for (name, kind) in &self.columns {
            seq = encode_packet(&mut out, seq, &column_definition(name, *kind, self.width(name)));
        }
        if !deprecate_eof {
            seq = encode_packet(&mut out, seq, &eof(server_status));
        }
        for row in &self.rows {
            payload.clear();
            for cell in row {
                match cell {
                    Some(v) => put_lenenc_bytes(&mut payload, v.as_bytes()),
                    None => payload.push(0xFB),
                }
            }
            seq = encode_packet(&mut out, seq, &payload);
        }
        let end = if deprecate_eof {
            let mut ok = OkPacket::with_status(server_status).encode(client_caps);
            ok[0] = EOF;
            ok
        } else {
            eof(server_status)
        };
        encode_packet(&mut out, seq, &end);
        out
    }

    /// Display width announced for a column: the longest value, at least 1.
    fn width(&self, name: &str) -> u32 {
        let idx = self.columns.iter().position(|(n, _)| n == name).unwrap_or(0);
        let longest = self.rows.iter().filter_map(|r| r.get(idx)?.as_ref().map(String::len)).max().unwrap_or(0);
        u32::try_from(longest.max(1)).unwrap_or(u32::MAX)
    }
}

fn eof(server_status: u16) -> Vec<u8> {
    let mut v = vec![EOF, 0, 0];
    v.extend_from_slice(&server_status.to_le_bytes());
    v
}

/// A gateway-made answer (framed packets) for a client that negotiated MariaDB's
/// EXTENDED_TYPE_INFO: each column definition of its first result set gets the (empty) extended
/// type information that such clients read after the column name. Other answers come back as
/// they were; so does anything that does not parse (it was made here).
pub fn with_extended_type_info(answer: Vec<u8>) -> Vec<u8> {
    extend_definitions(&answer).unwrap_or(answer)
}

fn extend_definitions(answer: &[u8]) -> Option<Vec<u8>> {
    let frame = |at: usize| -> Option<(usize, u8)> {
        let h = answer.get(at..at + 4)?;
        Some((usize::from(h[0]) | usize::from(h[1]) << 8 | usize::from(h[2]) << 16, h[3]))
    };
    let (len, _) = frame(0)?;
    let first = answer.get(4..4 + len)?;
    if matches!(first.first(), Some(0x00 | 0xFE | 0xFF) | None) {
        return None;
    }
    let columns = super::buf::Reader::new(first).lenenc().ok()?;
    let mut out = Vec::with_capacity(answer.len() + usize::try_from(columns).unwrap_or(0).min(4096));
    out.extend_from_slice(&answer[..4 + len]);
    let mut at = 4 + len;
    for _ in 0..columns {
        let (len, seq) = frame(at)?;
        let def = answer.get(at + 4..at + 4 + len)?;
        let mut r = super::buf::Reader::new(def);
        for _ in 0..6 {
            r.lenenc_bytes().ok()?;
        }
        let names = def.len() - r.remaining();
        let mut p = Vec::with_capacity(def.len() + 1);
        p.extend_from_slice(&def[..names]);
        p.push(0); // no extended type information
        p.extend_from_slice(&def[names..]);
        encode_packet(&mut out, seq, &p);
        at += 4 + len;
    }
    out.extend_from_slice(&answer[at..]);
    Some(out)
}

fn column_definition(name: &str, kind: ColumnKind, width: u32) -> Vec<u8> {
    let mut p = Vec::with_capacity(32 + name.len());
    put_lenenc_bytes(&mut p, b"def");
    put_lenenc_bytes(&mut p, b"");
    put_lenenc_bytes(&mut p, b"");
    put_lenenc_bytes(&mut p, b"");
    put_lenenc_bytes(&mut p, name.as_bytes());
    put_lenenc_bytes(&mut p, name.as_bytes());
    p.push(0x0C);
    let (charset, ty, length) = match kind {
        ColumnKind::Text => (UTF8MB4, TYPE_VAR_STRING, width.saturating_mul(4)),
        ColumnKind::Int => (BINARY, TYPE_LONGLONG, 20),
    };
    p.extend_from_slice(&charset.to_le_bytes());
    p.extend_from_slice(&length.to_le_bytes());
    p.push(ty);
    p.extend_from_slice(&0u16.to_le_bytes());
    p.push(0);
    p.extend_from_slice(&[0, 0]);
    p
}

/// Default status for gateway-made answers.
pub const GATEWAY_STATUS: u16 = status::AUTOCOMMIT;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::command::Shape;
    use crate::protocol::frame::{header, HEADER};
    use crate::protocol::response::{ResponseTracker, Step};

    /// The gateway's own answers must be well-formed for the same tracker that reads servers.
    fn frames_end_exactly(bytes: &[u8], deprecate_eof: bool) -> usize {
        let mut t = ResponseTracker::new(Shape::Results, deprecate_eof);
        let (mut pos, mut n) = (0, 0);
        while let Some((len, _)) = header(&bytes[pos..]) {
            let step = t.on_frame(&bytes[pos + HEADER..pos + HEADER + len]).unwrap();
            pos += HEADER + len;
            n += 1;
            if step == Step::Done {
                assert_eq!(pos, bytes.len(), "trailing bytes after the answer");
                return n;
            }
        }
        panic!("answer never ended");
    }

    #[test]
    fn extended_type_info_is_added_to_each_column_definition() {
        let mut rs = TextResultSet::with_text_columns(&["a", "bb"]);
        rs.rows.push(vec![Some("x".into()), None]);
        let plain = rs.encode(1, caps::PROTOCOL_41, 2);
        let extended = with_extended_type_info(plain.clone());
        assert_eq!(extended.len(), plain.len() + 2, "one byte per column definition");
        let mut pos = 0;
        let mut defs = Vec::new();
        while let Some((len, _)) = header(&extended[pos..]) {
            defs.push(extended[pos + HEADER..pos + HEADER + len].to_vec());
            pos += HEADER + len;
        }
        // def, "", "", "", name, name, then the empty extended info before the 0x0C block.
        assert_eq!(&defs[1][..13], b"\x03def\x00\x00\x00\x01a\x01a\x00\x0c");
        assert_eq!(&defs[2][..15], b"\x03def\x00\x00\x00\x02bb\x02bb\x00\x0c");
        assert_eq!(defs[3..], frames(&plain)[3..], "EOF and rows unchanged");
        let ok = OkPacket::with_status(2).encode(caps::PROTOCOL_41);
        let mut framed = Vec::new();
        encode_packet(&mut framed, 1, &ok);
        assert_eq!(with_extended_type_info(framed.clone()), framed, "an OK is left alone");
    }

    fn frames(bytes: &[u8]) -> Vec<Vec<u8>> {
        let (mut pos, mut out) = (0, Vec::new());
        while let Some((len, _)) = header(&bytes[pos..]) {
            out.push(bytes[pos + HEADER..pos + HEADER + len].to_vec());
            pos += HEADER + len;
        }
        out
    }

    #[test]
    fn result_set_is_well_framed_with_and_without_eof() {
        let mut rs = TextResultSet::with_text_columns(&["a", "b"]);
        rs.rows.push(vec![Some("x".into()), None]);
        rs.rows.push(vec![Some("yy".into()), Some("z".into())]);
        assert_eq!(frames_end_exactly(&rs.encode(1, caps::PROTOCOL_41, 2), false), 1 + 2 + 1 + 2 + 1);
        let c = caps::PROTOCOL_41 | caps::DEPRECATE_EOF;
        assert_eq!(frames_end_exactly(&rs.encode(1, c, 2), true), 1 + 2 + 2 + 1);
    }
}
