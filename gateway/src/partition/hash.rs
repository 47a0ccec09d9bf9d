//! HASH (§3) and KEY (§4) partition functions: per-type bytes, seed chaining, index rules.

use super::collation::Collation;
use super::murmur::murmur64a;
use super::scheme::Column;
use super::value::Datum;
use super::PartitionError;

/// Little-endian u32 words of a DecimalInt, sign-extension words dropped (at least one kept).
pub fn decimal_words(v: i128) -> Vec<u8> {
    let mut words: Vec<u32> = (0..4).map(|i| (v >> (32 * i)) as u32).collect();
    while words.len() > 1 {
        let (last, prev) = (words[words.len() - 1], words[words.len() - 2]);
        let redundant = (last == 0 && prev & 0x8000_0000 == 0) || (last == u32::MAX && prev & 0x8000_0000 != 0);
        if !redundant {
            break;
        }
        words.pop();
    }
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// The bytes a non-string datum contributes to the KEY hash (§4.1); `None` for strings.
pub fn key_bytes(d: &Datum) -> Option<Vec<u8>> {
    let le = |v: i64| Some(v.to_le_bytes().to_vec());
    match d {
        Datum::Null => Some(vec![0, 0, 0, 0]),
        Datum::Int(i) => le(*i),
        Datum::UInt(u) => Some(u.to_le_bytes().to_vec()),
        Datum::Double(f) => {
            let f = if *f == 0.0 { 0.0f64 } else { *f };
            Some(f.to_bits().to_le_bytes().to_vec())
        }
        Datum::Decimal(v) => Some(decimal_words(*v)),
        Datum::Date(d) => le(d.packed()),
        Datum::DateTime(d) => le(d.packed()),
        Datum::Timestamp(us) | Datum::Time(us) => le(*us),
        Datum::Year(y) => le(i64::from(*y)),
        Datum::Str(_) => None,
    }
}

/// One step of the KEY hash chain: `hash_i(o, seed)`, and a trace line.
pub fn key_hash_step(d: &Datum, col: &Column, seed: u64) -> Result<(u64, String), PartitionError> {
    match (key_bytes(d), d) {
        (Some(b), _) => {
            let h = murmur64a(&b, seed);
            Ok((h, format!("murmur64a({}, seed {seed:#x}) = {h:#x}", hex::encode(&b))))
        }
        (None, Datum::Str(s)) => {
            let coll = Collation::from_name(&col.collation)?;
            let h = coll.hash_sort(s, seed);
            Ok((h, format!("{}.hash_sort({}, seed {seed:#x}) = {h:#x}", coll.name(), hex::encode(s))))
        }
        (None, _) => Err(PartitionError::Unsupported("no KEY encoding".into())),
    }
}

/// KEY index: `abs` of the hash as i64 (INT64_MIN stays, read as 2^63), modulo `n`.
pub fn key_index(h: u64, n: usize) -> usize {
    let r = h as i64;
    let r = if r < 0 { r.wrapping_neg() } else { r };
    ((r as u64) % n as u64) as usize
}

/// The BIGINT a HASH key evaluates to: NULL → None; unsigned above INT64_MAX reinterpreted.
pub fn hash_input(d: &Datum, col: &Column) -> Result<Option<i64>, PartitionError> {
    match d {
        Datum::Null => Ok(None),
        Datum::Int(i) => Ok(Some(*i)),
        Datum::UInt(u) => Ok(Some(*u as i64)),
        _ => Err(PartitionError::Unsupported(format!("HASH on non-integer column {}", col.name))),
    }
}

/// HASH index (§3): NULL → 0, INT64_MIN → INT64_MAX, else `|v|`, modulo `n`.
pub fn hash_index(v: Option<i64>, n: usize) -> usize {
    let val = match v {
        None => 0,
        Some(i64::MIN) => i64::MAX,
        Some(v) => v.abs(),
    };
    (val as u64 % n as u64) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    // partition.md §3, "HASH(int) rule examples" (ABS(-123) is evaluated to 123 by the SQL layer).
    #[test]
    fn hash_examples_table() {
        assert_eq!(hash_index(Some(123), 8), 3);
        assert_eq!(hash_index(Some((-123i64).abs()), 8), 3);
        assert_eq!(hash_index(Some(1), 8), 1);
        assert_eq!(hash_index(Some(5), 5), 0);
        assert_eq!(hash_index(Some(-7), 8), 7);
        assert_eq!(hash_index(None, 8), 0);
        assert_eq!(hash_index(Some(-2147483648), 8), 0);
        assert_eq!(hash_index(Some(i64::MIN), 8), 7);
        // Unsigned above INT64_MAX (kernel-checked, 8 partitions).
        assert_eq!(hash_index(Some(u64::MAX as i64), 8), 1);
        assert_eq!(hash_index(Some(9223372036854775808u64 as i64), 8), 7);
        assert_eq!(hash_index(Some(9223372036854775809u64 as i64), 8), 7);
    }

    #[test]
    fn decimal_word_trimming() {
        assert_eq!(decimal_words(1234), 1234u32.to_le_bytes().to_vec());
        assert_eq!(decimal_words(-1234), (-1234i32 as u32).to_le_bytes().to_vec());
        assert_eq!(decimal_words(0), vec![0, 0, 0, 0]);
        assert_eq!(decimal_words(-15_000_000_000).len(), 8);
        assert_eq!(decimal_words(0x8000_0000).len(), 8);
    }

    #[test]
    fn key_index_abs_rule() {
        assert_eq!(key_index(i64::MIN as u64, 3), ((1u64 << 63) % 3) as usize);
        assert_eq!(key_index((-5i64) as u64, 8), 5);
    }
}
