//! Tenant primary zone weight groups and the `proxy_primary_zone_name` zone list (docs/routing.md §4).

/// A tenant's primary zone parsed into weight groups: `'z1,z2;z3'` → `[[z1, z2], [z3]]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PrimaryZone {
    /// Shared: every route request of the tenant carries a copy. `None` when there is none (the
    /// default every request starts with: an empty shared slice would be a reference count
    /// that every thread's requests take and drop).
    groups: Option<std::sync::Arc<[Vec<String>]>>,
}

impl PrimaryZone {
    /// Parses `DBA_OB_TENANTS.primary_zone`: `';'` separates priorities, `','` equals. `RANDOM`
    /// (every zone equal) and an empty string give no primary zone.
    pub fn parse(text: &str) -> Self {
        if text.trim().eq_ignore_ascii_case("RANDOM") {
            return PrimaryZone::default();
        }
        let groups = text
            .split(';')
            .map(|g| g.split(',').map(str::trim).filter(|z| !z.is_empty()).map(str::to_owned).collect::<Vec<_>>())
            .filter(|g| !g.is_empty())
            .collect::<Vec<_>>();
        PrimaryZone { groups: (!groups.is_empty()).then(|| groups.into()) }
    }

    /// No primary zone.
    pub fn is_empty(&self) -> bool {
        self.groups().is_empty()
    }

    /// Weight of a zone (0 = highest priority), or `None` if it is not a primary zone.
    pub fn weight(&self, zone: &str) -> Option<usize> {
        self.groups().iter().position(|g| g.iter().any(|z| z.eq_ignore_ascii_case(zone)))
    }

    /// The weight groups.
    pub fn groups(&self) -> &[Vec<String>] {
        self.groups.as_deref().unwrap_or_default()
    }
}

/// Parses `proxy_primary_zone_name` (`'z1;z2'`) into an ordered zone list.
pub fn parse_zone_list(text: &str) -> Vec<String> {
    text.split(';').map(str::trim).filter(|z| !z.is_empty()).map(str::to_owned).collect()
}

/// Position of `zone` in a zone list, case-insensitively.
pub fn zone_position(list: &[String], zone: &str) -> Option<usize> {
    list.iter().position(|z| z.eq_ignore_ascii_case(zone))
}
