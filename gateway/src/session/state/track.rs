//! The session-state-change block of an OK packet (`SESSION_TRACK`): which system variables and
//! which schema the server reports as changed. These reports are the ground truth when present.

use crate::protocol::buf::Reader;
use crate::protocol::ProtocolError;

/// `SESSION_TRACK_SYSTEM_VARIABLES`.
const SYSTEM_VARIABLES: u8 = 0;
/// `SESSION_TRACK_SCHEMA`.
const SCHEMA: u8 = 1;

/// One change the server reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// A system variable and its new value (text).
    Variable {
        /// Name, lower case.
        name: String,
        /// Value as the server printed it.
        value: Vec<u8>,
    },
    /// The current database.
    Schema(String),
}

/// Parses the raw block (`OkPacket::session_state`); entries of other types (GTIDs, transaction
/// state, state-change flag) are skipped.
pub fn changes(block: &[u8]) -> Result<Vec<Change>, ProtocolError> {
    let mut r = Reader::new(block);
    let mut out = Vec::new();
    while r.remaining() > 0 {
        let kind = r.u8()?;
        let data = r.lenenc_bytes()?;
        let mut d = Reader::new(data);
        match kind {
            SYSTEM_VARIABLES => {
                let name = String::from_utf8_lossy(d.lenenc_bytes()?).to_ascii_lowercase();
                let value = d.lenenc_bytes()?.to_vec();
                out.push(Change::Variable { name, value });
            }
            SCHEMA => out.push(Change::Schema(String::from_utf8_lossy(d.lenenc_bytes()?).into_owned())),
            _ => {}
        }
    }
    Ok(out)
}
