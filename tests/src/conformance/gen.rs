//! Deterministic value generators: a fixed-seed SplitMix64 generator and, per column type, a mix
//! of type extremes, NULL, small and full-range values, written as the SQL literal used in the
//! `INSERT` (strings as hex literals so the client's character set cannot interfere).

use super::model::Kind;

/// SplitMix64: small, fast, deterministic for a given seed.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    /// A generator seeded from a base seed and a name (FNV-1a), so every table has its own stream
    /// whatever the order tables run in.
    pub fn for_name(seed: u64, name: &str) -> Self {
        let mut h: u64 = 0xcbf29ce484222325;
        for b in name.bytes() {
            h = (h ^ b as u64).wrapping_mul(0x100000001b3);
        }
        Rng(seed ^ h)
    }
    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e3779b97f4a7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
    /// `true` with probability `pct` %.
    pub fn chance(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }
    /// Uniform in `lo..=hi` (span at most 2^64).
    pub fn range(&mut self, lo: i128, hi: i128) -> i128 {
        let span = (hi - lo + 1) as u128;
        let r = if span >= 1u128 << 64 { self.next_u64() as u128 } else { self.next_u64() as u128 % span };
        lo + r as i128
    }
    /// One element of `items`.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// A value generator: `(rng, row id) → SQL literal for INSERT`.
pub type ValueGen = Box<dyn Fn(&mut Rng, u64) -> String>;

/// The default generator of a type: extremes, NULL (if `nullable`), small and full-range values.
/// `tz_secs` is the session time zone offset TIMESTAMP literals are written in.
pub fn any(kind: Kind, nullable: bool, tz_secs: i64) -> ValueGen {
    Box::new(move |rng, _| {
        if nullable && rng.chance(4) {
            return "NULL".into();
        }
        value(kind, rng, tz_secs)
    })
}

/// Integers uniform in `lo..=hi`, NULL with probability `null_pct` %.
pub fn ints(lo: i128, hi: i128, null_pct: u64) -> ValueGen {
    Box::new(move |rng, _| if rng.chance(null_pct) { "NULL".into() } else { rng.range(lo, hi).to_string() })
}

/// One of the given literals.
pub fn pick(lits: &[&str]) -> ValueGen {
    let lits: Vec<String> = lits.iter().map(|s| s.to_string()).collect();
    Box::new(move |rng, _| rng.pick(&lits).clone())
}

/// `a` with probability `pct` %, else `b`.
pub fn mix(pct: u64, a: ValueGen, b: ValueGen) -> ValueGen {
    Box::new(move |rng, id| if rng.chance(pct) { a(rng, id) } else { b(rng, id) })
}

/// `g`, retried until `keep` accepts the literal.
pub fn filter(g: ValueGen, keep: impl Fn(&str) -> bool + 'static) -> ValueGen {
    Box::new(move |rng, id| loop {
        let v = g(rng, id);
        if keep(&v) {
            return v;
        }
    })
}

/// A distinct integer per row id (an odd-multiplier bijection over the type's range).
pub fn unique_int(kind: Kind) -> ValueGen {
    let (min, max) = kind.int_range();
    let span = (max - min + 1) as u128;
    Box::new(move |_, id| {
        let x = ((id as u128).wrapping_mul(0x9e3779b97f4a7c15) ^ 0x5bd1e995) % span;
        (min + x as i128).to_string()
    })
}

fn value(kind: Kind, rng: &mut Rng, tz_secs: i64) -> String {
    match kind {
        Kind::Int { .. } => int(kind, rng).to_string(),
        Kind::Float => format!("{:e}", float(rng) as f64),
        Kind::Double => format!("{:e}", double(rng)),
        Kind::Decimal { p, s } => decimal(rng, p, s),
        Kind::Date => format!("'{}'", date(rng)),
        Kind::DateTime { fsp } => format!("'{}'", datetime(rng, fsp)),
        Kind::Timestamp | Kind::TimestampFsp { .. } => timestamp(rng, tz_secs),
        Kind::Time | Kind::TimeFsp { .. } => format!("'{}'", time(rng)),
        Kind::Year => year(rng),
        Kind::Char { n, .. } | Kind::VarChar { n, .. } => {
            format!("X'{}'", crate::hex(text(rng, n as usize).as_bytes()))
        }
        Kind::Binary { n } | Kind::VarBinary { n } => format!("X'{}'", crate::hex(&bytes(rng, n as usize))),
    }
}

fn int(kind: Kind, rng: &mut Rng) -> i128 {
    let (min, max) = kind.int_range();
    match rng.below(100) {
        0..=9 => *rng.pick(&[min, max, min + 1, max - 1, 0, 1, if min < 0 { -1 } else { 2 }]),
        10..=49 => rng.range(min.max(-300), max.min(300)),
        50..=74 => rng.range(min.max(-100_000), max.min(100_000)),
        _ => rng.range(min, max),
    }
}

fn float(rng: &mut Rng) -> f32 {
    const EXTREMES: [f32; 10] =
        [f32::MAX, -f32::MAX, f32::MIN_POSITIVE, -f32::MIN_POSITIVE, 1e-45, 0.0, -0.0, 1.5, -1.5, 0.1];
    match rng.below(100) {
        0..=9 => *rng.pick(&EXTREMES),
        10..=39 => rng.range(-4000, 4000) as f32 / 16.0,
        40..=64 => rng.range(-10_000_000, 10_000_000) as f32 / 100.0,
        _ => loop {
            let f = f32::from_bits(rng.next_u64() as u32);
            if f.is_finite() {
                break f;
            }
        },
    }
}

fn double(rng: &mut Rng) -> f64 {
    const EXTREMES: [f64; 10] =
        [f64::MAX, -f64::MAX, f64::MIN_POSITIVE, -f64::MIN_POSITIVE, 5e-324, 0.0, -0.0, 1.5, 0.1, -1e300];
    match rng.below(100) {
        0..=9 => *rng.pick(&EXTREMES),
        10..=39 => rng.range(-4000, 4000) as f64 / 16.0,
        40..=64 => rng.range(-1_000_000_000_000, 1_000_000_000_000) as f64 / 1000.0,
        _ => loop {
            let f = f64::from_bits(rng.next_u64());
            if f.is_finite() {
                break f;
            }
        },
    }
}

fn digits(rng: &mut Rng, n: u32) -> String {
    (0..n).map(|_| char::from(b'0' + rng.below(10) as u8)).collect()
}

fn decimal(rng: &mut Rng, p: u32, s: u32) -> String {
    let int_digits = p - s;
    let nines = |n: u32| "9".repeat(n as usize);
    let join = |i: String, f: String| if f.is_empty() { i } else { format!("{i}.{f}") };
    let max = join(if int_digits == 0 { "0".into() } else { nines(int_digits) }, nines(s));
    let tiny = join("0".into(), if s == 0 { String::new() } else { format!("{}1", "0".repeat(s as usize - 1)) });
    match rng.below(100) {
        0..=9 => rng.pick(&[max.clone(), format!("-{max}"), "0".into(), tiny.clone(), format!("-{tiny}")]).clone(),
        _ => {
            let n = rng.below(int_digits as u64 + 1) as u32;
            let mut i = digits(rng, n).trim_start_matches('0').to_string();
            if i.is_empty() {
                i = "0".into();
            }
            let mut f = digits(rng, s);
            // An extra digit the column rounds away (never at full width, where it could overflow).
            if n < int_digits && rng.chance(15) {
                f.push_str(&digits(rng, 1));
            }
            let sign = if rng.chance(40) { "-" } else { "" };
            format!("{sign}{}", join(i, f))
        }
    }
}

fn days_in(y: i64, m: i64) -> i64 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

fn date(rng: &mut Rng) -> String {
    const EXTREMES: [&str; 8] = [
        "1000-01-01",
        "9999-12-31",
        "1970-01-01",
        "1969-12-31",
        "2000-02-29",
        "2024-02-29",
        "0001-01-01",
        "0000-00-00",
    ];
    if rng.chance(8) {
        return rng.pick(&EXTREMES).to_string();
    }
    let y = match rng.below(100) {
        0..=69 => rng.range(1900, 2100),
        70..=94 => rng.range(1000, 9999),
        _ => rng.range(1, 999),
    } as i64;
    let m = rng.range(1, 12) as i64;
    let d = rng.range(1, days_in(y, m) as i128) as i64;
    format!("{y:04}-{m:02}-{d:02}")
}

fn frac(rng: &mut Rng, fsp: u32) -> String {
    if fsp == 0 {
        // DATETIME(0): sometimes a fraction the column rounds (down, so 9999-12-31 never overflows).
        return if rng.chance(10) { format!(".{}", rng.range(0, 4)) } else { String::new() };
    }
    format!(".{}", digits(rng, fsp))
}

fn datetime(rng: &mut Rng, fsp: u32) -> String {
    if rng.chance(6) {
        let max_frac = if fsp == 0 { String::new() } else { format!(".{}", "9".repeat(fsp as usize)) };
        let ext = [
            "0000-00-00 00:00:00".to_string(),
            format!("9999-12-31 23:59:59{max_frac}"),
            "1000-01-01 00:00:00".into(),
            "1970-01-01 00:00:00".into(),
            "1969-12-31 23:59:59".into(),
        ];
        return rng.pick(&ext).clone();
    }
    let (h, mi, s) = (rng.range(0, 23), rng.range(0, 59), rng.range(0, 59));
    format!("{} {h:02}:{mi:02}:{s:02}{}", date(rng).replace("0000-00-00", "2001-02-03"), frac(rng, fsp))
}

/// Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// A `'YYYY-MM-DD hh:mm:ss'` literal for a UTC epoch second, shown at offset `tz_secs`.
pub fn local_datetime(epoch: i64, tz_secs: i64) -> String {
    let t = epoch + tz_secs;
    let (y, m, d) = civil(t.div_euclid(86_400));
    let s = t.rem_euclid(86_400);
    format!("{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

fn timestamp(rng: &mut Rng, tz_secs: i64) -> String {
    if rng.chance(1) {
        return "'0000-00-00 00:00:00'".into();
    }
    let epoch = match rng.below(100) {
        0..=7 => *rng.pick(&[1, 2_147_483_647, 86_400, 946_684_800, 1_704_067_200]),
        8..=49 => rng.range(1_500_000_000, 1_800_000_000) as i64,
        _ => rng.range(1, 2_147_483_647) as i64,
    };
    format!("'{}'", local_datetime(epoch, tz_secs))
}

fn time(rng: &mut Rng) -> String {
    const MAX: i128 = 838 * 3600 + 59 * 60 + 59;
    let secs = match rng.below(100) {
        0..=7 => *rng.pick(&[MAX, -MAX, 0, 1, -1, 86_399, 86_400]),
        8..=49 => rng.range(0, 86_399),
        _ => rng.range(-MAX, MAX),
    };
    let sign = if secs < 0 { "-" } else { "" };
    let a = secs.abs();
    let f = if a < MAX && rng.chance(5) { *rng.pick(&[".4", ".6"]) } else { "" };
    format!("{sign}{:02}:{:02}:{:02}{f}", a / 3600, a / 60 % 60, a % 60)
}

fn year(rng: &mut Rng) -> String {
    match rng.below(100) {
        0..=9 => rng.pick(&["1901", "2155", "0", "2000", "'0000'", "'0'", "'00'"]).to_string(),
        10..=14 => format!("'{:02}'", rng.range(0, 99)),
        _ => rng.range(1901, 2155).to_string(),
    }
}

/// Text fragments: mixed case, accents general_ci folds, CJK, 4-byte UTF-8, quotes, escapes.
const FRAGS: &[&str] = &[
    "a",
    "A",
    "b",
    "B",
    "abc",
    "ABC",
    "Hello",
    "hello",
    "WORLD",
    "z",
    "Z",
    "e",
    "E",
    "é",
    "É",
    "è",
    "ê",
    "ë",
    "ñ",
    "Ñ",
    "ü",
    "Ü",
    "ß",
    "ss",
    "Ĩ",
    "İ",
    "ı",
    "i",
    "Å",
    "å",
    "Ä",
    "Σ",
    "σ",
    "ς",
    "Ж",
    "ж",
    "Ｚ",
    "ｚ",
    "ﬁ",
    "ǅ",
    "e\u{301}",
    "中",
    "文",
    "蚂蚁金服",
    "日本語",
    "한국어",
    "😀",
    "🚀",
    "𝄞",
    "\u{10FFFF}",
    "\u{FFFD}",
    "\u{A0}",
    " ",
    "  ",
    "'",
    "\\",
    "\t",
    "0",
    "42",
    "-",
    "_",
    "%",
    ",",
    "\"",
    "x y",
];

/// A string of at most `n` characters.
pub fn text(rng: &mut Rng, n: usize) -> String {
    let mut s = String::new();
    match rng.below(100) {
        0..=4 => {}
        5..=7 => s.push_str(rng.pick::<&str>(&["a", "A", "é", "É", "e", "E", "中", "😀", "🚀", " ", "abc", "ABC"])),
        8..=19 => {
            // Long: crosses the 64-character (128-byte weight) chunk of general_ci hashing.
            let target = rng.range(65.min(n as i128), n as i128) as usize;
            while s.chars().count() < target {
                s.push_str(rng.pick::<&str>(FRAGS));
            }
        }
        _ => {
            for _ in 0..rng.range(1, 5) {
                s.push_str(rng.pick::<&str>(FRAGS));
            }
            if rng.chance(8) {
                s.push('\0');
            }
        }
    }
    if rng.chance(10) {
        s.push_str(rng.pick::<&str>(&[" ", "  ", "   "]));
    }
    if rng.chance(4) {
        s.insert(0, ' ');
    }
    s.chars().take(n).collect()
}

/// A byte string of at most `n` bytes (zero bytes, spaces, 0xff, text bytes).
pub fn bytes(rng: &mut Rng, n: usize) -> Vec<u8> {
    let mut b: Vec<u8> = match rng.below(100) {
        0..=4 => Vec::new(),
        5..=9 => vec![*rng.pick(&[0u8, 0x20, 0xff, b'a', b'A']); rng.range(1, n as i128) as usize],
        10..=39 => text(rng, n).into_bytes(),
        _ => (0..rng.range(1, n as i128)).map(|_| rng.next_u64() as u8).collect(),
    };
    if rng.chance(12) {
        b.extend_from_slice(rng.pick::<&[u8]>(&[&b" "[..], &b"  "[..], &b"\0"[..], &b"\0\0"[..]]));
    }
    b.truncate(n);
    b
}

/// One of the given texts (written as hex literals), NULL with probability `null_pct` %.
pub fn pick_text(texts: &[&str], null_pct: u64) -> ValueGen {
    let lits: Vec<String> = texts.iter().map(|s| format!("X'{}'", crate::hex(s.as_bytes()))).collect();
    Box::new(move |rng, _| if rng.chance(null_pct) { "NULL".into() } else { rng.pick(&lits).clone() })
}
