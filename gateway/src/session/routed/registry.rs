//! The gateway's own session list (docs/routing.md §13): one entry per client session (1:1 and
//! routed), keyed by gateway connection id, with what SHOW PROCESSLIST shows and what KILL needs
//! (the server connection the session is using right now, and a handle that ends the session).

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::transaction::{PinReason, StickyReason};
use crate::session::kill_switch::KillSwitch;
use crate::topology::TableKey;

/// SHOW PROCESSLIST's `Command` of a spliced session (its State is `spliced`).
pub const SPLICED: &str = "Spliced";

/// Tables remembered per session for SHOW PROXYROUTE (beyond this, new ones are not listed).
const MAX_TABLES: usize = 4096;

/// What one session is doing, as SHOW PROCESSLIST reports it.
#[derive(Debug, Clone)]
pub struct SessionInfo {
    /// Login user.
    pub user: String,
    /// Cluster of the session (empty when sessions are not routed and the name gave none).
    pub cluster: String,
    /// Tenant of the session.
    pub tenant: String,
    /// Client address `ip:port`.
    pub host: String,
    /// Current database.
    pub db: Option<String>,
    /// `Sleep`, `Query`, `Execute`, … (the current command).
    pub command: &'static str,
    /// When the current command (or the idle period) started.
    pub since: Instant,
    /// Text of the running statement.
    pub info: Option<String>,
    /// The server connection serving the running command: (server, server thread id).
    pub current: Option<(SocketAddr, u32)>,
}

/// Why a session keeps its server connection ([`super::transaction::Transaction::sticky`]), and
/// the reason of a pin.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sticky {
    /// `None` when the session is free.
    pub sticky: Option<StickyReason>,
    /// Why the session is pinned for good.
    pub pin: Option<PinReason>,
}

impl std::fmt::Display for Sticky {
    /// SHOW PROXYSESSION's text: `trans`, `cursor`, `pin:<reason>` or empty.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.sticky, self.pin) {
            (Some(StickyReason::Pin), Some(why)) => write!(f, "pin:{}", why.describe()),
            (Some(s), _) => f.write_str(s.name()),
            (None, _) => Ok(()),
        }
    }
}

/// A session's info, with the statement-text buffer of its last command kept for the next one.
#[derive(Debug)]
struct Slot {
    info: SessionInfo,
    spare: Option<String>,
    sticky: Sticky,
    /// The location-cache entries the session's statements were routed by (checked for every
    /// routed statement: foldhash, seeded per set, since keys hold client-chosen names).
    tables: HashSet<TableKey, foldhash::quality::RandomState>,
}

/// One registered session: its info and the handle that ends it.
#[derive(Debug)]
struct Entry {
    info: Arc<Mutex<Slot>>,
    kill: KillSwitch,
}

/// Every routed session of the process.
#[derive(Debug, Default)]
pub struct Registry {
    sessions: Mutex<HashMap<u32, Entry>>,
}

/// A session's own handle on its entry; unregisters on drop.
#[derive(Debug)]
pub struct Registration<'a> {
    registry: &'a Registry,
    id: u32,
    info: Arc<Mutex<Slot>>,
    /// Becomes `true` when another session ran `KILL CONNECTION` on this one.
    pub killed: KillSwitch,
}

impl Registry {
    /// Registers session `id`.
    pub fn register(&self, id: u32, info: SessionInfo) -> Registration<'_> {
        let info =
            Arc::new(Mutex::new(Slot { info, spare: None, sticky: Sticky::default(), tables: HashSet::default() }));
        let killed = KillSwitch::new();
        if let Ok(mut s) = self.sessions.lock() {
            s.insert(id, Entry { info: info.clone(), kill: killed.clone() });
        }
        Registration { registry: self, id, info, killed }
    }

    /// A copy of session `id`'s info.
    pub fn get(&self, id: u32) -> Option<SessionInfo> {
        let s = self.sessions.lock().ok()?;
        let info = s.get(&id)?.info.lock().ok()?.info.clone();
        Some(info)
    }

    /// Every session, by id.
    pub fn list(&self) -> Vec<(u32, SessionInfo)> {
        let Ok(s) = self.sessions.lock() else { return Vec::new() };
        let mut out: Vec<(u32, SessionInfo)> =
            s.iter().filter_map(|(id, e)| Some((*id, e.info.lock().ok()?.info.clone()))).collect();
        out.sort_by_key(|(id, _)| *id);
        out
    }

    /// Every session, by id, with why it keeps its server connection.
    pub fn list_sticky(&self) -> Vec<(u32, SessionInfo, Sticky)> {
        let Ok(s) = self.sessions.lock() else { return Vec::new() };
        let mut out: Vec<(u32, SessionInfo, Sticky)> = s
            .iter()
            .filter_map(|(id, e)| {
                let slot = e.info.lock().ok()?;
                Some((*id, slot.info.clone(), slot.sticky))
            })
            .collect();
        out.sort_by_key(|(id, _, _)| *id);
        out
    }

    /// The tables the sessions of `user` in `tenant` were routed by (SHOW PROXYROUTE of a
    /// user who is not an admin).
    pub fn tables_of(&self, user: &str, tenant: &str) -> HashSet<TableKey> {
        let Ok(s) = self.sessions.lock() else { return HashSet::new() };
        let mut out = HashSet::new();
        for e in s.values() {
            if let Ok(slot) = e.info.lock() {
                if slot.info.user == user && slot.info.tenant == tenant {
                    out.extend(slot.tables.iter().cloned());
                }
            }
        }
        out
    }

    /// A statement of session `id` looked table `key` up (EXPLAIN ROUTE).
    pub fn touched(&self, id: u32, key: &TableKey) {
        let slot = self.sessions.lock().ok().and_then(|s| s.get(&id).map(|e| e.info.clone()));
        if let Some(slot) = slot {
            remember_table(&slot, key);
        }
    }

    /// Tells session `id` to end and takes it off the list at once (a KILL's author sees it
    /// gone from SHOW PROCESSLIST right after the OK). Returns whether it existed.
    pub fn kill(&self, id: u32) -> bool {
        let Ok(mut s) = self.sessions.lock() else { return false };
        match s.remove(&id) {
            Some(e) => {
                e.kill.fire();
                true
            }
            None => false,
        }
    }

    fn remove(&self, id: u32) {
        if let Ok(mut s) = self.sessions.lock() {
            s.remove(&id);
        }
    }
}

impl Registration<'_> {
    /// Updates the session's info.
    pub fn update(&self, f: impl FnOnce(&mut SessionInfo)) {
        if let Ok(mut slot) = self.info.lock() {
            f(&mut slot.info);
        }
    }

    /// A command started.
    pub fn start(&self, command: &'static str, info: Option<String>) {
        self.update(|i| {
            i.command = command;
            i.info = info;
            i.since = Instant::now();
        });
    }

    /// A command with statement text started at `since`: the text is copied into the buffer the
    /// previous statement left (no allocation once it is large enough).
    pub fn start_text(&self, command: &'static str, text: &str, since: Instant) {
        let Ok(mut slot) = self.info.lock() else { return };
        let Slot { info, spare, .. } = &mut *slot;
        let mut buf = info.info.take().or_else(|| spare.take()).unwrap_or_default();
        buf.clear();
        buf.push_str(text);
        info.command = command;
        info.info = Some(buf);
        info.since = since;
    }

    /// The command ended at `at`: the session sleeps, with no server connection (routed
    /// sessions).
    pub fn idle(&self, db: Option<&str>, at: Instant) {
        self.sleep(db, true, at);
    }

    /// The command ended: the session sleeps and keeps its server connection listed (1:1).
    pub fn rest(&self, db: Option<&str>) {
        self.sleep(db, false, Instant::now());
    }

    fn sleep(&self, db: Option<&str>, release: bool, at: Instant) {
        let Ok(mut slot) = self.info.lock() else { return };
        let Slot { info, spare, .. } = &mut *slot;
        if let Some(buf) = info.info.take() {
            *spare = Some(buf);
        }
        info.command = "Sleep";
        if release {
            info.current = None;
        }
        info.since = at;
        if info.db.as_deref() != db {
            info.db = db.map(str::to_string);
        }
    }

    /// Records why the session keeps its server connection (a lock and a compare: called
    /// after every request).
    pub fn set_sticky(&self, sticky: Sticky) {
        if let Ok(mut slot) = self.info.lock() {
            slot.sticky = sticky;
        }
    }

    /// A statement of the session was routed by table `key`'s location-cache entry.
    pub fn touched(&self, key: &TableKey) {
        remember_table(&self.info, key);
    }

    /// The session's id.
    pub fn id(&self) -> u32 {
        self.id
    }
}

fn remember_table(slot: &Mutex<Slot>, key: &TableKey) {
    if let Ok(mut slot) = slot.lock() {
        if slot.tables.len() < MAX_TABLES && !slot.tables.contains(key) {
            slot.tables.insert(key.clone());
        }
    }
}

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        self.registry.remove(self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info() -> SessionInfo {
        SessionInfo {
            user: "u".into(),
            cluster: "c".into(),
            tenant: "t".into(),
            host: "h".into(),
            db: None,
            command: "Sleep",
            since: Instant::now(),
            info: None,
            current: None,
        }
    }

    #[test]
    fn sticky_reason_is_listed_and_follows_changes() {
        let reg = Registry::default();
        let r = reg.register(7, info());
        let shown =
            |reg: &Registry| reg.list_sticky().into_iter().map(|(id, _, s)| (id, s.to_string())).collect::<Vec<_>>();
        assert_eq!(shown(&reg), [(7, String::new())]);
        r.set_sticky(Sticky { sticky: Some(StickyReason::Transaction), pin: None });
        assert_eq!(shown(&reg), [(7, "trans".to_string())]);
        r.set_sticky(Sticky { sticky: Some(StickyReason::Pin), pin: Some(PinReason::TemporaryTable) });
        assert_eq!(shown(&reg), [(7, "pin:temporary table".to_string())]);
        r.set_sticky(Sticky::default());
        assert_eq!(shown(&reg), [(7, String::new())]);
    }
}
