//! Tokens of MySQL-dialect SQL: words, back-ticked names, strings, numbers, hex, punctuation.

use crate::partition::PartitionError;
use crate::sql::lexer::{hex_digits, Kind, Lexer, Mode};

/// One token.
#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    /// A bare word: keyword or identifier.
    Word(String),
    /// A back-ticked identifier.
    Quoted(String),
    /// A string literal with its introducer (`_utf8mb4'x'`), escapes resolved.
    Str { bytes: Vec<u8>, charset: Option<String> },
    /// `X'00ff'` or `0x00ff`.
    Hex(Vec<u8>),
    /// A numeric literal as written (no sign).
    Number(String),
    /// Any other single character: `( ) , = ; . - +` …
    Punct(char),
}

/// A token and its byte offset in the input.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    /// The token.
    pub tok: Tok,
    /// Byte offset of its first character.
    pub pos: usize,
}

fn err(pos: usize, msg: impl Into<String>) -> PartitionError {
    PartitionError::Ddl { pos, msg: msg.into() }
}

/// Splits `text` into tokens ([`crate::sql::lexer`], default SQL mode: the text is the server's
/// own `SHOW CREATE TABLE`); comments are skipped, `/*!NNNNN … */` bodies are read as SQL.
pub fn tokenize(text: &str) -> Result<Vec<Token>, PartitionError> {
    let s = text.as_bytes();
    let mut out = Vec::new();
    let mut lexer = Lexer::new(s, Mode::default()).entering_versioned().peekable();
    while let Some(t) = lexer.next() {
        let (pos, span) = (t.start as usize, &text[t.range()]);
        let tok = match t.kind {
            Kind::Comment => continue,
            Kind::Unterminated => return Err(err(pos, unterminated(span))),
            Kind::Versioned => return Err(err(pos, "unexpected versioned comment")),
            Kind::Quoted => Tok::Quoted(span[1..span.len() - 1].replace("``", "`")),
            Kind::Str => {
                let bytes = string(s, pos)?.0;
                // Strings side by side are one string (`'ab' 'cd'` is `'abcd'`).
                if let Some(Token { tok: Tok::Str { bytes: earlier, .. }, .. }) = out.last_mut() {
                    earlier.extend_from_slice(&bytes);
                    continue;
                }
                Tok::Str { bytes, charset: None }
            }
            Kind::Hex => Tok::Hex(hex_bytes(hex_digits(span)).ok_or_else(|| err(pos, "bad hex literal"))?),
            Kind::Number => Tok::Number(span.to_string()),
            Kind::Odd if span.starts_with('.') => Tok::Number(span.to_string()),
            // An introducer right before its string: one string token with its character set.
            Kind::Word if span.starts_with('_') && adjacent_string(lexer.peek(), t.end) => {
                let Some(n) = lexer.next() else { continue };
                let charset = Some(span[1..].to_ascii_lowercase());
                Tok::Str { bytes: string(s, n.start as usize)?.0, charset }
            }
            // `N'…'`: a string in the national character set, utf8 (utf8mb3).
            Kind::Word if matches!(span, "N" | "n") && adjacent_string(lexer.peek(), t.end) => {
                let Some(n) = lexer.next() else { continue };
                Tok::Str { bytes: string(s, n.start as usize)?.0, charset: Some("utf8".into()) }
            }
            // `b'…'`: a bit-value literal, a binary string or a number by context like `X'…'`.
            Kind::Word if matches!(span, "B" | "b") && adjacent_string(lexer.peek(), t.end) => {
                let Some(n) = lexer.next() else { continue };
                let digits = &text[n.start as usize + 1..n.end as usize - 1];
                Tok::Hex(crate::sql::value::bits(digits.as_bytes()).ok_or_else(|| err(pos, "bad bit literal"))?)
            }
            Kind::Word | Kind::Odd | Kind::UserVar | Kind::SysVar => Tok::Word(span.to_string()),
            Kind::Placeholder | Kind::Punct(_) | Kind::Op(_) => {
                out.extend(span.char_indices().map(|(k, c)| Token { tok: Tok::Punct(c), pos: pos + k }));
                continue;
            }
        };
        out.push(Token { tok, pos });
    }
    Ok(out)
}

/// Whether `next` is a quoted string starting right at `end` (an introducer's or a prefix's).
fn adjacent_string(next: Option<&crate::sql::lexer::Token>, end: u32) -> bool {
    next.is_some_and(|n| n.kind == Kind::Str && n.start == end)
}

fn unterminated(span: &str) -> &'static str {
    match span.as_bytes().first() {
        Some(b'/') => "unterminated comment",
        Some(b'`') => "unterminated `name`",
        Some(b'x' | b'X') => "unterminated X'…'",
        _ => "unterminated string",
    }
}

/// The bytes of hex digits (an odd count gets a leading zero, as `0x1` is one byte).
fn hex_bytes(digits: &str) -> Option<Vec<u8>> {
    let padded = if digits.len() % 2 == 1 { format!("0{digits}") } else { digits.to_string() };
    hex::decode(padded).ok()
}

/// A quoted string starting at `start`: its bytes (unescaped as the SQL analysis does,
/// [`crate::sql::value::unescape`]) and the length consumed.
fn string(s: &[u8], start: usize) -> Result<(Vec<u8>, usize), PartitionError> {
    let q = s[start];
    let mut i = start + 1;
    while i < s.len() {
        match s[i] {
            c if c == q && s.get(i + 1) == Some(&q) => i += 2,
            c if c == q => return Ok((crate::sql::value::unescape(&s[start + 1..i], q).into_owned(), i + 1 - start)),
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
    Err(err(start, "unterminated string"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens() {
        let t = tokenize("a `b c` 'it''s\\n' _utf8mb4'x' X'00ff' 0x1 -1.5e3 /*!50100 p */ -- c\n#d\n(").unwrap();
        let toks: Vec<Tok> = t.into_iter().map(|t| t.tok).collect();
        assert_eq!(
            toks,
            vec![
                Tok::Word("a".into()),
                Tok::Quoted("b c".into()),
                Tok::Str { bytes: b"it's\n".to_vec(), charset: None },
                Tok::Str { bytes: b"x".to_vec(), charset: Some("utf8mb4".into()) },
                Tok::Hex(vec![0, 255]),
                Tok::Hex(vec![1]),
                Tok::Punct('-'),
                Tok::Number("1.5e3".into()),
                Tok::Word("p".into()),
                Tok::Punct('('),
            ]
        );
        assert!(tokenize("'abc").is_err());
    }
}
