//! MurmurHash64A as OceanBase's `murmurhash64A` (docs/partition.md §4).

const M: u64 = 0xc6a4a7935bd1e995;
const R: u32 = 47;

/// MurmurHash64A of `data` with `seed`: little-endian 8-byte blocks, tail bytes, final mix.
pub fn murmur64a(data: &[u8], seed: u64) -> u64 {
    let mut h = seed ^ (data.len() as u64).wrapping_mul(M);
    let blocks = data.chunks_exact(8);
    let tail = blocks.remainder();
    for block in blocks {
        let mut word = [0u8; 8];
        word.copy_from_slice(block);
        let mut k = u64::from_le_bytes(word);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    if !tail.is_empty() {
        for (i, b) in tail.iter().enumerate() {
            h ^= u64::from(*b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

#[cfg(test)]
mod tests {
    use super::murmur64a;

    // docs/partition.md §10, first table (the integer rows).
    #[test]
    fn published_long_hash_vectors() {
        assert_eq!(murmur64a(&145u64.to_le_bytes(), 0) as i64, 3972054043075874492);
        assert_eq!(murmur64a(&754623846937u64.to_le_bytes(), 53) as i64, 2452379837092619935);
        assert_eq!(murmur64a(&0u64.to_le_bytes(), 0) as i64, 8217090173679840641);
        assert_eq!(murmur64a(&0u64.to_le_bytes(), 0) % 8, 1);
    }

    #[test]
    fn empty_input_is_the_final_mix_of_the_seed() {
        let seed = 0x1234_5678_9abc_def0u64;
        let mut h = seed;
        h ^= h >> 47;
        h = h.wrapping_mul(0xc6a4a7935bd1e995);
        h ^= h >> 47;
        assert_eq!(murmur64a(&[], seed), h);
    }
}
