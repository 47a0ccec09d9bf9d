//! Seed corpora for the fuzz targets, taken from the repository at run time rather than
//! committed: the SQL, SET, DDL and login-name literals of the tests, the example configuration
//! and the harness's generated one. (Packet seeds are few and committed under fuzz/seeds/.)

use std::collections::BTreeSet;
use std::path::Path;

use anyhow::Context;

/// Leading words of the statements taken as SQL seeds.
const SQL_START: &[&str] = &[
    "SELECT",
    "INSERT",
    "UPDATE",
    "DELETE",
    "REPLACE",
    "SET",
    "BEGIN",
    "START",
    "COMMIT",
    "ROLLBACK",
    "USE",
    "SHOW",
    "CREATE",
    "DROP",
    "ALTER",
    "PREPARE",
    "EXECUTE",
    "DEALLOCATE",
    "XA",
    "LOCK",
    "UNLOCK",
    "EXPLAIN",
    "CALL",
    "WITH",
    "SAVEPOINT",
    "RELEASE",
    "KILL",
    "TRUNCATE",
    "DO",
    "HANDLER",
    "LOAD",
    "/*",
    "(",
];

/// Rows located in each DDL seed's table.
const ROWS: &str = "1\n'abc'\n-5, 'x'\n'2024-02-29 12:00:00'\nNULL\nX'00ff', 18446744073709551615\n1.50e3";

/// Writes the seeds of `target` into `dir`; returns how many there are. Files are named by a
/// hash of their content, so re-seeding an existing corpus adds nothing twice.
pub fn write(target: &str, root: &Path, dir: &Path) -> anyhow::Result<usize> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let seeds = seeds(target, root)?;
    for s in &seeds {
        let path = dir.join(format!("seed-{:016x}", fnv(s)));
        std::fs::write(&path, s).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(seeds.len())
}

fn seeds(target: &str, root: &Path) -> anyhow::Result<BTreeSet<Vec<u8>>> {
    let code = || literals(&[root.join("gateway/src"), root.join("tests/tests")]);
    let mut out = BTreeSet::new();
    match target {
        "sql_fast" | "sql_reference" | "sql_agree" | "sql_shape" => {
            out.extend(code()?.into_iter().filter(|l| is_sql(l)).map(String::into_bytes))
        }
        "session_state" => {
            let sets: Vec<String> = code()?.into_iter().filter(|l| starts_with_word(l, "SET")).collect();
            out.extend(sets.iter().map(|s| [&[1u8][..], s.as_bytes()].concat()));
            // A few sessions of several statements, some held, some run on the connection.
            for (i, w) in sets.windows(3).enumerate().step_by(7) {
                let flags = [1u8, 0, 5, 4][i % 4];
                out.insert(
                    w.iter().map(|s| [&[flags][..], s.as_bytes()].concat()).collect::<Vec<_>>().join(&[0xFF][..]),
                );
            }
        }
        "ddl" => out.extend(
            code()?
                .into_iter()
                .filter(|l| l.to_ascii_uppercase().contains("CREATE TABLE"))
                .map(|d| [d.as_bytes(), &[0xFF], ROWS.as_bytes()].concat()),
        ),
        "login_name" => {
            let files = [root.join("gateway/src/login_name"), root.join("tests/tests/login_names.rs")];
            for name in literals(&files)?.into_iter().filter(|l| l.len() < 400 && !l.contains('\n')) {
                out.insert(format!(":;-;.\n{name}\n").into_bytes());
                out.insert(format!(":;-;.\n{name}\ntenant_l\ncluster_l\nt_cfg\nc_cfg\n").into_bytes());
            }
        }
        "config" => {
            let example = root.join("dist/gateway.example.toml");
            out.insert(std::fs::read(&example).with_context(|| format!("reading {}", example.display()))?);
            out.extend(
                code()?
                    .into_iter()
                    .filter(|l| l.contains("[listen]") || l.contains("[[users]]"))
                    .map(String::into_bytes),
            );
            out.extend(harness_configs()?);
        }
        _ => {}
    }
    Ok(out)
}

/// Configurations as the test harness writes them.
fn harness_configs() -> anyhow::Result<Vec<Vec<u8>>> {
    use gateway_tests::{GatewayConfig, UserEntry};
    let backend = "127.0.0.1:3306".parse()?;
    let plain = GatewayConfig::new(backend)?;
    let rich = GatewayConfig::new(backend)?
        .user(UserEntry::native("app", "secret").with_database("db1"))
        .user(UserEntry::caching_sha2("sha", "pw").admin())
        .max_packet_size(65536);
    Ok(vec![plain.to_toml().into_bytes(), rich.to_toml().into_bytes()])
}

fn is_sql(l: &str) -> bool {
    l.len() < 4000 && SQL_START.iter().any(|w| starts_with_word(l, w))
}

fn starts_with_word(l: &str, w: &str) -> bool {
    let t = l.trim_start();
    t.get(..w.len()).is_some_and(|h| h.eq_ignore_ascii_case(w))
        && t[w.len()..].chars().next().is_none_or(|c| !c.is_ascii_alphanumeric() && c != '_')
}

/// The string literals (`"…"`, `r"…"`, `r#"…"#`) of the `.rs` files under `paths`, unescaped.
fn literals(paths: &[impl AsRef<Path>]) -> anyhow::Result<Vec<String>> {
    let mut out = Vec::new();
    for p in paths {
        for file in rust_files(p.as_ref())? {
            let text = std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
            out.extend(scan_literals(&text));
        }
    }
    Ok(out)
}

fn rust_files(p: &Path) -> anyhow::Result<Vec<std::path::PathBuf>> {
    if p.is_file() {
        return Ok(vec![p.to_path_buf()]);
    }
    let mut out = Vec::new();
    for e in std::fs::read_dir(p).with_context(|| format!("reading {}", p.display()))? {
        let path = e?.path();
        if path.is_dir() {
            out.extend(rust_files(&path)?);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}

/// A small scanner: skips comments and char literals, reads plain and raw string literals.
fn scan_literals(text: &str) -> Vec<String> {
    let b = text.as_bytes();
    let (mut i, mut out) = (0, Vec::new());
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => i = text[i..].find('\n').map_or(b.len(), |n| i + n),
            b'\'' => i = skip_char_literal(b, i),
            b'r' if (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#')) && !ident_before(b, i) => {
                let hashes = b[i + 1..].iter().take_while(|c| **c == b'#').count();
                if b.get(i + 1 + hashes) != Some(&b'"') {
                    i += 1;
                    continue;
                }
                let start = i + 2 + hashes;
                let close = format!("\"{}", "#".repeat(hashes));
                let end = text[start..].find(&close).map_or(b.len(), |n| start + n);
                out.push(text[start..end].to_string());
                i = end + close.len();
            }
            b'"' => {
                let (lit, next) = plain_literal(text, i + 1);
                out.push(lit);
                i = next;
            }
            _ => i += 1,
        }
    }
    out
}

fn ident_before(b: &[u8], i: usize) -> bool {
    i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_')
}

/// Past a char literal `'x'`, `'\n'`, `'\u{1F600}'`, or just past a lifetime's quote.
fn skip_char_literal(b: &[u8], i: usize) -> usize {
    if b.get(i + 1) == Some(&b'\\') {
        return b[i + 2..].iter().position(|c| *c == b'\'').map_or(b.len(), |n| i + 3 + n);
    }
    let width = b.get(i + 1).map_or(1, |c| match c.leading_ones() {
        0 => 1,
        n => n as usize,
    });
    if b.get(i + 1 + width) == Some(&b'\'') {
        i + 2 + width
    } else {
        i + 1
    }
}

/// The unescaped text of a `"…"` literal starting at `start` (after the quote) and the index past
/// its closing quote.
fn plain_literal(text: &str, start: usize) -> (String, usize) {
    let mut s = String::new();
    let mut chars = text[start..].char_indices();
    while let Some((k, c)) = chars.next() {
        match c {
            '"' => return (s, start + k + 1),
            '\\' => match chars.next().map(|(_, e)| e) {
                Some('n') => s.push('\n'),
                Some('t') => s.push('\t'),
                Some('r') => s.push('\r'),
                Some('0') => s.push('\0'),
                Some('\n') => {
                    // Line continuation: the newline and the next line's indentation vanish.
                    let rest = chars.as_str();
                    let skip = rest.len() - rest.trim_start().len();
                    for _ in 0..rest[..skip].chars().count() {
                        chars.next();
                    }
                }
                Some('x') => {
                    let hex: String = chars.by_ref().take(2).map(|(_, h)| h).collect();
                    s.extend(u8::from_str_radix(&hex, 16).ok().map(char::from));
                }
                Some('u') => {
                    let code: String =
                        chars.by_ref().map(|(_, h)| h).take_while(|h| *h != '}').filter(|h| *h != '{').collect();
                    s.extend(u32::from_str_radix(&code, 16).ok().and_then(char::from_u32));
                }
                Some(other) => s.push(other),
                None => break,
            },
            c => s.push(c),
        }
    }
    (s, text.len())
}

/// FNV-1a, for seed file names.
fn fnv(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_are_read_unescaped_past_comments_and_chars() {
        let src = r####"
            // "not this"
            let a = "SELECT 'x'\n FROM t WHERE c = \"q\"";
            let c = '"'; let l: &'static str = "SET @a = 1";
            let r = r#"CREATE TABLE "t" (a int)"#; let e = "\x41\u{e9}";
            let k = "a \
                     b";
        "####;
        let got = scan_literals(src);
        assert_eq!(
            got,
            ["SELECT 'x'\n FROM t WHERE c = \"q\"", "SET @a = 1", "CREATE TABLE \"t\" (a int)", "Aé", "a b"],
        );
        assert!(is_sql(&got[0]) && starts_with_word(&got[1], "SET") && !starts_with_word("SETTINGS", "SET"));
    }
}
