//! Real client programs: the `mariadb` CLI (always `--no-defaults`) and PyMySQL scripts from
//! `tests/py/` run with the project venv's python (`~/.cache/gateway/venv`, or `GATEWAY_VENV`).

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use anyhow::{bail, Context};

/// Result of running a client program.
#[derive(Debug, Clone)]
pub struct ClientOutput {
    /// Exit code (-1 if killed by a signal).
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl ClientOutput {
    fn from_output(o: Output) -> Self {
        ClientOutput {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
    /// Whether the program exited with status 0.
    pub fn success(&self) -> bool {
        self.code == 0
    }
    /// `stdout` if the program succeeded, else an error with both streams.
    pub fn ok(self) -> anyhow::Result<String> {
        if self.success() {
            Ok(self.stdout)
        } else {
            bail!("exit {}\nstdout: {}\nstderr: {}", self.code, self.stdout, self.stderr)
        }
    }
}

/// Builder for one `mariadb` CLI invocation against `127.0.0.1:port`.
#[derive(Debug, Clone)]
pub struct MariadbCli {
    port: u16,
    user: String,
    password: String,
    database: Option<String>,
    args: Vec<String>,
    host: String,
    netns: Option<String>,
}

impl MariadbCli {
    /// `mariadb --no-defaults -h127.0.0.1 -P<port> -uroot` with an empty password.
    pub fn new(port: u16) -> Self {
        MariadbCli {
            port,
            user: "root".into(),
            password: String::new(),
            database: None,
            args: Vec::new(),
            host: "127.0.0.1".into(),
            netns: None,
        }
    }
    /// Server address (default `127.0.0.1`).
    pub fn host(mut self, host: &str) -> Self {
        self.host = host.into();
        self
    }
    /// Runs the CLI inside network namespace `ns` (`ip netns exec`), e.g. the seekdb kernel's.
    pub fn in_netns(mut self, ns: &str) -> Self {
        self.netns = Some(ns.into());
        self
    }
    /// Login user.
    pub fn user(mut self, user: &str) -> Self {
        self.user = user.into();
        self
    }
    /// Login password.
    pub fn password(mut self, password: &str) -> Self {
        self.password = password.into();
        self
    }
    /// Default database.
    pub fn database(mut self, db: &str) -> Self {
        self.database = Some(db.into());
        self
    }
    /// An extra argument (e.g. `--local-infile=1`).
    pub fn arg(mut self, a: &str) -> Self {
        self.args.push(a.into());
        self
    }

    fn command(&self) -> Command {
        let mut c = match &self.netns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns, "mariadb"]);
                c
            }
            None => Command::new("mariadb"),
        };
        c.arg("--no-defaults")
            .arg("--protocol=TCP")
            .arg(format!("-h{}", self.host))
            .arg(format!("-P{}", self.port))
            .arg(format!("-u{}", self.user))
            .arg("--batch")
            .arg("--skip-column-names");
        if !self.password.is_empty() {
            c.arg(format!("-p{}", self.password));
        }
        if let Some(db) = &self.database {
            c.arg(format!("-D{db}"));
        }
        c.args(&self.args);
        c
    }

    /// Runs `sql` with `-e`, returning the raw outcome (exit code, stdout, stderr).
    pub fn run(&self, sql: &str) -> anyhow::Result<ClientOutput> {
        let out = self.command().arg("-e").arg(sql).stdin(Stdio::null()).output().context("running the mariadb CLI")?;
        Ok(ClientOutput::from_output(out))
    }

    /// Starts `sql` with `-e` in the background (stdout and stderr piped); the caller waits.
    pub fn spawn(&self, sql: &str) -> anyhow::Result<std::process::Child> {
        self.command()
            .arg("-e")
            .arg(sql)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .context("starting the mariadb CLI")
    }

    /// Runs `sql` and returns stdout, or an error carrying the CLI's stderr.
    pub fn sql(&self, sql: &str) -> anyhow::Result<String> {
        self.run(sql)?.ok().with_context(|| format!("mariadb -P{} -u{}: {}", self.port, self.user, short(sql)))
    }
}

fn short(s: &str) -> String {
    if s.len() > 200 {
        format!("{}…", &s[..s.char_indices().nth(200).map_or(s.len(), |(i, _)| i)])
    } else {
        s.to_string()
    }
}

/// The venv python: `$GATEWAY_VENV/bin/python`, default `~/.cache/gateway/venv/bin/python`.
pub fn venv_python() -> PathBuf {
    let venv = match std::env::var_os("GATEWAY_VENV") {
        Some(v) => PathBuf::from(v),
        None => {
            let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/root"));
            home.join(".cache/gateway/venv")
        }
    };
    venv.join("bin/python")
}

/// Path of a script in `tests/py/`.
pub fn py_script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("py").join(name)
}

/// Runs `tests/py/<script>` with the venv python and `args`.
pub fn python(script: &str, args: &[&str]) -> anyhow::Result<ClientOutput> {
    let py = venv_python();
    if !py.exists() {
        bail!("{} not found: run scripts/setup.sh (or set GATEWAY_VENV)", py.display());
    }
    let out = Command::new(&py)
        .arg(py_script(script))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("running {} {script}", py.display()))?;
    Ok(ClientOutput::from_output(out))
}

/// Parses `key=value` lines (what the scripts in `tests/py/` print) into a map.
pub fn parse_kv(stdout: &str) -> std::collections::BTreeMap<String, String> {
    stdout
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}
