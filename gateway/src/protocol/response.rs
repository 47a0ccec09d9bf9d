//! Tracks a server's answer frame by frame to find where it ends, without buffering it whole.

use super::buf::Reader;
use super::command::Shape;
use super::frame::MAX_FRAME;
use super::message::{is_terminator, terminator_status, EOF, ERR, LOCAL_INFILE, OK};
use super::{status, ProtocolError};

/// What the forwarder must do after a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The answer goes on.
    More,
    /// The answer is complete.
    Done,
    /// The server asked for a LOCAL INFILE: relay the client's file packets, then go on.
    LocalInfile,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    ResultStart,
    Columns { left: u64 },
    ColumnsEof,
    Rows,
    PrepareStart,
    Count { left: u32 },
    DefsUntilTerminator,
    Single,
    Done,
}

/// Result of a COM_STMT_PREPARE, as the server reported it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prepared {
    /// Server statement id.
    pub statement_id: u32,
    /// Number of result columns.
    pub columns: u16,
    /// Number of `?` parameters.
    pub params: u16,
}

/// Frame-by-frame state machine over one command's answer.
#[derive(Debug)]
pub struct ResponseTracker {
    state: State,
    deprecate_eof: bool,
    in_continuation: bool,
    /// The command was a COM_STMT_EXECUTE that asked for a cursor: a column EOF with
    /// SERVER_STATUS_CURSOR_EXISTS then means "cursor opened, rows come by COM_STMT_FETCH".
    cursor_requested: bool,
    /// Server status of the last OK/EOF seen (transaction state, autocommit, …).
    pub last_status: Option<u16>,
    /// Set when the answer was a successful prepare.
    pub prepared: Option<Prepared>,
    /// Whether an ERR packet ended the answer.
    pub failed: bool,
    /// The MySQL error number of the ERR packet that ended the answer.
    pub error_code: Option<u16>,
    /// Raw payload of the last OK packet (also the OK that ends a result set with DEPRECATE_EOF),
    /// `None` when the last result ended with a classic EOF: parse it with `OkPacket::parse` and
    /// the connection's capabilities for the session-state block and last insert id.
    pub last_ok: Option<Vec<u8>>,
}

impl ResponseTracker {
    /// A tracker for an answer of `shape` on a connection that negotiated DEPRECATE_EOF or not.
    pub fn new(shape: Shape, deprecate_eof: bool) -> Self {
        let state = match shape {
            Shape::None => State::Done,
            Shape::Single => State::Single,
            Shape::Results => State::ResultStart,
            Shape::Fetch => State::Rows,
            Shape::Prepare => State::PrepareStart,
            Shape::FieldList => State::DefsUntilTerminator,
        };
        ResponseTracker {
            state,
            deprecate_eof,
            in_continuation: false,
            cursor_requested: false,
            last_status: None,
            prepared: None,
            failed: false,
            error_code: None,
            last_ok: None,
        }
    }

    /// A tracker for the answer to the command `payload` (its first byte is the command): a
    /// COM_STMT_EXECUTE whose flags ask for a cursor may end after its column definitions.
    pub fn for_command(shape: Shape, payload: &[u8], deprecate_eof: bool) -> Self {
        let mut t = Self::new(shape, deprecate_eof);
        t.cursor_requested = asks_for_cursor(payload);
        t
    }

    /// Whether the answer is complete before any frame (commands without an answer).
    pub fn is_done(&self) -> bool {
        self.state == State::Done && !self.in_continuation
    }

    /// Whether the last frame was a full 16 MiB frame: the packet goes on in the next one.
    pub fn in_continuation(&self) -> bool {
        self.in_continuation
    }

    /// Feeds one frame's payload (the whole frame, at most 16 MiB).
    pub fn on_frame(&mut self, payload: &[u8]) -> Result<Step, ProtocolError> {
        let continued = self.in_continuation;
        self.in_continuation = payload.len() == MAX_FRAME;
        if continued {
            return Ok(if self.is_done() { Step::Done } else { Step::More });
        }
        let step = self.on_packet_start(payload)?;
        if step == Step::Done && self.in_continuation {
            // A terminal packet that spans frames: finished once its last frame has passed.
            return Ok(Step::More);
        }
        Ok(step)
    }

    fn on_packet_start(&mut self, p: &[u8]) -> Result<Step, ProtocolError> {
        let first = *p.first().ok_or(ProtocolError::Malformed("empty packet in a server answer"))?;
        match self.state {
            State::Done => Err(ProtocolError::Malformed("server sent more than the answer")),
            State::Single => {
                if first == OK && p.len() >= 7 {
                    self.last_status = ok_status(p).ok();
                    self.last_ok = Some(p.to_vec());
                } else if first == EOF && p.len() < 9 {
                    self.last_status = super::message::eof_status(p).ok();
                }
                if first == ERR {
                    self.on_err(p);
                }
                Ok(self.finish())
            }
            State::ResultStart => self.result_start(first, p),
            State::Columns { left } => {
                self.state = match (left - 1, self.deprecate_eof) {
                    (0, true) => State::Rows,
                    (0, false) => State::ColumnsEof,
                    (n, _) => State::Columns { left: n },
                };
                Ok(Step::More)
            }
            State::ColumnsEof => {
                if first != EOF {
                    return Err(ProtocolError::Malformed("expected EOF after column definitions"));
                }
                let st = super::message::eof_status(p)?;
                // Inside a stored procedure that has a cursor open, MariaDB sets CURSOR_EXISTS on
                // the column EOF of an ordinary result set: its rows follow all the same.
                if st & status::CURSOR_EXISTS != 0 && self.cursor_requested {
                    self.last_status = Some(st);
                    return Ok(self.after_result(st));
                }
                self.state = State::Rows;
                Ok(Step::More)
            }
            State::Rows => self.row(first, p),
            State::PrepareStart => self.prepare_start(first, p),
            State::Count { left } => {
                if left <= 1 {
                    return Ok(self.finish());
                }
                self.state = State::Count { left: left - 1 };
                Ok(Step::More)
            }
            State::DefsUntilTerminator => {
                if first == ERR {
                    self.on_err(p);
                    return Ok(self.finish());
                }
                if is_terminator(first, p.len(), self.deprecate_eof) {
                    self.last_status = terminator_status(p, self.deprecate_eof).ok();
                    self.note_terminator(p);
                    return Ok(self.finish());
                }
                Ok(Step::More)
            }
        }
    }

    fn result_start(&mut self, first: u8, p: &[u8]) -> Result<Step, ProtocolError> {
        match first {
            OK => {
                let st = ok_status(p)?;
                self.last_status = Some(st);
                self.last_ok = Some(p.to_vec());
                Ok(self.after_result(st))
            }
            // MariaDB's progress report (MARIADB_CLIENT_PROGRESS): the statement goes on.
            ERR if p.get(1..3) == Some(&[0xFF, 0xFF]) => Ok(Step::More),
            ERR => {
                self.on_err(p);
                Ok(self.finish())
            }
            LOCAL_INFILE => Ok(Step::LocalInfile),
            _ => {
                let n = Reader::new(p).lenenc()?;
                if n == 0 {
                    return Err(ProtocolError::Malformed("result set with zero columns"));
                }
                self.state = State::Columns { left: n };
                Ok(Step::More)
            }
        }
    }

    fn row(&mut self, first: u8, p: &[u8]) -> Result<Step, ProtocolError> {
        if first == ERR {
            self.on_err(p);
            return Ok(self.finish());
        }
        if is_terminator(first, p.len(), self.deprecate_eof) {
            let st = terminator_status(p, self.deprecate_eof)?;
            self.last_status = Some(st);
            self.note_terminator(p);
            return Ok(self.after_result(st));
        }
        Ok(Step::More)
    }

    fn prepare_start(&mut self, first: u8, p: &[u8]) -> Result<Step, ProtocolError> {
        if first == ERR {
            self.on_err(p);
            return Ok(self.finish());
        }
        let mut r = Reader::new(p);
        if r.u8()? != OK {
            return Err(ProtocolError::Malformed("unexpected prepare answer"));
        }
        let statement_id = r.u32()?;
        let columns = r.u16()?;
        let params = r.u16()?;
        self.prepared = Some(Prepared { statement_id, columns, params });
        // Definitions follow, each group closed by an EOF unless DEPRECATE_EOF was negotiated.
        let eofs = u32::from(!self.deprecate_eof) * (u32::from(params > 0) + u32::from(columns > 0));
        let left = u32::from(params) + u32::from(columns) + eofs;
        if left == 0 {
            return Ok(self.finish());
        }
        self.state = State::Count { left };
        Ok(Step::More)
    }

    fn on_err(&mut self, p: &[u8]) {
        self.failed = true;
        self.error_code = p.get(1..3).map(|c| u16::from_le_bytes([c[0], c[1]]));
    }

    /// A result-set terminator: an OK (DEPRECATE_EOF) is kept, a classic EOF carries none.
    fn note_terminator(&mut self, p: &[u8]) {
        self.last_ok = (self.deprecate_eof && p.len() > 5).then(|| p.to_vec());
    }

    fn after_result(&mut self, st: u16) -> Step {
        if st & status::MORE_RESULTS_EXISTS != 0 {
            self.state = State::ResultStart;
            Step::More
        } else {
            self.finish()
        }
    }

    fn finish(&mut self) -> Step {
        self.state = State::Done;
        Step::Done
    }
}

/// Whether a command payload is a COM_STMT_EXECUTE whose flags byte asks for a cursor
/// (`CURSOR_TYPE_*` in its low bits; MariaDB's 0x80 flag means something else).
pub fn asks_for_cursor(payload: &[u8]) -> bool {
    payload.first() == Some(&super::command::STMT_EXECUTE) && payload.get(5).is_some_and(|f| f & 0x0F != 0)
}

/// Status flags of an OK packet payload.
pub fn ok_status(p: &[u8]) -> Result<u16, ProtocolError> {
    let mut r = Reader::new(p);
    r.u8()?;
    r.lenenc()?;
    r.lenenc()?;
    r.u16()
}

#[cfg(test)]
#[path = "response_tests.rs"]
mod tests;
