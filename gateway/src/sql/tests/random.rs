//! Random bytes and mutated SQL: analysis never panics.

use rand::{rngs::StdRng, Rng, SeedableRng};

use super::corpus::corpus;
use crate::sql::analyze;

#[test]
fn random_bytes_never_panic() {
    let mut rng = StdRng::seed_from_u64(7);
    for _ in 0..3000 {
        let len = rng.gen_range(0..64);
        let bytes: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        let text = String::from_utf8_lossy(&bytes);
        let _ = analyze(&text);
    }
}

#[test]
fn mutated_sql_never_panics() {
    const PIECES: &[&str] = &[
        "'", "\"", "`", "(", ")", "?", ";", "/*", "*/", "--", "#", "\\", "@", "0x", "-", ",", " ", "=", "IN", "AND",
        "OR", "é",
    ];
    let mut rng = StdRng::seed_from_u64(11);
    let corpus = corpus();
    for _ in 0..4000 {
        let mut s = corpus[rng.gen_range(0..corpus.len())].clone();
        for _ in 0..rng.gen_range(1..4) {
            let mut at = rng.gen_range(0..=s.len());
            while !s.is_char_boundary(at) {
                at -= 1;
            }
            if rng.gen_bool(0.5) {
                s.insert_str(at, PIECES[rng.gen_range(0..PIECES.len())]);
            } else {
                s.truncate(at);
            }
        }
        let _ = analyze(&s);
    }
}
