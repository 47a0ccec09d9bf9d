//! One position of a route-policy order, such as `ANRP` or `CMPF` (docs/routing.md §3, §4).

use std::fmt;

use super::candidate::ZoneType;
use super::ldc::{IdcType, LdcCode, RoleLetter};

/// Role requirement of an order entry; an entry without one matches any role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RoleMatch {
    /// **L**: the leader.
    Leader,
    /// **F**: a follower.
    Follower,
    /// **D**: a duplicate replica, or the leader (docs/routing.md §3).
    Duplicate,
}

/// One entry of a policy order: the servers of one LDC class. Fields the entry does not
/// mention (zone type, role) match anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RouteEntry {
    /// A / B / C.
    pub idc: IdcType,
    /// M (true) / N (false).
    pub merging: bool,
    /// R / W, or any.
    pub zone: Option<ZoneType>,
    /// P (true) / T (false).
    pub partition: bool,
    /// L / F / D, or any.
    pub role: Option<RoleMatch>,
}

impl RouteEntry {
    /// Parses a letter code at compile time (`e("ANRP")`); a malformed code fails the build.
    ///
    /// # Panics
    ///
    /// On a malformed code (at compile time when used in a constant).
    pub const fn parse(code: &str) -> RouteEntry {
        let b = code.as_bytes();
        assert!(b.len() >= 3 && b.len() <= 5, "route entry has 3 to 5 letters");
        let idc = match b[0] {
            b'A' => IdcType::SameIdc,
            b'B' => IdcType::SameRegion,
            b'C' => IdcType::OtherRegion,
            _ => panic!("route entry: IDC letter must be A, B or C"),
        };
        let merging = match b[1] {
            b'N' => false,
            b'M' => true,
            _ => panic!("route entry: merge letter must be N or M"),
        };
        let mut i = 2;
        let zone = match b[i] {
            b'R' => Some(ZoneType::ReadOnly),
            b'W' => Some(ZoneType::ReadWrite),
            _ => None,
        };
        if zone.is_some() {
            i += 1;
        }
        assert!(i < b.len(), "route entry: missing P/T");
        let partition = match b[i] {
            b'P' => true,
            b'T' => false,
            _ => panic!("route entry: partition letter must be P or T"),
        };
        i += 1;
        let role = if i < b.len() {
            let r = match b[i] {
                b'L' => RoleMatch::Leader,
                b'F' => RoleMatch::Follower,
                b'D' => RoleMatch::Duplicate,
                _ => panic!("route entry: role letter must be L, F or D"),
            };
            i += 1;
            Some(r)
        } else {
            None
        };
        assert!(i == b.len(), "route entry: trailing letters");
        assert!(partition || role.is_none(), "route entry: tenant servers have no role");
        RouteEntry { idc, merging, zone, partition, role }
    }

    /// Whether a classified candidate belongs to this entry.
    pub fn matches(&self, code: &LdcCode) -> bool {
        self.idc == code.idc
            && self.merging == code.merging
            && self.partition == code.partition
            && self.zone.is_none_or(|z| z == code.zone)
            && self.role.is_none_or(|r| role_matches(r, code.role))
    }

    /// ODP's route-type name, e.g. `ROUTE_TYPE_PARTITION_READONLY_UNMERGE_LOCAL`.
    pub fn odp_route_type(&self) -> String {
        let role = match self.role {
            Some(RoleMatch::Leader) => "LEADER_",
            Some(RoleMatch::Follower) => "FOLLOWER_",
            Some(RoleMatch::Duplicate) => "DUP_",
            None => "",
        };
        let part = if self.partition { "PARTITION" } else { "NONPARTITION" };
        let zone = match self.zone {
            Some(ZoneType::ReadOnly) => "_READONLY",
            Some(ZoneType::ReadWrite) => "_READWRITE",
            None => "",
        };
        let merge = if self.merging { "MERGE" } else { "UNMERGE" };
        format!("ROUTE_TYPE_{role}{part}{zone}_{merge}_{}", self.idc.odp_suffix())
    }
}

fn role_matches(want: RoleMatch, have: Option<RoleLetter>) -> bool {
    matches!(
        (want, have),
        (RoleMatch::Leader, Some(RoleLetter::Leader))
            | (RoleMatch::Follower, Some(RoleLetter::Follower | RoleLetter::Duplicate))
            | (RoleMatch::Duplicate, Some(RoleLetter::Duplicate | RoleLetter::Leader))
    )
}

impl fmt::Display for RouteEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.idc.letter(), if self.merging { 'M' } else { 'N' })?;
        if let Some(z) = self.zone {
            write!(f, "{}", z.letter())?;
        }
        write!(f, "{}", if self.partition { 'P' } else { 'T' })?;
        match self.role {
            Some(RoleMatch::Leader) => write!(f, "L"),
            Some(RoleMatch::Follower) => write!(f, "F"),
            Some(RoleMatch::Duplicate) => write!(f, "D"),
            None => Ok(()),
        }
    }
}
