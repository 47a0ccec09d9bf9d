//! The `[[users]]` accounts: names, passwords or hashes, authentication plugins, and their checks.

use serde::Deserialize;

use super::ConfigError;

/// Authentication plugin the gateway asks a client to use for an account.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum AuthPlugin {
    /// SHA1 challenge-response (MySQL 5.x, MariaDB default).
    #[serde(rename = "mysql_native_password")]
    NativePassword,
    /// SHA256 challenge-response with a fast path and RSA full authentication (MySQL 8 default).
    #[serde(rename = "caching_sha2_password")]
    CachingSha2Password,
    /// MariaDB's Ed25519 signature of a nonce (client plugin `client_ed25519`); needs `password`.
    #[serde(rename = "ed25519")]
    Ed25519,
}

impl AuthPlugin {
    /// The plugin's protocol name.
    pub fn name(self) -> &'static str {
        match self {
            AuthPlugin::NativePassword => "mysql_native_password",
            AuthPlugin::CachingSha2Password => "caching_sha2_password",
            AuthPlugin::Ed25519 => crate::protocol::ed25519::CLIENT_PLUGIN,
        }
    }
}

/// One account.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserConfig {
    /// Login name, as the client sends it.
    pub name: String,
    /// Plain-text password (may be empty). Either this or `password_hash` must be set.
    #[serde(default)]
    pub password: Option<String>,
    /// Stored `mysql_native_password` hash as in `mysql.user` (`*` followed by 40 hex digits), used
    /// instead of a plain password. Only works with `auth_plugin = "mysql_native_password"`.
    #[serde(default)]
    pub password_hash: Option<String>,
    /// Plugin the client is asked to authenticate with: `mysql_native_password` (default),
    /// `caching_sha2_password` or `ed25519` (MariaDB's; the last two need `password`).
    #[serde(default = "default_plugin")]
    pub auth_plugin: AuthPlugin,
    /// Database selected when the client connects without one.
    #[serde(default)]
    pub default_database: Option<String>,
    /// OceanBase tenant of this account: the tenant of its logins that name none, and the only
    /// tenant it may log in to (`name@other` is refused with ERROR 1045). Unset: the account may
    /// name any tenant of the topology (docs/routing.md §14).
    #[serde(default)]
    pub tenant: Option<String>,
    /// May run the gateway's admin commands (`SHOW PROXYCONFIG`, `ALTER PROXYCONFIG`,
    /// `SHOW PROXYSESSION`, `KILL PROXYSESSION`, `SHOW PROXYCONGESTION`, `SHOW PROXYSTAT`).
    /// Others get ERR 1227. Default false.
    #[serde(default)]
    pub admin: bool,
    /// The account may only log in over TLS (MySQL's `REQUIRE SSL`): a plain-TCP login is
    /// refused with ERROR 1045 (and a log line saying why). Default false.
    #[serde(default)]
    pub require_tls: bool,
}

fn default_plugin() -> AuthPlugin {
    AuthPlugin::NativePassword
}

/// Checks one account: a name, exactly one of password / hash, a hash only for native password.
pub(super) fn validate_user(u: &UserConfig) -> Result<(), ConfigError> {
    let who = format!("user {:?}", u.name);
    if u.name.is_empty() {
        return Err(ConfigError::Invalid("a user has an empty name".into()));
    }
    match (&u.password, &u.password_hash) {
        (Some(_), Some(_)) => {
            Err(ConfigError::Invalid(format!("{who}: set either password or password_hash, not both")))
        }
        (None, None) => Err(ConfigError::Invalid(format!("{who}: set password or password_hash"))),
        (None, Some(h)) => {
            if u.auth_plugin != AuthPlugin::NativePassword {
                return Err(ConfigError::Invalid(format!(
                    "{who}: password_hash needs auth_plugin = \"mysql_native_password\" \
                     (caching_sha2_password and ed25519 need the plain password to log in to the backend)"
                )));
            }
            crate::protocol::auth::parse_native_hash(h)
                .map(|_| ())
                .ok_or_else(|| ConfigError::Invalid(format!("{who}: password_hash must be '*' and 40 hex digits")))
        }
        (Some(_), None) => Ok(()),
    }
}
