//! Typed access to the text cells of one view row; anything unexpected is a `MetadataError`.

use std::net::{IpAddr, SocketAddr};

use crate::metadata::information_schema::TextRow;
use crate::metadata::MetadataError;

/// One row of a named view, read by position.
#[derive(Debug, Clone, Copy)]
pub struct Cells<'a> {
    row: &'a TextRow,
    view: &'static str,
}

impl<'a> Cells<'a> {
    /// A row of `view` that must have at least `columns` cells.
    pub fn new(row: &'a TextRow, view: &'static str, columns: usize) -> Result<Cells<'a>, MetadataError> {
        if row.len() < columns {
            return Err(MetadataError::Invalid(format!("{view}: row has {} columns, expected {columns}", row.len())));
        }
        Ok(Cells { row, view })
    }

    /// An error about column `name` of this row.
    pub fn invalid(&self, name: &str, why: impl std::fmt::Display) -> MetadataError {
        MetadataError::Invalid(format!("{}: column {name}: {why}", self.view))
    }

    /// The text of cell `i`, `None` for SQL NULL.
    pub fn opt_text(&self, i: usize) -> Option<&'a str> {
        self.row.get(i).and_then(|c| c.as_deref())
    }

    /// The text of cell `i`; NULL is an error.
    pub fn text(&self, i: usize, name: &str) -> Result<&'a str, MetadataError> {
        self.opt_text(i).ok_or_else(|| self.invalid(name, "unexpected NULL"))
    }

    /// Cell `i` as a signed integer; NULL is `None`, anything but an integer an error.
    pub fn opt_int(&self, i: usize, name: &str) -> Result<Option<i64>, MetadataError> {
        self.opt_text(i)
            .map(|t| t.trim().parse::<i64>().map_err(|_| self.invalid(name, format!("`{t}` is not an integer"))))
            .transpose()
    }

    /// Cell `i` as a signed integer; NULL is an error.
    pub fn int(&self, i: usize, name: &str) -> Result<i64, MetadataError> {
        self.opt_int(i, name)?.ok_or_else(|| self.invalid(name, "unexpected NULL"))
    }

    /// Cell `i` as a signed integer, `default` for NULL.
    pub fn int_or(&self, i: usize, name: &str, default: i64) -> Result<i64, MetadataError> {
        Ok(self.opt_int(i, name)?.unwrap_or(default))
    }

    /// Cell `i` as a non-negative integer; NULL or a negative value is an error.
    pub fn uint(&self, i: usize, name: &str) -> Result<u64, MetadataError> {
        let v = self.int(i, name)?;
        u64::try_from(v).map_err(|_| self.invalid(name, format!("{v} is negative")))
    }

    /// Cell `i` as a boolean (`0` / `1`, as `expr is not null` returns it); NULL is an error.
    pub fn flag(&self, i: usize, name: &str) -> Result<bool, MetadataError> {
        match self.int(i, name)? {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(self.invalid(name, format!("{v} is not a boolean"))),
        }
    }

    /// Cell `i` as a TCP port (1–65535, or 0 when `allow_zero`).
    pub fn port(&self, i: usize, name: &str, allow_zero: bool) -> Result<u16, MetadataError> {
        let v = self.int(i, name)?;
        match u16::try_from(v) {
            Ok(p) if p > 0 || allow_zero => Ok(p),
            _ => Err(self.invalid(name, format!("{v} is not a port"))),
        }
    }

    /// Cells `ip` and `port` as a socket address.
    pub fn addr(&self, ip: usize, port: usize, names: (&str, &str)) -> Result<SocketAddr, MetadataError> {
        let text = self.text(ip, names.0)?;
        let ip_addr: IpAddr =
            text.trim().parse().map_err(|_| self.invalid(names.0, format!("`{text}` is not an IP address")))?;
        Ok(SocketAddr::new(ip_addr, self.port(port, names.1, true)?))
    }
}

/// Parses `ip:port` (IPv6 as `[ip]:port` or bare `ip:port` with the last colon as separator).
pub fn parse_addr(text: &str) -> Option<SocketAddr> {
    let t = text.trim();
    if let Ok(a) = t.parse::<SocketAddr>() {
        return Some(a);
    }
    let (ip, port) = t.rsplit_once(':')?;
    Some(SocketAddr::new(ip.parse().ok()?, port.parse().ok()?))
}
