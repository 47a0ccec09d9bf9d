//! A 1:1 session: the client's login replayed on one backend connection (the fixed link), then
//! each command relayed on it by the one command loop.

mod fixed;
mod ids;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use tracing::info;

use crate::tls::Stream;

use super::account::{Account, Logins};
use super::backend::{self, LoginOutcome};
use super::client_auth::ClientLogin;
use super::client_side::{ClientLeg, ClientSide, Waited};
use super::command_loop;
use super::glance::Glance;
use super::kind::{Flow, OwnKill, SessionKind};
use super::next_command::NextCommand;
use super::pool::{PoolError, PoolKey, PooledConn};
use super::relay;
use super::routed::registry::{Registration, SessionInfo};
use super::{internal, SessionError, Shared};
use crate::protocol::command::{self, Shape};
use crate::protocol::frame::{encode_packet, Wire};
use crate::protocol::handshake::parse_change_user;
use crate::protocol::message::ErrPacket;
use crate::protocol::resultset::GATEWAY_STATUS;
use crate::protocol::{caps, codes, ProtocolError};
use crate::sql::Mode;
use fixed::FixedLink;

/// Serves an authenticated client 1:1 on one backend connection until it quits, is killed or
/// fails; a passthrough session is handed to the kernel at login.
pub(super) async fn serve(
    client: &mut Wire<Stream>,
    shared: &Shared,
    login: ClientLogin,
    (peer, dialled): (SocketAddr, Option<SocketAddr>),
    id: u32,
    backend_addr: SocketAddr,
) -> Result<(), SessionError> {
    let mut session = Session::open(client, shared, login, (peer, dialled), id, backend_addr).await?;
    if let Some(splice) = session.splice.take() {
        session.reg.start("Spliced", None);
        return session.spliced(splice).await;
    }
    // A kill ends an idle session at once and a streaming answer with the kill's error (the
    // relay watches the signal); other steps of a command finish first.
    session.killed = Some(session.reg.killed.clone());
    // On an io_uring session thread both plain legs move to its ring (`dataplane::ring`).
    session.front.wire.io.to_ring().map_err(|e| SessionError::Client(ProtocolError::Io(e)))?;
    session.link.backend.wire.io.to_ring().map_err(|e| SessionError::Backend(ProtocolError::Io(e)))?;
    command_loop::run(&mut session).await
}

/// An authenticated session with its backend connection.
struct Session<'a> {
    /// The client's connection and login. Its `ext`: the MariaDB extended capabilities
    /// negotiated on both legs.
    front: ClientSide<'a>,
    /// The backend connection, fixed for the session.
    link: FixedLink,
    shared: &'a Shared,
    /// Who the session logged in to its backend as (replaced by COM_CHANGE_USER).
    account: Account,
    /// The current database (COM_INIT_DB changes it).
    database: Option<String>,
    /// The client leg or the server leg is TLS. A TLS session is never spliced
    /// (docs/dataplane.md §3): its bytes are encrypted.
    tls: bool,
    /// Kernel splice prepared at login for a pinned session (`dataplane::splice`).
    splice: Option<crate::dataplane::splice::Prepared>,
    /// Prepared KILL statements (answered by the gateway, [`ids`]).
    kills: ids::PreparedKills,
    /// The session's kill signal (KILL CONNECTION), watched while an answer streams.
    killed: relay::KillSignal,
    /// The session's entry in the session list (SHOW PROCESSLIST, SHOW PROXYSESSION, KILL).
    reg: Registration<'a>,
}

impl<'a> Session<'a> {
    async fn open(
        client: &'a mut Wire<Stream>,
        shared: &'a Shared,
        login: ClientLogin,
        (peer, dialled): (SocketAddr, Option<SocketAddr>),
        id: u32,
        backend_addr: SocketAddr,
    ) -> Result<Session<'a>, SessionError> {
        let seq = login.seq;
        let resp = &login.response;
        let account = Account::of(shared, &login, Logins::AsNamed);
        let database = account.database.clone();
        let tls = client.io.is_tls();
        let front = ClientSide::new(client, id, (peer, dialled), (login.capabilities, 0), login.salt, shared);
        // Relayed as they are: the backend's answers pass through (greeting::announced_ext).
        let asked_ext = resp.ext_capabilities & crate::protocol::ext_caps::RELAYED;
        let req = account.login_request(shared, &front, database.as_deref(), asked_ext);
        let (wire, greeting) =
            backend::connect(backend_addr, shared.config().connect_timeout()).await.map_err(|e| at_seq(e, seq))?;
        shared.learn_profile(&greeting);
        let (mut backend, outcome) = backend::login(wire, greeting, &req).await.map_err(|e| at_seq(e, seq))?;
        let tls = tls || backend.wire.io.is_tls();
        let client = front.wire;
        let splice = match outcome {
            LoginOutcome::Ok(ok) => {
                // Pinned (passthrough) session: both sockets enter the splice map before the
                // client can speak again, i.e. before it has this OK (docs/dataplane.md P1).
                let config = shared.config();
                let dataplane = config.dataplane.as_ref();
                let splice = match (client.io.tcp(), backend.wire.io.tcp()) {
                    (Some(c), Some(b)) => crate::dataplane::splice::prepare_session(dataplane, &resp.user, tls, c, b),
                    _ => None,
                };
                let mut out = Vec::new();
                encode_packet(&mut out, seq, &ok);
                match splice {
                    // The splice takes effect first, then the OK is written (docs/dataplane.md §3).
                    Some(mut splice) => {
                        let io = |e| SessionError::Client(ProtocolError::Io(std::io::Error::other(e)));
                        splice.activate(client, &mut backend.wire, &out).await.map_err(io)?;
                        Some(splice)
                    }
                    None => {
                        client.write_raw(&out).await.map_err(SessionError::Client)?;
                        None
                    }
                }
            }
            LoginOutcome::Denied(err) => return Err(SessionError::Refused { err, seq }),
        };
        if backend.capabilities & caps::DEPRECATE_EOF != login.capabilities & caps::DEPRECATE_EOF {
            tracing::warn!("client and backend legs disagree on DEPRECATE_EOF; answers may confuse the client");
        }
        info!(user = %account.user, db = ?database, backend = %backend_addr, backend_thread = backend.greeting.connection_id, "session open");
        let ext = asked_ext & backend.greeting.ext_capabilities;
        let front = ClientSide { wire: client, ext, ..front };
        // Listed by SHOW PROXYSESSION (and SHOW PROCESSLIST of routed sessions), ended by KILL.
        let current = (backend_addr, backend.greeting.connection_id);
        let reg = register(shared, &front, &account, &database, current);
        let kills = ids::PreparedKills::default();
        Ok(Session {
            front,
            link: FixedLink::new(backend),
            shared,
            account,
            database,
            tls,
            splice,
            kills,
            killed: None,
            reg,
        })
    }

    /// A pinned session spliced in the kernel: supervised until both sides close. The splice
    /// module logs the session's counters (and any error) itself.
    async fn spliced(&mut self, splice: crate::dataplane::splice::Prepared) -> Result<(), SessionError> {
        debug_assert!(!self.tls, "TLS sessions are never spliced");
        let _ = splice.run(self.front.wire, &mut self.link.backend.wire).await;
        Ok(())
    }

    /// Sends a command to the backend and relays its answer; `true` when the answer was an error.
    async fn exchange(&mut self, payload: &[u8], shape: command::Shape) -> Result<bool, SessionError> {
        let reply_seq = self.link.send(payload).await?;
        // The link's relay is awaited here, not through `relay_answer`: one future less to poll
        // on every command.
        let failed = self.link.relay_answer(self.front.wire, payload, shape, reply_seq, &mut self.killed).await?;
        self.answered(payload, failed);
        Ok(failed)
    }

    /// Relays the backend's answer to `payload` (sent); `true` when it was an error. The
    /// session's database follows a COM_INIT_DB the backend took.
    async fn relay_answer(
        &mut self,
        payload: &[u8],
        shape: command::Shape,
        reply_seq: u8,
    ) -> Result<bool, SessionError> {
        let failed = self.link.relay_answer(self.front.wire, payload, shape, reply_seq, &mut self.killed).await?;
        self.answered(payload, failed);
        Ok(failed)
    }

    /// What an answer to `payload` changes: the session's database after a COM_INIT_DB.
    fn answered(&mut self, payload: &[u8], failed: bool) {
        if payload[0] == command::INIT_DB && !failed {
            self.database = Some(String::from_utf8_lossy(&payload[1..]).into_owned());
        }
    }

    /// Routing facts of this session for the planner.
    fn statement_context(&self) -> crate::planner::StatementContext {
        crate::planner::StatementContext {
            tenant: Arc::clone(&self.account.tenant),
            database: self.database.as_deref().map(Arc::from),
            autocommit: true,
            ..Default::default()
        }
    }

    /// COM_CHANGE_USER: authenticate the new user here, then switch the backend connection.
    async fn switch_user(&mut self, payload: &[u8]) -> Result<(), SessionError> {
        let resp = parse_change_user(payload, self.front.caps)
            .map_err(|_| SessionError::refuse(codes::MALFORMED, 1, "Malformed communication packet"))?;
        let mut ex = self.front.change_user_exchange(self.shared);
        let login = match ex.login(resp).await {
            Ok(login) => login,
            Err(refused @ SessionError::Refused { .. }) => {
                // As on MariaDB: the session's state is cleared, its user and database stay.
                self.link.clear_state(self.shared.config().connect_timeout()).await?;
                return Err(refused);
            }
            Err(e) => return Err(e),
        };
        let seq = login.seq;
        let account = Account::of(self.shared, &login, Logins::AsNamed);
        // COM_CHANGE_USER keeps the connection's negotiated capabilities.
        let req = account.login_request(self.shared, &self.front, account.database.as_deref(), 0);
        match self.link.backend.change_user(&req).await.map_err(|e| at_seq(e, seq))? {
            LoginOutcome::Ok(ok) => {
                self.front.wire.write_packet(seq, &ok).await.map_err(SessionError::Client)?;
                info!(user = %account.user, tenant = ?account.login_tenant, "changed user");
                self.database = account.database.clone();
                self.reg.update(|i| {
                    i.user = account.user.to_string();
                    i.cluster = account.cluster.clone().unwrap_or_default();
                    i.tenant = account.tenant.to_string();
                });
                self.account = account;
                Ok(())
            }
            LoginOutcome::Denied(err) => Err(SessionError::Refused { err, seq }),
        }
    }
}

impl SessionKind for Session<'_> {
    fn front(&self) -> &ClientSide<'_> {
        &self.front
    }

    fn leg(&mut self) -> ClientLeg<'_> {
        self.front.leg()
    }

    fn account(&self) -> &Account {
        &self.account
    }

    /// A backend that goes away while the client is idle ends the session: the client sees its
    /// connection close (as with a server), not an in-band error on its next command.
    async fn next(&mut self) -> Result<Option<NextCommand>, SessionError> {
        let gone = self.link.gone();
        match self.front.next_command(self.shared, &mut self.killed, gone).await? {
            Waited::Command(next) => Ok(Some(next)),
            Waited::Closed | Waited::Killed => Ok(None),
            Waited::Ended(why) => {
                info!(why, "backend connection ended while the client was idle; closing the client");
                Ok(None)
            }
        }
    }

    /// The 1:1 session does not follow the client's sql_mode (docs/routing.md §11): a KILL among
    /// statements is looked for in every reading.
    fn modes(&self) -> &[Mode] {
        &Mode::ALL
    }

    fn caller(&self) -> internal::Caller<'_> {
        internal::Caller {
            shared: self.shared,
            planner: self.shared.planner.as_ref(),
            ctx: self.statement_context(),
            client_caps: self.front.caps,
            user: &self.account.user,
            id: self.front.id,
        }
    }

    /// Shows a command as running in the session list (the backend connection stays listed);
    /// the statement text goes into the buffer the previous one left.
    fn started(&mut self, next: &NextCommand, text: &str) {
        if next.cmd == command::QUERY {
            self.reg.start_text("Query", text, std::time::Instant::now());
        } else {
            self.reg.start(command::process_name(next.cmd), None);
        }
    }

    fn shared(&self) -> &Shared {
        self.shared
    }

    /// The gateway's answers do not know the backend's status: autocommit, as a fresh session.
    fn status(&self) -> u16 {
        GATEWAY_STATUS
    }

    async fn pooled(&self, server: SocketAddr) -> Result<PooledConn, PoolError> {
        let account = &self.account;
        let key = PoolKey { server, tenant: Arc::clone(&account.tenant), user: Arc::clone(&account.user) };
        let ext = crate::protocol::ext_caps::STMT_BULK_OPERATIONS;
        let login = account.login_request(self.shared, &self.front, self.database.as_deref(), ext);
        self.shared.pool.get(&key, &login, super::state::new_client_id()).await
    }

    /// On the session's own backend connection.
    async fn kill_itself(&mut self, query_only: bool) -> Result<OwnKill, SessionError> {
        Ok(self.link.kill_itself(query_only).await)
    }

    async fn forward(
        &mut self,
        next: &NextCommand,
        text: &str,
        shape: Shape,
        glance: Glance,
    ) -> Result<Flow, SessionError> {
        self.command(&next.payload, text, shape, glance, next.reply_seq).await
    }

    async fn change_user(&mut self, payload: &[u8]) -> Result<(), SessionError> {
        self.switch_user(payload).await
    }

    async fn quit(&mut self) {
        self.link.quit().await;
    }

    async fn finished(&mut self, flow: Result<Flow, SessionError>) -> Result<Flow, SessionError> {
        self.reg.rest(self.database.as_deref());
        flow
    }
}

/// Registers a 1:1 session in the process-wide session list, with its backend connection.
fn register<'a>(
    shared: &'a Shared,
    front: &ClientSide<'_>,
    account: &Account,
    database: &Option<String>,
    current: (SocketAddr, u32),
) -> Registration<'a> {
    shared.sessions.register(
        front.id,
        SessionInfo {
            user: account.user.to_string(),
            cluster: account.cluster.clone().unwrap_or_default(),
            tenant: account.tenant.to_string(),
            host: front.peer.to_string(),
            db: database.clone(),
            command: "Sleep",
            since: Instant::now(),
            info: None,
            current: Some(current),
        },
    )
}

/// Gives a backend-side refusal the client's sequence id.
fn at_seq(e: SessionError, seq: u8) -> SessionError {
    match e {
        SessionError::Refused { err, .. } => SessionError::Refused { err, seq },
        SessionError::Backend(p) => SessionError::Refused {
            err: ErrPacket::new(codes::BACKEND_LOST, format!("gateway: lost connection to backend during login: {p}")),
            seq,
        },
        other => other,
    }
}
