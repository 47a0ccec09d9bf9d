//! The one command loop of both kinds of session (1:1 with its fixed server connection, routed
//! with its pooled ones): wait for the client's next command, read it once
//! ([`ClientCommand::read`]), answer what the gateway answers itself, and hand the rest to the
//! kind of session through [`SessionKind`] ([`super::kind`]).

use tracing::{debug, info};

use super::client_command::ClientCommand;
use super::gateway_ids;
use super::internal;
use super::kind::{Flow, SessionKind};
use super::next_command::NextCommand;
use super::SessionError;
use crate::protocol::command;

/// Serves the session's commands until it ends.
pub(super) async fn run<S: SessionKind>(s: &mut S) -> Result<(), SessionError> {
    while let Some(next) = s.next().await? {
        let flow = command(s, &next).await;
        if s.finished(flow).await? == Flow::Close {
            break;
        }
    }
    Ok(())
}

/// One command. The rare commands' futures are boxed (`Box::pin`): a future is as large as the
/// largest one it awaits, and each statement moves the whole of it, so the common path
/// (`forward`) should not pay for KILL, COM_CHANGE_USER or the internal answers (#16).
async fn command<S: SessionKind>(s: &mut S, next: &NextCommand) -> Result<Flow, SessionError> {
    let reply_seq = next.reply_seq;
    let asked = ClientCommand::read(&next.payload, s.id(), s.modes());
    if let ClientCommand::Internal(internal) = &asked {
        let answer = Box::pin(internal::answer(internal, &s.caller())).await;
        s.write_made(answer).await?;
        return Ok(Flow::Continue);
    }
    // A statement's text, decoded once for every reader (valid UTF-8 is borrowed).
    let text = match next.cmd {
        command::QUERY => statement_text(&next.payload[1..]),
        _ => std::borrow::Cow::Borrowed(""),
    };
    s.started(next, &text);
    match asked {
        ClientCommand::Internal(_) => Ok(Flow::Continue),
        ClientCommand::Kill(k) => Box::pin(gateway_ids::kill(s, k, reply_seq)).await,
        ClientCommand::Processlist(q) => Box::pin(gateway_ids::processlist(s, &q, reply_seq)).await,
        ClientCommand::Forward(shape, glance) => s.forward(next, &text, shape, glance).await,
        ClientCommand::Quit => {
            s.quit().await;
            Ok(Flow::Close)
        }
        ClientCommand::ChangeUser => match Box::pin(s.change_user(&next.payload)).await {
            Err(SessionError::Refused { err, seq }) => {
                info!(code = err.code, message = %err.message, "COM_CHANGE_USER refused; the session keeps its user");
                s.reply_err(seq, &err).await.map(|()| Flow::Continue)
            }
            other => other.map(|()| Flow::Continue),
        },
        ClientCommand::Refused(err) => {
            debug!(cmd = next.cmd, code = err.code, "command refused");
            s.reply_err(reply_seq, &err).await.map(|()| Flow::Continue)
        }
    }
}

/// A statement's text: borrowed when it is valid UTF-8, the usual case, which `str::from_utf8`
/// checks several times faster than `String::from_utf8_lossy` walks it; otherwise with
/// replacement characters.
fn statement_text(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    std::str::from_utf8(bytes).map_or_else(|_| String::from_utf8_lossy(bytes), std::borrow::Cow::Borrowed)
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::statement_text;

    #[test]
    fn valid_text_is_borrowed_and_invalid_bytes_are_replaced() {
        let sql = "SELECT 'é' FROM t".as_bytes();
        assert!(matches!(statement_text(sql), Cow::Borrowed("SELECT 'é' FROM t")));
        assert_eq!(statement_text(b"SELECT '\xff'"), Cow::<str>::Owned("SELECT '\u{fffd}'".into()));
        assert!(matches!(statement_text(b""), Cow::Borrowed("")));
    }
}
