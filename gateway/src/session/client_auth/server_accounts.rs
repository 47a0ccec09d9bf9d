//! Logins checked against the servers' accounts (`[auth] accounts = "servers"`): the account
//! for the client's address, its stored hash, a re-read after a failed check, lock and expiry.

use crate::accounts::{Flavour, Proof, ServerAccount};
use crate::config::{AuthPlugin, UserConfig};
use crate::protocol::codes;
use crate::protocol::handshake::HandshakeResponse;
use crate::protocol::message::ErrPacket;
use crate::session::{Credential, SessionError};

use super::Exchange;

/// ER_NOT_SUPPORTED_AUTH_MODE: the account's plugin cannot be used through the gateway.
const NOT_SUPPORTED_AUTH_MODE: u16 = 1251;
/// ER_MUST_CHANGE_PASSWORD_LOGIN.
const MUST_CHANGE_PASSWORD_LOGIN: u16 = 1862;

impl Exchange<'_> {
    /// The server account `user` logs in as from the client's address, as a `[[users]]`-shaped
    /// entry plus the account itself; `(None, None)` when server accounts are off or none
    /// matches (the caller answers ERROR 1045). A plugin the gateway cannot log in to servers
    /// with is ERROR 1251; accounts that cannot be read (and never were) ERROR 2003.
    pub(super) async fn server_account(
        &self,
        user: &str,
        used_password: bool,
    ) -> Result<(Option<UserConfig>, Option<ServerAccount>), SessionError> {
        let Some(accounts) = &self.shared.accounts else { return Ok((None, None)) };
        let found = accounts.find(user, self.peer).await.map_err(|e| {
            tracing::warn!(error = %e, "login refused: the servers' accounts cannot be read");
            SessionError::refuse(codes::BACKEND_UNREACHABLE, self.seq, format!("gateway: {e}"))
        })?;
        let Some(account) = found else {
            tracing::debug!(user, used_password, "no server account for this user and client address");
            return Ok((None, None));
        };
        let entry = self.as_user_config(&account)?;
        Ok((Some(entry), Some(account)))
    }

    /// A `[[users]]`-shaped entry for a server account whose password the gateway can check.
    fn as_user_config(&self, a: &ServerAccount) -> Result<UserConfig, SessionError> {
        let (password, password_hash) = match a.proof() {
            Proof::Native(hash) if hash.is_empty() => (Some(String::new()), None),
            Proof::Native(hash) => (None, Some(hash)),
            Proof::Unsupported(plugin) => {
                tracing::info!(user = %a.user, host = %a.host, %plugin, "server account's plugin needs the clear password; login refused");
                let message = format!(
                    "Authentication plugin '{plugin}' of account '{}'@'{}' cannot be used through the gateway \
                     with [auth] accounts = \"servers\": it needs the clear password (list the account in [[users]])",
                    a.user, a.host
                );
                let err = ErrPacket::with_state(NOT_SUPPORTED_AUTH_MODE, b"08004", message);
                return Err(SessionError::Refused { err, seq: self.seq });
            }
        };
        Ok(UserConfig {
            name: a.user.clone(),
            password,
            password_hash,
            auth_plugin: AuthPlugin::NativePassword,
            default_database: None,
            tenant: None,
            admin: false,
            require_tls: a.require_tls,
        })
    }

    /// Checks the client's scramble against the server account; a mismatch reads the accounts
    /// again (the password may just have changed) and checks once more. Then, as the server
    /// does after a right password: a locked account is the server's lock error (MariaDB 4151), and an expired password
    /// ERROR 1862 in routed sessions (1:1 sessions get the server's own sandbox mode).
    pub(super) async fn authenticate_server_account(
        &mut self,
        account: ServerAccount,
        response: &HandshakeResponse,
    ) -> Result<Credential, SessionError> {
        if account.locked && account.flavour == Flavour::OceanBase {
            // OceanBase refuses a locked account before it looks at the password.
            return Err(self.locked(&account));
        }
        let data = self.proof(AuthPlugin::NativePassword, response).await?;
        let mut checked = self.check_native(&self.as_user_config(&account)?, &data).map(|c| (c, account));
        if checked.is_none() {
            if let Some(accounts) = &self.shared.accounts {
                if let Ok(Some(again)) = accounts.find_again(&response.user, self.peer).await {
                    checked = self.check_native(&self.as_user_config(&again)?, &data).map(|c| (c, again));
                }
            }
        }
        let Some((credential, account)) = checked else {
            return Err(self.denied(&response.user, !data.is_empty()));
        };
        if account.locked {
            return Err(self.locked(&account));
        }
        if account.expired && self.shared.clusters.routed() {
            let err = ErrPacket::with_state(
                MUST_CHANGE_PASSWORD_LOGIN,
                b"HY000",
                "Your password has expired. To log in you must change it using a client that supports expired passwords.",
            );
            return Err(SessionError::Refused { err, seq: self.seq });
        }
        Ok(credential)
    }

    fn locked(&self, account: &ServerAccount) -> SessionError {
        let (code, state, message) = account.locked_error(&self.peer.to_string());
        SessionError::Refused { err: ErrPacket::with_state(code, state, message), seq: self.seq }
    }
}
