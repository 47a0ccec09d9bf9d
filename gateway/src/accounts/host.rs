//! Host part of an account (`'u'@'10.%'`) against the client's real address.
//!
//! The gateway never resolves names (like a server run with `--skip-name-resolve`): a pattern
//! matches the client address's text with MySQL's wildcards (`%` any run, `_` one character,
//! case-insensitive), `a.b.c.d/m.m.m.m` is an address with a netmask, and `localhost` matches
//! a loopback client (what a server resolving `127.0.0.1` calls it). Among an account's entries
//! the most specific matching host wins, as on the server: an address without wildcards first,
//! then `localhost`, then netmasks, then patterns by how long their text before the first
//! wildcard is, `%` last.

use std::net::{IpAddr, Ipv4Addr};

/// Longest host pattern considered (MariaDB's `Host` column is 255 characters).
const MAX_PATTERN: usize = 255;

/// Whether `pattern` (an account's host) admits a client at `client`.
pub fn matches(pattern: &str, client: IpAddr) -> bool {
    if pattern.len() > MAX_PATTERN {
        return false;
    }
    if pattern.is_empty() {
        // `'u'@''` is `'u'@'%'` (MariaDB stores it so; MySQL documents them as the same).
        return true;
    }
    if pattern.eq_ignore_ascii_case("localhost") {
        return client.is_loopback();
    }
    if let Some((addr, mask)) = pattern.split_once('/') {
        return netmask_matches(addr, mask, client);
    }
    wildcard_matches(pattern.as_bytes(), client.to_string().as_bytes())
}

/// Sort key of a host pattern: a higher key is more specific (tried first).
pub fn specificity(pattern: &str) -> u32 {
    // An empty host is `%`: the least specific.
    let wildcard = if pattern.is_empty() { Some(0) } else { pattern.find(['%', '_']) };
    match wildcard {
        None if pattern.contains('/') => 2 * MAX_PATTERN as u32 + 1,
        None if pattern.eq_ignore_ascii_case("localhost") => 2 * MAX_PATTERN as u32 + 2,
        None => 2 * MAX_PATTERN as u32 + 3,
        Some(at) => at.min(MAX_PATTERN) as u32,
    }
}

fn netmask_matches(addr: &str, mask: &str, client: IpAddr) -> bool {
    let (Ok(addr), Ok(mask), IpAddr::V4(ip)) = (addr.parse::<Ipv4Addr>(), mask.parse::<Ipv4Addr>(), client) else {
        return false;
    };
    u32::from(ip) & u32::from(mask) == u32::from(addr)
}

/// SQL `LIKE` matching of `text` against `pattern` (`%`, `_`, no escapes), ASCII case-insensitive,
/// iterative with one backtrack point (linear in practice, never recursive).
fn wildcard_matches(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            Some(b'%') => {
                star = Some((p, t));
                p += 1;
            }
            Some(&c) if c == b'_' || c.eq_ignore_ascii_case(&text[t]) => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp + 1;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == b'%')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn patterns_match_like_the_server() {
        let cases = [
            ("%", "192.0.2.7", true),
            ("10.%", "10.1.2.3", true),
            ("10.%", "127.0.0.1", false),
            ("10.%", "110.0.0.1", false),
            ("127.0.0._", "127.0.0.1", true),
            ("127.0.0._", "127.0.0.12", false),
            ("127.0.0.1", "127.0.0.1", true),
            ("127.0.0.1", "127.0.0.2", false),
            ("localhost", "127.0.0.1", true),
            ("LOCALHOST", "::1", true),
            ("localhost", "10.0.0.1", false),
            ("10.0.0.0/255.0.0.0", "10.9.8.7", true),
            ("10.0.0.0/255.0.0.0", "11.0.0.1", false),
            ("10.0.0.0/255.0.0.0", "::1", false),
            ("%.%.%.1", "10.20.30.1", true),
            ("%.%.%.1", "10.20.30.2", false),
            ("app.example.com", "10.0.0.1", false),
            // An empty host is `%` (found by the server_accounts fuzz target).
            ("", "192.0.2.7", true),
            ("", "::1", true),
        ];
        for (pattern, client, want) in cases {
            assert_eq!(matches(pattern, ip(client)), want, "{pattern} vs {client}");
        }
    }

    #[test]
    fn exact_hosts_are_more_specific_than_patterns() {
        let mut hosts = vec!["%", "10.%", "10.0.0.0/255.0.0.0", "localhost", "10.0.0.1", "10.0.%"];
        hosts.sort_by_key(|h| std::cmp::Reverse(specificity(h)));
        assert_eq!(hosts, ["10.0.0.1", "localhost", "10.0.0.0/255.0.0.0", "10.0.%", "10.%", "%"]);
        assert_eq!(specificity(""), specificity("%"), "an empty host is the least specific, as %");
    }

    #[test]
    fn long_and_pathological_patterns_stay_cheap() {
        let evil = "%_".repeat(100) + "x";
        assert!(!matches(&evil, ip("255.255.255.255")));
        assert!(!matches(&"%".repeat(300), ip("10.0.0.1")));
    }
}
