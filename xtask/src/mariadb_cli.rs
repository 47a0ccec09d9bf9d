//! The `mariadb` command-line client: run SQL against a server or through the gateway.

use std::process::Command;
use std::time::Duration;

use anyhow::bail;

use crate::process::run_with_timeout;

/// Who to log in as, and where.
#[derive(Debug, Clone)]
pub struct Login {
    /// TCP port on 127.0.0.1.
    pub port: u16,
    /// User name.
    pub user: String,
    /// Password; empty sends none.
    pub password: String,
    /// Default database, if any.
    pub database: Option<String>,
    /// Log in over TLS (`--ssl`; the server certificate is not checked).
    pub ssl: bool,
}

impl Login {
    /// `root` with an empty password, no default database.
    pub fn root(port: u16) -> Login {
        Login { port, user: "root".into(), password: String::new(), database: None, ssl: false }
    }

    /// The command line a person would type to open a session like this one.
    pub fn shell_command(&self) -> String {
        let mut s = format!("mariadb --no-defaults --comments -h127.0.0.1 -P{} -u{}", self.port, self.user);
        if !self.password.is_empty() {
            s.push_str(&format!(" -p{}", self.password));
        }
        if self.ssl {
            s.push_str(" --ssl");
        }
        if let Some(db) = &self.database {
            s.push_str(&format!(" {db}"));
        }
        s
    }
}

/// Output layout of the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Tab-separated, no headers (`--batch --skip-column-names`): for parsing.
    Batch,
}

/// Runs `sql` (one or more `;`-separated statements) and returns stdout; fails on a client error.
pub fn run(login: &Login, sql: &str, format: Format) -> anyhow::Result<String> {
    let mut cmd = Command::new("mariadb");
    cmd.arg("--no-defaults")
        .arg("-h127.0.0.1")
        .arg(format!("-P{}", login.port))
        .arg(format!("-u{}", login.user))
        .arg("--connect-timeout=10")
        // Keep comments: the CLI strips them by default, and with them the routing hints.
        .arg("--comments");
    if !login.password.is_empty() {
        cmd.arg(format!("--password={}", login.password));
    }
    if login.ssl {
        cmd.arg("--ssl");
    }
    match format {
        Format::Batch => cmd.args(["--batch", "--skip-column-names"]),
    };
    if let Some(db) = &login.database {
        cmd.arg(format!("--database={db}"));
    }
    cmd.arg("-e").arg(sql);
    let (status, out, err) = run_with_timeout(cmd, Duration::from_secs(60))?;
    match status {
        Some(s) if s.success() => Ok(out),
        Some(s) => bail!("mariadb -P{} -u{} failed ({s}): {}", login.port, login.user, err.trim()),
        None => bail!("mariadb -P{} -u{} timed out or was interrupted", login.port, login.user),
    }
}
