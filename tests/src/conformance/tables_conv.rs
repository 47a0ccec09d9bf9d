//! Value-conversion classes (issue 14): literals the kernel converts before placing the row, handed
//! to `gateway locate` exactly as inserted ([`TableSpec::as_inserted`]): DECIMAL literals with more
//! fraction digits than the scale (rounding boundaries `…5`, `…49999`, negatives), scientific
//! notation into DECIMAL (as numbers and as strings), fractional seconds beyond the column's
//! precision (carries across seconds, days, months and years; TIMESTAMP in three time zones; TIME
//! both signs), numeric literals for DATE / DATETIME / TIME (6, 7, 8, 9–12, 13–14 digits, zero,
//! decimal fractions), TIME with a day part, and TIMESTAMP values beyond MySQL's range. KEY tables
//! (the hash sees every bit of the stored value) and RANGE COLUMNS tables with bounds on the
//! rounding boundaries.

use super::gen::{mix, pick, Rng, ValueGen};
use super::model::{Coll, Kind};
use super::spec::{table, TableBuilder, TableSpec};
use super::tables::dec;

fn g(f: impl Fn(&mut Rng) -> String + 'static) -> ValueGen {
    Box::new(move |rng, _| f(rng))
}

fn digits(rng: &mut Rng, n: usize) -> String {
    (0..n).map(|_| char::from(b'0' + rng.below(10) as u8)).collect()
}

/// A decimal literal with `extra` digits past `scale`, often on a rounding boundary.
fn decimal_literal(rng: &mut Rng, int_digits: u32, scale: usize) -> String {
    let int = rng.range(0, 10i128.pow(int_digits) - 2).to_string();
    let mut frac = digits(rng, scale);
    match rng.below(4) {
        0 => frac.push('5'),
        1 => frac.push_str("49999"),
        2 => frac.push_str("50001"),
        _ => {
            let n = 1 + rng.below(5) as usize;
            frac.push_str(&digits(rng, n));
        }
    }
    let sign = if rng.chance(40) { "-" } else { "" };
    format!("{sign}{int}.{frac}")
}

/// A literal in scientific notation (`1.5e2`, `-2.675E0`, `'1.25e-3'`) whose value fits DECIMAL(20,6).
fn scientific(rng: &mut Rng) -> String {
    let (lead, n) = (rng.range(1, 9), rng.below(9) as usize);
    let mantissa = format!("{lead}.{}", digits(rng, n));
    let exp = rng.range(-8, 12);
    let e = if rng.chance(50) { "e" } else { "E" };
    let sign = if rng.chance(30) { "-" } else { "" };
    let text = format!("{sign}{mantissa}{e}{exp}");
    if rng.chance(30) {
        format!("'{text}'")
    } else {
        text
    }
}

fn days_in(y: i128, m: i128) -> i128 {
    match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `(y, m, d)` often at a month or year end (where a rounding carry changes the date).
fn ymd(rng: &mut Rng, lo_year: i128, hi_year: i128) -> (i128, i128, i128) {
    let y = rng.range(lo_year, hi_year);
    let m = if rng.chance(20) { 12 } else { rng.range(1, 12) };
    let d = if rng.chance(30) { days_in(y, m) } else { rng.range(1, days_in(y, m)) };
    (y, m, d)
}

/// `hh:mm:ss` often at 23:59:59.
fn hms(rng: &mut Rng) -> (i128, i128, i128) {
    if rng.chance(30) {
        (23, 59, 59)
    } else {
        (rng.range(0, 23), rng.range(0, 59), rng.range(0, 59))
    }
}

/// A fraction of 1–7 digits, often `5`, `49…`, `95`, `995`, `9999995`.
fn fraction(rng: &mut Rng) -> String {
    match rng.below(5) {
        0 => {
            rng.pick(&["5", "4", "49", "50", "95", "995", "9995", "99995", "999995", "9999995", "9999994"]).to_string()
        }
        _ => {
            let n = 1 + rng.below(7) as usize;
            digits(rng, n)
        }
    }
}

/// `'YYYY-MM-DD hh:mm:ss.f'` (years up to 9998, so no carry leaves the range).
fn datetime_fraction(rng: &mut Rng) -> String {
    let (y, m, d) = ymd(rng, 1, 9998);
    let (h, mi, s) = hms(rng);
    format!("'{y:04}-{m:02}-{d:02} {h:02}:{mi:02}:{s:02}.{}'", fraction(rng))
}

/// A number the kernel reads as a DATE / DATETIME: `YYMMDD` (also short), `YYYYMMDD` (also 7
/// digits), `YYMMDDhhmmss`, `YYYYMMDDhhmmss`, with a fraction sometimes (`with_time`), or 0.
fn numeric_datetime(rng: &mut Rng, with_time: bool, fraction_ok: bool) -> String {
    if rng.chance(4) {
        return rng.pick(&["0", "0.0", "00000000"]).to_string();
    }
    let long = with_time && rng.chance(50);
    let two_digit_year = rng.chance(35);
    let (y, m, d) = if two_digit_year {
        let yy = rng.range(0, 99);
        let y = if yy < 70 { 2000 + yy } else { 1900 + yy };
        let m = rng.range(1, 12);
        (y, m, rng.range(1, days_in(y, m)))
    } else {
        ymd(rng, 1, 9998)
    };
    let mut text = if two_digit_year { format!("{:02}{m:02}{d:02}", y % 100) } else { format!("{y:04}{m:02}{d:02}") };
    if long {
        let (h, mi, s) = hms(rng);
        text.push_str(&format!("{h:02}{mi:02}{s:02}"));
    }
    let text = text.trim_start_matches('0');
    let text = if text.is_empty() { "0" } else { text };
    if fraction_ok && long && rng.chance(40) {
        return format!("{text}.{}", fraction(rng));
    }
    if !fraction_ok && rng.chance(10) {
        return format!("{text}.0");
    }
    text.to_string()
}

/// A number (or digit string) the kernel reads as a TIME: `[-]HHMMSS[.f]`, also short, up to
/// 838:59:59, or a 14-digit datetime number (its time of day).
fn numeric_time(rng: &mut Rng) -> String {
    if rng.chance(8) {
        let (y, m, d) = ymd(rng, 1000, 9998);
        let (h, mi, s) = hms(rng);
        return format!("{y:04}{m:02}{d:02}{h:02}{mi:02}{s:02}");
    }
    let h = if rng.chance(20) { rng.range(24, 837) } else { rng.range(0, 23) };
    let (mi, s) = (rng.range(0, 59), rng.range(0, 59));
    let n = (h * 10_000 + mi * 100 + s).to_string();
    let sign = if rng.chance(30) { "-" } else { "" };
    let f = if rng.chance(25) { format!(".{}", fraction(rng)) } else { String::new() };
    match rng.below(5) {
        0 => format!("'{sign}{n}{f}'"),
        _ => format!("{sign}{n}{f}"),
    }
}

/// A TIME string with a day part or in a short form: `'D HH:MM:SS[.f]'`, `'D HH'`, `'D HH:MM'`,
/// `'HH:MM'`, `'[-]HHH:MM:SS.f'` — all within ±838:59:59 before rounding.
fn time_text(rng: &mut Rng) -> String {
    let sign = if rng.chance(30) { "-" } else { "" };
    let days = rng.range(0, 33);
    let (h, mi, s) = (rng.range(0, 23), rng.range(0, 59), rng.range(0, 59));
    match rng.below(6) {
        0 => format!("'{sign}{days} {h:02}:{mi:02}:{s:02}'"),
        1 => format!("'{sign}{days} {h}'"),
        2 => format!("'{sign}{days} {h:02}:{mi:02}'"),
        3 => format!("'{sign}{h:02}:{mi:02}'"),
        4 => format!("'{sign}{days} {h:02}:{mi:02}:{s:02}.{}'", fraction(rng)),
        _ => format!("'{sign}{}:{mi:02}:{s:02}.{}'", rng.range(0, 837), fraction(rng)),
    }
}

/// TIMESTAMP literals beyond MySQL's range (before 1970, after 2038), at `tz_secs`: the UTC
/// instant stays at or below 9999-12-31 23:59:59 (the kernel stores NULL above).
fn wide_timestamp(rng: &mut Rng, tz_secs: i64) -> String {
    let fixed = [
        "'1970-01-01 00:00:00'",
        "'1969-12-31 23:59:59'",
        "'0001-01-01 00:00:00'",
        "'2038-01-19 03:14:08'",
        "'1000-01-01 00:00:00'",
    ];
    if rng.chance(15) {
        return rng.pick(&fixed).to_string();
    }
    if rng.chance(5) {
        return if tz_secs < 0 { "'9999-12-31 15:59:59'".into() } else { "'9999-12-31 23:59:59'".into() };
    }
    let (y, m, d) = ymd(rng, 1, 9998);
    let (h, mi, s) = hms(rng);
    let f = if rng.chance(30) { format!(".{}", fraction(rng)) } else { String::new() };
    format!("'{y:04}-{m:02}-{d:02} {h:02}:{mi:02}:{s:02}{f}'")
}

const KEY13: &str = "PARTITION BY KEY(c1) PARTITIONS 13";
/// RANGE COLUMNS bounds on DECIMAL rounding boundaries.
const RANGEC_DECIMAL: &str = "PARTITION BY RANGE COLUMNS(c1) (PARTITION p0 VALUES LESS THAN (-1.55), \
     PARTITION p1 VALUES LESS THAN (0.01), PARTITION p2 VALUES LESS THAN (1.55), PARTITION p3 VALUES LESS THAN (1.56), \
     PARTITION p4 VALUES LESS THAN (10), PARTITION p5 VALUES LESS THAN (MAXVALUE))";
/// RANGE COLUMNS bounds a rounded fraction of a second crosses.
const RANGEC_DATETIME: &str = "PARTITION BY RANGE COLUMNS(c1) (PARTITION p0 VALUES LESS THAN ('2024-01-01'), \
     PARTITION p1 VALUES LESS THAN ('2024-07-01'), PARTITION p2 VALUES LESS THAN (MAXVALUE))";

/// Pieces of a string literal's body: plain characters and every kind of backslash escape MySQL
/// knows (`\0 \b \n \r \t \Z \\ \' \"`), the two that keep their backslash (`\% \_`),
/// letters whose backslash is dropped (`\a \f \x \z`, and before a multi-byte character), and
/// a doubled quote.
const STRING_PIECES: &[&str] = &[
    "a", "Z", "%", "_", " ", "é", "中", "0", r"\0", r"\b", r"\n", r"\r", r"\t", r"\Z", r"\\", r"\'", r#"\""#, r"\%",
    r"\_", r"\a", r"\f", r"\x", r"\z", r"\é", r"\1",
];

/// A quoted string literal of 1–8 [`STRING_PIECES`]; a fifth of them in double quotes.
fn escaped_string(rng: &mut Rng) -> String {
    let q = if rng.chance(20) { '"' } else { '\'' };
    let n = rng.range(1, 8);
    let mut body = String::new();
    for _ in 0..n {
        let piece: &&str = rng.pick(STRING_PIECES);
        body.push_str(piece);
        if rng.chance(10) {
            body.push(q);
            body.push(q);
        }
    }
    format!("{q}{body}{q}")
}

/// A string value in one of the literal forms MySQL has for it: introduced (`_utf8mb4'…'`,
/// `_binary'…'`, `N'…'`), hexadecimal (`X'…'`, `0x…`), bit (`b'…'`) and adjacent strings, which
/// the server concatenates (`'ab' 'cd'`).
fn string_form(rng: &mut Rng) -> String {
    let text: String = (0..rng.range(1, 6)).map(|_| *rng.pick(&['a', 'b', 'Z', '0', ' ', '%'])).collect();
    let hex: String = text.bytes().map(|b| format!("{b:02X}")).collect();
    match rng.below(8) {
        0 => format!("_utf8mb4'{text}'"),
        1 => format!("_binary'{text}'"),
        2 => format!("N'{text}'"),
        3 => format!("X'{hex}'"),
        4 => format!("0x{hex}"),
        // Leading zero bits dropped at times: the bits are right-aligned in whole bytes.
        5 => {
            let bits: String = text.bytes().map(|b| format!("{b:08b}")).collect();
            format!("b'{}'", if rng.chance(50) { bits.trim_start_matches('0') } else { &bits })
        }
        6 => {
            let cut = rng.below(text.len() as u64 + 1) as usize;
            format!("'{}' '{}'", &text[..cut], &text[cut..])
        }
        _ => format!("'{text}' \"{}\"", text.to_lowercase()),
    }
}

/// An integer in one of the literal forms MySQL converts for an INT column: hexadecimal and bit
/// values (numbers in that context), strings of digits, exact and approximate numbers (rounded),
/// a sign, booleans.
fn int_form(rng: &mut Rng) -> String {
    let v = rng.range(0, 5000);
    match rng.below(10) {
        0 => format!("0x{v:X}"),
        1 => format!("X'{:04X}'", v),
        2 => format!("b'{v:b}'"),
        3 => format!("'{v}'"),
        4 => format!("{v}.{}", rng.range(0, 9)),
        5 => format!("-{v}.5"),
        6 => format!("{}e1", v / 10),
        7 => format!("+{v}"),
        8 => (*rng.pick(&["TRUE", "FALSE", "-0", "'-0'", "' 7'", "'7 '"])).to_string(),
        _ => format!("{v}"),
    }
}

/// A date or datetime in the string and typed forms MySQL accepts: other delimiters (`/`, `.`,
/// none) in the date and in the time of day, one-digit fields, two-digit years, a `T` between
/// date and time, a time without seconds (`10:30.5` is 10:30:05: the `.` before the seconds is a
/// delimiter), typed literals (`DATE '…'`, `TIMESTAMP '…'`).
fn temporal_form(rng: &mut Rng) -> String {
    let (y, m, d) = ymd(rng, 1971, 2037);
    let (h, mi, s) = hms(rng);
    match rng.below(13) {
        0 => format!("'{y}/{m:02}/{d:02}'"),
        1 => format!("'{y}-{m}-{d}'"),
        2 => format!("'{y:04}{m:02}{d:02}'"),
        3 => format!("'{:02}-{m:02}-{d:02}'", y % 100),
        4 => format!("'{y}.{m:02}.{d:02} {h:02}.{mi:02}.{s:02}'"),
        5 => format!("'{y}-{m:02}-{d:02}T{h:02}:{mi:02}:{s:02}'"),
        6 => format!("DATE '{y}-{m:02}-{d:02}'"),
        7 => format!("TIMESTAMP '{y}-{m:02}-{d:02} {h:02}:{mi:02}:{s:02}'"),
        8 => format!("'{y}-{m:02}-{d:02} {h:02}:{mi:02}.{}'", s % 10),
        9 => format!("'{y}-{m:02}-{d:02} {h}:{mi}:{s}'"),
        10 => format!("'{y}-{m:02}-{d:02} {h:02}/{mi:02}/{s:02}.4'"),
        11 => format!("'{y}-{m:02}-{d:02}T{h:02}:{mi:02}'"),
        _ => format!("'{y:04}{m:02}{d:02}{h:02}{mi:02}{s:02}'"),
    }
}

/// A statement the fast analysis path reads, and one it declines (`GROUP BY … HAVING`), so the
/// reference path's reading of the literal is checked as well.
const KEY_STATEMENTS: &[&str] =
    &["SELECT * FROM `{t}` WHERE c1 = {v}", "SELECT * FROM `{t}` WHERE c1 = {v} GROUP BY id HAVING COUNT(*) > 0"];

/// More ways of naming one key value: reversed and null-safe comparisons, IN, parentheses, the
/// DML statements, INSERT … SET.
const MORE_STATEMENTS: &[&str] = &[
    "SELECT * FROM `{t}` WHERE {v} = c1",
    "SELECT * FROM `{t}` WHERE c1 <=> {v}",
    "SELECT * FROM `{t}` WHERE c1 IN ({v})",
    "SELECT * FROM `{t}` WHERE (c1) = ({v})",
    "SELECT * FROM `{t}` WHERE `{t}`.c1 = {v} AND id > 0",
    "UPDATE `{t}` SET id = id + 1 WHERE c1 = {v}",
    "DELETE FROM `{t}` WHERE c1 = {v}",
    "INSERT INTO `{t}` (id, c1) VALUES (1, {v})",
    "INSERT INTO `{t}` (c1, id) VALUES ({v}, 1) ON DUPLICATE KEY UPDATE id = id",
    "REPLACE INTO `{t}` VALUES (1, {v})",
    "INSERT INTO `{t}` SET id = 1, c1 = {v}",
];

/// A table of one key column `c1` of `kind` filled by `gen`, partitioned by `part`, whose
/// literals are located as inserted and through [`KEY_STATEMENTS`].
fn conv(name: &str, class: &str, kind: Kind, gen: ValueGen, part: &str) -> TableBuilder {
    table(name).class(class).col_gen("c1", kind, gen).key(&["c1"]).part(part).as_inserted().statements(KEY_STATEMENTS)
}

/// The conversion classes.
pub fn conversions() -> Vec<TableSpec> {
    let dt3 = Kind::DateTime { fsp: 3 };
    vec![
        conv(
            "conv_decimal_round_key",
            "DECIMAL rounding",
            dec(10, 2),
            mix(
                5,
                pick(&["NULL", "99999999.994", "-99999999.994", "0.005", "-0.005", "0.0049"]),
                g(|r| decimal_literal(r, 8, 2)),
            ),
            KEY13,
        )
        .build(),
        conv("conv_decimal_round_s0_key", "DECIMAL rounding", dec(12, 0), g(|r| decimal_literal(r, 11, 0)), KEY13)
            .build(),
        conv(
            "conv_decimal_round_rangec",
            "DECIMAL rounding",
            dec(6, 2),
            mix(
                40,
                pick(&["1.545", "1.5449", "1.555", "-1.555", "-1.545", "9.995", "9.9949", "0.005", "-0.005"]),
                g(|r| decimal_literal(r, 2, 2)),
            ),
            RANGEC_DECIMAL,
        )
        .build(),
        conv(
            "conv_decimal_scientific_key",
            "scientific notation into DECIMAL",
            dec(20, 6),
            mix(
                10,
                pick(&["1.5e2", "1.015e0", "2.675e0", "'1.5e2'", "-1.005e0", "1e-7", "5e-7", "0.30000000000000004e0"]),
                g(scientific),
            ),
            KEY13,
        )
        .build(),
        conv(
            "conv_fsp_datetime0_key",
            "fractional seconds rounded",
            Kind::DateTime { fsp: 0 },
            g(datetime_fraction),
            KEY13,
        )
        .build(),
        conv("conv_fsp_datetime3_key", "fractional seconds rounded", dt3, g(datetime_fraction), KEY13).build(),
        conv(
            "conv_fsp_datetime_rangec",
            "fractional seconds rounded",
            Kind::DateTime { fsp: 0 },
            mix(
                50,
                pick(&[
                    "'2023-12-31 23:59:59.5'",
                    "'2023-12-31 23:59:59.4999'",
                    "'2024-06-30 23:59:59.5'",
                    "'2024-06-30 23:59:59.49'",
                ]),
                g(datetime_fraction),
            ),
            RANGEC_DATETIME,
        )
        .build(),
        conv(
            "conv_fsp_timestamp2_key_p0800",
            "fractional seconds rounded",
            Kind::TimestampFsp { fsp: 2 },
            g(|r| {
                let (y, m, d) = ymd(r, 1000, 9998);
                let (h, mi, s) = hms(r);
                format!("'{y:04}-{m:02}-{d:02} {h:02}:{mi:02}:{s:02}.{}'", fraction(r))
            }),
            KEY13,
        )
        .tz("+08:00")
        .build(),
        conv(
            "conv_fsp_time1_key",
            "fractional seconds rounded",
            Kind::TimeFsp { fsp: 1 },
            g(|r| {
                let sign = if r.chance(40) { "-" } else { "" };
                format!("'{sign}{:02}:{:02}:{:02}.{}'", r.range(0, 837), r.range(0, 59), r.range(0, 59), fraction(r))
            }),
            KEY13,
        )
        .build(),
        conv(
            "conv_num_date_key",
            "numeric DATE / DATETIME / TIME literals",
            Kind::Date,
            g(|r| {
                let with_time = r.chance(30);
                numeric_datetime(r, with_time, false)
            }),
            KEY13,
        )
        .build(),
        conv(
            "conv_num_datetime_key",
            "numeric DATE / DATETIME / TIME literals",
            Kind::DateTime { fsp: 0 },
            g(|r| numeric_datetime(r, true, true)),
            KEY13,
        )
        .build(),
        conv("conv_num_time_key", "numeric DATE / DATETIME / TIME literals", Kind::Time, g(numeric_time), KEY13)
            .build(),
        conv("conv_time_days_key", "TIME with a day part", Kind::Time, g(time_text), KEY13).build(),
        conv(
            "conv_string_escapes_key",
            "escapes in string literals",
            Kind::VarChar { n: 64, coll: Coll::Bin },
            g(escaped_string),
            KEY13,
        )
        .statements(&[KEY_STATEMENTS, MORE_STATEMENTS].concat())
        .build(),
        conv(
            "conv_string_escapes_key_ci",
            "escapes in string literals",
            Kind::VarChar { n: 64, coll: Coll::GeneralCi },
            g(escaped_string),
            KEY13,
        )
        .build(),
        conv(
            "conv_string_forms_key",
            "string literal forms",
            Kind::VarChar { n: 64, coll: Coll::GeneralCi },
            g(string_form),
            KEY13,
        )
        .statements(&[KEY_STATEMENTS, MORE_STATEMENTS].concat())
        .build(),
        conv(
            "conv_int_forms_key",
            "integer literal forms",
            Kind::Int { bits: 32, unsigned: false },
            g(int_form),
            KEY13,
        )
        .statements(&[KEY_STATEMENTS, MORE_STATEMENTS].concat())
        .build(),
        conv(
            "conv_int_forms_hash",
            "integer literal forms",
            Kind::Int { bits: 64, unsigned: false },
            g(int_form),
            "PARTITION BY HASH(c1) PARTITIONS 7",
        )
        .build(),
        conv("conv_temporal_forms_date_key", "temporal string forms", Kind::Date, g(temporal_form), KEY13)
            .statements(&[KEY_STATEMENTS, MORE_STATEMENTS].concat())
            .build(),
        conv(
            "conv_temporal_forms_datetime_key",
            "temporal string forms",
            Kind::DateTime { fsp: 0 },
            g(temporal_form),
            KEY13,
        )
        .build(),
        conv(
            "conv_ts_wide_key_utc",
            "TIMESTAMP outside MySQL range",
            Kind::Timestamp,
            g(|r| wide_timestamp(r, 0)),
            KEY13,
        )
        .tz("+00:00")
        .build(),
        conv(
            "conv_ts_wide_key_m0800",
            "TIMESTAMP outside MySQL range",
            Kind::Timestamp,
            g(|r| wide_timestamp(r, -8 * 3600)),
            KEY13,
        )
        .tz("-08:00")
        .build(),
        conv(
            "conv_ts_wide_key_p0530",
            "TIMESTAMP outside MySQL range",
            Kind::Timestamp,
            g(|r| wide_timestamp(r, 5 * 3600 + 1800)),
            KEY13,
        )
        .tz("+05:30")
        .build(),
    ]
}
