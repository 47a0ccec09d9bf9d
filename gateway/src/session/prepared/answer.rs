//! The first packet of a COM_STMT_PREPARE answer: read it, and give it the client's id.

use crate::protocol::buf::Reader;
use crate::protocol::ProtocolError;

/// `COM_STMT_PREPARE_OK`: status 0, statement id, columns, parameters, filler, warnings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrepareOk {
    /// The id on the server that answered.
    pub statement_id: u32,
    /// Result columns.
    pub columns: u16,
    /// `?` parameters.
    pub params: u16,
    /// Warnings (0 when the packet stops before them).
    pub warnings: u16,
}

impl PrepareOk {
    /// Reads the first packet of a successful prepare answer.
    pub fn parse(payload: &[u8]) -> Result<PrepareOk, ProtocolError> {
        let mut r = Reader::new(payload);
        if r.u8()? != 0 {
            return Err(ProtocolError::Malformed("not a COM_STMT_PREPARE OK"));
        }
        let statement_id = r.u32()?;
        let columns = r.u16()?;
        let params = r.u16()?;
        let warnings = if r.remaining() >= 3 {
            r.u8()?;
            r.u16()?
        } else {
            0
        };
        Ok(PrepareOk { statement_id, columns, params, warnings })
    }
}

/// Replaces the statement id of a COM_STMT_PREPARE OK in place (the rest is kept byte for byte).
pub fn set_statement_id(payload: &mut [u8], id: u32) -> Result<(), ProtocolError> {
    match payload.get_mut(0..5) {
        Some(head) if head[0] == 0 => {
            head[1..5].copy_from_slice(&id.to_le_bytes());
            Ok(())
        }
        _ => Err(ProtocolError::Malformed("not a COM_STMT_PREPARE OK")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(id: u32, cols: u16, params: u16, warnings: u16) -> Vec<u8> {
        let mut p = vec![0];
        p.extend_from_slice(&id.to_le_bytes());
        p.extend_from_slice(&cols.to_le_bytes());
        p.extend_from_slice(&params.to_le_bytes());
        p.push(0);
        p.extend_from_slice(&warnings.to_le_bytes());
        p
    }

    #[test]
    fn parses_and_rewrites_only_the_id() {
        let mut p = ok(77, 3, 2, 1);
        assert_eq!(PrepareOk::parse(&p).unwrap(), PrepareOk { statement_id: 77, columns: 3, params: 2, warnings: 1 });
        set_statement_id(&mut p, 5).unwrap();
        assert_eq!(p, ok(5, 3, 2, 1));
    }

    #[test]
    fn short_or_foreign_packets_are_errors() {
        assert!(PrepareOk::parse(&[0, 1, 0, 0]).is_err());
        assert!(PrepareOk::parse(&[0xff, 1, 0, 0, 0, 0, 0, 0, 0]).is_err());
        assert!(set_statement_id(&mut [0xff, 1, 2, 3, 4], 1).is_err());
        assert!(set_statement_id(&mut [0, 1], 1).is_err());
        // Without the warning count (old servers): warnings 0.
        assert_eq!(PrepareOk::parse(&ok(1, 0, 0, 9)[..9]).unwrap().warnings, 0);
    }
}
