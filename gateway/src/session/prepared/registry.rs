//! The client's prepared statements: gateway-assigned ids, text, shapes, bound types, long data.

use std::collections::HashMap;

/// The hasher of maps keyed by statement ids the gateway assigned.
pub type IdHasher = foldhash::fast::RandomState;
use std::sync::Arc;

use super::answer::PrepareOk;
use super::long_data::{self, LongData};
use super::PreparedError;
use crate::session::kill;
use crate::sql::{self, Analysed, Mode, StmtKind};

/// MariaDB's "the statement prepared last" id (direct execution).
pub const LAST_STMT_ID: u32 = u32::MAX;

/// Default bound of the long data buffered per session (MySQL's `max_allowed_packet` default).
pub const DEFAULT_LONG_DATA_LIMIT: usize = 64 << 20;

/// Prepared statements one routed session may hold, of each protocol (binary, text): MariaDB's
/// default `max_prepared_stmt_count`. The server's own limit counts the statements prepared on
/// its connections, and a routed session's statements outlive those connections (they are
/// prepared again where they run), so without this the gateway's memory would be the bound.
pub const MAX_STATEMENTS: usize = 16_382;

/// Statement text one routed session's prepared statements may hold altogether, of each
/// protocol: with [`MAX_STATEMENTS`], what bounds a session's registry in memory.
pub const MAX_TEXT_BYTES: usize = 64 << 20;

/// Whether one more statement of `sql.len()` bytes fits a session holding `count` statements
/// of `bytes` bytes of text (ER 1461 otherwise).
pub fn admits(count: usize, bytes: usize, sql: &str) -> Result<(), PreparedError> {
    if count >= MAX_STATEMENTS {
        return Err(PreparedError::TooMany(MAX_STATEMENTS as u32));
    }
    if bytes.saturating_add(sql.len()) > MAX_TEXT_BYTES {
        return Err(PreparedError::TooMuchText(MAX_TEXT_BYTES >> 20));
    }
    Ok(())
}

/// The client command a statement id came with; names the server function in error messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// COM_STMT_EXECUTE.
    Execute,
    /// COM_STMT_FETCH.
    Fetch,
    /// COM_STMT_RESET.
    Reset,
    /// COM_STMT_CLOSE (an unknown id is ignored, no answer).
    Close,
    /// COM_STMT_SEND_LONG_DATA (an unknown id is ignored, no answer).
    SendLongData,
}

impl Command {
    /// The name MariaDB puts in ER_UNKNOWN_STMT_HANDLER.
    pub fn server_name(self) -> &'static str {
        match self {
            Command::Execute => "mysqld_stmt_execute",
            Command::Fetch => "mysqld_stmt_fetch",
            Command::Reset => "mysqld_stmt_reset",
            Command::Close => "mysqld_stmt_close",
            Command::SendLongData => "mysqld_stmt_send_long_data",
        }
    }

    /// Whether the command has an answer (CLOSE and SEND_LONG_DATA have none, even for errors).
    pub fn answers(self) -> bool {
        !matches!(self, Command::Close | Command::SendLongData)
    }
}

/// Parameter types as the client last bound them: (type, flags) per parameter, as on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamTypes(Arc<[u8]>);

impl ParamTypes {
    /// From the 2-bytes-per-parameter block of an EXECUTE.
    pub fn new(wire: &[u8]) -> Self {
        ParamTypes(Arc::from(wire))
    }

    /// The wire bytes.
    pub fn wire(&self) -> &[u8] {
        &self.0
    }

    /// Type byte and unsigned flag of parameter `i`.
    pub fn get(&self, i: usize) -> Option<(u8, bool)> {
        let b = self.0.get(2 * i..2 * i + 2)?;
        Some((b[0], b[1] & 0x80 != 0))
    }
}

/// One prepared statement of the client.
#[derive(Debug, Clone)]
pub struct Statement {
    sql: Arc<str>,
    params: u16,
    columns: u16,
    kind: StmtKind,
    /// The text analysed in the session SQL mode of its latest execution, kept for the next.
    analysed: Arc<Analysed>,
    /// A prepared KILL: it names a gateway id, answered by the gateway.
    kill: Option<kill::Template>,
    types: Option<ParamTypes>,
    types_version: u32,
    long_data: LongData,
    error: Option<PreparedError>,
}

impl Statement {
    fn new(sql: &str, ok: &PrepareOk) -> Self {
        let analysed = Analysed::new(sql, Mode::default());
        Statement {
            sql: Arc::from(sql),
            params: ok.params,
            columns: ok.columns,
            kind: analysed.analysis().kind,
            analysed: Arc::new(analysed),
            kill: kill::template(sql),
            types: None,
            types_version: 0,
            long_data: LongData::default(),
            error: None,
        }
    }

    /// The statement text (what a lazy re-prepare sends, what routing analyses).
    pub fn sql(&self) -> &str {
        &self.sql
    }

    /// The statement text, shared (kept by a request while the registry changes).
    pub fn shared_sql(&self) -> Arc<str> {
        Arc::clone(&self.sql)
    }

    /// The text's analysis as a session in SQL `mode` reads it, placeholders unbound: the one
    /// kept when the latest execution was in the same mode, else read again and kept.
    pub fn analysed(&mut self, mode: Mode) -> Arc<Analysed> {
        if self.analysed.mode() != mode {
            self.analysed = Arc::new(Analysed::new(&self.sql, mode));
        }
        Arc::clone(&self.analysed)
    }

    /// The KILL this statement is, if it is one (`KILL … ?` binds its id at execution).
    pub fn kill(&self) -> Option<kill::Template> {
        self.kill
    }

    /// Number of `?` parameters.
    pub fn params(&self) -> u16 {
        self.params
    }

    /// Number of result columns.
    pub fn columns(&self) -> u16 {
        self.columns
    }

    /// Statement kind of the text.
    pub fn kind(&self) -> StmtKind {
        self.kind
    }

    /// The parameter types last bound, if any EXECUTE sent them.
    pub fn types(&self) -> Option<&ParamTypes> {
        self.types.as_ref()
    }

    /// Changes each time different types are bound (0: none yet); compared by [`super::ConnStatements`].
    pub fn types_version(&self) -> u32 {
        self.types_version
    }

    /// Records the types an EXECUTE sent (`new_params_bound_flag` = 1).
    pub fn bind_types(&mut self, wire: &[u8]) {
        if self.types.as_ref().is_some_and(|t| t.wire() == wire) {
            return;
        }
        self.types = Some(ParamTypes::new(wire));
        self.types_version = self.types_version.wrapping_add(1).max(1);
    }

    /// Buffered long data.
    pub fn long_data(&self) -> &LongData {
        &self.long_data
    }

    /// The error the next EXECUTE must return instead of running (long-data trouble); it stays
    /// until COM_STMT_RESET, as on the server.
    pub fn pending_error(&self) -> Option<&PreparedError> {
        self.error.as_ref()
    }

    /// Takes the buffered long data out (an EXECUTE consumes it, and replays it on whichever
    /// connection it goes to).
    pub fn take_long_data(&mut self) -> LongData {
        std::mem::take(&mut self.long_data)
    }

    /// After an EXECUTE was sent: its long data is consumed (its open cursor, if any, is
    /// replaced: [`Registry::end_cursor`]).
    pub fn executed(&mut self) {
        self.long_data.clear();
    }

    /// COM_STMT_RESET: long data and the pending error are gone (and the cursor:
    /// [`Registry::end_cursor`]).
    pub fn reset(&mut self) {
        self.long_data.clear();
        self.error = None;
    }
}

/// The prepared statements of one client session.
#[derive(Debug, Clone)]
pub struct Registry {
    next: u32,
    /// By client id (ids are the gateway's, not the client's: foldhash's fast variant, looked up
    /// for every EXECUTE).
    statements: HashMap<u32, Statement, IdHasher>,
    /// Statements with an open cursor: client id → the connection (session-chosen id) holding
    /// it. The one record of open cursors: the session keeps its connection while any is open.
    cursors: HashMap<u32, u64, IdHasher>,
    last: Option<u32>,
    long_data_limit: usize,
    /// Bytes of statement text held ([`MAX_TEXT_BYTES`]).
    text_bytes: usize,
}

impl Default for Registry {
    fn default() -> Self {
        Registry::new(DEFAULT_LONG_DATA_LIMIT)
    }
}

impl Registry {
    /// An empty registry buffering at most `long_data_limit` bytes of long data.
    pub fn new(long_data_limit: usize) -> Self {
        Registry {
            next: 1,
            statements: HashMap::default(),
            cursors: HashMap::default(),
            last: None,
            long_data_limit,
            text_bytes: 0,
        }
    }

    /// Why a COM_STMT_PREPARE of `sql` is refused without asking a server: `BEGIN` (1295), or
    /// the session's statements would exceed [`MAX_STATEMENTS`] or [`MAX_TEXT_BYTES`] (1461).
    pub fn refuse_prepare(&self, sql: &str) -> Option<PreparedError> {
        if sql::analyze(sql).kind == StmtKind::Begin {
            return Some(PreparedError::Unsupported);
        }
        admits(self.statements.len(), self.text_bytes, sql).err()
    }

    /// Registers a statement the server prepared; returns its client id (never reused).
    pub fn register(&mut self, sql: &str, ok: &PrepareOk) -> Result<u32, PreparedError> {
        let id = self.next;
        if id == LAST_STMT_ID {
            return Err(PreparedError::TooMany(self.statements.len() as u32));
        }
        admits(self.statements.len(), self.text_bytes, sql)?;
        self.next += 1;
        self.text_bytes += sql.len();
        self.statements.insert(id, Statement::new(sql, ok));
        self.last = Some(id);
        Ok(id)
    }

    /// The client id a command names: `0xFFFFFFFF` is MariaDB's "the last prepared statement".
    pub fn resolve(&self, wire_id: u32) -> Option<u32> {
        if wire_id == LAST_STMT_ID {
            return self.last.filter(|id| self.statements.contains_key(id));
        }
        self.statements.contains_key(&wire_id).then_some(wire_id)
    }

    /// The statement a command names, or ER_UNKNOWN_STMT_HANDLER with MariaDB's text.
    pub fn lookup(&mut self, wire_id: u32, cmd: Command) -> Result<(u32, &mut Statement), PreparedError> {
        let unknown = || PreparedError::UnknownStatement { handle: wire_id.to_string(), command: cmd.server_name() };
        let id = if wire_id == LAST_STMT_ID { self.last.ok_or_else(unknown)? } else { wire_id };
        self.statements.get_mut(&id).map(|s| (id, s)).ok_or_else(unknown)
    }

    /// The statement with client id `id`.
    pub fn get(&self, id: u32) -> Option<&Statement> {
        self.statements.get(&id)
    }

    /// COM_STMT_CLOSE: forgets the statement (the caller closes it on every connection).
    pub fn close(&mut self, id: u32) -> Option<Statement> {
        if self.last == Some(id) {
            self.last = None;
        }
        self.cursors.remove(&id);
        let closed = self.statements.remove(&id);
        if let Some(s) = &closed {
            self.text_bytes -= s.sql.len();
        }
        closed
    }

    /// The connection holding statement `id`'s open cursor.
    pub fn cursor(&self, id: u32) -> Option<u64> {
        self.cursors.get(&id).copied()
    }

    /// The EXECUTE of statement `id` on connection `conn` opened a cursor.
    pub fn open_cursor(&mut self, id: u32, conn: u64) {
        if self.statements.contains_key(&id) {
            self.cursors.insert(id, conn);
        }
    }

    /// Statement `id`'s cursor is gone: exhausted, reset, or replaced by another EXECUTE.
    pub fn end_cursor(&mut self, id: u32) {
        if !self.cursors.is_empty() {
            self.cursors.remove(&id);
        }
    }

    /// Whether a statement has an open cursor.
    pub fn has_cursor(&self) -> bool {
        !self.cursors.is_empty()
    }

    /// The connection holding the cursors is gone: no statement has one.
    pub fn clear_cursors(&mut self) {
        self.cursors.clear();
    }

    /// Number of open statements.
    pub fn len(&self) -> usize {
        self.statements.len()
    }

    /// Whether no statement is open.
    pub fn is_empty(&self) -> bool {
        self.statements.is_empty()
    }

    /// Bytes of long data buffered over all statements.
    pub fn long_data_bytes(&self) -> usize {
        self.statements.values().map(|s| s.long_data.bytes()).sum()
    }

    /// COM_STMT_SEND_LONG_DATA (the whole payload, command byte first). Nothing is answered:
    /// an unknown statement or a short packet is ignored, a bad parameter number or too much
    /// data becomes the statement's pending error (reported by the next EXECUTE).
    pub fn long_data(&mut self, payload: &[u8]) {
        let Some((wire_id, param, data)) = long_data::parse(payload) else { return };
        let room = self.long_data_limit.saturating_sub(self.long_data_bytes());
        let Ok((_, stmt)) = self.lookup(wire_id, Command::SendLongData) else { return };
        if stmt.error.is_some() {
            return;
        }
        if param >= stmt.params {
            stmt.error = Some(PreparedError::WrongArguments(Command::SendLongData.server_name()));
        } else if data.len() > room {
            stmt.long_data.clear();
            stmt.error = Some(PreparedError::LongDataTooLarge);
        } else {
            stmt.long_data.push(param, data);
        }
    }
}

#[cfg(test)]
#[path = "registry_tests.rs"]
mod tests;
