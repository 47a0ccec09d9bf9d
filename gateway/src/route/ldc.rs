//! LDC classification of candidates: IDC type, merge state, zone type, P/T, role (docs/routing.md §3).

use std::fmt;
use std::sync::Arc;

use super::candidate::{Candidate, Role, ZoneType};

/// Where a server is relative to the gateway (docs/routing.md §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IdcType {
    /// Same IDC (letter **A**).
    SameIdc,
    /// Same region, other IDC (letter **B**).
    SameRegion,
    /// Other region (letter **C**).
    OtherRegion,
}

impl IdcType {
    /// The letter of the LDC code.
    pub const fn letter(self) -> char {
        match self {
            IdcType::SameIdc => 'A',
            IdcType::SameRegion => 'B',
            IdcType::OtherRegion => 'C',
        }
    }

    /// ODP's suffix in route-type names (`ROUTE_TYPE_…_LOCAL/REGION/REMOTE`).
    pub const fn odp_suffix(self) -> &'static str {
        match self {
            IdcType::SameIdc => "LOCAL",
            IdcType::SameRegion => "REGION",
            IdcType::OtherRegion => "REMOTE",
        }
    }
}

/// Role letter of a partition server (docs/routing.md §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RoleLetter {
    /// **L**: leader.
    Leader,
    /// **F**: follower.
    Follower,
    /// **D**: duplicate-table replica (a follower of a duplicate table).
    Duplicate,
}

impl RoleLetter {
    /// The letter.
    pub const fn letter(self) -> char {
        match self {
            RoleLetter::Leader => 'L',
            RoleLetter::Follower => 'F',
            RoleLetter::Duplicate => 'D',
        }
    }
}

/// The LDC letter code of one candidate (docs/routing.md §3), e.g. `ANWPL` or `BMRT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LdcCode {
    /// A / B / C.
    pub idc: IdcType,
    /// M (true) / N (false), after `disable_merge_status_check`.
    pub merging: bool,
    /// R / W.
    pub zone: ZoneType,
    /// P (true) / T (false).
    pub partition: bool,
    /// L / F / D for partition servers, `None` for tenant servers.
    pub role: Option<RoleLetter>,
}

impl fmt::Display for LdcCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let merge = if self.merging { 'M' } else { 'N' };
        let part = if self.partition { 'P' } else { 'T' };
        write!(f, "{}{}{}{}", self.idc.letter(), merge, self.zone.letter(), part)?;
        match self.role {
            Some(role) => write!(f, "{}", role.letter()),
            None => Ok(()),
        }
    }
}

/// The gateway's own location, from configuration (`proxy_idc_name`, the IDC list's regions).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientLocation {
    /// `@proxy_idc_name` / `proxy_idc_name`; empty or `None` → no LDC (everything is A).
    pub idc: Option<Arc<str>>,
    /// Regions from the config server's IDC list, used only when no server's IDC or zone name
    /// identifies the gateway's region (docs/routing.md §3, third rule).
    pub regions: Vec<String>,
}

/// The LDC view of one request: whether LDC is used, the IDC name and the gateway's regions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LdcContext<'a> {
    idc: &'a str,
    /// Inline: a gateway is in one region, rarely two (no allocation per statement).
    regions: Regions<'a>,
    /// Merge state is ignored (`disable_merge_status_check`, docs/routing.md §3).
    ignore_merge: bool,
}

impl<'a> LdcContext<'a> {
    /// Derives the gateway's regions from the candidates (docs/routing.md §3): regions of servers in the
    /// gateway's IDC; else of servers whose zone name starts with the IDC name; else the
    /// configured regions. An empty IDC name or no region found means no LDC.
    pub fn new(client: &'a ClientLocation, servers: &'a [Candidate], ignore_merge: bool) -> Self {
        let idc = client.idc.as_deref().map(str::trim).unwrap_or_default();
        let mut regions = Regions::new();
        if !idc.is_empty() {
            regions = regions_where(servers, |c| c.idc.eq_ignore_ascii_case(idc));
            if regions.is_empty() {
                regions = regions_where(servers, |c| starts_with_ignore_case(&c.zone, idc));
            }
            if regions.is_empty() {
                regions = client.regions.iter().map(String::as_str).collect();
            }
        }
        LdcContext { idc, regions, ignore_merge }
    }

    /// LDC is in use: an IDC name is configured and the gateway's region is known.
    pub fn is_used(&self) -> bool {
        !self.idc.is_empty() && !self.regions.is_empty()
    }

    /// The gateway's regions (empty without LDC).
    pub fn regions(&self) -> &[&'a str] {
        &self.regions
    }

    /// IDC type of a server: A if in the gateway's region and IDC (or zone-prefix match), B if
    /// only in the region, C otherwise; always A without LDC.
    pub fn idc_type(&self, c: &Candidate) -> IdcType {
        if !self.is_used() {
            return IdcType::SameIdc;
        }
        let in_region = self.regions.iter().any(|r| r.eq_ignore_ascii_case(&c.region));
        let same_idc = c.idc.eq_ignore_ascii_case(self.idc) || starts_with_ignore_case(&c.zone, self.idc);
        match (in_region, same_idc) {
            (true, true) => IdcType::SameIdc,
            (true, false) => IdcType::SameRegion,
            (false, _) => IdcType::OtherRegion,
        }
    }

    /// The full letter code of a candidate. `located` is false when no partition location is
    /// known: every candidate is then a tenant server (T, docs/routing.md §3).
    pub fn classify(&self, c: &Candidate, located: bool) -> LdcCode {
        let partition = located && c.partition_server;
        LdcCode {
            idc: self.idc_type(c),
            merging: c.merging && !self.ignore_merge,
            zone: c.zone_type,
            partition,
            role: partition.then(|| role_letter(c)),
        }
    }
}

fn role_letter(c: &Candidate) -> RoleLetter {
    match (c.role, c.duplicate) {
        (Role::Leader, _) => RoleLetter::Leader,
        (_, true) => RoleLetter::Duplicate,
        _ => RoleLetter::Follower,
    }
}

/// Region names of an [`LdcContext`].
type Regions<'a> = smallvec::SmallVec<[&'a str; 2]>;

fn regions_where(servers: &[Candidate], pred: impl Fn(&Candidate) -> bool) -> Regions<'_> {
    let mut out = Regions::new();
    for c in servers.iter().filter(|c| pred(c) && !c.region.is_empty()) {
        if !out.iter().any(|r| r.eq_ignore_ascii_case(&c.region)) {
            out.push(&c.region);
        }
    }
    out
}

fn starts_with_ignore_case(s: &str, prefix: &str) -> bool {
    !prefix.is_empty()
        && s.len() >= prefix.len()
        && s.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
}
