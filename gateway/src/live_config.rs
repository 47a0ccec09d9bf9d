//! The running configuration: sessions read it per use, SIGHUP reloads and `ALTER PROXYCONFIG`
//! swap it atomically; settings that need a restart keep their start value.
//!
//! When a setting takes effect:
//! * immediately (read per statement or per event): `log.level`,
//!   `routing.connect_observer_max_retries`, `listen.shutdown_grace_secs`, admin rights;
//! * for new sessions (read at login or session start): `[[users]]` (add, remove, password,
//!   `admin`, `require_tls`), `listen.max_packet_size`, `listen.handshake_timeout_secs`,
//!   `listen.tls`, `[[listen.dialled]]`, `[backend]` (with `[backend] tls`: new server
//!   connections), `[[clusters]] tls`, `routing.default_tenant`, `[login]`, and the TLS files:
//!   `[tls] cert` / `key` and the `[backend]` / `[[clusters]] tls` CAs are re-read and validated by every reload (a bad file rejects it, the
//!   old certificate stays) and used by new handshakes;
//! * after a restart only (a reload logs "needs restart" and keeps the old value):
//!   `listen.address`, `listen.extra_addresses`, `listen.worker_threads`, `listen.server_version`,
//!   `[dataplane]`, `[pool]`, `[metrics]`, `[auth]`, `[[clusters]]` (but their `tls`), and the topology
//!   side of `[routing]` (topology, config server, server addresses, IDC, route policy, seed,
//!   cache, route log, or adding / removing the section).
//!
//! The list of settings with their documentation and whether they need a restart is
//! [`keys::KEYS`]; `SHOW PROXYCONFIG` prints it.

pub(crate) mod keys;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use arc_swap::ArcSwap;

use crate::config::{Config, ConfigError};

/// Applies a new `tracing` filter (`log.level`); installed by `main`.
pub type LogFilter = Box<dyn Fn(&str) -> Result<(), String> + Send + Sync>;

/// Why a reload or an `ALTER PROXYCONFIG` was refused; the running configuration is unchanged.
#[derive(Debug, thiserror::Error)]
pub enum ReloadError {
    /// The file could not be read, parsed or validated.
    #[error("{0}")]
    Config(#[from] ConfigError),
    /// The configuration was not loaded from a file.
    #[error("the configuration was not loaded from a file; nothing to reload")]
    NoFile,
    /// `ALTER PROXYCONFIG` on a name that is not a setting.
    #[error("unknown config item '{0}' (SHOW PROXYCONFIG lists them)")]
    UnknownKey(String),
    /// `ALTER PROXYCONFIG` on a setting that cannot change at runtime.
    #[error("config item '{0}' cannot be changed at runtime: {1}")]
    NotRuntime(String, &'static str),
    /// `ALTER PROXYCONFIG` with a value of the wrong type or range.
    #[error("invalid value for config item '{0}': {1}")]
    BadValue(String, String),
}

/// The configuration in force, and where it came from.
pub struct LiveConfig {
    current: ArcSwap<Config>,
    /// Moves after every swap of `current`: a [`ConfigCopy`] is fresh while it has not moved.
    generation: AtomicU64,
    path: Option<PathBuf>,
    /// Serialises reloads and ALTERs (read-modify-swap).
    writer: Mutex<()>,
    log_filter: OnceLock<LogFilter>,
}

impl std::fmt::Debug for LiveConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveConfig").field("path", &self.path).finish_non_exhaustive()
    }
}

impl LiveConfig {
    /// A configuration loaded from `path`, reloadable from it.
    pub fn new(config: Config, path: Option<PathBuf>) -> Self {
        LiveConfig {
            current: ArcSwap::from_pointee(config),
            generation: AtomicU64::new(0),
            path,
            writer: Mutex::new(()),
            log_filter: OnceLock::new(),
        }
    }

    /// Reads, parses and validates `path`.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        Ok(Self::new(Config::load(path)?, Some(path.to_path_buf())))
    }

    /// The configuration in force (a reference-counted snapshot: a swap does not change it).
    pub fn get(&self) -> Arc<Config> {
        self.current.load_full()
    }

    /// How many times the configuration was swapped.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Installs the function that applies `log.level` changes (once; later calls are ignored).
    pub fn set_log_filter(&self, f: LogFilter) {
        let _ = self.log_filter.set(f);
    }

    /// Re-reads the file (SIGHUP). On success returns the restart-only settings that changed in
    /// the file but kept their old value.
    pub fn reload(&self) -> Result<Vec<&'static str>, ReloadError> {
        let path = self.path.as_deref().ok_or(ReloadError::NoFile)?;
        let _w = self.writer.lock().map_err(|_| ReloadError::NoFile)?;
        let mut new = Config::load(path)?;
        let old = self.get();
        let kept = keys::restart_only_changes(&old, &new);
        keys::keep_restart_only(&old, &mut new);
        self.swap(&old, new);
        Ok(kept)
    }

    /// `ALTER PROXYCONFIG SET name = value`: changes one runtime setting (not written to the
    /// file: the next reload reads the file again).
    pub fn alter(&self, name: &str, value: &str) -> Result<(), ReloadError> {
        let key = keys::find(name).ok_or_else(|| ReloadError::UnknownKey(name.to_string()))?;
        let set = key.set.ok_or(ReloadError::NotRuntime(key.name.to_string(), key.why_not_runtime()))?;
        let _w = self.writer.lock().map_err(|_| ReloadError::NoFile)?;
        let old = self.get();
        let mut new = Config::clone(&old);
        set(&mut new, value).map_err(|e| ReloadError::BadValue(key.name.to_string(), e))?;
        new.validate()?;
        self.swap(&old, new);
        Ok(())
    }

    fn swap(&self, old: &Config, new: Config) {
        let level_changed = old.log.level != new.log.level;
        let level = new.log.level.clone();
        self.current.store(Arc::new(new));
        // After the store: a holder that sees the new count loads the new configuration.
        self.generation.fetch_add(1, Ordering::Release);
        if level_changed {
            match self.log_filter.get() {
                Some(apply) => match apply(&level) {
                    Ok(()) => tracing::info!(%level, "log level changed"),
                    Err(e) => tracing::warn!(%level, error = %e, "cannot apply the new log level"),
                },
                None => tracing::warn!(%level, "log.level not applied: RUST_LOG overrides it"),
            }
        }
    }
}

/// A holder's copy of the configuration in force (a session's), loaded again only when a reload
/// or an `ALTER PROXYCONFIG` swapped it: reading the live configuration takes a reference count
/// and the swap's own bookkeeping (atomic read-modify-writes), a look at the count one load.
#[derive(Debug, Clone)]
pub struct ConfigCopy {
    config: Arc<Config>,
    generation: u64,
}

impl ConfigCopy {
    /// The configuration in force now.
    pub fn of(live: &LiveConfig) -> Self {
        let generation = live.generation();
        ConfigCopy { config: live.get(), generation }
    }

    /// The configuration in force, loaded again if it was swapped since the last look.
    pub fn current(&mut self, live: &LiveConfig) -> &Arc<Config> {
        let generation = live.generation();
        if generation != self.generation {
            // The count is read first: a swap after it moves it again, and the next look loads.
            self.config = live.get();
            self.generation = generation;
        }
        &self.config
    }
}

#[cfg(test)]
mod tests;
