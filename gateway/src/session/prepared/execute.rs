//! COM_STMT_EXECUTE packets: the fixed header, null bitmap and bound types, and the rewrite that
//! sends one to a server connection under that connection's statement id.
//!
//! Layout (payload, command byte first): `0x17`, statement id u32, flags u8 (cursor type),
//! iteration count u32, then when the statement has parameters: null bitmap
//! (`(n + 7) / 8` bytes), `new_params_bound_flag` u8, when 1 the types (2 bytes each: type,
//! flags with 0x80 = unsigned), then the values of the non-NULL parameters without long data.

use super::registry::ParamTypes;
use super::PreparedError;

/// Cursor type flag asking for a read-only cursor.
pub const CURSOR_TYPE_READ_ONLY: u8 = 1;
/// Command byte + id + flags + iteration count.
const HEADER: usize = 10;
const WHO: &str = "mysqld_stmt_execute";

/// The statement id of an EXECUTE (or any statement command: FETCH, RESET, CLOSE,
/// SEND_LONG_DATA, all of which start with it). An EXECUTE shorter than its header is
/// ER_MALFORMED_PACKET, before the id is looked at, as on the server.
pub fn statement_id(payload: &[u8]) -> Result<u32, PreparedError> {
    if payload.len() < HEADER {
        return Err(PreparedError::Malformed);
    }
    Ok(u32::from_le_bytes([payload[1], payload[2], payload[3], payload[4]]))
}

/// Replaces the statement id of any statement command in place (bytes 1..5).
pub fn set_statement_id(payload: &mut [u8], id: u32) -> Result<(), PreparedError> {
    let slot = payload.get_mut(1..5).ok_or(PreparedError::Malformed)?;
    slot.copy_from_slice(&id.to_le_bytes());
    Ok(())
}

/// A parsed COM_STMT_EXECUTE, borrowing the client's packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Execute<'a> {
    /// The statement id as sent (a client id, or [`LAST_STMT_ID`](super::registry::LAST_STMT_ID)).
    pub statement_id: u32,
    /// Cursor flags ([`CURSOR_TYPE_READ_ONLY`], …).
    pub flags: u8,
    /// Iteration count (always 1 in practice).
    pub iterations: u32,
    /// The types sent with this packet (`new_params_bound_flag` = 1).
    pub types: Option<&'a [u8]>,
    null_bitmap: &'a [u8],
    values: &'a [u8],
    params: u16,
}

impl<'a> Execute<'a> {
    /// Parses an EXECUTE of a statement with `params` parameters. Errors as MariaDB's sanity
    /// check: a bound flag other than 0/1 or types cut short → ER_MALFORMED_PACKET; a packet
    /// without room for the bitmap and flag → ER_WRONG_ARGUMENTS.
    pub fn parse(payload: &'a [u8], params: u16) -> Result<Execute<'a>, PreparedError> {
        let statement_id = statement_id(payload)?;
        let flags = payload[5];
        let iterations = u32::from_le_bytes([payload[6], payload[7], payload[8], payload[9]]);
        let mut ex = Execute { statement_id, flags, iterations, types: None, null_bitmap: &[], values: &[], params };
        if params == 0 {
            return Ok(ex);
        }
        let rest = &payload[HEADER..];
        let nb = usize::from(params).div_ceil(8);
        let (bitmap, rest) = rest.split_at_checked(nb).ok_or(PreparedError::WrongArguments(WHO))?;
        let (&bound, rest) = rest.split_first().ok_or(PreparedError::WrongArguments(WHO))?;
        ex.null_bitmap = bitmap;
        ex.values = rest;
        match bound {
            0 => {}
            1 => {
                let (types, values) = rest.split_at_checked(2 * usize::from(params)).ok_or(PreparedError::Malformed)?;
                ex.types = Some(types);
                ex.values = values;
            }
            _ => return Err(PreparedError::Malformed),
        }
        Ok(ex)
    }

    /// Whether the client asked for a cursor.
    pub fn wants_cursor(&self) -> bool {
        self.flags & CURSOR_TYPE_READ_ONLY != 0
    }

    /// Number of parameters the packet was parsed for.
    pub fn params(&self) -> u16 {
        self.params
    }

    /// Whether parameter `i` is NULL in the bitmap.
    pub fn is_null(&self, i: u16) -> bool {
        self.null_bitmap.get(usize::from(i / 8)).is_some_and(|b| b & (1 << (i % 8)) != 0)
    }

    /// The value bytes (after the types, if any).
    pub fn values(&self) -> &'a [u8] {
        self.values
    }
}

/// The client's EXECUTE as the server connection must get it: its statement id replaced by
/// `server_id`, and, when `insert_types` is given and the packet carries no types, the
/// remembered types inserted with `new_params_bound_flag` = 1. Every other byte is kept.
pub fn rewrite(
    payload: &[u8],
    server_id: u32,
    params: u16,
    insert_types: Option<&ParamTypes>,
) -> Result<Vec<u8>, PreparedError> {
    let ex = Execute::parse(payload, params)?;
    let mut out = match (insert_types, ex.types, params) {
        (Some(types), None, 1..) => {
            if types.wire().len() != 2 * usize::from(params) {
                return Err(PreparedError::WrongArguments(WHO));
            }
            let flag_at = HEADER + ex.null_bitmap.len();
            let mut out = Vec::with_capacity(payload.len() + types.wire().len());
            out.extend_from_slice(&payload[..flag_at]);
            out.push(1);
            out.extend_from_slice(types.wire());
            out.extend_from_slice(&payload[flag_at + 1..]);
            out
        }
        _ => payload.to_vec(),
    };
    set_statement_id(&mut out, server_id)?;
    Ok(out)
}

#[cfg(test)]
#[path = "execute_tests.rs"]
pub(super) mod tests;
