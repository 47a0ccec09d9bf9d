//! One account as a server stores it (user, host, plugin, stored secret, lock, expiry), read
//! from MariaDB's `mysql.global_priv` or the `mysql.user` table of MySQL and OceanBase.

use serde::Deserialize;

/// Longest `Priv` JSON document read for one account (MariaDB's are a few hundred bytes).
const MAX_PRIV_JSON: usize = 64 * 1024;

/// MariaDB 10.4+: every account, its settings in a JSON document.
pub const GLOBAL_PRIV_QUERY: &str = "SELECT User, Host, Priv FROM mysql.global_priv";
/// OceanBase 4.x (seekdb): `mysql.user` keeps the `*HEX` hash in `password` (its
/// `authentication_string` is empty) and names the plugin `ob_native_password`.
pub const OCEANBASE_USER_QUERY: &str =
    "SELECT user, host, plugin, password, account_locked, password_expired FROM mysql.user";
/// MySQL 5.7+: the hash in `authentication_string` (there is no `password` column).
pub const USER_TABLE_QUERY: &str =
    "SELECT user, host, plugin, authentication_string, account_locked, password_expired FROM mysql.user";

/// Which kind of server the account was read from (its refusals are worded differently).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavour {
    /// `mysql.global_priv`.
    MariaDb,
    /// `mysql.user` with a `password` column.
    OceanBase,
    /// `mysql.user` with `authentication_string`.
    Mysql,
}

/// One `'user'@'host'` account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerAccount {
    /// User name (case-sensitive, as on the server).
    pub user: String,
    /// Host pattern (`accounts::host`).
    pub host: String,
    /// Authentication plugin (`mysql_native_password`, `ed25519`, …); empty means native.
    pub plugin: String,
    /// What the plugin stores: `*HEX` of SHA1(SHA1(password)) for native, empty for no password.
    pub auth_string: String,
    /// `ACCOUNT LOCK`.
    pub locked: bool,
    /// `PASSWORD EXPIRE` (or never set since an expiry).
    pub expired: bool,
    /// `REQUIRE SSL` / `X509` / `ISSUER` / `SUBJECT` / `CIPHER`.
    pub require_tls: bool,
    /// The server kind that stores it.
    pub flavour: Flavour,
}

/// The fields of MariaDB's `Priv` JSON the gateway uses.
#[derive(Debug, Deserialize)]
struct Priv {
    #[serde(default)]
    plugin: String,
    #[serde(default)]
    authentication_string: String,
    #[serde(default)]
    account_locked: bool,
    /// 0 after `PASSWORD EXPIRE`.
    #[serde(default)]
    password_last_changed: Option<i64>,
    #[serde(default)]
    ssl_type: u8,
    #[serde(default)]
    is_role: bool,
}

/// An account from a `mysql.global_priv` row (`User`, `Host`, `Priv`); `None` for roles,
/// anonymous users and rows that do not parse.
pub fn from_global_priv(row: &[Option<String>], _: Flavour) -> Option<ServerAccount> {
    let [Some(user), Some(host), Some(json)] = row else { return None };
    if user.is_empty() || json.len() > MAX_PRIV_JSON {
        return None;
    }
    let p: Priv = serde_json::from_str(json).ok()?;
    if p.is_role {
        return None;
    }
    Some(ServerAccount {
        user: user.clone(),
        host: host.clone(),
        plugin: p.plugin,
        auth_string: p.authentication_string,
        locked: p.account_locked,
        expired: p.password_last_changed == Some(0),
        require_tls: p.ssl_type != 0,
        flavour: Flavour::MariaDb,
    })
}

/// An account from a `mysql.user` row of [`OCEANBASE_USER_QUERY`] or [`USER_TABLE_QUERY`]; `None`
/// for anonymous users.
pub fn from_user_table(row: &[Option<String>], flavour: Flavour) -> Option<ServerAccount> {
    let [Some(user), Some(host), plugin, auth, locked, expired] = row else { return None };
    if user.is_empty() {
        return None;
    }
    let yes = |v: &Option<String>| v.as_deref().is_some_and(|s| s.eq_ignore_ascii_case("Y"));
    Some(ServerAccount {
        user: user.clone(),
        host: host.clone(),
        plugin: plugin.clone().unwrap_or_default(),
        auth_string: auth.clone().unwrap_or_default(),
        locked: yes(locked),
        expired: yes(expired),
        require_tls: false,
        flavour,
    })
}

/// How the gateway can check a password of this account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Proof {
    /// `mysql_native_password` with this stored hash (`*HEX`), or no password when empty.
    Native(String),
    /// A plugin whose stored secret does not let the gateway log in to servers (it needs the
    /// clear password): `caching_sha2_password`, `ed25519`, `sha256_password`, …
    Unsupported(String),
}

impl ServerAccount {
    /// The server's refusal of a right password for a locked account: MariaDB's ERROR 4151,
    /// OceanBase's and MySQL's ERROR 3118, each in its own words.
    pub fn locked_error(&self, client_host: &str) -> (u16, &'static [u8; 5], String) {
        match self.flavour {
            Flavour::MariaDb => (4151, b"HY000", "Access denied, this account is locked".into()),
            Flavour::OceanBase => (3118, b"HY000", "User locked".into()),
            Flavour::Mysql => {
                (3118, b"HY000", format!("Access denied for user '{}'@'{client_host}'. Account is locked.", self.user))
            }
        }
    }

    /// How this account's password is checked.
    pub fn proof(&self) -> Proof {
        match self.plugin.as_str() {
            "" | "mysql_native_password" | "ob_native_password" => Proof::Native(self.auth_string.clone()),
            other => Proof::Unsupported(other.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(v: &[&str]) -> Vec<Option<String>> {
        v.iter().map(|s| Some(s.to_string())).collect()
    }

    #[test]
    fn global_priv_rows_as_mariadb_10_11_writes_them() {
        // Copied from `SELECT User, Host, Priv FROM mysql.global_priv` on MariaDB 10.11.19.
        let locked = row(&[
            "lck",
            "%",
            r#"{"access":0,"version_id":101119,"plugin":"mysql_native_password","authentication_string":"*D821809F681A40A6E379B50D0463EFAE20BDD122","account_locked":true,"password_last_changed":1796193374}"#,
        ]);
        let a = from_global_priv(&locked, Flavour::MariaDb).unwrap();
        assert_eq!((a.user.as_str(), a.host.as_str(), a.locked, a.expired), ("lck", "%", true, false));
        assert_eq!(a.proof(), Proof::Native("*D821809F681A40A6E379B50D0463EFAE20BDD122".into()));
        let expired = row(&[
            "exp",
            "%",
            r#"{"access":0,"version_id":101119,"plugin":"mysql_native_password","authentication_string":"*D821809F681A40A6E379B50D0463EFAE20BDD122","password_last_changed":0,"password_lifetime":-1}"#,
        ]);
        assert!(from_global_priv(&expired, Flavour::MariaDb).unwrap().expired);
        let ed = row(&[
            "ed",
            "%",
            r#"{"access":0,"plugin":"ed25519","authentication_string":"LIEvGDGjHTmKyz3peLRjPqahOct5n6/BQCNm1bOvot4","password_last_changed":1796193374}"#,
        ]);
        assert_eq!(from_global_priv(&ed, Flavour::MariaDb).unwrap().proof(), Proof::Unsupported("ed25519".into()));
        let tls = row(&["t", "%", r#"{"plugin":"mysql_native_password","authentication_string":"","ssl_type":1}"#]);
        assert!(from_global_priv(&tls, Flavour::MariaDb).unwrap().require_tls);
        assert_eq!(from_global_priv(&row(&["PUBLIC", "", r#"{"access":0,"is_role":true}"#]), Flavour::MariaDb), None);
        assert_eq!(from_global_priv(&row(&["", "localhost", "{}"]), Flavour::MariaDb), None);
        assert_eq!(from_global_priv(&row(&["x", "%", "not json"]), Flavour::MariaDb), None);
    }

    #[test]
    fn user_table_rows() {
        let mut r = row(&["u", "10.%", "mysql_native_password", "*AB", "N", "Y"]);
        let a = from_user_table(&r, Flavour::Mysql).unwrap();
        assert_eq!((a.locked, a.expired, a.host.as_str()), (false, true, "10.%"));
        r[4] = Some("Y".into());
        assert!(from_user_table(&r, Flavour::Mysql).unwrap().locked);
        assert_eq!(from_user_table(&row(&["u", "%"]), Flavour::Mysql), None);
        // OceanBase seekdb 1.4 (4.3.5.3): OCEANBASE_USER_QUERY after `ALTER USER sa2 ACCOUNT LOCK`.
        let ob = row(&["sa2", "%", "ob_native_password", "*B27918D2D9402882CEADA0EF687D35FBDC137D72", "Y", ""]);
        let a = from_user_table(&ob, Flavour::OceanBase).unwrap();
        assert!(a.locked && !a.expired);
        assert_eq!(a.proof(), Proof::Native("*B27918D2D9402882CEADA0EF687D35FBDC137D72".into()));
    }
}
