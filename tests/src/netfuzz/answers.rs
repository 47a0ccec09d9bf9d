//! Reading what the gateway sent back to a case: packets, the kind of the first answer, ERR
//! codes, and the check that a case's closing statement (its sentinel) got its own answer, last.

use super::End;

/// The payloads of the packets in `b` (frames taken one by one; a cut last frame as it is).
fn packets(mut b: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    while b.len() >= 4 {
        let len = usize::from(b[0]) | usize::from(b[1]) << 8 | usize::from(b[2]) << 16;
        let end = (4 + len).min(b.len());
        out.push(&b[4..end]);
        b = &b[end..];
    }
    out
}

/// Kind of the first packet received (an answer to a handshake response with `login`, else to
/// a command), and the codes of all ERR packets.
pub fn classify(b: &[u8], login: bool) -> (&'static str, Vec<u16>) {
    let mut first = None;
    let mut errors = Vec::new();
    for p in packets(b) {
        let kind = match p.first() {
            None => "empty",
            Some(0x00) => "OK",
            Some(0xff) => {
                if p.len() >= 3 {
                    errors.push(u16::from_le_bytes([p[1], p[2]]));
                }
                "ERR"
            }
            Some(0xfe) if login && first.is_none() => "auth switch",
            Some(0xfe) if p.len() < 9 => "EOF",
            Some(0x01) if login && first.is_none() => "auth more data",
            Some(_) => "result set",
        };
        first.get_or_insert(kind);
    }
    (first.unwrap_or("none"), errors)
}

/// The sentinel `SELECT '<nonce>'` ends the case: its row must be the last row received and only
/// its EOF may follow; or, if the gateway ended the session before it, the last packet is an ERR
/// (an error answers the command that caused it).
pub fn check_sentinel(b: &[u8], nonce: &str, end: End) -> Result<(), String> {
    let ps = packets(b);
    let row = [&[nonce.len() as u8][..], nonce.as_bytes()].concat();
    match ps.iter().rposition(|p| *p == row.as_slice()) {
        Some(i) => {
            let after = &ps[i + 1..];
            let eof = after.len() == 1 && after[0].first() == Some(&0xfe) && after[0].len() < 9;
            if eof {
                Ok(())
            } else {
                Err(format!("answers after the sentinel's row: {:02x?}", &after[..after.len().min(3)]))
            }
        }
        None => match ps.last() {
            Some(p) if p.first() == Some(&0xff) => Ok(()),
            last => Err(format!(
                "the sentinel statement got no answer and the session ended ({end:?}) without an error; \
                 last packet: {:02x?}",
                last.map(|p| &p[..p.len().min(48)])
            )),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(seq: u8, p: &[u8]) -> Vec<u8> {
        let mut f = (p.len() as u32).to_le_bytes()[..3].to_vec();
        f.push(seq);
        f.extend_from_slice(p);
        f
    }

    #[test]
    fn the_sentinel_row_must_come_last_or_an_error_end_the_session() {
        let eof = [0xfe, 0, 0, 2, 0];
        let row = [&[5u8][..], b"nonce"].concat();
        let ok =
            [frame(1, &[0, 0, 0, 2, 0, 0, 0]), frame(1, &[1]), frame(2, &eof), frame(3, &row), frame(4, &eof)].concat();
        assert_eq!(check_sentinel(&ok, "nonce", End::Closed), Ok(()));
        let late = [ok.clone(), frame(1, &[0, 0, 0, 2, 0, 0, 0])].concat();
        assert!(check_sentinel(&late, "nonce", End::Closed).is_err());
        let foreign =
            [frame(1, &[1]), frame(2, &eof), frame(3, &[5u8, b'o', b't', b'h', b'e', b'r']), frame(4, &eof)].concat();
        assert!(check_sentinel(&foreign, "nonce", End::Closed).is_err());
        let refused = [frame(1, &[0, 0, 0, 2, 0, 0, 0]), frame(1, &[0xff, 0x1b, 0x04, b'x'])].concat();
        assert_eq!(check_sentinel(&refused, "nonce", End::Closed), Ok(()));
        assert!(check_sentinel(&[], "nonce", End::Reset).is_err());
        assert_eq!(classify(&refused, false), ("OK", vec![1051]));
    }
}
