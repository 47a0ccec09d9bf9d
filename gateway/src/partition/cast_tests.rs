//! Conversions checked against values the kernel (seekdb, OceanBase 4.3.5.3) stored for the same
//! literals (`INSERT` then `SELECT`, 2026-12-02); each expected value is the kernel's output.

use super::*;
use crate::partition::temporal::{parse_date, parse_datetime};

fn col(ty: ColumnType) -> Column {
    Column { name: "c".into(), ty, collation: "binary".into(), generated: false }
}

fn lit(text: &str) -> KeyValue {
    KeyValue::parse_row(text).unwrap().remove(0)
}

fn at(ty: ColumnType, text: &str, tz: i32) -> Result<Datum, PartitionError> {
    cast(&lit(text), &col(ty), &CastContext { tz_offset_secs: tz })
}

fn dec(p: u8, s: u8, text: &str) -> String {
    match at(ColumnType::Decimal { precision: p, scale: s }, text, 0) {
        Ok(Datum::Decimal(d)) => d.to_string(),
        other => format!("{other:?}"),
    }
}

#[test]
fn decimal_rounds_half_away_from_zero() {
    let cases = [
        ("1.555", "156"),
        ("-1.555", "-156"),
        ("1.545", "155"),
        ("1.5e2", "15000"),
        ("1.005", "101"),
        ("1.23456789e1", "1235"),
        ("'1.555'", "156"),
        ("1.0049999", "100"),
        ("99999999.994", "9999999999"),
        ("0.125e1", "125"),
        ("1.015e0", "102"),
        ("2.675e0", "268"),
        ("'1.5e2'", "15000"),
        ("-1.005e0", "-101"),
    ];
    for (v, want) in cases {
        assert_eq!(dec(10, 2, v), want, "{v} into decimal(10,2)");
    }
    let scale0 = [
        ("2.5", "3"),
        ("-2.5", "-3"),
        ("3.5", "4"),
        ("1.5e0", "2"),
        ("0.5", "1"),
        ("1e-1", "0"),
        ("99999.4", "99999"),
        ("-0.5", "-1"),
        ("0.15e1", "2"),
        ("1e2", "100"),
        ("0.49999999999999999999", "0"),
        ("'2.5e0'", "3"),
    ];
    for (v, want) in scale0 {
        assert_eq!(dec(5, 0, v), want, "{v} into decimal(5,0)");
    }
    // Doubles by their shortest round-trip text.
    assert_eq!(dec(40, 30, "0.30000000000000004e0"), format!("30000000000000004{}", "0".repeat(13)));
    assert_eq!(dec(40, 30, "9.999999999999999e0"), format!("9999999999999998{}", "0".repeat(15)));
    assert_eq!(dec(40, 30, "1.2345678901234567e-7"), format!("12345678901234566{}", "0".repeat(7)));
    assert!(dec(10, 2, "99999999.995").contains("Cast"), "rounds out of range");
}

fn dt(fsp: u8, text: &str) -> String {
    match at(ColumnType::DateTime { fsp }, text, 0) {
        Ok(Datum::DateTime(d)) => Datum::DateTime(d).to_string(),
        other => format!("error {other:?}"),
    }
}

#[test]
fn datetime_fractions_round_half_up_with_carry() {
    assert_eq!(dt(0, "'2024-01-15 10:30:00.5'"), "datetime 2024-01-15 10:30:01.000000");
    assert_eq!(dt(0, "'2024-12-31 23:59:59.5'"), "datetime 2025-01-01 00:00:00.000000");
    assert_eq!(dt(2, "'2024-01-15 10:30:00.125'"), "datetime 2024-01-15 10:30:00.130000");
    assert_eq!(dt(2, "'2024-12-31 23:59:59.995'"), "datetime 2025-01-01 00:00:00.000000");
    assert_eq!(dt(0, "'2024-01-15 10:30:00.4999'"), "datetime 2024-01-15 10:30:00.000000");
    assert!(dt(0, "'9999-12-31 23:59:59.5'").starts_with("error"), "the kernel stores NULL: refused");
}

#[test]
fn numbers_as_datetimes() {
    let cases = [
        ("20240115103000", "2024-01-15 10:30:00"),
        ("20240115", "2024-01-15 00:00:00"),
        ("0", "0000-00-00 00:00:00"),
        ("240115", "2024-01-15 00:00:00"),
        ("240115103000", "2024-01-15 10:30:00"),
        ("101", "2000-01-01 00:00:00"),
        ("991231", "1999-12-31 00:00:00"),
        ("700101", "1970-01-01 00:00:00"),
        ("691231", "2069-12-31 00:00:00"),
        ("1000101", "0100-01-01 00:00:00"),
        ("9991231", "0999-12-31 00:00:00"),
        ("10000101", "1000-01-01 00:00:00"),
        ("101000000", "2000-01-01 00:00:00"),
        ("691231235959", "2069-12-31 23:59:59"),
        ("700101000000", "1970-01-01 00:00:00"),
        ("10000101000000", "1000-01-01 00:00:00"),
        ("99991231235959", "9999-12-31 23:59:59"),
        ("20240115103000.5", "2024-01-15 10:30:01"),
        ("20240115103000.4", "2024-01-15 10:30:00"),
        ("19700101000000.4999", "1970-01-01 00:00:00"),
        ("2.0240115e7", "2024-01-15 00:00:00"),
        ("'20240115103000'", "2024-01-15 10:30:00"),
        ("'2024-01-15 10:30'", "2024-01-15 10:30:00"),
    ];
    for (v, want) in cases {
        assert_eq!(dt(0, v), format!("datetime {want}.000000"), "{v}");
    }
    assert_eq!(dt(6, "20240115103000.1234567"), "datetime 2024-01-15 10:30:00.123457");
    assert_eq!(dt(0, "5951231113144.5"), "datetime 0595-12-31 11:31:45.000000");
    assert_eq!(dt(0, "30120185206.5"), "datetime 2003-01-20 18:52:07.000000");
    assert_eq!(dt(0, "240115.0"), "datetime 2024-01-15 00:00:00.000000");
    for bad in [
        "-1",
        "1e7",
        "100",
        "692000",
        "100000000",
        "9999999999999",
        "20240115240000",
        "20240100",
        "20240001",
        "20241301",
        "20240115103099",
        "20240115.5",
        "240115.5",
        "1350819.5",
    ] {
        assert!(dt(0, bad).starts_with("error"), "{bad} is refused by the kernel");
    }
}

#[test]
fn numbers_and_datetimes_as_dates() {
    let date = |v: &str| at(ColumnType::Date, v, 0).map(|d| d.to_string()).unwrap_or_else(|e| format!("error {e}"));
    for (v, want) in [
        ("20240115", "2024-01-15"),
        ("0", "0000-00-00"),
        ("240115", "2024-01-15"),
        ("20240115103000", "2024-01-15"),
        ("'2024-01-15 10:30:00'", "2024-01-15"),
        ("'2024-01-15 10:30:00.9'", "2024-01-15"),
        ("20240115.0", "2024-01-15"),
        ("101", "2000-01-01"),
        ("0.0", "0000-00-00"),
    ] {
        assert_eq!(date(v), format!("date {want}"), "{v}");
    }
    for bad in ["1", "20240230", "20240115235959.9"] {
        assert!(date(bad).starts_with("error"), "{bad}");
    }
}

fn tm(fsp: u8, text: &str) -> String {
    match at(ColumnType::Time { fsp }, text, 0) {
        Ok(Datum::Time(us)) => {
            let (sign, a) = (if us < 0 { "-" } else { "" }, us.unsigned_abs());
            let s = a / 1_000_000;
            format!("{sign}{:02}:{:02}:{:02}.{:06}", s / 3600, s / 60 % 60, s % 60, a % 1_000_000)
        }
        other => format!("error {other:?}"),
    }
}

#[test]
fn time_literals() {
    let cases = [
        ("123456", "12:34:56"),
        ("0", "00:00:00"),
        ("1", "00:00:01"),
        ("'1 02:03:04'", "26:03:04"),
        ("'34 22:59:59'", "838:59:59"),
        ("'1 02'", "26:00:00"),
        ("'1 02:03'", "26:03:00"),
        ("'02:03'", "02:03:00"),
        ("'-1 02:03:04'", "-26:03:04"),
        ("-123456", "-12:34:56"),
        ("1.5", "00:00:02"),
        ("235959.5", "24:00:00"),
        ("'12'", "00:00:12"),
        ("'1234'", "00:12:34"),
        ("'123456'", "12:34:56"),
        ("'12:34:56.5'", "12:34:57"),
        ("8385959", "838:59:59"),
        ("-8385959", "-838:59:59"),
        ("'-00:00:00.5'", "00:00:00"),
        ("'-00:00:00.6'", "-00:00:01"),
        ("'-1.5'", "-00:00:01"),
        ("-1.5", "-00:00:01"),
        ("'00:00:00.5'", "00:00:01"),
        ("606", "00:06:06"),
        ("20240115103000", "10:30:00"),
        ("'2024-01-15 10:30:00'", "10:30:00"),
        ("'-0'", "00:00:00"),
        ("'0 0'", "00:00:00"),
        ("1e2", "00:01:00"),
        ("'24 9'", "00:00:24"),
        ("'8 0'", "00:00:08"),
        ("'-13 7'", "-00:00:13"),
        ("'1 2'", "00:00:01"),
        ("'2 10'", "58:00:00"),
        ("'1 9:05'", "33:05:00"),
        ("'1 9:05:01'", "33:05:01"),
    ];
    for (v, want) in cases {
        assert_eq!(tm(0, v), format!("{want}.000000"), "{v}");
    }
    // Negative values round half toward +infinity.
    let fsp1 = [
        ("'-10:30:00.06'", "-10:30:00.1"),
        ("'-10:30:00.04'", "-10:30:00.0"),
        ("'-10:30:00.15'", "-10:30:00.1"),
        ("'-10:30:00.14'", "-10:30:00.1"),
        ("'-10:30:00.05'", "-10:30:00.0"),
        ("'10:30:00.05'", "10:30:00.1"),
        ("-0.05", "00:00:00.0"),
        ("-0.06", "-00:00:00.1"),
        ("-1.05", "-00:00:01.0"),
        ("'-0.05'", "00:00:00.0"),
        ("'-00:00:01.05'", "-00:00:01.0"),
        ("'-1 00:00:00.05'", "-24:00:00.0"),
        ("10203.5", "01:02:03.5"),
        ("0", "00:00:00.0"),
    ];
    for (v, want) in fsp1 {
        assert_eq!(tm(1, v), format!("{want}00000"), "{v} into time(1)");
    }
    for bad in ["'838:59:59.4'", "60", "8390000", "'35 00:00:00'", "'34 23:00:00'"] {
        assert!(tm(0, bad).starts_with("error"), "{bad} is refused by the kernel");
    }
}

#[test]
fn timestamps_outside_the_mysql_range() {
    let ts = |v: &str, tz: i32| match at(ColumnType::Timestamp { fsp: 0 }, v, tz) {
        Ok(Datum::Timestamp(us)) => Some(us),
        _ => None,
    };
    let secs = |s: i64| Some(s * 1_000_000);
    assert_eq!(ts("'1970-01-01 00:00:00'", 0), secs(0));
    assert_eq!(ts("'1969-12-31 23:59:59'", 0), secs(-1));
    assert_eq!(ts("'9999-12-31 23:59:59'", 0), secs(253_402_300_799));
    assert_eq!(ts("'9999-12-31 15:59:59'", -8 * 3600), secs(253_402_300_799));
    assert_eq!(ts("'9999-12-31 16:00:00'", -8 * 3600), None, "stored as NULL by the kernel: refused");
    assert_eq!(ts("'0001-01-01 00:00:00'", 8 * 3600), secs(-62_135_596_800 - 8 * 3600));
    assert_eq!(ts("20240115103000", 0), secs(1_705_314_600));
    assert_eq!(ts("0", 0), Some(TIMESTAMP_ZERO));
    assert_eq!(ts("'2038-01-19 03:14:07.5'", 0), secs(2_147_483_648));
    // The helpers agree with the calendar used above.
    assert_eq!(parse_datetime("0001-01-01", 0).unwrap().epoch_micros(), -62_135_596_800_000_000);
    assert!(parse_date("2024-02-30").is_err());
}

/// Integer columns given other literal forms; the placements of these forms agreed with the
/// kernel's in `partition_conformance`'s `conv_int_forms_*` tables.
#[test]
fn integer_from_hex_bits_rounded_numbers_and_spaced_strings() {
    let int = |text: &str| match at(ColumnType::Int { bytes: 4, unsigned: false }, text, 0) {
        Ok(Datum::Int(i)) => Ok(i),
        other => Err(format!("{other:?}")),
    };
    assert_eq!(int("0x2D4"), Ok(724));
    assert_eq!(int("X'0323'"), Ok(0x323));
    assert_eq!(int("b'11010000101'"), Ok(0b110_1000_0101));
    assert_eq!(int("4449.2"), Ok(4449));
    assert_eq!(int("4713.5"), Ok(4714));
    assert_eq!(int("-649.5"), Ok(-650));
    assert_eq!(int("' 7'"), Ok(7));
    assert_eq!(int("'7 '"), Ok(7));
    // Refused rather than guessed: a string's fraction, a value wider than 64 bits.
    assert!(int("'4.5'").is_err());
    assert!(int("X'010203040506070809'").is_err());
}

/// Date strings with other delimiters (their placements agreed with the kernel's in
/// `partition_conformance`'s `conv_temporal_forms_*` tables).
#[test]
fn dates_with_other_delimiters_and_two_digit_years() {
    let date = |text: &str| match at(ColumnType::Date, text, 0) {
        Ok(Datum::Date(d)) => Ok((d.year, d.month, d.day)),
        other => Err(format!("{other:?}")),
    };
    assert_eq!(date("'1976.08.22 23.59.59'"), Ok((1976, 8, 22)));
    assert_eq!(date("'1977/02/14'"), Ok((1977, 2, 14)));
    assert_eq!(date("'78-03-31'"), Ok((1978, 3, 31)));
    assert_eq!(date("'29-04-30'"), Ok((2029, 4, 30)));
    assert_eq!(date("'2024-01-02 23:59:59.9'"), Ok((2024, 1, 2)));
    assert!(date("'2024-01-02 23:59:59.9999999'").is_err());
}
