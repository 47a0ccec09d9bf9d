//! Date and time literals: strict parsing and the encodings KEY hashing needs (§4.1).

use super::PartitionError;

/// A calendar date, or the zero date `0000-00-00` ([`Date::ZERO`], which sorts below every other
/// date; the kernel's `sql_mode` lacks NO_ZERO_DATE, so it accepts zero dates).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Date {
    /// 1..=9999 (0 only in the zero date).
    pub year: u16,
    /// 1..=12 (0 only in the zero date).
    pub month: u8,
    /// 1..=31, valid for the month (0 only in the zero date).
    pub day: u8,
}

/// The TIMESTAMP value of `'0000-00-00 00:00:00'`, in any session time zone: the kernel's
/// `ZERO_DATE` (−106 751 991 days) in microseconds. Found by inverting the KEY hash the kernel
/// computed for it (partitions 8185…8192, `EXPLAIN` pruning), and confirmed by the conformance run.
pub const TIMESTAMP_ZERO: i64 = -106_751_991 * 86_400_000_000;

/// A wall-clock date and time with microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct DateTime {
    /// The date.
    pub date: Date,
    /// Seconds since midnight.
    pub secs: u32,
    /// 0..=999_999.
    pub usec: u32,
}

fn bad(text: &str, what: &str) -> PartitionError {
    PartitionError::Cast(format!("'{text}' is not a valid {what}"))
}

fn num(s: &str, text: &str, what: &str) -> Result<u32, PartitionError> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) || s.len() > 9 {
        return Err(bad(text, what));
    }
    s.parse().map_err(|_| bad(text, what))
}

fn is_leap(y: u32) -> bool {
    (y.is_multiple_of(4) && !y.is_multiple_of(100)) || y.is_multiple_of(400)
}

fn days_in_month(y: u32, m: u32) -> u32 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

impl Date {
    /// `0000-00-00`.
    pub const ZERO: Date = Date { year: 0, month: 0, day: 0 };

    /// Whether this is the zero date.
    pub fn is_zero(self) -> bool {
        self == Date::ZERO
    }
}

/// `YYYY-MM-DD`; the zero date `0000-00-00` is accepted, partial zeros (`2024-00-01`, year 0000
/// with a month) and invalid days are errors, as in strict mode.
pub fn parse_date(text: &str) -> Result<Date, PartitionError> {
    let t = text.trim();
    let parts: Vec<&str> = t.split('-').collect();
    let [y, m, d] = parts.as_slice() else { return Err(bad(text, "date")) };
    if y.len() != 4 {
        return Err(bad(text, "date"));
    }
    let (y, m, d) = (num(y, text, "date")?, num(m, text, "date")?, num(d, text, "date")?);
    if (y, m, d) == (0, 0, 0) {
        return Ok(Date::ZERO);
    }
    if y == 0 || !(1..=12).contains(&m) || d == 0 || d > days_in_month(y, m) {
        return Err(bad(text, "date"));
    }
    Ok(Date { year: y as u16, month: m as u8, day: d as u8 })
}

/// `HH:MM:SS[.ffffff]` within a day, with at most `fsp` significant fraction digits.
fn parse_clock(text: &str, clock: &str, fsp: u8) -> Result<(u32, u32), PartitionError> {
    let (hms, frac) = match clock.split_once('.') {
        Some((a, b)) => (a, b),
        None => (clock, ""),
    };
    let parts: Vec<&str> = hms.split(':').collect();
    let [h, mi, s] = parts.as_slice() else { return Err(bad(text, "time of day")) };
    let (h, mi, s) = (num(h, text, "time")?, num(mi, text, "time")?, num(s, text, "time")?);
    if h > 23 || mi > 59 || s > 59 {
        return Err(bad(text, "time of day"));
    }
    Ok((h * 3600 + mi * 60 + s, fraction(text, frac, fsp)?))
}

/// Microseconds of a fraction; digits past `fsp` must be zero (no rounding is guessed).
fn fraction(text: &str, frac: &str, fsp: u8) -> Result<u32, PartitionError> {
    if frac.is_empty() {
        return Ok(0);
    }
    if !frac.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad(text, "fraction"));
    }
    if frac.bytes().skip(usize::from(fsp)).any(|b| b != b'0') {
        return Err(PartitionError::Cast(format!("'{text}' would be rounded to {fsp} fraction digits")));
    }
    let digits: String = frac.chars().chain(std::iter::repeat('0')).take(6).collect();
    digits.parse().map_err(|_| bad(text, "fraction"))
}

/// `YYYY-MM-DD[ HH:MM:SS[.ffffff]]` (also `T` between date and time); the zero date only with a
/// zero time (`0000-00-00 00:00:00[.000000]`).
pub fn parse_datetime(text: &str, fsp: u8) -> Result<DateTime, PartitionError> {
    let t = text.trim();
    let (d, clock) = match t.split_once([' ', 'T']) {
        Some((d, c)) => (d, Some(c.trim())),
        None => (t, None),
    };
    let date = parse_date(d).map_err(|_| bad(text, "datetime"))?;
    let (secs, usec) = match clock {
        Some(c) => parse_clock(text, c, fsp)?,
        None => (0, 0),
    };
    if date.is_zero() && (secs, usec) != (0, 0) {
        return Err(bad(text, "datetime"));
    }
    Ok(DateTime { date, secs, usec })
}

/// `[-]HH:MM:SS[.ffffff]` (|hours| ≤ 838) → signed microseconds.
pub fn parse_time(text: &str, fsp: u8) -> Result<i64, PartitionError> {
    let t = text.trim();
    let (neg, body) = match t.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, t),
    };
    let (hms, frac) = body.split_once('.').unwrap_or((body, ""));
    let parts: Vec<&str> = hms.split(':').collect();
    let [h, mi, s] = parts.as_slice() else { return Err(bad(text, "time")) };
    let (h, mi, s) = (num(h, text, "time")?, num(mi, text, "time")?, num(s, text, "time")?);
    if h > 838 || mi > 59 || s > 59 || (h == 838 && (mi, s) > (59, 59)) {
        return Err(bad(text, "time"));
    }
    let us = i64::from(h * 3600 + mi * 60 + s) * 1_000_000 + i64::from(fraction(text, frac, fsp)?);
    if us > 838 * 3_600_000_000 + 59 * 60_000_000 + 59_000_000 {
        return Err(bad(text, "time"));
    }
    Ok(if neg { -us } else { us })
}

/// `[+-]HH:MM` → seconds east of UTC.
pub fn parse_offset(text: &str) -> Result<i32, PartitionError> {
    let err = || PartitionError::Cast(format!("time zone '{text}' is not a +HH:MM offset"));
    let t = text.trim();
    let (sign, body) = match t.as_bytes().first() {
        Some(b'+') => (1, &t[1..]),
        Some(b'-') => (-1, &t[1..]),
        _ => return Err(err()),
    };
    let (h, m) = body.split_once(':').ok_or_else(err)?;
    let (h, m): (i32, i32) = (h.parse().map_err(|_| err())?, m.parse().map_err(|_| err())?);
    if !(0..=14).contains(&h) || !(0..=59).contains(&m) {
        return Err(err());
    }
    Ok(sign * (h * 3600 + m * 60))
}

/// Days since 1970-01-01 (proleptic Gregorian).
pub fn days_since_epoch(d: Date) -> i64 {
    let (y, m, dd) = (i64::from(d.year), i64::from(d.month), i64::from(d.day));
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + dd - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

impl Date {
    /// `ObMySQLDateType` packing: `day | month << 5 | year << 9`.
    pub fn packed(self) -> i64 {
        i64::from(self.day) | i64::from(self.month) << 5 | i64::from(self.year) << 9
    }
}

impl DateTime {
    /// `ObMySQLDateTimeType` packing (§4.1, type 53).
    pub fn packed(self) -> i64 {
        let (h, mi, s) = (self.secs / 3600, self.secs / 60 % 60, self.secs % 60);
        let ym = i64::from(self.date.year) * 13 + i64::from(self.date.month);
        i64::from(self.usec)
            | i64::from(s) << 24
            | i64::from(mi) << 30
            | i64::from(h) << 36
            | i64::from(self.date.day) << 41
            | ym << 46
    }

    /// `0000-00-00 00:00:00`.
    pub fn is_zero(self) -> bool {
        self.date.is_zero() && self.secs == 0 && self.usec == 0
    }

    /// Microseconds since the epoch, reading the wall clock as UTC (not for the zero date).
    pub fn epoch_micros(self) -> i64 {
        (days_since_epoch(self.date) * 86_400 + i64::from(self.secs)) * 1_000_000 + i64::from(self.usec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_times() {
        let d = parse_date("2024-02-29").unwrap();
        assert_eq!(days_since_epoch(d), 19782);
        assert!(parse_date("2023-02-29").is_err());
        assert!(parse_date("2024-00-01").is_err() && parse_date("0000-01-01").is_err());
        assert_eq!(d.packed(), 29 | 2 << 5 | 2024 << 9);
        let dt = parse_datetime("1970-01-02 00:00:01.5", 6).unwrap();
        assert_eq!(dt.epoch_micros(), 86_401_500_000);
        assert!(parse_datetime("2024-01-02 03:04:05.123", 2).is_err());
        assert!(parse_datetime("2024-01-02 03:04:05.120", 2).is_ok());
        assert_eq!(parse_time("01:00:00", 0).unwrap(), 3_600_000_000);
        assert_eq!(parse_time("-838:59:59", 0).unwrap(), -3_020_399_000_000);
        assert_eq!(parse_offset("+08:00").unwrap(), 28_800);
        assert_eq!(parse_offset("-03:30").unwrap(), -12_600);
    }

    // Zero dates: packed MySQL DATE / DATETIME of zero parts is 0 (the conformance run checks the
    // kernel places them so); they sort below every other date.
    #[test]
    fn zero_dates() {
        assert_eq!(parse_date("0000-00-00").unwrap(), Date::ZERO);
        assert_eq!(Date::ZERO.packed(), 0);
        let z = parse_datetime("0000-00-00 00:00:00.000000", 6).unwrap();
        assert!(z.is_zero());
        assert_eq!(z.packed(), 0);
        assert_eq!(parse_datetime("0000-00-00", 0).unwrap(), z);
        assert!(parse_datetime("0000-00-00 00:00:01", 0).is_err());
        assert!(Date::ZERO < parse_date("0001-01-01").unwrap());
        assert!(z < parse_datetime("0001-01-01 00:00:00", 0).unwrap());
        assert_eq!(TIMESTAMP_ZERO, -9_223_372_022_400_000_000);
    }
}
