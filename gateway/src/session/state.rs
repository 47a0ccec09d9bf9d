//! Session state that follows the client across pooled server connections (docs/routing.md §11):
//! current database, session system variables (`SET NAMES`, `sql_mode`, `time_zone`, isolation,
//! `ob_read_consistency`, …), user variables, and the one-shot `SET TRANSACTION`.
//!
//! Every change gets a version number. A server connection carries a [`ConnSync`]: which client
//! state it was last brought up to date with, and at which version. [`ClientState::plan`] builds
//! what a connection lacks, in the order of docs/routing.md §11 — database (`COM_INIT_DB`), then one `SET` with
//! `sql_mode` first (it changes how the rest is read), the system variables in the order the
//! client set them, then the user variables — and [`ClientState::synced`] records that it ran.
//!
//! Inputs: the client's `SET` statements ([`ClientState::observe_statement`], parsed here since
//! the routing analysis does not keep assigned values), `USE` / `COM_INIT_DB`
//! ([`ClientState::set_database`]), and the session-state block of the server's OK packets
//! ([`ClientState::observe_ok`]), which overrides what the gateway inferred when present.

mod parse;
mod track;
mod value;

#[cfg(test)]
mod tests;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

pub use crate::sql::Mode;
pub use parse::{parse_set, Assignment, Target};
pub use track::{changes, Change};
pub use value::{collation_names, SetValue};

use crate::protocol::ProtocolError;
use crate::session::prepared::ConnStatements;

/// System variables that act on the next statement only: replayed once, like `SET TRANSACTION`.
const ONE_SHOT: [&str; 3] = ["insert_id", "rand_seed1", "rand_seed2"];

/// Prefix of OceanBase's own session variables (`ob_read_consistency`, `ob_query_timeout`, …):
/// synced to OceanBase server connections only; a MySQL/MariaDB server does not know them.
const OCEANBASE_PREFIX: &str = "ob_";

/// Variables that `SET NAMES` / `SET CHARACTER SET` set as a side effect.
const CHARSET_VARS: [&str; 4] =
    ["character_set_client", "character_set_connection", "character_set_results", "collation_connection"];

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A pool client id no session state has (what a connection taken for one statement of the
/// gateway's own, such as a KILL, is checked out as).
pub fn new_client_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// Where an assignment lives in the state: a later assignment to the same slot replaces it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Slot {
    Names,
    Charset,
    SessionTransaction,
    System(String),
    User(String),
}

impl Slot {
    /// An OceanBase session variable (`ob_*`).
    fn is_oceanbase(&self) -> bool {
        matches!(self, Slot::System(n) if n.starts_with(OCEANBASE_PREFIX))
    }
}

#[derive(Debug, Clone)]
struct Entry {
    slot: Slot,
    assignment: Assignment,
    version: u64,
}

/// The session state of one client, kept by the gateway.
#[derive(Debug, Clone)]
pub struct ClientState {
    id: u64,
    version: u64,
    database: Option<Arc<str>>,
    collation: u8,
    /// In version order.
    entries: Vec<Entry>,
    /// One-shot assignments held for the next synced connection.
    pending: Vec<Assignment>,
    mode: Mode,
}

/// What one server connection has of a client's state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConnSync {
    owner: Option<u64>,
    version: u64,
    database: Option<Arc<str>>,
    collation: Option<u8>,
    /// The client's prepared statements this connection has (cleared with the client state).
    pub statements: ConnStatements,
    /// Counts the resets of this server session: a connection whose generation moved has lost
    /// everything a previous statement left behind (`LAST_INSERT_ID()`, `FOUND_ROWS()`, …).
    generation: u64,
    /// The server is OceanBase (its greeting says so): it gets the `ob_*` session variables.
    oceanbase: bool,
}

/// One action of a sync, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SyncStep {
    /// `COM_INIT_DB` with this database.
    InitDb(String),
    /// `COM_QUERY` with this statement text.
    Query(Vec<u8>),
}

/// What a connection must run before the client's next request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncPlan {
    /// The actions, in order; each answers OK or ERR.
    pub steps: Vec<SyncStep>,
    version: u64,
    pending: usize,
}

impl SyncPlan {
    /// Nothing to send.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }
}

impl ConnSync {
    /// A freshly logged-in connection: `database` and `collation` as sent in the login.
    pub fn new(database: Option<&str>, collation: u8) -> Self {
        let database = database.map(Arc::from);
        ConnSync {
            owner: None,
            version: 0,
            database,
            collation: Some(collation),
            statements: ConnStatements::default(),
            generation: 0,
            oceanbase: false,
        }
    }

    /// Marks the connection's server as OceanBase (or not): only OceanBase connections get the
    /// client's `ob_*` session variables.
    pub fn on_oceanbase(mut self, oceanbase: bool) -> Self {
        self.oceanbase = oceanbase;
        self
    }

    /// Whether the server is OceanBase.
    pub fn is_oceanbase(&self) -> bool {
        self.oceanbase
    }

    /// After `COM_RESET_CONNECTION`: no client state any more; the database is kept by the server.
    pub fn reset(&mut self) {
        self.owner = None;
        self.version = 0;
        self.statements.clear();
        self.generation += 1;
    }

    /// After `COM_CHANGE_USER`: like a new login.
    pub fn relogin(&mut self, database: Option<&str>, collation: u8) {
        let generation = self.generation + 1;
        *self = ConnSync::new(database, collation).on_oceanbase(self.oceanbase);
        self.generation = generation;
    }

    /// How many times this server session was reset (see the field).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The client state this connection was last synced with.
    pub fn owner(&self) -> Option<u64> {
        self.owner
    }

    /// The database selected on the connection, as far as the gateway knows.
    pub fn database(&self) -> Option<&str> {
        self.database.as_deref()
    }
}

impl ClientState {
    /// The state of a client that logged in with `database` and handshake collation `collation`.
    pub fn new(database: Option<&str>, collation: u8) -> Self {
        ClientState {
            id: new_client_id(),
            version: 0,
            database: database.map(Arc::from),
            collation,
            entries: Vec::new(),
            pending: Vec::new(),
            mode: Mode::default(),
        }
    }

    /// Unique id of this state (the pool's client id).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Current version (number of recorded changes).
    pub fn version(&self) -> u64 {
        self.version
    }

    /// The current database.
    pub fn database(&self) -> Option<&str> {
        self.database.as_deref()
    }

    /// The current database, shared (for a statement's routing context).
    pub fn database_shared(&self) -> Option<Arc<str>> {
        self.database.clone()
    }

    /// The SQL-mode flags the client's statements are read with.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// [`Self::mode`], as the one mode statements are read in.
    pub fn modes(&self) -> &[Mode] {
        std::slice::from_ref(&self.mode)
    }

    /// The value of session system variable `name` set by the client (or reported by a server).
    pub fn system(&self, name: &str) -> Option<&SetValue> {
        // Names are stored folded to ASCII lower case: compare without folding a copy (this runs
        // for every command, for `wait_timeout`).
        self.entries
            .iter()
            .find(|e| matches!(&e.slot, Slot::System(n) if n.eq_ignore_ascii_case(name)))
            .map(|e| &e.assignment.value)
    }

    /// The value of user variable `@name`.
    pub fn user(&self, name: &str) -> Option<&SetValue> {
        self.find(&Slot::User(name.to_lowercase())).map(|e| &e.assignment.value)
    }

    /// `autocommit` as set by the client, when known.
    pub fn autocommit(&self) -> Option<bool> {
        self.system("autocommit").and_then(SetValue::as_bool)
    }

    /// Whether some value is an expression that each server evaluates again (`SET @t = NOW()`):
    /// replaying it elsewhere may give another value, so the caller may prefer to pin.
    pub fn has_expressions(&self) -> bool {
        self.entries.iter().any(|e| !e.assignment.value.is_literal() && !matches!(e.slot, Slot::SessionTransaction))
    }

    /// Whether `conn` holds this state up to its current version.
    pub fn in_sync(&self, conn: &ConnSync) -> bool {
        conn.owner == Some(self.id) && conn.version == self.version && self.pending.is_empty()
    }

    /// Whether `conn` is in this state's database (or the state names none).
    fn database_on(&self, conn: &ConnSync) -> bool {
        match (&self.database, &conn.database) {
            (None, _) => true,
            (Some(db), Some(on)) => Arc::ptr_eq(db, on) || db == on,
            (Some(_), None) => false,
        }
    }

    /// `USE db` or `COM_INIT_DB` succeeded (on `conn`, when it ran on one).
    pub fn set_database(&mut self, db: &str, conn: Option<&mut ConnSync>) {
        self.database = Some(Arc::from(db));
        if let Some(c) = conn {
            c.database = self.database.clone();
        }
    }

    /// Records a client `SET` statement that succeeded on `conn` (or that the gateway held, with
    /// `None`: one-shot assignments are then replayed before the next request). Returns `false`
    /// when the statement is not a `SET` the parser understands; the caller should then pin.
    pub fn observe_statement(&mut self, sql: &[u8], conn: Option<&mut ConnSync>) -> bool {
        let Some(items) = parse_set(sql, self.mode) else { return false };
        self.observe_set(items, conn);
        true
    }

    /// Records the assignments of a client `SET` ([`parse_set`]), as [`Self::observe_statement`].
    pub fn observe_set(&mut self, items: Vec<Assignment>, conn: Option<&mut ConnSync>) {
        let executed = conn.is_some();
        let was_in_sync = conn.as_deref().is_some_and(|c| self.in_sync(c));
        for a in items {
            self.apply(a, executed);
        }
        if let (true, Some(c)) = (was_in_sync, conn) {
            c.version = self.version;
        }
    }

    /// Records the assignments of a `SET` that the gateway answered itself, except those to the
    /// system variables named in `skip` (kept by the gateway only): they reach servers with the
    /// next sync.
    pub fn observe_answered_set(&mut self, items: Vec<Assignment>, skip: &[&str]) {
        for a in items {
            if !matches!(&a.target, Target::System(n) if skip.contains(&n.as_str())) {
                self.apply(a, false);
            }
        }
    }

    /// Applies the session-state block of a server OK that answered a client request on `conn`.
    /// Returns the number of changes recorded.
    pub fn observe_ok(&mut self, block: &[u8], conn: Option<&mut ConnSync>) -> Result<usize, ProtocolError> {
        let was_in_sync = conn.as_deref().is_some_and(|c| self.in_sync(c));
        let before = self.version;
        let mut schema = None;
        for change in changes(block)? {
            match change {
                Change::Schema(db) => schema = Some(db),
                Change::Variable { name, value } => self.server_variable(name, &value),
            }
        }
        let n = (self.version - before) as usize + usize::from(schema.is_some());
        if let Some(c) = conn {
            if let Some(db) = &schema {
                c.database = Some(Arc::from(db.as_str()));
            }
            if was_in_sync {
                c.version = self.version;
            }
        }
        if let Some(db) = schema {
            self.database = Some(db.into());
        }
        Ok(n)
    }

    /// What `conn` must run to hold this state.
    pub fn plan(&self, conn: &ConnSync) -> SyncPlan {
        // The usual statement: the connection holds this very state already (nothing changed
        // since it last ran one of this client's requests).
        if self.in_sync(conn) && self.database_on(conn) {
            return SyncPlan { steps: Vec::new(), version: self.version, pending: 0 };
        }
        let fresh = conn.owner != Some(self.id);
        let since = if fresh { 0 } else { conn.version };
        let mut steps = Vec::new();
        if let Some(db) = &self.database {
            if conn.database.as_deref() != Some(&**db) {
                steps.push(SyncStep::InitDb(db.to_string()));
            }
        }
        let changed: Vec<&Entry> = self
            .entries
            .iter()
            .filter(|e| {
                e.version > since && !(fresh && matches!(e.slot, Slot::User(_)) && e.assignment.value == SetValue::Null)
            })
            .filter(|e| conn.oceanbase || !e.slot.is_oceanbase())
            .collect();
        let is_mode = |e: &Entry| e.slot == Slot::System("sql_mode".into());
        let mut list: Vec<&Assignment> = Vec::new();
        if let Some(e) = changed.iter().find(|e| is_mode(e)) {
            steps.push(SyncStep::Query(set_statement(&[&e.assignment], false)));
        }
        let baseline = self.baseline(conn, fresh);
        list.extend(baseline.iter());
        let system = changed.iter().filter(|e| !is_mode(e) && !matches!(e.slot, Slot::User(_)));
        let user = changed.iter().filter(|e| matches!(e.slot, Slot::User(_)));
        for e in system.chain(user) {
            if e.slot == Slot::SessionTransaction {
                flush(&mut steps, &mut list, self.mode.nbe);
                steps.push(SyncStep::Query(transaction_statement("SET SESSION TRANSACTION ", &e.assignment.value)));
            } else {
                list.push(&e.assignment);
            }
        }
        flush(&mut steps, &mut list, self.mode.nbe);
        for a in &self.pending {
            steps.push(SyncStep::Query(match a.target {
                Target::NextTransaction => transaction_statement("SET TRANSACTION ", &a.value),
                _ => set_statement(&[a], self.mode.nbe),
            }));
        }
        SyncPlan { steps, version: self.version, pending: self.pending.len() }
    }

    /// Records that `conn` ran every step of `plan` successfully. (After a failed step the
    /// connection's state is unknown: drop it as broken.)
    pub fn synced(&mut self, conn: &mut ConnSync, plan: &SyncPlan) {
        conn.owner = Some(self.id);
        conn.version = plan.version;
        conn.collation = Some(self.collation);
        if let Some(db) = &self.database {
            // Shared text: a statement on a synced connection copies no name (and one that has
            // this very name already touches no reference count).
            if !conn.database.as_ref().is_some_and(|d| Arc::ptr_eq(d, db)) {
                conn.database = Some(Arc::clone(db));
            }
        }
        let n = plan.pending.min(self.pending.len());
        self.pending.drain(..n);
    }

    /// `SET NAMES` for the client's handshake collation when the connection logged in with
    /// another one (a connection shared by clients of different character sets).
    fn baseline(&self, conn: &ConnSync, fresh: bool) -> Option<Assignment> {
        let explicit = self.entries.iter().any(|e| matches!(e.slot, Slot::Names | Slot::Charset));
        if !fresh || explicit || conn.collation == Some(self.collation) {
            return None;
        }
        let Some((cs, co)) = collation_names(self.collation) else {
            tracing::warn!(
                collation = self.collation,
                "unknown handshake collation: not replayed on pooled connections"
            );
            return None;
        };
        Some(Assignment { target: Target::Names { collation: Some(co.into()) }, value: SetValue::Word(cs.into()) })
    }

    fn find(&self, slot: &Slot) -> Option<&Entry> {
        self.entries.iter().find(|e| &e.slot == slot)
    }

    fn apply(&mut self, a: Assignment, executed: bool) {
        let slot = match &a.target {
            Target::Global => return,
            Target::NextTransaction => {
                if !executed {
                    self.pending.push(a);
                }
                return;
            }
            Target::System(n) if ONE_SHOT.contains(&n.as_str()) => {
                if !executed {
                    self.pending.push(a);
                }
                return;
            }
            Target::System(n) => Slot::System(n.clone()),
            Target::User(n) => Slot::User(n.clone()),
            Target::Names { .. } => Slot::Names,
            Target::Charset => Slot::Charset,
            Target::SessionTransaction => Slot::SessionTransaction,
        };
        self.upsert(slot, a);
    }

    fn upsert(&mut self, slot: Slot, a: Assignment) {
        if matches!(slot, Slot::Names | Slot::Charset) {
            self.entries.retain(|e| match &e.slot {
                Slot::System(n) => !CHARSET_VARS.contains(&n.as_str()),
                Slot::Charset => false,
                _ => true,
            });
        }
        if slot == Slot::System("sql_mode".into()) {
            self.mode = match &a.value {
                SetValue::Word(w) if w.eq_ignore_ascii_case("DEFAULT") => Mode::default(),
                v => v.text().map_or(self.mode, |t| Mode::from_sql_mode(&t)),
            };
        }
        self.entries.retain(|e| e.slot != slot);
        self.version += 1;
        self.entries.push(Entry { slot, assignment: a, version: self.version });
    }

    /// A variable the server reported as changed: the ground truth, unless it is what the state
    /// already says, or a side effect of `SET NAMES` / `SET CHARACTER SET`.
    fn server_variable(&mut self, name: String, value: &[u8]) {
        let v = SetValue::from_server(&name, value);
        let slot = Slot::System(name.clone());
        match self.find(&slot) {
            Some(e) if e.assignment.value.same_as(&v) => return,
            None if CHARSET_VARS.contains(&name.as_str())
                && self.entries.iter().any(|e| matches!(e.slot, Slot::Names | Slot::Charset)) =>
            {
                return
            }
            _ => {}
        }
        if ONE_SHOT.contains(&name.as_str()) {
            return;
        }
        self.upsert(slot, Assignment { target: Target::System(name), value: v });
    }
}

/// Emits the collected assignments as one `SET` statement.
fn flush(steps: &mut Vec<SyncStep>, list: &mut Vec<&Assignment>, nbe: bool) {
    if !list.is_empty() {
        steps.push(SyncStep::Query(set_statement(list, nbe)));
        list.clear();
    }
}

/// `SET a = …, b = …` for system, user, `NAMES` and `CHARACTER SET` assignments.
pub fn set_statement(items: &[&Assignment], nbe: bool) -> Vec<u8> {
    let mut out = b"SET ".to_vec();
    for (i, a) in items.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(b", ");
        }
        render_item(&mut out, a, nbe);
    }
    out
}

fn render_item(out: &mut Vec<u8>, a: &Assignment, nbe: bool) {
    match &a.target {
        Target::System(name) => {
            out.extend_from_slice(b"@@session.");
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b" = ");
            a.value.render(out, nbe);
        }
        Target::User(name) => {
            value::user_var(out, name);
            out.extend_from_slice(b" = ");
            a.value.render(out, nbe);
        }
        Target::Names { collation } => {
            out.extend_from_slice(b"NAMES ");
            a.value.render(out, nbe);
            if let Some(c) = collation {
                out.extend_from_slice(b" COLLATE ");
                out.extend_from_slice(c.as_bytes());
            }
        }
        Target::Charset => {
            out.extend_from_slice(b"CHARACTER SET ");
            a.value.render(out, nbe);
        }
        Target::SessionTransaction | Target::NextTransaction | Target::Global => {}
    }
}

fn transaction_statement(prefix: &str, value: &SetValue) -> Vec<u8> {
    let mut out = prefix.as_bytes().to_vec();
    value.render(&mut out, false);
    out
}
