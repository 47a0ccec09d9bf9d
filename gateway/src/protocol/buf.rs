//! Primitive field codecs: fixed and length-encoded integers and strings, on byte slices.

use super::ProtocolError;

/// A cursor over a packet payload that fails cleanly instead of panicking on short input.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

const SHORT: ProtocolError = ProtocolError::Malformed("packet too short");

impl<'a> Reader<'a> {
    /// Starts reading at the beginning of `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Reader { data, pos: 0 }
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    /// Takes `n` bytes.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], ProtocolError> {
        let end = self.pos.checked_add(n).filter(|e| *e <= self.data.len()).ok_or(SHORT)?;
        let s = &self.data[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    /// Takes everything left.
    pub fn rest(&mut self) -> &'a [u8] {
        let s = &self.data[self.pos..];
        self.pos = self.data.len();
        s
    }

    /// One byte.
    pub fn u8(&mut self) -> Result<u8, ProtocolError> {
        Ok(self.take(1)?[0])
    }

    /// Little-endian u16.
    pub fn u16(&mut self) -> Result<u16, ProtocolError> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    /// Little-endian u24.
    pub fn u24(&mut self) -> Result<u32, ProtocolError> {
        let b = self.take(3)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], 0]))
    }

    /// Little-endian u32.
    pub fn u32(&mut self) -> Result<u32, ProtocolError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Length-encoded integer. `0xFB` (NULL) and `0xFF` are rejected.
    pub fn lenenc(&mut self) -> Result<u64, ProtocolError> {
        match self.u8()? {
            n @ 0..=0xFA => Ok(u64::from(n)),
            0xFC => Ok(u64::from(self.u16()?)),
            0xFD => Ok(u64::from(self.u24()?)),
            0xFE => {
                let b = self.take(8)?;
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                Ok(u64::from_le_bytes(a))
            }
            _ => Err(ProtocolError::Malformed("invalid length-encoded integer")),
        }
    }

    /// Length-encoded string.
    pub fn lenenc_bytes(&mut self) -> Result<&'a [u8], ProtocolError> {
        let n = usize::try_from(self.lenenc()?).map_err(|_| SHORT)?;
        self.take(n)
    }

    /// NUL-terminated string (the NUL is consumed). A missing NUL takes the rest.
    pub fn nul_bytes(&mut self) -> &'a [u8] {
        let rest = &self.data[self.pos..];
        match rest.iter().position(|b| *b == 0) {
            Some(i) => {
                self.pos += i + 1;
                &rest[..i]
            }
            None => self.rest(),
        }
    }
}

/// Appends a length-encoded integer.
pub fn put_lenenc(out: &mut Vec<u8>, v: u64) {
    match v {
        0..=0xFA => out.push(v as u8),
        0xFB..=0xFFFF => {
            out.push(0xFC);
            out.extend_from_slice(&(v as u16).to_le_bytes());
        }
        0x1_0000..=0xFF_FFFF => {
            out.push(0xFD);
            out.extend_from_slice(&(v as u32).to_le_bytes()[..3]);
        }
        _ => {
            out.push(0xFE);
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
}

/// Appends a length-encoded string.
pub fn put_lenenc_bytes(out: &mut Vec<u8>, s: &[u8]) {
    put_lenenc(out, s.len() as u64);
    out.extend_from_slice(s);
}

/// Appends a NUL-terminated string.
pub fn put_nul_bytes(out: &mut Vec<u8>, s: &[u8]) {
    out.extend_from_slice(s);
    out.push(0);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenenc_round_trips_at_every_boundary() {
        for v in [0u64, 1, 250, 251, 0xFFFF, 0x1_0000, 0xFF_FFFF, 0x100_0000, u64::MAX] {
            let mut out = Vec::new();
            put_lenenc(&mut out, v);
            let mut r = Reader::new(&out);
            assert_eq!(r.lenenc().unwrap(), v);
            assert_eq!(r.remaining(), 0);
        }
    }

    #[test]
    fn short_input_is_an_error_not_a_panic() {
        assert!(Reader::new(&[0xFC, 1]).lenenc().is_err());
        assert!(Reader::new(&[0xFF]).lenenc().is_err());
        assert!(Reader::new(&[5, b'a']).lenenc_bytes().is_err());
        assert!(Reader::new(&[1, 2]).u32().is_err());
    }

    #[test]
    fn nul_string_without_terminator_takes_rest() {
        let mut r = Reader::new(b"abc\0def");
        assert_eq!(r.nul_bytes(), b"abc");
        assert_eq!(r.nul_bytes(), b"def");
        assert_eq!(r.remaining(), 0);
    }
}
