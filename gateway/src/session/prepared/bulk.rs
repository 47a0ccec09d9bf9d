//! MariaDB's COM_STMT_BULK_EXECUTE: the header a routing gateway needs (statement id, flags,
//! the parameter types when sent), read with bounds, and the rewrite for another connection.

use super::execute::set_statement_id;
use super::{ParamTypes, PreparedError};

/// `STMT_BULK_FLAG_CLIENT_SEND_TYPES`: the parameter types follow the flags.
pub const SEND_TYPES: u16 = 128;
/// Command byte, statement id, flags.
const HEADER: usize = 7;

/// The header of a COM_STMT_BULK_EXECUTE, borrowing the client's packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bulk<'a> {
    /// The client's statement id.
    pub statement_id: u32,
    /// `STMT_BULK_FLAG_*`.
    pub flags: u16,
    /// The parameter types (2 bytes each), when the client sent them.
    pub types: Option<&'a [u8]>,
}

impl<'a> Bulk<'a> {
    /// Reads the header of a bulk execution of a statement with `params` parameters. The rows
    /// that follow are the server's to read; the gateway sends them on untouched.
    pub fn parse(payload: &'a [u8], params: u16) -> Result<Self, PreparedError> {
        let head = payload.get(..HEADER).ok_or(PreparedError::Malformed)?;
        let statement_id = u32::from_le_bytes([head[1], head[2], head[3], head[4]]);
        let flags = u16::from_le_bytes([head[5], head[6]]);
        let types = if flags & SEND_TYPES != 0 {
            Some(payload.get(HEADER..HEADER + 2 * usize::from(params)).ok_or(PreparedError::Malformed)?)
        } else {
            None
        };
        if params == 0 || payload.len() == HEADER + types.map_or(0, <[u8]>::len) {
            // No parameters means no rows to run: the server refuses it; so does the gateway.
            return Err(PreparedError::Malformed);
        }
        Ok(Bulk { statement_id, flags, types })
    }
}

/// The bulk execution for the connection's statement `server_id`, with the parameter types
/// inserted when the client did not send them and the connection's statement has none yet.
pub fn rewrite(
    payload: &[u8],
    params: u16,
    server_id: u32,
    insert_types: Option<&ParamTypes>,
) -> Result<Vec<u8>, PreparedError> {
    let bulk = Bulk::parse(payload, params)?;
    let mut out = match (bulk.types, insert_types) {
        (None, Some(types)) if types.wire().len() == 2 * usize::from(params) => {
            let mut out = Vec::with_capacity(payload.len() + types.wire().len());
            out.extend_from_slice(&payload[..5]);
            out.extend_from_slice(&(bulk.flags | SEND_TYPES).to_le_bytes());
            out.extend_from_slice(types.wire());
            out.extend_from_slice(&payload[HEADER..]);
            out
        }
        _ => payload.to_vec(),
    };
    set_statement_id(&mut out, server_id)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bulk(flags: u16, types: &[u8], rows: &[u8]) -> Vec<u8> {
        let mut p = vec![0xFA, 7, 0, 0, 0];
        p.extend_from_slice(&flags.to_le_bytes());
        p.extend_from_slice(types);
        p.extend_from_slice(rows);
        p
    }

    #[test]
    fn header_is_read_with_bounds() {
        let p = bulk(SEND_TYPES, &[8, 0], &[0, 1, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(Bulk::parse(&p, 1).unwrap(), Bulk { statement_id: 7, flags: SEND_TYPES, types: Some(&[8, 0][..]) });
        assert!(Bulk::parse(&p[..8], 1).is_err(), "types cut short");
        assert!(Bulk::parse(&bulk(SEND_TYPES, &[8, 0], &[]), 1).is_err(), "no rows");
        assert!(Bulk::parse(&p, 0).is_err(), "no parameters");
        assert!(Bulk::parse(&[0xFA, 1, 0], 1).is_err());
    }

    #[test]
    fn rewrite_renumbers_and_inserts_missing_types() {
        let rows = [0, 1, 0, 0, 0, 0, 0, 0, 0];
        let types = ParamTypes::new(&[8, 0]);
        let out = rewrite(&bulk(0, &[], &rows), 1, 42, Some(&types)).unwrap();
        assert_eq!(out, [&[0xFA, 42, 0, 0, 0, 128, 0, 8, 0][..], &rows].concat());
        let sent = bulk(SEND_TYPES, &[3, 0], &rows);
        let out = rewrite(&sent, 1, 42, Some(&types)).unwrap();
        assert_eq!(out[1..5], 42u32.to_le_bytes());
        assert_eq!(out[5..], sent[5..], "the client's own types stay");
    }
}
