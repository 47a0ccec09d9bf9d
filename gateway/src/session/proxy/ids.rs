//! One id per session in 1:1 mode: the gateway's connection id is the one the client sees.
//! `CONNECTION_ID()` is rewritten to it, and prepared KILL statements (binary or text) are
//! remembered so that their EXECUTE is the gateway's KILL ([`crate::session::gateway_ids`], like
//! every KILL and the process list). The backend's thread id never reaches the client, so it can
//! never name another client's session.

use std::collections::HashMap;

use super::{fixed, Session};
use crate::protocol::command::{self, Shape};
use crate::protocol::frame::{HEADER, MAX_FRAME};
use crate::session::connection_id;
use crate::session::gateway_ids;
use crate::session::glance::{Glance, Word};
use crate::session::kill::{self, Template};
use crate::session::kind::Flow;
use crate::session::prepared::answer::PrepareOk;
use crate::session::prepared::binary;
use crate::session::prepared::execute::{self, Execute};
use crate::session::prepared::long_data::LongData;
use crate::session::prepared::registry::ParamTypes;
use crate::session::prepared::text::{self as text_ps, Arg, Source, TextPs};
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
    /// One forwarded command, with the gateway's id answers and rewrites on the way.
    pub(super) async fn command(
        &mut self,
        payload: &[u8],
        text: &str,
        shape: Shape,
        glance: Glance,
        reply_seq: u8,
    ) -> Result<Flow, SessionError> {
        match payload[0] {
            command::QUERY => self.query(payload, text, glance, shape, reply_seq).await,
            command::STMT_PREPARE => self.stmt_prepare(payload, shape, reply_seq).await,
            command::STMT_EXECUTE => {
                match execute::statement_id(payload).ok().and_then(|id| self.kills.binary.get(&id).cloned()) {
                    Some(prepared) => Box::pin(self.stmt_execute_kill(payload, prepared, reply_seq)).await,
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
        text: &str,
        glance: Glance,
        shape: Shape,
        reply_seq: u8,
    ) -> Result<Flow, SessionError> {
        let first = if glance.mentions(Word::TextPs) { crate::sql::lexer::first_word(text) } else { "" };
        if ["prepare", "execute", "deallocate", "drop"].iter().any(|w| first.eq_ignore_ascii_case(w)) {
            if let Some(ps) = text_ps::parse(text) {
                if let Some(outcome) = Box::pin(self.text_ps(payload, &ps, reply_seq)).await? {
                    return Ok(outcome);
                }
            }
        }
        let with_id = if glance.mentions(Word::ConnectionId) {
            connection_id::rewrite(text, self.front.id, Mode::default())
        } else {
            None
        };
        match with_id {
            Some(sql) => self.exchange(&[&[command::QUERY], sql.as_bytes()].concat(), shape).await?,
            None => self.exchange(payload, shape).await?,
        };
        Ok(Flow::Continue)
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
            let reply = self.link.send(payload).await?;
            let (len, _) = self.link.backend.wire.need_frame(MAX_FRAME).await.map_err(|e| fixed::lost(e, reply))?;
            if let Ok(ok) = PrepareOk::parse(&self.link.backend.wire.buf[HEADER..HEADER + len]) {
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
            Ok(k) => gateway_ids::kill(self, k, reply_seq).await,
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
                    Ok(k) => gateway_ids::kill(self, k, reply_seq).await.map(Some),
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
        let reply = self
            .link
            .send(&[&[command::QUERY], format!("SELECT CAST(@`{quoted}` AS CHAR)").as_bytes()].concat())
            .await?;
        let deprecate_eof = self.link.deprecate_eof();
        let mut tracker = crate::protocol::response::ResponseTracker::new(Shape::Results, deprecate_eof);
        let mut packets = Vec::new();
        while !tracker.is_done() {
            let p = self.link.backend.wire.read_packet(MAX_FRAME).await.map_err(|e| fixed::lost(e, reply))?;
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
}

/// A length-encoded string at the start of `b`.
fn lenenc_str(b: &[u8]) -> Option<&[u8]> {
    crate::protocol::buf::Reader::new(b).lenenc_bytes().ok()
}
