//! Tokens of MySQL-dialect SQL: words, back-ticked names, strings, numbers, hex, punctuation.

use crate::partition::PartitionError;

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

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80
}

/// Splits `text` into tokens; comments are skipped, `/*!NNNNN … */` bodies are kept.
pub fn tokenize(text: &str) -> Result<Vec<Token>, PartitionError> {
    let s = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        let next = s.get(i + 1).copied();
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b'#' || (c == b'-' && next == Some(b'-') && s.get(i + 2).is_none_or(|b| b.is_ascii_whitespace()))
        {
            while i < s.len() && s[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && next == Some(b'*') && s.get(i + 2) == Some(&b'!') {
            i += 3;
            while i < s.len() && s[i].is_ascii_digit() {
                i += 1;
            }
        } else if c == b'/' && next == Some(b'*') {
            let end = text[i + 2..].find("*/").ok_or_else(|| err(i, "unterminated comment"))?;
            i += 2 + end + 2;
        } else if c == b'*' && next == Some(b'/') {
            i += 2; // end of a /*! … */ version comment
        } else if c == b'`' {
            let end = text[i + 1..].find('`').ok_or_else(|| err(i, "unterminated `name`"))?;
            out.push(Token { tok: Tok::Quoted(text[i + 1..i + 1 + end].to_string()), pos: i });
            i += end + 2;
        } else if c == b'\'' || c == b'"' {
            let (bytes, len) = string(s, i)?;
            out.push(Token { tok: Tok::Str { bytes, charset: None }, pos: i });
            i += len;
        } else if (c == b'x' || c == b'X') && next == Some(b'\'') {
            let end = text[i + 2..].find('\'').ok_or_else(|| err(i, "unterminated X'…'"))?;
            let bytes = hex::decode(&text[i + 2..i + 2 + end]).map_err(|_| err(i, "bad hex literal"))?;
            out.push(Token { tok: Tok::Hex(bytes), pos: i });
            i += end + 3;
        } else if c == b'0'
            && (next == Some(b'x') || next == Some(b'X'))
            && s.get(i + 2).is_some_and(u8::is_ascii_hexdigit)
        {
            let mut j = i + 2;
            while j < s.len() && s[j].is_ascii_hexdigit() {
                j += 1;
            }
            let digits = &text[i + 2..j];
            let padded = if digits.len() % 2 == 1 { format!("0{digits}") } else { digits.to_string() };
            let bytes = hex::decode(padded).map_err(|_| err(i, "bad hex literal"))?;
            out.push(Token { tok: Tok::Hex(bytes), pos: i });
            i = j;
        } else if c.is_ascii_digit() || (c == b'.' && next.is_some_and(|b| b.is_ascii_digit())) {
            let j = number_end(s, i);
            if j < s.len() && is_word_byte(s[j]) && s[j] != b'.' {
                let k = word_end(s, j);
                out.push(Token { tok: Tok::Word(text[i..k].to_string()), pos: i });
                i = k;
            } else {
                out.push(Token { tok: Tok::Number(text[i..j].to_string()), pos: i });
                i = j;
            }
        } else if is_word_byte(c) {
            let j = word_end(s, i);
            let word = &text[i..j];
            if word.starts_with('_') && matches!(s.get(j), Some(b'\'') | Some(b'"')) {
                let (bytes, len) = string(s, j)?;
                out.push(Token { tok: Tok::Str { bytes, charset: Some(word[1..].to_ascii_lowercase()) }, pos: i });
                i = j + len;
            } else {
                out.push(Token { tok: Tok::Word(word.to_string()), pos: i });
                i = j;
            }
        } else {
            let ch = text[i..].chars().next().unwrap_or('?');
            out.push(Token { tok: Tok::Punct(ch), pos: i });
            i += ch.len_utf8();
        }
    }
    Ok(out)
}

fn word_end(s: &[u8], mut j: usize) -> usize {
    while j < s.len() && is_word_byte(s[j]) {
        j += 1;
    }
    j
}

fn number_end(s: &[u8], mut j: usize) -> usize {
    while j < s.len() && s[j].is_ascii_digit() {
        j += 1;
    }
    if j < s.len() && s[j] == b'.' {
        j += 1;
        while j < s.len() && s[j].is_ascii_digit() {
            j += 1;
        }
    }
    if j < s.len() && (s[j] == b'e' || s[j] == b'E') {
        let mut k = j + 1;
        if k < s.len() && (s[k] == b'+' || s[k] == b'-') {
            k += 1;
        }
        if k < s.len() && s[k].is_ascii_digit() {
            while k < s.len() && s[k].is_ascii_digit() {
                k += 1;
            }
            j = k;
        }
    }
    j
}

/// A quoted string starting at `start`: its bytes and the length consumed.
fn string(s: &[u8], start: usize) -> Result<(Vec<u8>, usize), PartitionError> {
    let q = s[start];
    let mut out = Vec::new();
    let mut i = start + 1;
    while i < s.len() {
        let c = s[i];
        if c == q && s.get(i + 1) == Some(&q) {
            out.push(q);
            i += 2;
        } else if c == q {
            return Ok((out, i + 1 - start));
        } else if c == b'\\' && i + 1 < s.len() {
            let e = s[i + 1];
            match e {
                b'0' => out.push(0),
                b'b' => out.push(8),
                b'n' => out.push(b'\n'),
                b'r' => out.push(b'\r'),
                b't' => out.push(b'\t'),
                b'Z' => out.push(26),
                b'%' | b'_' => out.extend_from_slice(&[b'\\', e]),
                other => out.push(other),
            }
            i += 2;
        } else {
            out.push(c);
            i += 1;
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
