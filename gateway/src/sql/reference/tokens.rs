//! Token-level work of the reference path: hints, pins, placeholders, and the MySQL clauses
//! `sqlparser` lacks (`LOCK IN SHARE MODE`, `WAIT n`, `WITH CONSISTENT SNAPSHOT`).

use std::borrow::Cow;

use sqlparser::tokenizer::{Location, Span, Token, TokenWithSpan, Whitespace};

use crate::sql::analysis::{Analysis, LockRead, LockStrength, LockWait, Pins, TxnFlags};
use crate::sql::depth::{self, Class};
use crate::sql::hint::Hints;
use crate::sql::value;

/// Collects hints, pins and placeholder positions; returns the placeholder locations in order.
pub(super) fn scan(tokens: &[TokenWithSpan], an: &mut Analysis<'_>) -> Vec<Location> {
    let mut hints = Hints::default();
    let mut places = Vec::new();
    let solid: Vec<&TokenWithSpan> = tokens.iter().filter(|t| !matches!(t.token, Token::Whitespace(_))).collect();
    for (i, t) in tokens.iter().enumerate() {
        match &t.token {
            Token::Whitespace(Whitespace::MultiLineComment(body)) => hints.scan(Cow::Owned(body.clone())),
            Token::AtSign if quoted_variable(tokens, i) => an.pins.insert(Pins::USER_VAR),
            _ => {}
        }
    }
    for (i, t) in solid.iter().enumerate() {
        match &t.token {
            Token::Placeholder(p) if p == "?" => places.push(t.span.start),
            Token::Word(w) if w.quote_style.is_none() && w.value.starts_with('@') && !w.value.starts_with("@@") => {
                an.pins.insert(Pins::USER_VAR);
            }
            Token::Word(w) if w.quote_style.is_none() && solid.get(i + 1).is_some_and(|n| n.token == Token::LParen) => {
                an.pins.insert(crate::sql::function_pin(&w.value));
            }
            _ => {}
        }
    }
    an.hints = hints.into_owned();
    an.placeholders = places.len() as u32;
    places
}

/// Whether the `@` at `i` starts a variable with a quoted name (`` @`v` ``, `@'v'`, `@"v"`),
/// which `sqlparser` reads as `@` and a quoted token: the name right after it, and no quoted
/// name or string right before it (`'u'@'h'` is an account).
fn quoted_variable(tokens: &[TokenWithSpan], i: usize) -> bool {
    let quoted = |t: Option<&TokenWithSpan>| {
        t.is_some_and(|t| match &t.token {
            Token::Word(w) => w.quote_style.is_some(),
            Token::SingleQuotedString(_) | Token::DoubleQuotedString(_) => true,
            _ => false,
        })
    };
    quoted(tokens.get(i + 1)) && !quoted(i.checked_sub(1).and_then(|p| tokens.get(p)))
}

/// Re-reads the tokens where `sqlparser`'s MySQL tokenizer takes `@` otherwise than the server's
/// lexer (which the fast path's follows): there `@` only starts a variable.
pub(super) fn at_signs(tokens: &mut Vec<TokenWithSpan>) {
    split_at_signs(tokens);
    split_arrow_at(tokens);
}

/// Splits unquoted words at each `@` that follows a name byte (`OR@v` → `OR`, `@v`; `a@@x` →
/// `a`, `@@x`): `@` is a name byte to `sqlparser`.
fn split_at_signs(tokens: &mut Vec<TokenWithSpan>) {
    let glued = |t: &TokenWithSpan| matches!(&t.token, Token::Word(w) if w.quote_style.is_none() && w.value.trim_start_matches('@').contains('@'));
    if !tokens.iter().any(glued) {
        return;
    }
    let mut out = Vec::with_capacity(tokens.len() + 2);
    for t in tokens.drain(..) {
        match &t.token {
            Token::Word(w) if glued(&t) => out.extend(word_pieces(&w.value, t.span)),
            _ => out.push(t),
        }
    }
    *tokens = out;
}

/// Reads `<@` (PostgreSQL's contained-by to `sqlparser`) as `<` and the variable after it:
/// `id<@v` → `id`, `<`, `@v`; `id<@6` → `id`, `<`, `@6`. One pass into a new list (a statement may repeat `<@` at will).
fn split_arrow_at(tokens: &mut Vec<TokenWithSpan>) {
    if !tokens.iter().any(|t| t.token == Token::ArrowAt) {
        return;
    }
    let mut out = Vec::with_capacity(tokens.len() + 1);
    // The span of the `<@` just read, if the token before this one was one.
    let mut arrow: Option<Span> = None;
    for mut t in tokens.drain(..) {
        if let Some(span) = arrow.take() {
            match &t.token {
                Token::Word(w) if w.quote_style.is_none() => t.token = Token::make_word(&format!("@{}", w.value), None),
                // `@6` is the variable named `6` to the server, as to the fast path's lexer
                // (`@6.` too: a name may hold dots).
                Token::Number(n, false) => {
                    t.token = Token::make_word(&format!("@{n}"), None);
                }
                _ => out.push(TokenWithSpan::new(Token::AtSign, span)),
            }
        }
        if t.token == Token::ArrowAt {
            t.token = Token::Lt;
            arrow = Some(t.span);
        }
        out.push(t);
    }
    if let Some(span) = arrow {
        out.push(TokenWithSpan::new(Token::AtSign, span));
    }
    *tokens = out;
}

/// The pieces of a word split before each run of `@` not at its start, with their spans.
fn word_pieces(word: &str, span: Span) -> Vec<TokenWithSpan> {
    let chars: Vec<char> = word.chars().collect();
    let starts: Vec<usize> = (0..chars.len()).filter(|&i| i == 0 || (chars[i] == '@' && chars[i - 1] != '@')).collect();
    let at = |i: usize| Location::new(span.start.line, span.start.column + i as u64);
    starts
        .iter()
        .enumerate()
        .map(|(k, &from)| {
            let to = starts.get(k + 1).copied().unwrap_or(chars.len());
            let text: String = chars[from..to].iter().collect();
            let end = if to == chars.len() { span.end } else { at(to) };
            TokenWithSpan::new(Token::make_word(&text, None), Span::new(at(from), end))
        })
        .collect()
}

/// The class of a token to the depth estimate ([`depth`]): operands are names, numbers, the
/// usual string literals and placeholders; any other token that is not a bracket or separator
/// counts as an operator (the estimate may only err high).
pub(crate) fn class(token: &Token) -> Class {
    match token {
        Token::LParen | Token::LBracket | Token::LBrace => Class::Open,
        Token::RParen | Token::RBracket | Token::RBrace => Class::Close,
        Token::Comma | Token::SemiColon => Class::Separator,
        Token::Word(w) if w.quote_style.is_none() && depth::is_operator_word(&w.value) => Class::Operator,
        Token::Word(_)
        | Token::Whitespace(_)
        | Token::EOF
        | Token::Number(..)
        | Token::Placeholder(_)
        | Token::SingleQuotedString(_)
        | Token::DoubleQuotedString(_)
        | Token::NationalStringLiteral(_)
        | Token::EscapedStringLiteral(_)
        | Token::HexStringLiteral(_)
        | Token::SingleQuotedByteStringLiteral(_)
        | Token::DoubleQuotedByteStringLiteral(_) => Class::Operand,
        _ => Class::Operator,
    }
}

fn is_kw(t: &TokenWithSpan, kw: &str) -> bool {
    matches!(&t.token, Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case(kw))
}

/// Removes a trailing locking clause sqlparser may not accept and returns it.
pub(super) fn strip_lock(tokens: &mut Vec<TokenWithSpan>) -> Option<LockRead> {
    let solid: Vec<usize> =
        (0..tokens.len()).filter(|&i| !matches!(tokens[i].token, Token::Whitespace(_) | Token::SemiColon)).collect();
    let n = solid.len();
    let at = |k: usize| &tokens[solid[k]];
    let ends =
        |words: &[&str]| n >= words.len() && words.iter().enumerate().all(|(k, w)| is_kw(at(n - words.len() + k), w));
    let (len, lock) = if ends(&["LOCK", "IN", "SHARE", "MODE"]) {
        (4, LockRead { strength: LockStrength::Share, wait: LockWait::Block })
    } else {
        lock_tail(tokens, &solid)?
    };
    tokens.truncate(solid[n - len]);
    Some(lock)
}

/// `FOR UPDATE|SHARE [NOWAIT | SKIP LOCKED | WAIT n]` at the end: (token count, lock).
fn lock_tail(tokens: &[TokenWithSpan], solid: &[usize]) -> Option<(usize, LockRead)> {
    let n = solid.len();
    let at = |k: usize| &tokens[solid[k]];
    let (wait, wait_len) = if n >= 1 && is_kw(at(n - 1), "NOWAIT") {
        (LockWait::NoWait, 1)
    } else if n >= 2 && is_kw(at(n - 2), "SKIP") && is_kw(at(n - 1), "LOCKED") {
        (LockWait::SkipLocked, 2)
    } else if n >= 2 && is_kw(at(n - 2), "WAIT") {
        let Token::Number(text, _) = &at(n - 1).token else {
            return None;
        };
        (LockWait::Wait(text.parse().ok()?), 2)
    } else {
        (LockWait::Block, 0)
    };
    let k = n.checked_sub(wait_len + 2)?;
    if !is_kw(at(k), "FOR") {
        return None;
    }
    let strength = if is_kw(at(k + 1), "UPDATE") {
        LockStrength::Update
    } else if is_kw(at(k + 1), "SHARE") {
        LockStrength::Share
    } else {
        return None;
    };
    Some((wait_len + 2, LockRead { strength, wait }))
}

/// Removes `WITH CONSISTENT SNAPSHOT` from a `START TRANSACTION` and reports it.
pub(super) fn strip_snapshot(tokens: &mut Vec<TokenWithSpan>) -> TxnFlags {
    let solid: Vec<usize> = (0..tokens.len()).filter(|&i| !matches!(tokens[i].token, Token::Whitespace(_))).collect();
    let starts = solid.len() >= 2 && is_kw(&tokens[solid[0]], "START") && is_kw(&tokens[solid[1]], "TRANSACTION");
    let mut flags = TxnFlags::default();
    if !starts {
        return flags;
    }
    for k in 2..solid.len().saturating_sub(2) {
        let w = |j: usize, kw: &str| is_kw(&tokens[solid[k + j]], kw);
        if w(0, "WITH") && w(1, "CONSISTENT") && w(2, "SNAPSHOT") {
            flags.insert(TxnFlags::CONSISTENT_SNAPSHOT);
            let mut drop_from = solid[k];
            // Drop a comma separating it from another mode, before or after.
            if k > 2 && tokens[solid[k - 1]].token == Token::Comma {
                drop_from = solid[k - 1];
            }
            let mut drop_to = solid[k + 2] + 1;
            if drop_from == solid[k]
                && tokens.get(solid.get(k + 3).copied().unwrap_or(usize::MAX)).is_some_and(|t| t.token == Token::Comma)
            {
                drop_to = solid[k + 3] + 1;
            }
            tokens.drain(drop_from..drop_to);
            return flags;
        }
    }
    flags
}

/// Gives quoted text MySQL's meaning. The tokenizer runs in no-escape mode, because its own
/// unescaping differs from MySQL's (it reads `\a` and `\f` as BEL and form feed, where MySQL reads
/// `a` and `f`): string literals are unescaped here by [`value::unescape`], the one the fast path
/// uses, and a doubled quote in a quoted name or a byte string stands for one.
pub(super) fn unescape(tokens: &mut [TokenWithSpan]) {
    for t in tokens {
        match &mut t.token {
            Token::SingleQuotedString(s) | Token::NationalStringLiteral(s) => mysql_unescape(s, b'\''),
            Token::DoubleQuotedString(s) => mysql_unescape(s, b'"'),
            Token::SingleQuotedByteStringLiteral(s) => undouble(s, '\''),
            Token::DoubleQuotedByteStringLiteral(s) => undouble(s, '"'),
            Token::Word(w) => {
                if let Some(q) = w.quote_style {
                    undouble(&mut w.value, q);
                }
            }
            _ => {}
        }
    }
}

/// Replaces a string literal's raw body by its unescaped text.
fn mysql_unescape(s: &mut String, quote: u8) {
    if let Cow::Owned(bytes) = value::unescape(s.as_bytes(), quote) {
        // Only ASCII escape pairs are replaced, so the text stays UTF-8.
        *s = String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    }
}

/// Replaces each doubled `quote` by one.
fn undouble(s: &mut String, quote: char) {
    let doubled: String = [quote, quote].iter().collect();
    if s.contains(&doubled) {
        *s = s.replace(&doubled, &quote.to_string());
    }
}

/// Rewrites MySQL forms sqlparser rejects into ones it accepts, keeping what they say:
/// `DELETE|UPDATE LOW_PRIORITY QUICK IGNORE` (modifiers dropped), `SET @a := 1` (`:=` → `=`),
/// and `INSERT … tbl PARTITION (p, …)` (names removed and returned).
pub(super) fn normalize(tokens: &mut Vec<TokenWithSpan>) -> Vec<String> {
    let solid: Vec<usize> = (0..tokens.len()).filter(|&i| !matches!(tokens[i].token, Token::Whitespace(_))).collect();
    let Some(&first) = solid.first() else {
        return Vec::new();
    };
    if is_kw(&tokens[first], "SET") {
        for t in tokens.iter_mut() {
            if t.token == Token::Assignment {
                t.token = Token::Eq;
            }
        }
    } else if is_kw(&tokens[first], "DELETE") || is_kw(&tokens[first], "UPDATE") {
        let drop: Vec<usize> = solid[1..]
            .iter()
            .copied()
            .take_while(|&i| ["LOW_PRIORITY", "QUICK", "IGNORE"].iter().any(|k| is_kw(&tokens[i], k)))
            .collect();
        for i in drop.into_iter().rev() {
            tokens.remove(i);
        }
    } else if is_kw(&tokens[first], "INSERT") || is_kw(&tokens[first], "REPLACE") {
        return insert_partition(tokens, &solid);
    }
    Vec::new()
}

/// Removes `PARTITION (names)` following the target of an INSERT and returns the names.
fn insert_partition(tokens: &mut Vec<TokenWithSpan>, solid: &[usize]) -> Vec<String> {
    let Some(k) = solid.iter().position(|&i| is_kw(&tokens[i], "PARTITION")) else {
        return Vec::new();
    };
    if k < 2 || !solid[..k].iter().all(|&i| matches!(tokens[i].token, Token::Word(_) | Token::Period)) {
        return Vec::new();
    }
    let mut names = Vec::new();
    let mut j = k + 1;
    if solid.get(j).is_none_or(|&i| tokens[i].token != Token::LParen) {
        return Vec::new();
    }
    loop {
        j += 1;
        match solid.get(j).map(|&i| &tokens[i].token) {
            Some(Token::Word(w)) => names.push(w.value.clone()),
            _ => return Vec::new(),
        }
        j += 1;
        match solid.get(j).map(|&i| &tokens[i].token) {
            Some(Token::Comma) => continue,
            Some(Token::RParen) => break,
            _ => return Vec::new(),
        }
    }
    tokens.drain(solid[k]..=solid[j]);
    names
}

#[cfg(test)]
mod tests {
    use sqlparser::dialect::MySqlDialect;
    use sqlparser::tokenizer::{Token, Tokenizer};

    use super::split_arrow_at;

    fn read(sql: &str) -> Vec<Token> {
        let mut toks = Tokenizer::new(&MySqlDialect {}, sql).tokenize_with_location().unwrap_or_default();
        split_arrow_at(&mut toks);
        toks.into_iter().map(|t| t.token).filter(|t| !matches!(t, Token::Whitespace(_))).collect()
    }

    #[test]
    fn contained_by_reads_as_less_than_and_a_variable() {
        let words = |t: &[Token]| {
            t.iter()
                .filter_map(|t| if let Token::Word(w) = t { Some(w.value.clone()) } else { None })
                .collect::<Vec<_>>()
        };
        let toks = read("id<@v");
        assert_eq!(toks.get(1), Some(&Token::Lt));
        assert_eq!(words(&toks), ["id", "@v"]);
        // A name of digits is a variable's too (`@1`). Before a non-name the variable's `@` stands
        // alone, at the end too, and every `<@` is read.
        let toks = read("a<@1<@<@");
        let lt = toks.iter().filter(|t| **t == Token::Lt).count();
        let at = toks.iter().filter(|t| **t == Token::AtSign).count();
        assert_eq!((lt, at), (3, 2), "{toks:?}");
        assert_eq!(words(&toks), ["a", "@1"]);
        assert!(!toks.contains(&Token::ArrowAt));
    }

    #[test]
    fn a_variable_with_a_quoted_name_pins_the_session_and_an_account_does_not() {
        let pins = |sql: &str| crate::sql::reference::analyze(sql).pins;
        for sql in ["SELECT @`a`", "SELECT @'a' FROM t", "SELECT 1 = @\"a\"", "SELECT x FROM t WHERE id<@6.5"] {
            assert!(pins(sql).contains(crate::sql::analysis::Pins::USER_VAR), "{sql}");
        }
        for sql in ["CREATE USER 'u'@'h'", "GRANT ALL ON *.* TO `u`@`%`", "SELECT '@a'"] {
            assert!(!pins(sql).contains(crate::sql::analysis::Pins::USER_VAR), "{sql}");
        }
    }
}
