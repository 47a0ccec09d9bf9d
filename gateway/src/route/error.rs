//! Errors of the route engine, with their OceanBase and MySQL codes (docs/routing.md §16).

use super::consistency::Consistency;
use super::policy::RoutePolicy;

/// A request the route engine refuses or cannot place.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RouteError {
    /// `proxy_route_policy = FORCE_READONLY_ZONE` and the request is not a weak read (docs/routing.md §5):
    /// OceanBase error 4007 (`OB_NOT_SUPPORTED`).
    #[error(
        "FORCE_READONLY_ZONE route policy does not allow a {0} request; set proxy_route_policy or \
         ob_route_policy to another rule"
    )]
    ForceReadonlyZoneNotWeak(Consistency),
    /// No server satisfies the policy (e.g. read-only zones only and there are none).
    #[error("no server can serve the request under route policy {0}")]
    NoCandidate(RoutePolicy),
    /// A `target_db_server` (hint or configuration) that is not an address, or not a server of
    /// the session's tenant: OceanBase error 4179 (`OB_OP_NOT_ALLOW`, docs/routing.md §5).
    #[error("Not allow to route to target db server {target:?}: {why}")]
    TargetNotAllowed {
        /// The address (or text) refused, at most 64 bytes of it.
        target: String,
        /// Why.
        why: TargetRefusal,
    },
}

/// Why a `target_db_server` is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TargetRefusal {
    /// The address is not a candidate of the request.
    #[error("not a server of this tenant")]
    NotATenantServer,
    /// An item of the list is not `ip:port`.
    #[error("not an ip:port address")]
    NotAnAddress,
    /// The list names no address.
    #[error("no address given")]
    Empty,
    /// More distinct addresses than [`super::request::MAX_TARGETS`].
    #[error("more than 64 addresses")]
    TooMany,
}

impl RouteError {
    /// [`RouteError::TargetNotAllowed`] for `target` (cut to 64 bytes on a character boundary).
    pub fn target(target: &str, why: TargetRefusal) -> RouteError {
        let mut end = target.len().min(64);
        while !target.is_char_boundary(end) {
            end -= 1;
        }
        RouteError::TargetNotAllowed { target: target[..end].to_owned(), why }
    }

    /// OceanBase error code (negative, as inside the server).
    pub const fn ob_code(&self) -> i32 {
        match self {
            RouteError::ForceReadonlyZoneNotWeak(_) => -4007,
            RouteError::NoCandidate(_) => -4124,
            RouteError::TargetNotAllowed { .. } => -4179,
        }
    }

    /// MySQL error number on the wire: the mapped MySQL number, else the positive OceanBase code.
    pub const fn mysql_errno(&self) -> u16 {
        match self {
            RouteError::ForceReadonlyZoneNotWeak(_) => 1235,
            RouteError::NoCandidate(_) => 4124,
            RouteError::TargetNotAllowed { .. } => 4179,
        }
    }

    /// SQLSTATE on the wire.
    pub const fn sql_state(&self) -> &'static str {
        match self {
            RouteError::ForceReadonlyZoneNotWeak(_) => "0A000",
            RouteError::NoCandidate(_) | RouteError::TargetNotAllowed { .. } => "HY000",
        }
    }
}
