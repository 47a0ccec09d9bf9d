//! Login names: ODP's `user@tenant#cluster:id` and separator forms, their defaults, and the name a server gets.
//!
//! docs/routing.md §14, ODP `ob_proxy_auth_parser.cpp`. [`parse`] splits the name a client sent,
//! [`resolve`] fills the missing tenant and cluster from configuration and from the listener the
//! client dialled, and [`Resolved::server_user`] is what the gateway logs in to a server with:
//! `user@tenant` for OceanBase (a kernel rejects the proxy-only `#cluster` suffix with ERROR 1045,
//! docs/architecture.md §3), the bare user for MySQL/MariaDB. `admit` wires them to the gateway's
//! accounts and topology (client authentication calls it).

mod admit;
mod parse;
mod resolve;
#[cfg(test)]
mod tests;

use serde::Deserialize;

use crate::protocol::message::ErrPacket;

pub use admit::{check_topology, defaults_for, parse_for, resolve_for, tenant_allowed};
pub use parse::{parse, LoginName};
pub use resolve::{resolve, server_user, Defaults, Origin, Resolved, ServerKind};

/// ODP `username_separator` default: `:`, `-`, `.`, tried in that order.
pub const DEFAULT_SEPARATORS: &str = ":;-;.";
/// Longest tenant name in bytes (OceanBase `OB_MAX_TENANT_NAME_LENGTH`).
pub const MAX_TENANT_LEN: usize = 64;
/// Longest cluster name in bytes (ODP `OB_PROXY_MAX_CLUSTER_NAME_LENGTH`).
pub const MAX_CLUSTER_LEN: usize = 256;
/// `user@tenant#cluster[:id]` must be shorter than this many bytes (ODP
/// `OB_PROXY_FULL_USER_NAME_MAX_LEN` = 64 + 64 + 256).
pub const MAX_FULL_NAME_LEN: usize = 384;

/// Login-name handling (`[login]` in the configuration file).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LoginConfig {
    /// Separators of the non-standard form `cluster<sep>tenant<sep>user[<sep or :>cluster_id]`,
    /// `;`-delimited, one character each, tried in order (ODP `username_separator`). A name uses
    /// that form only when it contains neither `@` nor `#` and a separator occurs at least twice,
    /// so with the default `my-app-01` is user `01` of tenant `app` in cluster `my` — unless a
    /// `[[users]]` account is named `my-app-01` exactly, which then logs in as itself (`my-app-01@t`
    /// always does); set `""` to turn the form off. Default `":;-;."`.
    pub username_separator: String,
    /// Refuse logins that do not name both tenant and cluster (ODP `enable_full_username`), with
    /// ERROR 1045. Default false.
    pub enable_full_username: bool,
    /// Tenant for logins that name neither tenant nor cluster, used only when `cluster` is set
    /// too (ODP `proxy_tenant_name`); it then wins over the listener's tenant. Default unset.
    pub tenant: Option<String>,
    /// Cluster for logins that name neither tenant nor cluster, used only when `tenant` is set
    /// too (ODP `rootservice_cluster_name` in that rule). Default unset.
    pub cluster: Option<String>,
}

impl Default for LoginConfig {
    fn default() -> Self {
        LoginConfig {
            username_separator: DEFAULT_SEPARATORS.into(),
            enable_full_username: false,
            tenant: None,
            cluster: None,
        }
    }
}

impl LoginConfig {
    /// Checks the separator list and the configured names; the message names the bad field.
    pub fn validate(&self) -> Result<(), String> {
        Separators::parse(&self.username_separator).map_err(|e| format!("login.username_separator: {e}"))?;
        check_name("login.tenant", self.tenant.as_deref(), MAX_TENANT_LEN)?;
        check_name("login.cluster", self.cluster.as_deref(), MAX_CLUSTER_LEN)
    }

    /// The separator list (the default one if the configured text is invalid, which
    /// [`LoginConfig::validate`] rejects at load time).
    pub fn separators(&self) -> Separators {
        Separators::parse(&self.username_separator).unwrap_or_default()
    }
}

fn check_name(field: &str, value: Option<&str>, limit: usize) -> Result<(), String> {
    match value {
        Some("") => Err(format!("{field} is empty (leave it out instead)")),
        Some(v) if v.len() > limit => Err(format!("{field} is longer than {limit} bytes")),
        _ => Ok(()),
    }
}

/// The separators of the non-standard form, in the order they are tried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Separators(Vec<char>);

impl Default for Separators {
    fn default() -> Self {
        Separators(vec![':', '-', '.'])
    }
}

impl Separators {
    /// Parses ODP's `;`-delimited list (`":;-;."`); `""` is the empty list.
    pub fn parse(spec: &str) -> Result<Separators, String> {
        if spec.is_empty() {
            return Ok(Separators(Vec::new()));
        }
        let mut out = Vec::new();
        for part in spec.split(';') {
            let mut chars = part.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) if c == '@' || c == '#' => {
                    return Err(format!("{c:?} cannot be a separator: it marks the standard form"))
                }
                (Some(c), None) => out.push(c),
                _ => return Err(format!("{part:?} is not a single character (list them as \":;-;.\")")),
            }
        }
        Ok(Separators(out))
    }

    /// The separators in order.
    pub fn chars(&self) -> &[char] {
        &self.0
    }
}

/// A login name the gateway refuses, or a tenant or cluster that does not exist.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoginError {
    /// No user part (`@t1`, `#c`, `c:t:`).
    #[error("login name {name:?} has no user part")]
    EmptyUser {
        /// The name as sent.
        name: String,
    },
    /// The cluster id after `:` is not a decimal integer.
    #[error("login name {name:?}: cluster id {id:?} is not a number")]
    BadClusterId {
        /// The name as sent.
        name: String,
        /// The text found where the id belongs.
        id: String,
    },
    /// A part is longer than OceanBase allows.
    #[error("login name {name:?}: {part} is longer than {limit} bytes")]
    TooLong {
        /// The name as sent.
        name: String,
        /// `tenant`, `cluster` or `full name`.
        part: &'static str,
        /// The limit in bytes.
        limit: usize,
    },
    /// `enable_full_username` and the name lacks the tenant or the cluster.
    #[error("login name {name:?} must name tenant and cluster (login.enable_full_username)")]
    FullNameRequired {
        /// The name as ODP shows it in the error (`user@tenant`, or the full name if it named a cluster).
        name: String,
    },
    /// No configured cluster has this name (ODP `OB_CLUSTER_NOT_EXIST`).
    #[error("cluster {cluster:?} does not exist")]
    UnknownCluster {
        /// The cluster asked for.
        cluster: String,
    },
    /// The cluster exists but cannot be set up now: its config server or every sys-tenant
    /// server failed at the first login to it.
    #[error("cluster {cluster:?} is unavailable: {reason}")]
    ClusterUnavailable {
        /// The cluster asked for.
        cluster: String,
        /// Why (config-server or sys-tenant error).
        reason: String,
    },
    /// The cluster has no tenant of this name (the server's `OB_TENANT_NOT_EXIST`).
    #[error("unknown tenant {tenant:?}")]
    UnknownTenant {
        /// The tenant asked for.
        tenant: String,
    },
}

impl LoginError {
    /// The error packet the client gets (then the connection is closed).
    ///
    /// ODP closes the connection without any packet for a malformed name (parse failure →
    /// `ANALYZE_ERROR`); **[GW]** the gateway sends ERROR 1045 saying what is wrong first.
    /// The other cases carry ODP's codes and texts: 1045/42000 for `enable_full_username`,
    /// 4669 `cluster not exist`, 5157 `Unknown tenant '…'`.
    pub fn to_err_packet(&self, client_host: &str, used_password: bool) -> ErrPacket {
        match self {
            LoginError::EmptyUser { name }
            | LoginError::BadClusterId { name, .. }
            | LoginError::TooLong { name, .. } => ErrPacket::with_state(
                crate::protocol::codes::ACCESS_DENIED,
                b"28000",
                format!("Access denied for user '{name}'@'{client_host}' (malformed login name: {self})"),
            ),
            LoginError::FullNameRequired { name } => {
                let using = if used_password { "YES" } else { "NO" };
                ErrPacket::with_state(
                    crate::protocol::codes::ACCESS_DENIED,
                    b"42000",
                    format!("Access denied for user '{name}'@'{client_host}' (using password: {using})"),
                )
            }
            LoginError::UnknownCluster { .. } => ErrPacket::new(OB_CLUSTER_NOT_EXIST, "cluster not exist"),
            LoginError::ClusterUnavailable { .. } => {
                ErrPacket::new(crate::protocol::codes::BACKEND_UNREACHABLE, format!("gateway: {self}"))
            }
            LoginError::UnknownTenant { tenant } => {
                ErrPacket::new(OB_TENANT_NOT_EXIST, format!("Unknown tenant '{tenant}'"))
            }
        }
    }
}

/// `OB_CLUSTER_NOT_EXIST` (−4669; no MySQL errno, so the positive code goes on the wire).
pub const OB_CLUSTER_NOT_EXIST: u16 = 4669;
/// `OB_TENANT_NOT_EXIST` (−5157), as an OceanBase server answers a login to an unknown tenant.
pub const OB_TENANT_NOT_EXIST: u16 = 5157;
