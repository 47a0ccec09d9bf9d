//! HASH (docs/partition.md §3) and KEY (docs/partition.md §4) partition functions: per-type bytes, seed chaining, index rules.

use super::collation::Collation;
use super::murmur::murmur64a;
use super::scheme::{Column, ColumnType};
use super::value::Datum;
use super::PartitionError;

/// The bytes a non-string datum of column type `ty` contributes to the KEY hash (docs/partition.md §4); `None`
/// for strings.
///
/// NULL is type-specific (kernel-checked, OceanBase 4.3.5.3): in a DECIMAL column it hashes as
/// empty input (`murmur64a(&[], seed)`); in every other key type (integers, FLOAT, DOUBLE, DATE,
/// DATETIME, TIMESTAMP, TIME, YEAR, CHAR, VARCHAR, BINARY, VARBINARY) as the 4-byte type tag
/// `ObNullType = 0`.
pub fn key_bytes(d: &Datum, ty: &ColumnType) -> Option<Vec<u8>> {
    let le = |v: i64| Some(v.to_le_bytes().to_vec());
    match d {
        Datum::Null if matches!(ty, ColumnType::Decimal { .. }) => Some(Vec::new()),
        Datum::Null => Some(vec![0, 0, 0, 0]),
        Datum::Int(i) => le(*i),
        Datum::UInt(u) => Some(u.to_le_bytes().to_vec()),
        Datum::Double(f) => {
            let f = if *f == 0.0 { 0.0f64 } else { *f };
            Some(f.to_bits().to_le_bytes().to_vec())
        }
        Datum::Decimal(v) => Some(v.key_bytes()),
        Datum::Date(d) => le(d.packed()),
        Datum::DateTime(d) => le(d.packed()),
        Datum::Timestamp(us) | Datum::Time(us) => le(*us),
        Datum::Year(y) => le(i64::from(*y)),
        Datum::Str(_) => None,
    }
}

/// One step of the KEY hash chain: `hash_i(o, seed)`, and a trace line.
pub fn key_hash_step(d: &Datum, col: &Column, seed: u64) -> Result<(u64, String), PartitionError> {
    match (key_bytes(d, &col.ty), d) {
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

/// HASH index (docs/partition.md §3): NULL → 0, INT64_MIN → INT64_MAX, else `|v|`, modulo `n`.
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

    // docs/partition.md §3, "HASH(int) rule examples" (ABS(-123) is evaluated to 123 by the SQL layer).
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
    fn key_index_abs_rule() {
        assert_eq!(key_index(i64::MIN as u64, 3), ((1u64 << 63) % 3) as usize);
        assert_eq!(key_index((-5i64) as u64, 8), 5);
    }
}
