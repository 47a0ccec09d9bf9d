//! One look at a command before anything parses it: which of the few words that make the gateway
//! answer or rewrite a statement itself (KILL, the process list, `CONNECTION_ID()`, `@@socket`,
//! its own EXPLAIN / SHOW / ALTER statements, text prepared statements) occur in a COM_QUERY at
//! all. Each recogniser of those statements runs only when its word is
//! there, so the common statement is scanned once instead of once per recogniser.
//!
//! The look is a superset test: a word counts wherever it stands (strings, comments, quoted
//! identifiers), so a recogniser that would match is never skipped; it may still run for nothing.

use crate::protocol::command;

/// A word a recogniser needs, as a bit of [`Glance`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Word {
    /// `KILL` (the KILL parser, and the refusal of KILL forms the gateway does not take).
    Kill = 1,
    /// `PROCESSLIST` (`SHOW [FULL] PROCESSLIST`, `information_schema.PROCESSLIST` queries).
    Processlist = 2,
    /// `CONNECTION_ID` (rewritten to the gateway's id).
    ConnectionId = 4,
    /// `SOCKET` (`SELECT @@socket`, answered without the server's socket path).
    Socket = 8,
    /// `EXPLAIN`, `SHOW` or `ALTER`: the first words of the gateway's own statements
    /// (`EXPLAIN ROUTE`, `SHOW PROXYROUTE`, admin commands; with `KILL`, see
    /// [`crate::session::internal::recognise`]).
    Internal = 16,
    /// `PREPARE`, `EXECUTE`, `DEALLOCATE` or `DROP`: text prepared statements, which a 1:1
    /// session looks at for KILLs and `CONNECTION_ID()`.
    TextPs = 32,
}

/// The words of [`Word`] that a command mentions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Glance {
    words: u8,
}

impl Glance {
    /// Every word: what a command that is not a COM_QUERY (a COM_PROCESS_KILL, say) gets, so
    /// that the recognisers decide on it as before.
    pub const EVERY: Glance = Glance { words: u8::MAX };

    /// The words a command mentions: a COM_QUERY's text is scanned, any other command mentions
    /// every word.
    pub fn of_command(payload: &[u8]) -> Glance {
        match payload.split_first() {
            Some((&command::QUERY, text)) => Glance::of_text(text),
            _ => Glance::EVERY,
        }
    }

    /// The words a statement text mentions, as whole words (`[A-Za-z0-9_]` runs), in any case.
    pub fn of_text(text: &[u8]) -> Glance {
        let mut words = 0;
        // Start of the current word; only words of a needle's length are compared.
        let mut start = 0;
        for (i, &b) in text.iter().enumerate() {
            if !WORD_BYTE[usize::from(b)] {
                if NEEDLE_LEN[(i - start).min(15)] {
                    words |= bit(&text[start..i]);
                }
                start = i + 1;
            }
        }
        if NEEDLE_LEN[(text.len() - start).min(15)] {
            words |= bit(&text[start..]);
        }
        Glance { words }
    }

    /// Whether `word` occurs.
    pub fn mentions(self, word: Word) -> bool {
        self.words & word as u8 != 0
    }
}

/// `[A-Za-z0-9_]`, by byte.
static WORD_BYTE: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric() || c == b'_';
        b += 1;
    }
    t
};

/// The lengths of the words [`bit`] knows (up to 15).
static NEEDLE_LEN: [bool; 16] = {
    let mut t = [false; 16];
    t[4] = true;
    t[5] = true;
    t[6] = true;
    t[7] = true;
    t[10] = true;
    t[11] = true;
    t[13] = true;
    t
};

fn bit(word: &[u8]) -> u8 {
    let named = |name: &[u8], w: Word| if word.eq_ignore_ascii_case(name) { w as u8 } else { 0 };
    match word.len() {
        4 => named(b"kill", Word::Kill) | named(b"show", Word::Internal) | named(b"drop", Word::TextPs),
        5 => named(b"alter", Word::Internal),
        6 => named(b"socket", Word::Socket),
        7 => named(b"explain", Word::Internal) | named(b"prepare", Word::TextPs) | named(b"execute", Word::TextPs),
        10 => named(b"deallocate", Word::TextPs),
        11 => named(b"processlist", Word::Processlist),
        13 => named(b"connection_id", Word::ConnectionId),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(sql: &str) -> Glance {
        Glance::of_text(sql.as_bytes())
    }

    #[test]
    fn a_plain_statement_mentions_nothing() {
        let g = of("SELECT c FROM sbtest1 WHERE id = 42");
        for w in [Word::Kill, Word::Processlist, Word::ConnectionId, Word::Socket, Word::Internal, Word::TextPs] {
            assert!(!g.mentions(w), "{w:?}");
        }
    }

    #[test]
    fn words_are_found_in_any_case_and_position() {
        assert!(of("/* x */kill 5").mentions(Word::Kill));
        assert!(of("select 1;KILL QUERY 7").mentions(Word::Kill));
        assert!(of("show full ProcessList").mentions(Word::Processlist));
        assert!(of("select * from information_schema.`PROCESSLIST`").mentions(Word::Processlist));
        assert!(of("select CONNECTION_ID()").mentions(Word::ConnectionId));
        assert!(of("select @@session.socket").mentions(Word::Socket));
        assert!(of("select 'kill'").mentions(Word::Kill), "strings count too: a superset");
        for sql in ["explain route select 1", " Show proxyroute", "ALTER proxyconfig set a=1", "\u{a0}show x"] {
            assert!(of(sql).mentions(Word::Internal), "{sql}");
        }
        for sql in ["PREPARE s FROM 'kill 1'", "/* c */ execute s", "deallocate prepare s", "DROP PREPARE s"] {
            assert!(of(sql).mentions(Word::TextPs), "{sql}");
        }
        assert!(!of("select shows, altered, explained, dropped from t").mentions(Word::Internal));
        assert!(!of("select shows, altered, explained, dropped from t").mentions(Word::TextPs));
    }

    #[test]
    fn only_whole_words_count() {
        assert!(!of("select skill, killed from kill_log").mentions(Word::Kill));
        assert!(!of("select connection_ids from t").mentions(Word::ConnectionId));
        assert!(!of("select websocket from t").mentions(Word::Socket));
    }

    #[test]
    fn other_commands_mention_every_word() {
        assert_eq!(Glance::of_command(&[command::PROCESS_KILL, 5, 0, 0, 0]), Glance::EVERY);
        assert_eq!(Glance::of_command(&[]), Glance::EVERY);
        assert!(!Glance::of_command(b"\x03select 1").mentions(Word::Kill));
    }
}
