//! The gateway as a server: greeting, handshake response, login name, auth switch and password checks.

use std::net::{IpAddr, SocketAddr};

use super::greeting::{handshake_error, Hello};
use super::{Credential, SessionError, Shared};
use crate::config::{AuthPlugin, UserConfig};
use crate::login_name::{self, LoginError, Resolved};
use crate::protocol::auth::{self, NATIVE};
use crate::protocol::frame::Wire;
use crate::protocol::handshake::{auth_switch_request, auth_switch_request_raw, HandshakeResponse};
use crate::protocol::message::ErrPacket;
use crate::protocol::{caps, codes, ed25519};
use crate::tls::Stream;

mod server_accounts;

/// Largest packet accepted during authentication.
const MAX_AUTH_PACKET: usize = 64 * 1024;

/// A client that proved who it is.
#[derive(Debug)]
pub struct ClientLogin {
    /// What the client sent (capabilities, database, attributes), with `user` replaced by the
    /// account the login name names (the bare user of `user@tenant#cluster`).
    pub response: HandshakeResponse,
    /// The login name with its tenant and cluster decided (docs/routing.md §14).
    pub name: Resolved,
    /// Capabilities in effect on the client leg.
    pub capabilities: u32,
    /// The secret for logging in to backends.
    pub credential: Credential,
    /// Sequence id of the gateway's next packet to the client (the final OK or ERR).
    pub seq: u8,
    /// The salt the client was greeted with (COM_CHANGE_USER scrambles reuse it).
    pub salt: Vec<u8>,
    /// The planner of the session's cluster (`name.cluster`), when sessions are routed.
    pub planner: Option<crate::planner::Planner>,
}

/// One authentication conversation on the client leg.
pub struct Exchange<'a> {
    /// The client connection (plain or TLS: `require_tls` accounts and clear-text passwords
    /// depend on it).
    pub wire: &'a mut Wire<Stream>,
    /// Process state (config, sha2 cache, RSA key).
    pub shared: &'a Shared,
    /// Client address, for error messages.
    pub peer: IpAddr,
    /// Salt the client scrambles with.
    pub salt: &'a [u8],
    /// Sequence id of the gateway's next packet.
    pub seq: u8,
    /// Capabilities of the client leg.
    pub capabilities: u32,
    /// The address the client dialled (`[[listen.dialled]]` defaults).
    pub dialled: Option<SocketAddr>,
}

/// Authenticates the client that answered the greeting (`hello`) against the configured users.
pub async fn accept(
    wire: &mut Wire<Stream>,
    shared: &Shared,
    hello: Hello,
    peer: IpAddr,
    dialled: Option<SocketAddr>,
) -> Result<ClientLogin, SessionError> {
    let seq = hello.packet.last_seq.wrapping_add(1);
    let response = HandshakeResponse::parse(&hello.packet.payload)
        .map_err(|_| SessionError::refuse(codes::HANDSHAKE, seq, "Bad handshake"))?;
    let capabilities = response.capabilities & hello.announced;
    let mut ex = Exchange { wire, shared, peer, salt: &hello.salt, seq, capabilities, dialled };
    ex.login(response).await
}

impl Exchange<'_> {
    /// Authenticates a handshake response or COM_CHANGE_USER: decides the login name
    /// (`login_name::admit`), checks the account's proof, then the cluster and tenant.
    pub async fn login(&mut self, mut response: HandshakeResponse) -> Result<ClientLogin, SessionError> {
        let used_password = !response.auth_response.is_empty();
        let config = &self.shared.config();
        let clusters = &self.shared.clusters;
        let parsed = login_name::parse_for(&response.user, config).map_err(|e| self.refused(&e, used_password))?;
        // `[[users]]` first; then, with `[auth] accounts = "servers"`, the servers' account.
        let (account, server_account) = match config.user(&parsed.user) {
            Some(u) => (Some(u.clone()), None),
            None => self.server_account(&parsed.user, used_password).await?,
        };
        let default_cluster = if clusters.routed() { clusters.default_cluster().await } else { None };
        let name = login_name::resolve_for(&parsed, account.as_ref(), config, default_cluster, self.dialled)
            .map_err(|e| self.refused(&e, used_password))?;
        let account = match account {
            Some(a) if login_name::tenant_allowed(&a, &name) => a,
            _ => return Err(self.denied(&response.user, used_password)),
        };
        if account.require_tls && !self.wire.io.is_tls() {
            // MySQL answers a REQUIRE SSL account's plain login with ER_ACCESS_DENIED_ERROR too.
            tracing::info!(user = %account.name, "account requires TLS (require_tls): plain-TCP login refused");
            return Err(self.denied(&response.user, used_password));
        }
        let credential = match server_account {
            None => self.authenticate(&account, &response).await?,
            Some(a) => self.authenticate_server_account(a, &response).await?,
        };
        let planner = self.cluster_planner(&name).await?;
        if let Some(planner) = &planner {
            login_name::check_topology(&name, planner).await.map_err(|e| self.refused(&e, true))?;
        }
        tracing::debug!(login = %response.user, user = %name.user, tenant = ?name.tenant, cluster = ?name.cluster, "login name");
        response.user = name.user.clone();
        let seq = self.seq;
        let salt = self.salt.to_vec();
        Ok(ClientLogin { response, name, capabilities: self.capabilities, credential, seq, salt, planner })
    }

    /// The planner of the login's cluster (set up at the first login to it); `None` when
    /// sessions are not routed. An unknown cluster is ERROR 4669, one that cannot be set up now
    /// (config server or sys tenant down) ERROR 2003 saying why.
    async fn cluster_planner(&self, name: &Resolved) -> Result<Option<crate::planner::Planner>, SessionError> {
        let clusters = &self.shared.clusters;
        if !clusters.routed() {
            return Ok(None);
        }
        let cluster = name.cluster.clone().unwrap_or_default();
        match clusters.planner(&cluster).await {
            Ok(p) => Ok(Some(p)),
            Err(crate::clusters::ClusterError::Unknown { .. }) => {
                Err(self.refused(&LoginError::UnknownCluster { cluster }, true))
            }
            Err(e) => {
                tracing::warn!(%cluster, error = %e, "cluster unavailable; login refused");
                Err(self.refused(&LoginError::ClusterUnavailable { cluster, reason: e.to_string() }, true))
            }
        }
    }

    /// Checks the client's proof for the account `user`, switching plugin when needed. A refusal
    /// names the login as the client sent it (`alice@t1`), as MySQL and OceanBase do.
    async fn authenticate(
        &mut self,
        user: &UserConfig,
        response: &HandshakeResponse,
    ) -> Result<Credential, SessionError> {
        if user.auth_plugin == AuthPlugin::Ed25519 {
            return self.check_ed25519(user, response).await;
        }
        let data = self.proof(user.auth_plugin, response).await?;
        let used_password = !data.is_empty();
        let verdict = match user.auth_plugin {
            AuthPlugin::NativePassword => self.check_native(user, &data),
            AuthPlugin::CachingSha2Password => self.check_sha2(user, &data).await?,
            AuthPlugin::Ed25519 => None,
        };
        verdict.ok_or_else(|| self.denied(&response.user, used_password))
    }

    /// The client's answer for `plugin`: its handshake's, or after an auth switch to `plugin`.
    async fn proof(&mut self, plugin: AuthPlugin, response: &HandshakeResponse) -> Result<Vec<u8>, SessionError> {
        let wanted = plugin.name();
        let client_plugin = response.auth_plugin.as_deref().unwrap_or(NATIVE);
        if client_plugin == wanted {
            return Ok(response.auth_response.clone());
        }
        if self.capabilities & caps::PLUGIN_AUTH == 0 {
            return Err(self.denied(&response.user, !response.auth_response.is_empty()));
        }
        self.send(&auth_switch_request(wanted, self.salt)).await?;
        self.receive().await
    }

    fn check_native(&self, user: &UserConfig, data: &[u8]) -> Option<Credential> {
        if let Some(pw) = &user.password {
            if pw.is_empty() {
                return data.is_empty().then(|| Credential::Plain(Vec::new()));
            }
            let stage2 = auth::native_stage2(&auth::native_stage1(pw.as_bytes()));
            return auth::native_verify(data, self.salt, &stage2).map(|_| Credential::Plain(pw.as_bytes().to_vec()));
        }
        let stage2 = auth::parse_native_hash(user.password_hash.as_deref()?)?;
        auth::native_verify(data, self.salt, &stage2).map(Credential::NativeStage1)
    }

    /// MariaDB's ed25519: always an auth switch (the nonce is 32 bytes, the greeting's salt 20),
    /// then the client's signature checked with the key of the configured password.
    async fn check_ed25519(
        &mut self,
        user: &UserConfig,
        response: &HandshakeResponse,
    ) -> Result<Credential, SessionError> {
        if self.capabilities & caps::PLUGIN_AUTH == 0 {
            return Err(self.denied(&response.user, !response.auth_response.is_empty()));
        }
        let nonce = ed25519::new_nonce();
        self.send(&auth_switch_request_raw(ed25519::CLIENT_PLUGIN, &nonce)).await?;
        let answer = self.receive().await?;
        let pw = user.password.clone().unwrap_or_default().into_bytes();
        if ed25519::verify(&ed25519::public_key(&pw), &nonce, &answer) {
            return Ok(Credential::Plain(pw));
        }
        Err(self.denied(&response.user, !answer.is_empty()))
    }

    async fn check_sha2(&mut self, user: &UserConfig, data: &[u8]) -> Result<Option<Credential>, SessionError> {
        let pw = user.password.clone().unwrap_or_default().into_bytes();
        if data.is_empty() || pw.is_empty() {
            return Ok((data.is_empty() && pw.is_empty()).then_some(Credential::Plain(pw)));
        }
        // Keyed by the account (the bare user), whatever form of login name the client used.
        let cache_key = format!("{}\0{}", user.name, hex::encode(auth::sha2_scramble(&pw, b"")));
        if self.shared.sha2_cached(&cache_key) {
            // PyMySQL scrambles with the auth-switch data including its trailing NUL.
            let salt_nul: Vec<u8> = self.salt.iter().copied().chain([0]).collect();
            if !auth::sha2_verify(data, self.salt, &pw) && !auth::sha2_verify(data, &salt_nul, &pw) {
                return Ok(None);
            }
            self.send(&[0x01, auth::SHA2_FAST_OK]).await?;
            return Ok(Some(Credential::Plain(pw)));
        }
        self.send(&[0x01, auth::SHA2_FULL_AUTH]).await?;
        let mut reply = self.receive().await?;
        if reply == [auth::SHA2_REQUEST_PUBLIC_KEY] {
            let Some(keys) = self.shared.rsa_keys().await else {
                return Err(SessionError::refuse(
                    codes::HANDSHAKE,
                    self.seq,
                    "gateway has no RSA key for full authentication",
                ));
            };
            let mut more = vec![0x01];
            more.extend_from_slice(keys.public_pem.as_bytes());
            self.send(&more).await?;
            let cipher = self.receive().await?;
            let Ok(claimed) = keys.decrypt_password(&cipher, self.salt) else {
                return Ok(None);
            };
            reply = claimed;
        } else if !self.peer.is_loopback() && !self.wire.io.is_tls() {
            // A clear-text password over an unencrypted network connection is refused, as MySQL
            // does; over TLS it is what clients send. Loopback is accepted like MySQL's unix
            // socket: the bytes never leave the host (libmariadb sends clear text here instead of
            // asking for the RSA key).
            tracing::warn!(user = %user.name, "client sent a clear-text password without TLS; refused");
            return Ok(None);
        } else if reply.last() == Some(&0) {
            reply.pop();
        }
        if !auth::password_eq(&reply, &pw) {
            return Ok(None);
        }
        self.shared.sha2_remember(cache_key);
        Ok(Some(Credential::Plain(pw)))
    }

    async fn send(&mut self, payload: &[u8]) -> Result<(), SessionError> {
        self.seq = self.wire.write_packet(self.seq, payload).await.map_err(SessionError::Client)?;
        Ok(())
    }

    async fn receive(&mut self) -> Result<Vec<u8>, SessionError> {
        let p = self.wire.read_packet(MAX_AUTH_PACKET).await.map_err(|e| handshake_error(e, self.seq))?;
        if p.first_seq != self.seq {
            return Err(SessionError::refuse(
                codes::OUT_OF_ORDER,
                p.last_seq.wrapping_add(1),
                "Got packets out of order",
            ));
        }
        self.seq = p.last_seq.wrapping_add(1);
        Ok(p.payload.to_vec())
    }

    fn refused(&self, e: &LoginError, used_password: bool) -> SessionError {
        SessionError::Refused { err: e.to_err_packet(&self.peer.to_string(), used_password), seq: self.seq }
    }

    fn denied(&self, user: &str, used_password: bool) -> SessionError {
        let err = ErrPacket::access_denied(user, &self.peer.to_string(), used_password);
        SessionError::Refused { err, seq: self.seq }
    }
}
