//! DECIMAL values as the kernel's DecimalInt: the value × 10^scale as a signed integer of up to
//! 256 bits (DECIMAL(65,30) needs 216), plus the KEY-hash word trimming of docs/partition.md §4.

use std::cmp::Ordering;
use std::fmt;
use std::ops::Neg;

/// Little-endian u32 words of the 256-bit integer.
const WORDS: usize = 8;

/// A signed 256-bit integer in two's complement, little-endian u32 words (the scaled DECIMAL).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecInt([u32; WORDS]);

impl DecInt {
    /// Zero.
    pub const ZERO: DecInt = DecInt([0; WORDS]);

    /// The value of an ASCII digit string (at most 76 digits, so it always fits), negated if `neg`.
    /// `None` if `digits` holds a non-digit or more than 76 digits.
    pub fn from_digits(neg: bool, digits: &str) -> Option<DecInt> {
        if digits.len() > 76 {
            return None;
        }
        let mut w = [0u32; WORDS];
        for b in digits.bytes() {
            if !b.is_ascii_digit() {
                return None;
            }
            // w = w * 10 + digit
            let mut carry = u64::from(b - b'0');
            for word in w.iter_mut() {
                let v = u64::from(*word) * 10 + carry;
                *word = v as u32;
                carry = v >> 32;
            }
        }
        let v = DecInt(w);
        Some(if neg { -v } else { v })
    }

    /// Whether the value is below zero.
    pub fn is_negative(self) -> bool {
        self.0[WORDS - 1] & 0x8000_0000 != 0
    }

    /// The bytes KEY hashes (docs/partition.md §4): the words, little-endian, without trailing words that are pure
    /// sign extension (`0` after a word with bit 31 clear, `0xFFFFFFFF` after one with it set);
    /// at least one word is kept.
    pub fn key_bytes(self) -> Vec<u8> {
        let mut n = WORDS;
        while n > 1 {
            let (last, prev) = (self.0[n - 1], self.0[n - 2]);
            let sign_ext = (last == 0 && prev & 0x8000_0000 == 0) || (last == u32::MAX && prev & 0x8000_0000 != 0);
            if !sign_ext {
                break;
            }
            n -= 1;
        }
        self.0[..n].iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    /// Magnitude as decimal digits (for traces).
    fn magnitude_digits(self) -> String {
        let mut w = if self.is_negative() { (-self).0 } else { self.0 };
        let mut digits = Vec::new();
        loop {
            // w /= 10, remainder → digit (most significant word first).
            let mut rem = 0u64;
            for word in w.iter_mut().rev() {
                let v = (rem << 32) | u64::from(*word);
                *word = (v / 10) as u32;
                rem = v % 10;
            }
            digits.push(b'0' + rem as u8);
            if w.iter().all(|&x| x == 0) {
                break;
            }
        }
        digits.reverse();
        String::from_utf8_lossy(&digits).into_owned()
    }
}

impl Neg for DecInt {
    type Output = DecInt;

    /// Two's complement negation.
    fn neg(self) -> DecInt {
        let mut w = self.0.map(|x| !x);
        for word in w.iter_mut() {
            let (v, overflow) = word.overflowing_add(1);
            *word = v;
            if !overflow {
                break;
            }
        }
        DecInt(w)
    }
}

impl From<i128> for DecInt {
    fn from(v: i128) -> DecInt {
        let ext = if v < 0 { u32::MAX } else { 0 };
        let mut w = [ext; WORDS];
        for (i, word) in w.iter_mut().take(4).enumerate() {
            *word = (v >> (32 * i)) as u32;
        }
        DecInt(w)
    }
}

impl Ord for DecInt {
    fn cmp(&self, other: &DecInt) -> Ordering {
        match (self.is_negative(), other.is_negative()) {
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            // Same sign: two's complement words compare like unsigned, most significant first.
            _ => self.0.iter().rev().cmp(other.0.iter().rev()),
        }
    }
}

impl PartialOrd for DecInt {
    fn partial_cmp(&self, other: &DecInt) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for DecInt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.is_negative() { "-" } else { "" };
        write!(f, "{sign}{}", self.magnitude_digits())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> DecInt {
        let (neg, digits) = s.strip_prefix('-').map_or((false, s), |r| (true, r));
        DecInt::from_digits(neg, digits).unwrap()
    }

    #[test]
    fn digits_round_trip_and_order() {
        for s in
            ["0", "1", "-1", "1234", "-4294967296", "99999999999999999999999999999999999999999999999999999999999999999"]
        {
            assert_eq!(d(s).to_string(), s);
        }
        assert_eq!(d("-12345678901234567890"), DecInt::from(-12345678901234567890i128));
        assert!(
            d("-2") < d("-1") && d("-1") < DecInt::ZERO && d("1") < d("100000000000000000000000000000000000000000")
        );
        assert_eq!(DecInt::from_digits(false, &"9".repeat(77)), None);
        assert_eq!(DecInt::from_digits(false, "1x"), None);
    }

    #[test]
    fn word_trimming() {
        let words = |v: i128| DecInt::from(v).key_bytes();
        assert_eq!(words(1234), 1234u32.to_le_bytes().to_vec());
        assert_eq!(words(-1234), (-1234i32 as u32).to_le_bytes().to_vec());
        assert_eq!(words(0), vec![0, 0, 0, 0]);
        assert_eq!(words(-1), vec![0xff; 4]);
        // −1.5 in DECIMAL(30,10) = −15 000 000 000: two words (kernel-checked, docs/partition.md §4).
        assert_eq!(words(-15_000_000_000).len(), 8);
        assert_eq!(words(0x8000_0000).len(), 8);
        assert_eq!(words(-0x8000_0000).len(), 4);
        // 10^64 needs 213 bits plus a sign bit: seven words.
        assert_eq!(d(&format!("1{}", "0".repeat(64))).key_bytes().len(), 28);
        assert_eq!(d(&format!("-1{}", "0".repeat(64))).key_bytes().len(), 28);
    }
}
