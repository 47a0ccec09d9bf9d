//! One cache entry and its ODP state machine (BORN, BUILDING, AVAIL, DIRTY, UPDATING, DELETED).
//!
//! Pure: every transition takes `now`, so tests drive time by hand (docs/routing.md §12).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

/// Entry state (`ObRouteEntryState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntryState {
    /// Created, not yet filled.
    Born,
    /// First fetch in progress.
    Building,
    /// Usable.
    Avail,
    /// Known stale; refetched once `min_refetch` has passed since the last update.
    Dirty,
    /// Refetch in progress; the old value still serves.
    Updating,
    /// Removed; the next lookup rebuilds it.
    Deleted,
}

impl EntryState {
    /// Upper-case name as `SHOW PROXYROUTE` prints it.
    pub fn name(self) -> &'static str {
        match self {
            EntryState::Born => "BORN",
            EntryState::Building => "BUILDING",
            EntryState::Avail => "AVAIL",
            EntryState::Dirty => "DIRTY",
            EntryState::Updating => "UPDATING",
            EntryState::Deleted => "DELETED",
        }
    }
}

impl fmt::Display for EntryState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Timing rules of one kind of entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryPolicy {
    /// Minimum time between the last update and a refetch of a dirty entry (ODP 5 s).
    pub min_refetch: Duration,
    /// A fetch running longer than this is considered lost; the next lookup may start another.
    pub fetch_timeout: Duration,
    /// An entry older than this (since its last fill) is refetched like a dirty one; `None` = never.
    pub expiry: Option<Duration>,
}

/// What a lookup should do after probing an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Nothing: use the value (or there is none and none is coming soon).
    Use,
    /// The caller must start a fetch now (the entry moved to BUILDING or UPDATING).
    Fetch,
    /// A fetch is already in progress; the caller may wait for it (bounded).
    Wait,
}

/// Result of probing an entry.
#[derive(Debug)]
pub struct Probe<T> {
    /// Current value, if any.
    pub value: Option<Arc<T>>,
    /// The value is AVAIL and not expired.
    pub fresh: bool,
    /// What to do next.
    pub action: Action,
    /// When a fresh value expires (`None`: it does not, or the value is not fresh): until then,
    /// and while the entry is not changed, another probe gets the same answer.
    pub fresh_until: Option<Instant>,
}

/// A cached value with its state and timestamps.
#[derive(Debug)]
pub struct Entry<T> {
    state: EntryState,
    value: Option<Arc<T>>,
    created: Instant,
    filled: Option<Instant>,
    last_update: Instant,
    last_valid: Option<Instant>,
    fetch_started: Option<Instant>,
    last_error: Option<String>,
}

impl<T> Clone for Entry<T> {
    fn clone(&self) -> Self {
        Entry {
            state: self.state,
            value: self.value.clone(),
            created: self.created,
            filled: self.filled,
            last_update: self.last_update,
            last_valid: self.last_valid,
            fetch_started: self.fetch_started,
            last_error: self.last_error.clone(),
        }
    }
}

impl<T> Entry<T> {
    /// A BORN entry.
    pub fn new(now: Instant) -> Entry<T> {
        Entry {
            state: EntryState::Born,
            value: None,
            created: now,
            filled: None,
            last_update: now,
            last_valid: None,
            fetch_started: None,
            last_error: None,
        }
    }

    /// Current state.
    pub fn state(&self) -> EntryState {
        self.state
    }

    /// Current value.
    pub fn value(&self) -> Option<&Arc<T>> {
        self.value.as_ref()
    }

    /// When the entry was created.
    pub fn created(&self) -> Instant {
        self.created
    }

    /// When the last fetch completed or the entry was last "delay-updated".
    pub fn last_update(&self) -> Instant {
        self.last_update
    }

    /// When the entry was last filled or confirmed by a partition hit.
    pub fn last_valid(&self) -> Option<Instant> {
        self.last_valid
    }

    /// Error of the last failed fetch, if the last fetch failed.
    pub fn last_error(&self) -> Option<&str> {
        self.last_error.as_deref()
    }

    /// Decides what a lookup at `now` gets and whether it must fetch (and then moves the entry to
    /// BUILDING / UPDATING).
    pub fn probe(&mut self, now: Instant, policy: &EntryPolicy) -> Probe<T> {
        if self.state == EntryState::Avail && self.expired(now, policy) {
            self.state = EntryState::Dirty;
        }
        let action = match self.state {
            EntryState::Avail => Action::Use,
            EntryState::Born | EntryState::Deleted => self.start_fetch(now),
            EntryState::Building | EntryState::Updating => match self.fetch_started {
                Some(t) if now.saturating_duration_since(t) < policy.fetch_timeout => Action::Wait,
                _ => self.start_fetch(now),
            },
            EntryState::Dirty if self.refetch_due(now, policy) => self.start_fetch(now),
            EntryState::Dirty => Action::Use,
        };
        let fresh = self.state == EntryState::Avail;
        let fresh_until = fresh.then(|| policy.expiry.zip(self.filled).map(|(ttl, filled)| filled + ttl)).flatten();
        Probe { value: self.value.clone(), fresh, action, fresh_until }
    }

    fn expired(&self, now: Instant, policy: &EntryPolicy) -> bool {
        match (policy.expiry, self.filled) {
            (Some(ttl), Some(filled)) => now.saturating_duration_since(filled) >= ttl,
            _ => false,
        }
    }

    fn refetch_due(&self, now: Instant, policy: &EntryPolicy) -> bool {
        now.saturating_duration_since(self.last_update) >= policy.min_refetch
    }

    fn start_fetch(&mut self, now: Instant) -> Action {
        self.state = if self.value.is_some() { EntryState::Updating } else { EntryState::Building };
        self.fetch_started = Some(now);
        Action::Fetch
    }

    /// A fetch succeeded: AVAIL with the new value.
    pub fn fill(&mut self, value: Arc<T>, now: Instant) {
        self.state = EntryState::Avail;
        self.value = Some(value);
        self.filled = Some(now);
        self.last_update = now;
        self.last_valid = Some(now);
        self.fetch_started = None;
        self.last_error = None;
    }

    /// A fetch failed: DIRTY, keeping the old value (if any), retried after `min_refetch`.
    pub fn fail(&mut self, error: String, now: Instant) {
        self.state = EntryState::Dirty;
        self.last_update = now;
        self.fetch_started = None;
        self.last_error = Some(error);
    }

    /// "Set dirty": AVAIL → DIRTY (a compare-and-swap in ODP); returns whether it changed.
    pub fn set_dirty(&mut self) -> bool {
        let changed = self.state == EntryState::Avail;
        if changed {
            self.state = EntryState::Dirty;
        }
        changed
    }

    /// "Delay update": set dirty and stamp the update time, so the refetch waits `min_refetch`.
    /// Applies to AVAIL and DIRTY entries; returns whether it did.
    pub fn delay_update(&mut self, now: Instant) -> bool {
        let applies = matches!(self.state, EntryState::Avail | EntryState::Dirty);
        if applies {
            self.state = EntryState::Dirty;
            self.last_update = now;
        }
        applies
    }

    /// A partition hit confirmed the entry.
    pub fn renew(&mut self, now: Instant) {
        if self.state == EntryState::Avail {
            self.last_valid = Some(now);
        }
    }

    /// DELETED: the value is dropped and the next lookup rebuilds the entry.
    pub fn delete(&mut self) {
        self.state = EntryState::Deleted;
        self.value = None;
        self.fetch_started = None;
    }
}
