//! Who a session logs in to servers as: the account, tenant and secret of its client's login,
//! and the one place a server login request is built from them (1:1 and routed sessions, at
//! login, COM_CHANGE_USER and every pooled checkout).

use std::sync::Arc;

use super::backend::LoginRequest;
use super::client_auth::ClientLogin;
use super::client_side::ClientSide;
use super::{Credential, Shared};

/// The client's account at the servers.
#[derive(Debug, Clone)]
pub struct Account {
    /// The bare account name (shared with every pool key a routed session builds).
    pub user: Arc<str>,
    /// The tenant the login name resolved to, else the routing's default tenant (docs/routing.md
    /// §14): whose sessions this one may list and kill, and its pool keys.
    pub tenant: Arc<str>,
    /// The tenant named in server logins: a routed session always names its tenant; a 1:1
    /// session only the one its client named (it logs in as its client did).
    pub login_tenant: Option<Arc<str>>,
    /// The secret.
    pub credential: Credential,
    /// Collation of the login.
    pub charset: u8,
    /// Connection attributes to pass on.
    pub attributes: Vec<(Vec<u8>, Vec<u8>)>,
    /// The database of the login, else the user's configured default (kept by
    /// COM_RESET_CONNECTION).
    pub database: Option<String>,
    /// The cluster the login name resolved to (server-leg TLS is chosen per cluster).
    pub cluster: Option<String>,
}

/// Which kind of session the account logs in for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Logins {
    /// As the client named itself (1:1).
    AsNamed,
    /// Always with the resolved tenant (routed).
    WithTenant,
}

impl Account {
    /// The account of an authenticated login.
    pub fn of(shared: &Shared, login: &ClientLogin, logins: Logins) -> Account {
        let resp = &login.response;
        let config = shared.config();
        let configured = config.user(&login.name.user).and_then(|u| u.default_database.clone());
        let default_tenant = config.routing.as_ref().map(|r| r.default_tenant.clone()).unwrap_or_default();
        let tenant: Arc<str> = login.name.tenant.clone().unwrap_or(default_tenant).into();
        let login_tenant = match logins {
            Logins::WithTenant => Some(Arc::clone(&tenant)),
            Logins::AsNamed => login.name.tenant.as_deref().map(Arc::from),
        };
        Account {
            user: login.name.user.as_str().into(),
            tenant,
            login_tenant,
            credential: login.credential.clone(),
            charset: resp.charset,
            attributes: resp.attributes.clone(),
            database: resp.database.clone().or(configured),
            cluster: login.name.cluster.clone(),
        }
    }

    /// A server login as this account for `front`'s client, in `database`, asking for the
    /// MariaDB extended capabilities `ext_caps`.
    pub fn login_request<'s>(
        &'s self,
        shared: &Shared,
        front: &ClientSide<'_>,
        database: Option<&'s str>,
        ext_caps: u32,
    ) -> LoginRequest<'s> {
        LoginRequest {
            user: &self.user,
            tenant: self.login_tenant.as_deref(),
            credential: &self.credential,
            database,
            charset: self.charset,
            client_caps: front.caps,
            client_ext_caps: ext_caps,
            attributes: &self.attributes,
            tls: shared.server_tls(self.cluster.as_deref()),
            identity: shared.client_identity(front.peer, front.id),
        }
    }
}
