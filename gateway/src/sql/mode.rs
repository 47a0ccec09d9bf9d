//! A text of the client's SQL mode written so that the default mode reads it the same way.
//!
//! The analysis ([`super::analyze`]) reads statements in the default mode. A client that set
//! `ANSI_QUOTES` writes identifiers as `"name"`, and one that set `NO_BACKSLASH_ESCAPES` writes
//! backslashes in strings as they are: read in the default mode, the first is a string and the
//! second may end a string somewhere else. [`in_default_mode`] rewrites just those tokens
//! (`"name"` → `` `name` ``, `'a\b'` → `'a\\b'`), so the analysis sees the tables, values and
//! statement boundaries the server sees. The server itself always gets the client's own text.

use std::borrow::Cow;

use super::lexer::{Kind, Lexer, Mode};

/// `sql` as the default SQL mode reads it, when `mode` reads it differently; borrowed when
/// nothing in it depends on the mode.
pub fn in_default_mode(sql: &str, mode: Mode) -> Cow<'_, str> {
    let affected = (mode.nbe && memchr::memchr(b'\\', sql.as_bytes()).is_some())
        || (mode.ansi_quotes && memchr::memchr(b'"', sql.as_bytes()).is_some());
    if !affected {
        return Cow::Borrowed(sql);
    }
    let mut out = String::with_capacity(sql.len() + 16);
    let mut copied = 0;
    for t in Lexer::new(sql.as_bytes(), mode) {
        let Some(text) = sql.get(t.range()) else { continue };
        let rewritten = match t.kind {
            Kind::Quoted if text.starts_with('"') => backquoted(text),
            // Unterminated in `mode`: written so that the default mode finds no end either.
            Kind::Unterminated if mode.ansi_quotes && text.starts_with('"') => {
                format!("`{}", text[1..].replace("\"\"", "\"").replace('`', "``"))
            }
            Kind::Str | Kind::UserVar | Kind::Unterminated if literal_backslashes(text, mode) => {
                text.replace('\\', "\\\\")
            }
            _ => continue,
        };
        out.push_str(&sql[copied..t.start as usize]);
        // A back-quote written next to another would read as one doubled back-quote.
        if rewritten.starts_with('`') && out.ends_with('`') {
            out.push(' ');
        }
        out.push_str(&rewritten);
        copied = t.end as usize;
        if rewritten.ends_with('`') && sql[copied..].starts_with('`') {
            out.push(' ');
        }
    }
    out.push_str(&sql[copied..]);
    Cow::Owned(out)
}

/// Whether a string (or quoted user variable name) holds backslashes that `mode` reads as
/// themselves but the default mode would read as escapes.
fn literal_backslashes(text: &str, mode: Mode) -> bool {
    let quote = text.bytes().find(|&c| c != b'@');
    quote.is_some_and(|q| matches!(q, b'\'' | b'"') && !mode.escapes(q)) && text.contains('\\')
}

/// `"na""me"` → `` `na"me` `` (a back-quote inside doubled).
fn backquoted(text: &str) -> String {
    let body = text.get(1..text.len() - 1).unwrap_or("");
    format!("`{}`", body.replace("\"\"", "\"").replace('`', "``"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ANSI: Mode = Mode { nbe: false, ansi_quotes: true };
    const NBE: Mode = Mode { nbe: true, ansi_quotes: false };

    /// `sql` rewritten for the default mode lexes there into the token kinds it has in `mode`.
    fn assert_reads_alike(sql: &str, mode: Mode) {
        let kinds = |sql: &str, mode| Lexer::new(sql.as_bytes(), mode).map(|t| t.kind).collect::<Vec<_>>();
        let read = in_default_mode(sql, mode);
        assert_eq!(kinds(sql, mode), kinds(&read, Mode::default()), "{sql:?} in {mode:?} read as {read:?}");
    }

    #[test]
    fn the_default_mode_text_is_borrowed() {
        let sql = r#"SELECT "a\b" FROM t"#;
        assert!(matches!(in_default_mode(sql, Mode::default()), Cow::Borrowed(_)));
        assert!(matches!(in_default_mode("SELECT 'a' FROM t", ANSI), Cow::Borrowed(_)));
        assert!(matches!(in_default_mode("SELECT 'a' FROM t", NBE), Cow::Borrowed(_)));
    }

    #[test]
    fn ansi_identifiers_become_back_quoted() {
        let sql = r#"SELECT "c" FROM "my""t" WHERE "id" = 5 AND x = 'say "hi"'"#;
        assert_eq!(in_default_mode(sql, ANSI), r#"SELECT `c` FROM `my"t` WHERE `id` = 5 AND x = 'say "hi"'"#);
        assert_eq!(in_default_mode(r#"SELECT "a`b""#, ANSI), "SELECT `a``b`");
    }

    #[test]
    fn literal_backslashes_are_escaped_for_the_default_mode() {
        let sql = r"INSERT INTO t VALUES ('C:\', 5); DELETE FROM t WHERE id = 6";
        assert_eq!(in_default_mode(sql, NBE), r"INSERT INTO t VALUES ('C:\\', 5); DELETE FROM t WHERE id = 6");
        // Under both flags a double-quoted name keeps its backslash as it is: names have no escapes.
        let both = Mode { nbe: true, ansi_quotes: true };
        assert_eq!(in_default_mode(r#"SELECT "a\b", 'c\'"#, both), r"SELECT `a\b`, 'c\\'");
    }

    #[test]
    fn comments_and_unterminated_text_are_kept() {
        assert_eq!(in_default_mode("SELECT \"a\" /* \"b\" */", ANSI), "SELECT `a` /* \"b\" */");
        assert_eq!(in_default_mode("SELECT \"a", ANSI), "SELECT `a");
        // Found by the fuzz target: unterminated in its mode, it must stay so in the default one.
        for (sql, mode) in [
            (r#"SET @"a\"" = 1"#, ANSI),
            (r#"SELECT "a\"" x"#, ANSI),
            (r"SELECT 'a\", NBE),
            ("SELECT \"a\\\"`#x", ANSI),
            ("SELECT `x`\"a", ANSI),
        ] {
            assert_reads_alike(sql, mode);
        }
    }

    /// The property the fuzz target `sql_fast` checks, on texts of the bytes that matter to modes.
    #[test]
    fn a_rewritten_text_lexes_in_the_default_mode_as_the_original_in_its_mode() {
        let alphabet = ['\'', '"', '`', '\\', '@', 'a', ' ', '/', '*', '!', '-', '#', '\n', ';', 'x', 'N', '0'];
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        for _ in 0..20_000 {
            let len = (seed % 14) as usize;
            let text: String = (0..len)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    alphabet[(seed % alphabet.len() as u64) as usize]
                })
                .collect();
            for mode in [ANSI, NBE, Mode { nbe: true, ansi_quotes: true }] {
                assert_reads_alike(&text, mode);
            }
        }
    }
}
