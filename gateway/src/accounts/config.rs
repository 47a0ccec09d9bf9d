//! The `[auth]` section: where the accounts clients log in with come from.

use std::net::SocketAddr;

use serde::Deserialize;

/// Which accounts clients may log in with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AccountSource {
    /// Only the `[[users]]` of the configuration file.
    #[default]
    Config,
    /// `[[users]]` first, then the accounts as the servers know them (`mysql.global_priv` on
    /// MariaDB, `mysql.user` on MySQL / OceanBase), read through the metadata account.
    Servers,
}

/// `[auth]`: where logins are checked.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthConfig {
    /// `config` (default): a login must name a `[[users]]` entry. `servers`: a login may also
    /// name an account of the servers (no `[[users]]` entry needed; `[[users]]` wins on a name
    /// clash). Server accounts work with `mysql_native_password` (and an empty password); other
    /// plugins need the clear password and are refused with ERROR 1251 (README "Accounts").
    #[serde(default)]
    pub accounts: AccountSource,
    /// Metadata account that reads the servers' accounts (`accounts = "servers"`): it needs
    /// `SELECT` on `mysql.global_priv` (MariaDB) or `mysql.user` (MySQL, OceanBase).
    #[serde(default)]
    pub user: String,
    /// Password of `user` (mysql_native_password or caching_sha2_password). Default empty.
    #[serde(default)]
    pub password: String,
    /// Server whose accounts are read. Default: `[backend] address` (with `[routing]`, every
    /// server is expected to hold the same accounts, as a replicated cluster does).
    #[serde(default)]
    pub server: Option<SocketAddr>,
    /// Seconds after which the accounts read are read again at the next login. A failed
    /// password check re-reads them at once (at most once a second), so a changed password is
    /// accepted at the first try; an old password, a lock or a dropped account take effect
    /// within this interval. Default 30.
    #[serde(default = "default_refresh_secs")]
    pub refresh_secs: u64,
    /// Seconds a user name stays unknown once a fresh read did not find it (logins naming it do
    /// not read the accounts again within this time; the first login naming an unknown user
    /// reads them, so an account just created logs in at once). Default 5.
    #[serde(default = "default_negative_cache_secs")]
    pub negative_cache_secs: u64,
}

impl Default for AuthConfig {
    fn default() -> Self {
        AuthConfig {
            accounts: AccountSource::Config,
            user: String::new(),
            password: String::new(),
            server: None,
            refresh_secs: default_refresh_secs(),
            negative_cache_secs: default_negative_cache_secs(),
        }
    }
}

fn default_refresh_secs() -> u64 {
    30
}

fn default_negative_cache_secs() -> u64 {
    5
}

impl AuthConfig {
    /// Whether logins may name server accounts.
    pub fn from_servers(&self) -> bool {
        self.accounts == AccountSource::Servers
    }

    /// Checks the section: server accounts need a metadata user and a positive refresh interval.
    pub fn validate(&self) -> Result<(), String> {
        if !self.from_servers() {
            return Ok(());
        }
        if self.user.is_empty() {
            return Err("[auth] accounts = \"servers\" needs user (the metadata account that reads them)".into());
        }
        if self.refresh_secs == 0 {
            return Err("[auth] refresh_secs must be at least 1".into());
        }
        Ok(())
    }
}
