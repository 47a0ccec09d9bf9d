//! Routed sessions: with `[routing]` configured, each client request is planned on its own and
//! served by a pooled server connection of the chosen server (docs/routing.md §1, §8, §6), so that
//! one client connection is many server connections and the client cannot tell.
//!
//! * Login: the client is authenticated by the gateway, then its login is validated on a
//!   tenant server through the pool (its credentials, its initial database).
//! * Requests: [`dispatch`] picks the target (held connection, previous server, or the route
//!   decision) and takes a pooled connection of it; [`attempt`] brings its session state up to
//!   date ([`crate::session::state`]), replays a deferred `BEGIN`, sends and relays; [`learn`] reads
//!   what the answer says; [`failover`] orders candidates and retries when that is safe.
//! * Transactions and pins ([`transaction`]): the session keeps one connection while the server
//!   reports a transaction or a prepared statement's cursor is open, and for good after
//!   temporary tables, `LOCK TABLES`, user locks, unparsed `SET`s, `PREPARE … FROM @v` of a
//!   value the gateway does not know, and `COM_SET_OPTION`.
//! * Prepared statements ([`statements`], [`text_statements`], [`statement_conn`]): client ids,
//!   each EXECUTE routed by its bound values, prepared on a connection when first run there.
//! * Local answers ([`local`]); SHOW PROCESSLIST and KILL on gateway ids are the command loop's
//!   ([`crate::session::gateway_ids`]).
//! * The client session's `wait_timeout` / `interactive_timeout` ([`idle_timeout`]): an idle
//!   session is closed as its server would close it.
//! * Kernel splice ([`splice`]): with `[dataplane] splice`, a session pinned for good is handed
//!   to the kernel at the end of the answer that pinned it, when nothing else keeps it here.

mod attempt;
mod dependent;
mod dispatch;
mod execute;
mod failover;
mod idle_timeout;
mod learn;
mod link;
mod local;
mod parts;
mod query;
pub(crate) mod registry;
mod request;
pub(crate) mod route_log;
mod splice;
mod statement_conn;
mod statements;
mod text_statements;
pub(crate) mod transaction;
mod xa_start;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use tracing::{debug, info};

use super::account::{Account, Logins};
use super::client_auth::ClientLogin;
use super::client_side::{ClientLeg, ClientSide, Waited};
use super::command_loop;
use super::gateway_ids;
use super::glance::Glance;
use super::kind::{Flow, OwnKill, SessionKind};
use super::next_command::NextCommand;
use super::pool::{scrubs_done, Homes, PooledConn};
use super::state::ClientState;
use super::{SessionError, Shared};
use crate::planner::{Planner, RouteMemo, StatementContext};
use crate::protocol::codes;
use crate::protocol::command;
use crate::protocol::frame::Wire;
use crate::protocol::handshake::parse_change_user;
use crate::protocol::message::{ErrPacket, OkPacket};
use crate::tls::Stream;
use registry::{Registration, SessionInfo};
use transaction::{PinReason, StickyReason, Transaction};

/// One routed client session.
pub struct RoutedSession<'a> {
    /// The client's connection and login. Its `ext`: the MariaDB extended capabilities the client
    /// asked for, of those offered ([`crate::protocol::ext_caps::ROUTED`]); its server
    /// connections log in with them.
    front: ClientSide<'a>,
    shared: &'a Shared,
    /// The planner of the session's cluster (replaced by a COM_CHANGE_USER to another cluster).
    planner: Planner,
    /// What the planner remembers of the session's last table (of `planner`'s cluster).
    memo: RouteMemo,
    /// The shapes of the session's last statements ([`crate::sql::shape::ShapeMemo`]).
    shapes: crate::sql::shape::ShapeMemo,
    /// Who the session logs in to its servers as.
    account: Account,
    /// The pools the session's checkouts came from last.
    homes: Homes,
    state: ClientState,
    route_vars: local::RouteVars,
    txn: Transaction,
    /// What the session keeps of its servers between requests.
    link: link::ServerLink,
    /// When the current request was read (metrics: end-to-end time).
    started: Instant,
    /// When the current request's answer was complete, if that was timed (its end-to-end time):
    /// the session list's idle time and the idle timer start there, without reading the clock
    /// again.
    ended: Option<Instant>,
    /// How long planning the current request took, when it was planned (metrics).
    route_time: Option<std::time::Duration>,
    /// The session's latest clock reading: the request's start, then the end of its planning. A
    /// checkout measures a parked connection's idle time from it, without reading the clock again.
    clock: Instant,
    /// The `[log]` settings of the current request (read once per request).
    logging: Logging,
    /// Requests routed so far (the route log's `seq`).
    requests: u64,
    reg: Registration<'a>,
    /// The session's hold of its kill switch (`reg`'s), watched between and during requests.
    killed: super::relay::KillSignal,
    /// What the session list was last told of the session's stickiness ([`learn`]).
    noted: registry::Sticky,
    /// The client's prepared statements (binary and text).
    ps: parts::Statements,
    /// Kernel splice once pinned for good ([`splice`]).
    splice: splice::PinSplice,
    /// The servers' idle limit for this client, unless it sets `wait_timeout`, and the session's
    /// idle timer ([`idle_timeout`]).
    idle: idle_timeout::Idle,
}

/// Serves an authenticated client in routed mode until it quits, is killed or fails.
pub async fn serve(
    client: &mut Wire<Stream>,
    shared: &Shared,
    planner: Planner,
    id: u32,
    (peer, dialled): (SocketAddr, Option<SocketAddr>),
    login: ClientLogin,
) -> Result<(), SessionError> {
    let seq = login.seq;
    let account = Account::of(shared, &login, Logins::WithTenant);
    let info = SessionInfo {
        user: account.user.to_string(),
        cluster: login.name.cluster.clone().unwrap_or_default(),
        tenant: account.tenant.to_string(),
        host: peer.to_string(),
        db: account.database.clone(),
        command: "Connect",
        since: Instant::now(),
        info: None,
        current: None,
    };
    let reg = shared.sessions.register(id, info);
    let state = ClientState::new(account.database.as_deref(), account.charset);
    let client_tls = client.io.is_tls();
    let ext = login.response.ext_capabilities & crate::protocol::ext_caps::ROUTED;
    let front = ClientSide::new(client, id, (peer, dialled), (login.capabilities, ext), login.salt, shared);
    let mut s = RoutedSession {
        front,
        shared,
        planner,
        memo: RouteMemo::default(),
        shapes: crate::sql::shape::ShapeMemo::default(),
        homes: Homes::default(),
        account,
        state,
        route_vars: local::RouteVars::default(),
        // Until the login is validated on a server (`validate_login`, which reads it from there).
        txn: Transaction::starting(shared.profile().status),
        link: link::ServerLink::default(),
        started: Instant::now(),
        clock: Instant::now(),
        ended: None,
        route_time: None,
        logging: Logging::of(&shared.config()),
        requests: 0,
        killed: Some(reg.killed.clone()),
        noted: registry::Sticky::default(),
        reg,
        ps: parts::Statements::default(),
        // The gateway does not terminate TLS yet: the client leg is plain.
        splice: splice::PinSplice::new(shared, client_tls),
        idle: idle_timeout::Idle::default(),
    };
    if let Err(err) = Box::pin(s.validate_login()).await {
        return Err(SessionError::Refused { err, seq });
    }
    let ok = OkPacket::with_status(s.txn.status()).encode(s.front.caps);
    s.front.wire.write_packet(seq, &ok).await.map_err(SessionError::Client)?;
    info!(user = %s.account.user, tenant = %s.account.tenant, db = ?s.account.database, "routed session open");
    // On a session thread the client's socket moves to its ring (its server connections do
    // when they first carry a request there, `attempt`).
    s.front.wire.io.to_ring().map_err(|e| SessionError::Client(crate::protocol::ProtocolError::Io(e)))?;
    s.reg.idle(s.state.database(), Instant::now());
    // A kill ends an idle session at once and a streaming answer with the kill's error (the
    // relay watches the signal); other steps of a request finish first.
    let result = command_loop::run(&mut s).await;
    // Killed or failed: connections in use are closed (in-flight ones close themselves). Else
    // they are reset before they are idle again: nothing of this client stays on them.
    if let Some(mut held) = s.link.take_held() {
        if result.is_err() || s.reg.killed.is_set() {
            held.mark_broken();
        } else {
            held.scrub_on_release();
        }
    }
    // Parked connections go back to their pools first, to be reset with the others. Nobody
    // waits for these resets: the client is gone.
    s.homes.unpark();
    let _ = shared.pool.release_client(s.state.id());
    result
}

/// Whether a routed session of this gateway may be handed to the kernel splice once pinned (its
/// client leg plain): such a session stays on tokio's reactor.
pub fn may_splice(shared: &Shared) -> bool {
    splice::PinSplice::new(shared, false).possible()
}

impl SessionKind for RoutedSession<'_> {
    fn front(&self) -> &ClientSide<'_> {
        &self.front
    }

    fn leg(&mut self) -> ClientLeg<'_> {
        self.front.leg()
    }

    fn account(&self) -> &Account {
        &self.account
    }

    /// The client's next command, unless it stays idle longer than its `wait_timeout`.
    async fn next(&mut self) -> Result<Option<NextCommand>, SessionError> {
        let limit = idle_timeout::limit(&self.state, self.idle.defaults.for_client(self.front.caps));
        let since = self.ended.take().map_or_else(tokio::time::Instant::now, tokio::time::Instant::from_std);
        let idle_out = self.idle.expired(since + limit);
        match self.front.next_command(self.shared, &mut self.killed, idle_out).await? {
            Waited::Command(next) => Ok(Some(next)),
            Waited::Closed | Waited::Killed => Ok(None),
            Waited::Ended(()) => {
                info!(idle_secs = limit.as_secs(), "wait_timeout passed: session closed");
                Ok(None)
            }
        }
    }

    /// The client's SQL mode (docs/routing.md §11).
    fn modes(&self) -> &[crate::sql::Mode] {
        self.state.modes()
    }

    fn caller(&self) -> super::internal::Caller<'_> {
        super::internal::Caller {
            shared: self.shared,
            planner: Some(&self.planner),
            ctx: self.context(),
            client_caps: self.front.caps,
            user: &self.account.user,
            id: self.front.id,
        }
    }

    /// Shows a command as running in the session list; a prepared statement's command shows its
    /// statement's text itself ([`statements`]).
    fn started(&mut self, next: &NextCommand, text: &str) {
        // One clock reading: the statement's time (metrics, slow log) and the process list's.
        self.started = Instant::now();
        self.clock = self.started;
        self.logging = Logging::of(self.front.config.current(&self.shared.live));
        match next.cmd {
            command::QUERY => self.reg.start_text("Query", text, self.started),
            cmd if statements::is_statement_command(cmd) => {}
            cmd => self.reg.start(command::process_name(cmd), None),
        }
    }

    fn shared(&self) -> &Shared {
        self.shared
    }

    fn status(&self) -> u16 {
        self.txn.status()
    }

    async fn pooled(&self, server: SocketAddr) -> Result<PooledConn, super::pool::PoolError> {
        // A KILL QUERY's connection (rare): the session's memory of pools is not at hand here.
        let now = Instant::now();
        parts::checkout(self.shared, &self.account, &mut Homes::default(), &self.front, &self.state, server, now).await
    }

    /// On the session's held connection, else on a pooled connection to its last server.
    async fn kill_itself(&mut self, query_only: bool) -> Result<OwnKill, SessionError> {
        let held = self.link.take_held();
        let holding = held.is_some();
        let mut conn = match (held, self.link.last_server()) {
            (Some(conn), _) => conn,
            (None, Some(server)) => match self.checkout(server).await {
                Ok(conn) => conn,
                Err(e) => return Ok(OwnKill::Answered(Err(e.to_err_packet()))),
            },
            (None, None) => return Ok(OwnKill::Answered(Ok(()))),
        };
        let thread = conn.thread_id();
        let answer = OwnKill::of(gateway_ids::exchange(&mut conn, thread, query_only).await, query_only);
        if !query_only {
            conn.mark_broken();
        }
        match (holding, conn.is_broken()) {
            (true, false) => self.link.hold(conn),
            (true, true) => parts::lose_connection_state(&mut self.txn, &mut self.ps),
            (false, _) => {}
        }
        Ok(answer)
    }

    async fn forward(
        &mut self,
        next: &NextCommand,
        text: &str,
        shape: command::Shape,
        glance: Glance,
    ) -> Result<Flow, SessionError> {
        self.request(next, text, glance, shape).await
    }

    async fn change_user(&mut self, payload: &[u8]) -> Result<(), SessionError> {
        self.switch_user(payload).await
    }

    /// Nothing to tell the servers: the pooled connections stay for other clients.
    async fn quit(&mut self) {}

    /// The answer that pinned the session may hand it to the kernel ([`splice`]); the session
    /// list shows it idle.
    async fn finished(&mut self, flow: Result<Flow, SessionError>) -> Result<Flow, SessionError> {
        let flow = self.after_request(flow).await?;
        let ended = *self.ended.get_or_insert_with(Instant::now);
        self.reg.idle(self.state.database(), ended);
        Ok(flow)
    }
}

impl<'a> RoutedSession<'a> {
    /// Whether the session is pinned to one server connection for good.
    pub fn is_pinned(&self) -> bool {
        self.txn.pin.is_some()
    }

    /// Why the next statement must use the session's current connection, if it must
    /// ([`parts::sticky`]).
    fn sticky(&self) -> Option<StickyReason> {
        parts::sticky(&self.txn, &self.ps)
    }

    /// The session's server side, and what it borrows of the client side for a request.
    fn parts(&mut self) -> (&mut link::ServerLink, parts::ClientParts<'_, 'a>) {
        let cx = parts::ClientParts {
            front: &mut self.front,
            shared: self.shared,
            planner: &self.planner,
            account: &self.account,
            homes: &mut self.homes,
            state: &mut self.state,
            txn: &mut self.txn,
            ps: &mut self.ps,
            splice: &mut self.splice,
            reg: &self.reg,
            killed: &mut self.killed,
            clock: self.clock,
        };
        (&mut self.link, cx)
    }

    /// Pins the session to its current connection for good.
    fn pin(&mut self, why: PinReason) {
        if self.txn.pin.is_none() {
            debug!(why = why.describe(), "session pinned to its server connection");
            self.txn.pin = Some(why);
        }
    }

    /// A pooled connection to `server` for this session ([`parts::checkout`]).
    async fn checkout(&mut self, server: SocketAddr) -> Result<PooledConn, super::pool::PoolError> {
        let now = Instant::now();
        parts::checkout(self.shared, &self.account, &mut self.homes, &self.front, &self.state, server, now).await
    }

    /// A statement's text as the SQL analysis reads it: in the default SQL mode, rewritten
    /// when the client's `ANSI_QUOTES` / `NO_BACKSLASH_ESCAPES` change its meaning there
    /// ([`crate::sql::mode`]). Servers always get the client's own text.
    fn read<'t>(&self, text: &'t str) -> std::borrow::Cow<'t, str> {
        crate::sql::in_default_mode(text, self.state.mode())
    }

    /// Routing facts of the session for the planner.
    fn context(&self) -> StatementContext {
        StatementContext {
            tenant: Arc::clone(&self.account.tenant),
            database: self.state.database_shared(),
            read_consistency: self.route_vars.read_consistency,
            ob_route_policy: self.route_vars.route_policy,
            proxy_route_policy: self.route_vars.proxy_route_policy,
            idc: self.route_vars.idc.clone(),
            in_transaction: self.txn.in_transaction(),
            autocommit: self.txn.autocommit,
        }
    }

    /// Validates the login on a tenant server: a pooled connection logged in as the client,
    /// in its database. The server's refusal is the client's answer.
    async fn validate_login(&mut self) -> Result<(), ErrPacket> {
        // What a server refuses at login (the handshake's character set) is refused here: the
        // pooled connection taken below may have logged in long ago, with another client's.
        crate::protocol::client_charset::check(self.account.charset)?;
        let planned = self.planner.plan_command(&self.context()).await;
        let decision = planned.decision.map_err(|e| ErrPacket::new(e.mysql_errno(), e.to_string()))?;
        let max = failover::max_attempts(self.front.config.current(&self.shared.live), &decision);
        let mut last = None;
        for cand in failover::attempt_order(&decision, self.shared.congestion(), max, planned.at.into_std()) {
            match self.checkout(cand.addr).await {
                Ok(mut conn) => match conn.sync_state(&mut self.state).await {
                    Ok(_) => {
                        // The login OK tells the autocommit of this new session: the server's
                        // global one now (it may have changed since the gateway started).
                        self.txn = Transaction::starting(conn.session_status);
                        self.link.ran_on(cand.addr);
                        conn.set_in_flight(true);
                        let timeout = self.shared.pool.config().connect_timeout();
                        if let Some(d) = idle_timeout::server_defaults(&mut conn, cand.addr, timeout).await {
                            conn.set_in_flight(false);
                            self.idle.defaults = d;
                        }
                        return Ok(());
                    }
                    Err(e) if e.is_retryable() || matches!(e, super::pool::PoolError::Lost { .. }) => last = Some(e),
                    Err(e) => return Err(e.to_err_packet()),
                },
                Err(e) if e.is_retryable() => last = Some(e),
                Err(e) => return Err(e.to_err_packet()),
            }
        }
        Err(last
            .map(|e| e.to_err_packet())
            .unwrap_or_else(|| ErrPacket::new(codes::BACKEND_UNREACHABLE, "gateway: no server available")))
    }

    /// A forwarded command: the local ones first, then dispatch.
    async fn request(
        &mut self,
        next: &NextCommand,
        text: &str,
        glance: Glance,
        shape: command::Shape,
    ) -> Result<Flow, SessionError> {
        let (cmd, payload, reply_seq) = (next.cmd, &next.payload[..], next.reply_seq);
        self.route_time = None;
        match cmd {
            command::PING => self.reply_ok(reply_seq).await,
            command::RESET_CONNECTION => {
                self.reset().await;
                self.reply_ok(reply_seq).await
            }
            command::QUERY => self.query(payload, text, glance, reply_seq).await,
            _ => self.other(cmd, payload, shape, reply_seq).await,
        }
    }

    /// COM_RESET_CONNECTION: a fresh client state (new id: connections are reset before the
    /// session uses them again), the login's database, nothing held or pinned. The connections
    /// are reset on the servers before this returns, as a server resets its session before it
    /// answers: the next statement finds none of the old session's locks or transaction.
    async fn reset(&mut self) {
        let mut scrubs = self.link.reset().into_iter().collect::<Vec<_>>();
        self.homes.unpark();
        scrubs.extend(self.shared.pool.release_client(self.state.id()));
        scrubs_done(scrubs).await;
        self.state = ClientState::new(self.account.database.as_deref(), self.account.charset);
        self.route_vars = local::RouteVars::default();
        // A reset session's autocommit is the servers' global one, as at login.
        self.txn = Transaction::starting(self.shared.profile().status);
        self.note_sticky();
        self.ps = parts::Statements::default();
    }

    /// COM_CHANGE_USER: authenticate here, drop everything of the old user, validate the new
    /// login on a tenant server. Refused: the session keeps its user, its state is cleared all
    /// the same (as on MariaDB).
    async fn switch_user(&mut self, payload: &[u8]) -> Result<(), SessionError> {
        let resp = parse_change_user(payload, self.front.caps)
            .map_err(|_| SessionError::refuse(codes::MALFORMED, 1, "Malformed communication packet"))?;
        let mut ex = self.front.change_user_exchange(self.shared);
        let login = match ex.login(resp).await {
            Ok(login) => login,
            Err(refused @ SessionError::Refused { .. }) => {
                self.reset().await;
                return Err(refused);
            }
            Err(e) => return Err(e),
        };
        let seq = login.seq;
        let before = (self.account.clone(), self.planner.clone());
        self.account = Account::of(self.shared, &login, Logins::WithTenant);
        if let Some(planner) = login.planner.clone() {
            self.planner = planner;
            self.memo.clear();
        }
        let cluster = login.name.cluster.clone().unwrap_or_default();
        self.reset().await;
        self.state = ClientState::new(self.account.database.as_deref(), self.account.charset);
        self.reg.update(|i| {
            i.user = self.account.user.to_string();
            i.cluster = cluster;
            i.tenant = self.account.tenant.to_string();
        });
        if let Err(err) = self.validate_login().await {
            // The server refused the new login: back to the previous user, state as after a reset.
            (self.account, self.planner) = before;
            self.state = ClientState::new(self.account.database.as_deref(), self.account.charset);
            let (user, tenant) = (self.account.user.to_string(), self.account.tenant.to_string());
            let cluster = self.account.cluster.clone().unwrap_or_default();
            self.reg.update(|i| {
                i.user = user;
                i.cluster = cluster;
                i.tenant = tenant;
            });
            self.reset().await;
            return Err(SessionError::Refused { err, seq });
        }
        let ok = OkPacket::with_status(self.txn.status()).encode(self.front.caps);
        self.front.wire.write_packet(seq, &ok).await.map_err(SessionError::Client)?;
        info!(user = %self.account.user, "changed user");
        Ok(())
    }

    async fn reply_ok(&mut self, seq: u8) -> Result<Flow, SessionError> {
        self.front.reply_ok(seq, self.txn.status()).await.map(|()| Flow::Continue)
    }

    async fn reply_err(&mut self, seq: u8, err: &ErrPacket) -> Result<Flow, SessionError> {
        self.front.reply_err(seq, err).await.map(|()| Flow::Continue)
    }
}

/// What the route logs of one request are told to write (`[log]`).
#[derive(Debug, Clone, Copy)]
struct Logging {
    /// `route_diagnosis`.
    diag: crate::config::RouteDiagnosis,
    /// `slow_statement_ms` (0: off).
    slow_ms: u64,
}

impl Logging {
    fn of(config: &crate::config::Config) -> Logging {
        Logging { diag: config.log.route_diagnosis, slow_ms: config.log.slow_statement_ms }
    }
}
