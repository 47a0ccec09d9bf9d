//! One id per session in 1:1 mode: the gateway's connection id is the one the client sees.
//! `CONNECTION_ID()` is rewritten to it, `SHOW [FULL] PROCESSLIST` / COM_PROCESS_INFO and simple
//! `information_schema.PROCESSLIST` queries are the gateway's list ([`crate::session::processlist`]), and KILL — text, COM_PROCESS_KILL, binary or
//! text prepared — is translated to the backend thread of the session it names. The backend's
//! thread id never reaches the client, so it can never name another client's session.

use std::collections::HashMap;

use tracing::info;

use super::Session;
use crate::protocol::codes;
use crate::protocol::command::{self, Shape};
use crate::protocol::frame::{HEADER, MAX_FRAME};
use crate::protocol::message::ErrPacket;
use crate::protocol::resultset::GATEWAY_STATUS;
use crate::session::command_loop::Flow;
use crate::session::connection_id;
use crate::session::glance::{Glance, Word};
use crate::session::kill::{self, Kill, Template};
use crate::session::prepared::answer::PrepareOk;
use crate::session::prepared::binary;
use crate::session::prepared::execute::{self, Execute};
use crate::session::prepared::long_data::LongData;
use crate::session::prepared::registry::ParamTypes;
use crate::session::prepared::text::{self as text_ps, Arg, Source, TextPs};
use crate::session::processlist::{self, Asker, Victim};
use crate::session::SessionError;
use crate::sql::{Mode, Value};

/// Prepared KILL statements of a session beyond which preparing another one is refused.
const MAX_PREPARED_KILLS: usize = 256;

/// The session's prepared KILL statements: binary ones by the backend's statement id (the
/// backend prepares them too, so ids never clash), text ones by lower-cased name.
#[derive(Debug, Default)]
pub(super) struct PreparedKills {
    binary: HashMap<u32, (Template, Option<ParamTypes>)>,
    text: HashMap<String, Template>,
}

impl Session<'_> {
    fn asker_tenant(&self) -> String {
        self.statement_context().tenant.to_string()
    }

    /// One forwarded command, with the gateway's id answers and rewrites on the way.
    pub(super) async fn command(
        &mut self,
        payload: &[u8],
        shape: Shape,
        glance: Glance,
        reply_seq: u8,
    ) -> Result<Flow, SessionError> {
        match payload[0] {
            command::PROCESS_INFO => self.processlist(false, reply_seq).await,
            command::QUERY => self.query(payload, glance, shape, reply_seq).await,
            command::STMT_PREPARE => self.stmt_prepare(payload, shape, reply_seq).await,
            command::STMT_EXECUTE => {
                match execute::statement_id(payload).ok().and_then(|id| self.kills.binary.get(&id).cloned()) {
                    Some(prepared) => self.stmt_execute_kill(payload, prepared, reply_seq).await,
                    None => self.exchange(payload, shape).await.map(|_| Flow::Continue),
                }
            }
            command::STMT_CLOSE => {
                if let Some(id) = payload.get(1..5).and_then(|b| b.try_into().ok()).map(u32::from_le_bytes) {
                    self.kills.binary.remove(&id);
                }
                self.exchange(payload, shape).await.map(|_| Flow::Continue)
            }
            _ => self.exchange(payload, shape).await.map(|_| Flow::Continue),
        }
    }

    /// COM_QUERY: SHOW PROCESSLIST, text prepared KILLs, `CONNECTION_ID()`.
    async fn query(
        &mut self,
        payload: &[u8],
        glance: Glance,
        shape: Shape,
        reply_seq: u8,
    ) -> Result<Flow, SessionError> {
        let text = String::from_utf8_lossy(&payload[1..]);
        if glance.mentions(Word::Processlist) {
            if let Some(full) = processlist::recognise(&text) {
                return self.processlist(full, reply_seq).await;
            }
            if let Some(q) = processlist::recognise_table(&text, self.front.id) {
                let tenant = self.asker_tenant();
                let asker = Asker { id: self.front.id, user: &self.user, tenant: &tenant };
                let rs = processlist::table(self.shared, asker, &q);
                self.front.write_made(rs.encode(reply_seq, self.front.caps, GATEWAY_STATUS)).await?;
                return Ok(Flow::Continue);
            }
        }
        let first = crate::sql::lexer::first_word(&text);
        if ["prepare", "execute", "deallocate", "drop"].iter().any(|w| first.eq_ignore_ascii_case(w)) {
            if let Some(ps) = text_ps::parse(&text) {
                if let Some(outcome) = self.text_ps(payload, &ps, reply_seq).await? {
                    return Ok(outcome);
                }
            }
        }
        let with_id = if glance.mentions(Word::ConnectionId) {
            connection_id::rewrite(&text, self.front.id, Mode::default())
        } else {
            None
        };
        match with_id {
            Some(sql) => self.exchange(&[&[command::QUERY], sql.as_bytes()].concat(), shape).await?,
            None => self.exchange(payload, shape).await?,
        };
        Ok(Flow::Continue)
    }

    /// The gateway's process list.
    async fn processlist(&mut self, full: bool, reply_seq: u8) -> Result<Flow, SessionError> {
        let tenant = self.asker_tenant();
        let rs = processlist::list(self.shared, Asker { id: self.front.id, user: &self.user, tenant: &tenant }, full);
        self.front.write_made(rs.encode(reply_seq, self.front.caps, GATEWAY_STATUS)).await?;
        Ok(Flow::Continue)
    }

    /// KILL on a gateway connection id: `KILL [QUERY] <thread>` on this session's backend for a
    /// session on the same server; a KILL CONNECTION also ends the victim's gateway session.
    pub(super) async fn kill_session(&mut self, k: Kill, reply_seq: u8) -> Result<Flow, SessionError> {
        let tenant = self.asker_tenant();
        let victim =
            processlist::victim(self.shared, Asker { id: self.front.id, user: &self.user, tenant: &tenant }, k);
        let (current, own) = match victim {
            Err(err) => return self.front.reply_err(reply_seq, &err).await.map(|()| Flow::Continue),
            Ok(Victim::Itself) => (Some((self.backend_addr, self.backend.greeting.connection_id)), true),
            Ok(Victim::Other(info)) => (info.current, false),
        };
        // The victim's session is marked first: when its backend connection then breaks under a
        // streaming answer, its client gets the kill's error, not a broken stream.
        if !k.query_only && !own {
            self.shared.sessions.kill(k.id);
            info!(victim = k.id, "session killed by KILL CONNECTION");
        }
        let answer = match current {
            Some((server, thread)) if server == self.backend_addr => self.kill_on_backend(k, thread).await?,
            // A session on another server (a routed session): its gateway session ends; its
            // running statement cannot be reached from here.
            _ if k.query_only => Err(ErrPacket::new(
                codes::NOT_SUPPORTED,
                format!("gateway: session {} is not on this session's server", k.id),
            )),
            _ => Ok(()),
        };
        match answer {
            Ok(()) => {
                self.reply_ok(reply_seq).await?;
                Ok(Flow::Continue)
            }
            Err(err) => {
                self.front.reply_err(reply_seq, &err).await?;
                Ok(if own && !k.query_only { Flow::Close } else { Flow::Continue })
            }
        }
    }

    /// Runs `KILL [QUERY|CONNECTION] <thread>` on the backend; the server's answer, with an
    /// unknown-thread error naming the gateway id (the session ended meanwhile: OK, as routed).
    async fn kill_on_backend(&mut self, k: Kill, thread: u32) -> Result<Result<(), ErrPacket>, SessionError> {
        let verb = if k.query_only { "KILL QUERY" } else { "KILL CONNECTION" };
        let reply_seq = self.send(&[&[command::QUERY], format!("{verb} {thread}").as_bytes()].concat()).await?;
        let packet = self.backend.wire.read_packet(MAX_FRAME).await.map_err(|e| super::lost_backend(e, reply_seq))?;
        match packet.payload.first() {
            Some(0xff) => {
                let err = ErrPacket::parse(&packet.payload).map_err(SessionError::Backend)?;
                Ok(if err.code == codes::NO_SUCH_THREAD { Ok(()) } else { Err(err) })
            }
            _ => Ok(Ok(())),
        }
    }

    /// COM_STMT_PREPARE: `CONNECTION_ID()` rewritten; a KILL is prepared on the backend and
    /// remembered by its id, so that its EXECUTE is the gateway's.
    async fn stmt_prepare(&mut self, payload: &[u8], shape: Shape, reply_seq: u8) -> Result<Flow, SessionError> {
        let sql = String::from_utf8_lossy(&payload[1..]);
        if kill::is_kill(&sql) {
            let template = match kill::template(&sql) {
                Some(t) if self.kills.binary.len() < MAX_PREPARED_KILLS => t,
                _ => return self.front.reply_err(reply_seq, &kill::unsupported()).await.map(|()| Flow::Continue),
            };
            let reply = self.send(payload).await?;
            let (len, _) = self.backend.wire.need_frame(MAX_FRAME).await.map_err(|e| super::lost_backend(e, reply))?;
            if let Ok(ok) = PrepareOk::parse(&self.backend.wire.buf[HEADER..HEADER + len]) {
                self.kills.binary.insert(ok.statement_id, (template, None));
            }
            self.relay_answer(payload, shape, reply).await?;
            return Ok(Flow::Continue);
        }
        match connection_id::rewrite(&sql, self.front.id, Mode::default()) {
            Some(text) => self.exchange(&[&[command::STMT_PREPARE], text.as_bytes()].concat(), shape).await?,
            None => self.exchange(payload, shape).await?,
        };
        Ok(Flow::Continue)
    }

    /// COM_STMT_EXECUTE of a prepared KILL: its bound id is a gateway id.
    async fn stmt_execute_kill(
        &mut self,
        payload: &[u8],
        (t, types): (Template, Option<ParamTypes>),
        reply_seq: u8,
    ) -> Result<Flow, SessionError> {
        let bound = Execute::parse(payload, t.params()).map_err(|e| e.to_err()).and_then(|ex| {
            let types = ex.types.map(ParamTypes::new).or(types);
            let long = LongData::default();
            let values = binary::values(&ex, types.as_ref(), &long).map_err(|e| e.to_err())?;
            let values: Vec<Value<'static>> = values.into_iter().map(Value::into_owned).collect();
            Ok((values, types))
        });
        let (values, types) = match bound {
            Ok(b) => b,
            Err(e) => return self.front.reply_err(reply_seq, &e).await.map(|()| Flow::Continue),
        };
        if let Ok(id) = execute::statement_id(payload) {
            self.kills.binary.insert(id, (t, types));
        }
        match t.bind(&values, self.front.id) {
            Ok(k) => self.kill_session(k, reply_seq).await,
            Err(e) => self.front.reply_err(reply_seq, &e).await.map(|()| Flow::Continue),
        }
    }

    /// Text `PREPARE` / `EXECUTE` / `DEALLOCATE` of a KILL; `None`: not one (forward it).
    async fn text_ps(&mut self, payload: &[u8], ps: &TextPs, reply_seq: u8) -> Result<Option<Flow>, SessionError> {
        match ps {
            TextPs::Prepare { name, source } => {
                self.kills.text.remove(&name.to_ascii_lowercase());
                let Source::Text(sql) = source else { return Ok(None) };
                if !kill::is_kill(sql) {
                    return Ok(None);
                }
                let template = match kill::template(sql) {
                    Some(t) if self.kills.text.len() < MAX_PREPARED_KILLS => t,
                    _ => {
                        return self
                            .front
                            .reply_err(reply_seq, &kill::unsupported())
                            .await
                            .map(|()| Some(Flow::Continue))
                    }
                };
                if !self.exchange(payload, Shape::Results).await? {
                    self.kills.text.insert(name.to_ascii_lowercase(), template);
                }
                Ok(Some(Flow::Continue))
            }
            TextPs::Execute { name, using } => {
                let Some(t) = self.kills.text.get(&name.to_ascii_lowercase()).copied() else { return Ok(None) };
                let mut values = Vec::with_capacity(using.len());
                for arg in using {
                    values.push(match arg {
                        Arg::Value(v) => v.clone(),
                        Arg::UserVar(var) => self.user_var(var).await?,
                        Arg::Expr => Value::Unknown,
                    });
                }
                match t.bind(&values, self.front.id) {
                    Ok(k) => self.kill_session(k, reply_seq).await.map(Some),
                    Err(e) => self.front.reply_err(reply_seq, &e).await.map(|()| Some(Flow::Continue)),
                }
            }
            TextPs::Deallocate { name } => {
                self.kills.text.remove(&name.to_ascii_lowercase());
                Ok(None)
            }
        }
    }

    /// The value of user variable `@name` on the backend (as text; NULL when unset).
    async fn user_var(&mut self, name: &str) -> Result<Value<'static>, SessionError> {
        let quoted = name.replace('`', "``");
        let reply =
            self.send(&[&[command::QUERY], format!("SELECT CAST(@`{quoted}` AS CHAR)").as_bytes()].concat()).await?;
        let deprecate_eof = self.backend.capabilities & crate::protocol::caps::DEPRECATE_EOF != 0;
        let mut tracker = crate::protocol::response::ResponseTracker::new(Shape::Results, deprecate_eof);
        let mut packets = Vec::new();
        while !tracker.is_done() {
            let p = self.backend.wire.read_packet(MAX_FRAME).await.map_err(|e| super::lost_backend(e, reply))?;
            tracker.on_frame(&p.payload).map_err(SessionError::Backend)?;
            packets.push(p.payload);
        }
        // Column count, one column definition, [EOF], the row.
        let row = packets.get(if deprecate_eof { 2 } else { 3 });
        Ok(match row.map(|r| r.as_ref()) {
            Some([0xfb]) | None => Value::Null,
            Some(r) => lenenc_str(r).map_or(Value::Unknown, |s| Value::str(s.to_vec())),
        })
    }

    async fn reply_ok(&mut self, seq: u8) -> Result<(), SessionError> {
        let ok = crate::protocol::message::OkPacket::with_status(GATEWAY_STATUS).encode(self.front.caps);
        self.front.wire.write_packet(seq, &ok).await.map_err(SessionError::Client).map(|_| ())
    }
}

/// A length-encoded string at the start of `b`.
fn lenenc_str(b: &[u8]) -> Option<&[u8]> {
    crate::protocol::buf::Reader::new(b).lenenc_bytes().ok()
}
