//! Collations the partition functions understand: `binary`, `utf8mb4_bin`, `utf8mb4_general_ci` (docs/partition.md §4).

use std::cmp::Ordering;

use super::general_ci_table::PAGES;
use super::murmur::murmur64a;
use super::PartitionError;

/// A supported collation of a string key column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Collation {
    /// `binary` (63): bytes as they are, no trailing-space trimming.
    Binary,
    /// `utf8mb4_bin` (46): code points, PAD SPACE.
    Utf8mb4Bin,
    /// `utf8mb4_general_ci` (45): `my_unicase_default` weights, PAD SPACE.
    Utf8mb4GeneralCi,
}

impl Collation {
    /// The collation by its SQL name (case-insensitive); `utf8` / `utf8mb3` names are not accepted.
    pub fn from_name(name: &str) -> Result<Collation, PartitionError> {
        match name.to_ascii_lowercase().as_str() {
            "binary" => Ok(Collation::Binary),
            "utf8mb4_bin" => Ok(Collation::Utf8mb4Bin),
            "utf8mb4_general_ci" => Ok(Collation::Utf8mb4GeneralCi),
            _ => Err(PartitionError::Unsupported(format!("collation {name} not supported"))),
        }
    }

    /// The default collation of a character set, as OceanBase and MySQL 5.7 / MariaDB pick it.
    pub fn default_for_charset(charset: &str) -> String {
        match charset.to_ascii_lowercase().as_str() {
            "binary" => "binary".into(),
            "utf8mb4" => "utf8mb4_general_ci".into(),
            "utf8" | "utf8mb3" => "utf8mb3_general_ci".into(),
            "latin1" => "latin1_swedish_ci".into(),
            other => format!("{other}_general_ci"),
        }
    }

    /// The SQL name.
    pub fn name(self) -> &'static str {
        match self {
            Collation::Binary => "binary",
            Collation::Utf8mb4Bin => "utf8mb4_bin",
            Collation::Utf8mb4GeneralCi => "utf8mb4_general_ci",
        }
    }

    /// True if strings of this collation must be valid UTF-8.
    pub fn is_utf8(self) -> bool {
        self != Collation::Binary
    }

    /// `hash_sort(bytes, seed)` in MySQL mode (`calc_end_space = false`).
    pub fn hash_sort(self, bytes: &[u8], seed: u64) -> u64 {
        match self {
            Collation::Binary => murmur64a(bytes, seed),
            Collation::Utf8mb4Bin => murmur64a(trim_spaces(bytes), seed),
            Collation::Utf8mb4GeneralCi => hash_general_ci(trim_spaces(bytes), seed),
        }
    }

    /// Compares two strings under this collation (PAD SPACE for the utf8mb4 ones).
    pub fn compare(self, a: &[u8], b: &[u8]) -> Ordering {
        match self {
            Collation::Binary => a.cmp(b),
            Collation::Utf8mb4Bin => pad_compare(code_points(a), code_points(b)),
            Collation::Utf8mb4GeneralCi => pad_compare(code_points(a).map(weight), code_points(b).map(weight)),
        }
    }
}

fn trim_spaces(bytes: &[u8]) -> &[u8] {
    let end = bytes.iter().rposition(|&b| b != b' ').map_or(0, |i| i + 1);
    &bytes[..end]
}

/// Code points of a UTF-8 string, stopping at the first invalid sequence.
fn code_points(bytes: &[u8]) -> impl Iterator<Item = u32> + '_ {
    let valid = match std::str::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default(),
    };
    valid.chars().map(u32::from)
}

/// The general_ci sort weight of a code point (0xFFFD outside the BMP).
pub fn weight(cp: u32) -> u32 {
    if cp > 0xFFFF {
        return 0xFFFD;
    }
    let page = (cp >> 8) as u8;
    match PAGES.binary_search_by_key(&page, |(p, _)| *p) {
        Ok(i) => PAGES.get(i).map_or(cp, |(_, table)| u32::from(table[(cp & 0xFF) as usize])),
        Err(_) => cp,
    }
}

/// PAD SPACE comparison: the shorter sequence is extended with spaces (0x20).
fn pad_compare(a: impl Iterator<Item = u32>, b: impl Iterator<Item = u32>) -> Ordering {
    let mut a = a.peekable();
    let mut b = b.peekable();
    loop {
        match (a.next(), b.next()) {
            (None, None) => return Ordering::Equal,
            (Some(x), Some(y)) if x != y => return x.cmp(&y),
            (Some(_), Some(_)) => {}
            (Some(x), None) => return rest_vs_space(x, &mut a),
            (None, Some(y)) => return rest_vs_space(y, &mut b).reverse(),
        }
    }
}

fn rest_vs_space(first: u32, rest: &mut dyn Iterator<Item = u32>) -> Ordering {
    std::iter::once(first).chain(rest).map(|c| c.cmp(&0x20)).find(|o| *o != Ordering::Equal).unwrap_or(Ordering::Equal)
}

/// `ob_hash_sort_utf8mb4`: 2-byte little-endian weights hashed in 128-byte chunks.
fn hash_general_ci(bytes: &[u8], seed: u64) -> u64 {
    let mut buf = [0u8; 128];
    let mut len = 0usize;
    let mut n1 = seed;
    for wc in code_points(bytes).map(weight) {
        if len > 126 || (len == 126 && wc > 0xFFFF) {
            n1 = murmur64a(&buf[..len], n1);
            len = 0;
        }
        buf[len] = (wc & 0xFF) as u8;
        buf[len + 1] = ((wc >> 8) & 0xFF) as u8;
        len += 2;
    }
    if len > 0 {
        n1 = murmur64a(&buf[..len], n1);
    }
    n1
}

#[cfg(test)]
mod tests {
    use super::*;

    // docs/partition.md §10, first table (collation rows).
    #[test]
    fn published_collation_vectors() {
        assert_eq!(Collation::Binary.hash_sort(b"partitionKey", 0) as i64, -6632533813747801170);
        assert_eq!(Collation::Utf8mb4GeneralCi.hash_sort(b"abcdef", 0) as i64, 5483367784116059036);
        assert_eq!(Collation::Utf8mb4GeneralCi.hash_sort("蚂蚁金服".as_bytes(), 0) as i64, 5857140318165389032);
        assert_eq!(
            Collation::Utf8mb4Bin.hash_sort(b"Test Partition Key 0 c1 column c1 c1 c1", 0) as i64,
            141008085297877540
        );
        assert_eq!(
            Collation::Utf8mb4Bin.hash_sort(&[0x01, 0x01, 0x02, 0x7a, 0x71, 0x2b, 0x5f, 0x30], 47) as i64,
            -8699342424260018756
        );
    }

    #[test]
    fn general_ci_folds_case_and_accents() {
        assert_eq!(weight(u32::from('a')), 0x41);
        assert_eq!(weight(0xE9), 0x45);
        assert_eq!(weight(0x128), 0x49);
        assert_eq!(weight(0x4E00), 0x4E00);
        assert_eq!(weight(0x1F600), 0xFFFD);
        let g = Collation::Utf8mb4GeneralCi;
        let h = g.hash_sort("é".as_bytes(), 0);
        assert_eq!(h, g.hash_sort(b"E", 0));
        assert_eq!(h, g.hash_sort(b"e  ", 0));
        assert_eq!(g.hash_sort(b"   ", 7), 7);
        assert_eq!(g.compare(b"abc", b"ABC "), Ordering::Equal);
        assert_eq!(g.compare(b"ab", b"ab\t"), Ordering::Greater);
    }

    #[test]
    fn long_strings_hash_in_chunks() {
        let s = "x".repeat(200);
        let weights: Vec<u8> = std::iter::repeat_n([0x58u8, 0], 200).flatten().collect();
        let mut h = 0;
        for chunk in weights.chunks(128) {
            h = murmur64a(chunk, h);
        }
        assert_eq!(Collation::Utf8mb4GeneralCi.hash_sort(s.as_bytes(), 0), h);
    }

    #[test]
    fn binary_keeps_spaces_bin_trims() {
        assert_ne!(Collation::Binary.hash_sort(b"ab  ", 0), Collation::Binary.hash_sort(b"ab", 0));
        assert_eq!(Collation::Utf8mb4Bin.hash_sort(b"ab  ", 0), Collation::Utf8mb4Bin.hash_sort(b"ab", 0));
        assert!(Collation::from_name("latin1_swedish_ci").is_err());
    }
}
