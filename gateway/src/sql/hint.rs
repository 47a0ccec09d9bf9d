//! Routing hints carried in comments: `READ_CONSISTENCY`, `/*+ODP: k=v */`, `target_db_server`.

use std::borrow::Cow;

use super::analysis::Name;

/// Read consistency requested by a hint (`FROZEN` is ignored, as ODP does).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Consistency {
    /// `READ_CONSISTENCY(WEAK)`.
    Weak,
    /// `READ_CONSISTENCY(STRONG)`.
    Strong,
}

/// Hints found in the comments of a statement.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Hints<'a> {
    /// `/*+ READ_CONSISTENCY(WEAK|STRONG) */` (also the `/* +READ_CONSISTENCY(…) */` spelling).
    pub consistency: Option<Consistency>,
    /// `target_db_server` from `/* target_db_server=ip:port,… */` or an ODP hint.
    pub target_db_server: Option<Name<'a>>,
    /// Every `key=value` pair of `/*+ODP: … */` hints, in order.
    pub odp: Vec<(Name<'a>, Name<'a>)>,
}

impl<'a> Hints<'a> {
    /// Whether no hint was found.
    pub fn is_empty(&self) -> bool {
        self.consistency.is_none() && self.target_db_server.is_none() && self.odp.is_empty()
    }

    /// A copy that owns all its data.
    pub fn into_owned<'b>(self) -> Hints<'b> {
        let own = |c: Name<'a>| -> Name<'b> { Cow::Owned(c.into_owned()) };
        Hints {
            consistency: self.consistency,
            target_db_server: self.target_db_server.map(own),
            odp: self.odp.into_iter().map(|(k, v)| (own(k), own(v))).collect(),
        }
    }

    /// Reads the body of one block comment (the text between `/*` and `*/`).
    pub fn scan(&mut self, body: Cow<'a, str>) {
        match body {
            Cow::Borrowed(b) => self.scan_str(b, &|s: &'a str| Cow::Borrowed(s)),
            Cow::Owned(b) => self.scan_str(&b, &|s: &str| Cow::Owned(s.to_owned())),
        }
    }

    fn scan_str<'s>(&mut self, body: &'s str, keep: &dyn Fn(&'s str) -> Name<'a>) {
        let trimmed = body.trim_start();
        if let Some(hint) = trimmed.strip_prefix('+') {
            let hint = hint.trim_start();
            match strip_prefix_ci(hint, "ODP:") {
                Some(pairs) => self.scan_pairs(pairs, keep),
                None => self.scan_consistency(hint),
            }
        } else if strip_prefix_ci(trimmed, "target_db_server").is_some() {
            self.scan_pairs(trimmed, keep);
        }
    }

    fn scan_consistency(&mut self, hint: &str) {
        let upper = hint.to_ascii_uppercase();
        let Some(at) = upper.find("READ_CONSISTENCY") else {
            return;
        };
        let rest = upper[at + "READ_CONSISTENCY".len()..].trim_start();
        let Some(arg) = rest.strip_prefix('(') else {
            return;
        };
        let arg = arg.trim_start();
        if arg.starts_with("WEAK") {
            self.consistency = Some(Consistency::Weak);
        } else if arg.starts_with("STRONG") {
            self.consistency = Some(Consistency::Strong);
        }
    }

    fn scan_pairs<'s>(&mut self, mut text: &'s str, keep: &dyn Fn(&'s str) -> Name<'a>) {
        while let Some((key, value, rest)) = next_pair(text) {
            if key.eq_ignore_ascii_case("target_db_server") {
                self.target_db_server = Some(keep(value));
            }
            self.odp.push((keep(key), keep(value)));
            text = rest;
        }
    }
}

fn strip_prefix_ci<'s>(s: &'s str, prefix: &str) -> Option<&'s str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix).then(|| &s[prefix.len()..])
}

/// `key = value` (value quoted, or up to the next blank; trailing commas dropped).
fn next_pair(text: &str) -> Option<(&str, &str, &str)> {
    let text = text.trim_start_matches(|c: char| c.is_whitespace() || c == ',');
    let key_len = text.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))?;
    let (key, rest) = text.split_at(key_len);
    let rest = rest.trim_start().strip_prefix('=')?.trim_start();
    if key.is_empty() {
        return None;
    }
    if let Some(q @ ('\'' | '"')) = rest.chars().next() {
        let end = rest[1..].find(q)? + 1;
        return Some((key, &rest[1..end], &rest[end + 1..]));
    }
    let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
    Some((key, rest[..end].trim_end_matches(','), &rest[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(body: &str) -> Hints<'_> {
        let mut h = Hints::default();
        h.scan(Cow::Borrowed(body));
        h
    }

    #[test]
    fn consistency() {
        assert_eq!(scan("+ READ_CONSISTENCY(WEAK) ").consistency, Some(Consistency::Weak));
        assert_eq!(scan(" +read_consistency( strong )").consistency, Some(Consistency::Strong));
        assert_eq!(scan("+ QUERY_TIMEOUT(1) READ_CONSISTENCY(FROZEN)").consistency, None);
        assert_eq!(scan(" READ_CONSISTENCY(WEAK)").consistency, None);
    }

    #[test]
    fn odp_pairs() {
        let h = scan("+ODP: target_db_server=1.1.1.1:2881,2.2.2.2:2881 k = 'v w', x=1,");
        assert_eq!(h.target_db_server.as_deref(), Some("1.1.1.1:2881,2.2.2.2:2881"));
        assert_eq!(h.odp.len(), 3);
        assert_eq!(h.odp[1], ("k".into(), "v w".into()));
        assert_eq!(h.odp[2], ("x".into(), "1".into()));
        let h = scan(" target_db_server=127.0.0.1:2881 ");
        assert_eq!(h.target_db_server.as_deref(), Some("127.0.0.1:2881"));
    }
}
