//! The usual fixture of a test file: one MariaDB and one gateway in front of it, optionally shared
//! by all tests of the file through a `static` (cleaned up at exit, see [`crate::process`]).

use std::sync::OnceLock;
use std::time::Duration;

use crate::{Gateway, GatewayConfig, MariaDb, MariaDbOptions};

/// A MariaDB server and a gateway whose backend it is.
pub struct Stack {
    /// The backend.
    pub db: MariaDb,
    /// The gateway under test.
    pub gw: Gateway,
    /// The configuration the gateway runs with.
    pub config: GatewayConfig,
}

impl Stack {
    /// Starts MariaDB, runs `setup` on it (accounts, tables), then the gateway with the config that
    /// `configure` derives from the default one (root with empty password, free port).
    pub fn start(
        name: &str,
        setup: impl FnOnce(&MariaDb) -> anyhow::Result<()>,
        configure: impl FnOnce(GatewayConfig) -> GatewayConfig,
    ) -> anyhow::Result<Stack> {
        Self::start_with(name, MariaDbOptions::default(), setup, configure)
    }

    /// [`Stack::start`] with explicit MariaDB options.
    pub fn start_with(
        name: &str,
        opts: MariaDbOptions,
        setup: impl FnOnce(&MariaDb) -> anyhow::Result<()>,
        configure: impl FnOnce(GatewayConfig) -> GatewayConfig,
    ) -> anyhow::Result<Stack> {
        let db = MariaDb::start_with(name, opts)?;
        setup(&db)?;
        let config = configure(GatewayConfig::new(db.addr())?);
        let gw = Gateway::start(&config.to_toml())?;
        Ok(Stack { db, gw, config })
    }

    /// mysql_async URL through the gateway.
    pub fn gw_url(&self, user: &str, password: &str, db: Option<&str>) -> String {
        self.gw.url(user, password, db)
    }

    /// mysql_async URL straight to MariaDB.
    pub fn direct_url(&self, user: &str, password: &str, db: Option<&str>) -> String {
        self.db.url(user, password, db)
    }

    /// Panics with the gateway log unless the gateway process is running and a fresh `mariadb` CLI
    /// login through it runs `SELECT 1`.
    pub fn assert_healthy(&self) {
        assert!(
            self.gw.is_running(),
            "gateway (pid {}) is not running; log:\n{}",
            self.gw.pid(),
            self.gw.log_tail(4000)
        );
        match self.gw.cli().sql("SELECT 1") {
            Ok(out) => assert_eq!(out.trim(), "1", "SELECT 1 through the gateway"),
            Err(e) => panic!("SELECT 1 through the gateway failed: {e:#}\ngateway log:\n{}", self.gw.log_tail(4000)),
        }
    }

    /// Tail of the gateway log, for assertion messages.
    pub fn gw_log(&self) -> String {
        self.gw.log_tail(4000)
    }
}

/// The stack shared by the tests of one file: started by the first test that asks, never again
/// (a start-up failure is reported by every test). Stopped at process exit.
pub fn shared(
    cell: &'static OnceLock<Result<Stack, String>>,
    start: impl FnOnce() -> anyhow::Result<Stack>,
) -> &'static Stack {
    match cell.get_or_init(|| start().map_err(|e| format!("{e:#}"))) {
        Ok(s) => s,
        Err(e) => panic!("test stack did not start: {e}"),
    }
}

/// Default timeout for waiting on a peer in raw-protocol tests.
pub const PEER_TIMEOUT: Duration = Duration::from_secs(10);
