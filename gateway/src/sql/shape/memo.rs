//! One session's memory of the shapes of its last statements, so that a statement of one of
//! them finds its template without the shared cache's lock, hash or reference count: the
//! template is lent to the statement and given back when the statement is done.
//!
//! What a shape's key maps to never changes (the template is a function of the key), so a
//! session may keep what the shared cache told it after the shared cache forgot it.

use super::{Key, Template};

/// Shapes a session remembers; beyond that the one remembered longest ago is replaced.
const MAX_ENTRIES: usize = 8;
/// Longest shape key a session remembers (longer ones are looked up in the shared cache).
const MAX_KEY: usize = 512;

/// A session's last shapes (empty at first). One per session: no locks.
#[derive(Debug, Default)]
pub struct ShapeMemo {
    entries: Vec<Entry>,
    /// The entry the next new shape replaces once the memo is full.
    next: usize,
}

#[derive(Debug)]
struct Entry {
    key: Box<[u8]>,
    state: State,
}

#[derive(Debug)]
enum State {
    /// The shape is kept; its template is here, or lent to a statement (`None`).
    Kept { template: Option<Template>, id: usize },
    /// The shape is not kept: its statements are parsed.
    NotKept,
}

/// What the memo knows of a shape.
#[derive(Debug)]
pub(super) enum Memo {
    /// Kept: the template, lent until [`ShapeMemo::give_back`].
    Kept(Template),
    /// Known not to be kept.
    NotKept,
    /// Not remembered (or its template is still lent): ask the shared cache.
    Unknown,
}

impl ShapeMemo {
    /// What the memo knows of the shape `key`.
    pub(super) fn lend(&mut self, key: &Key) -> Memo {
        let Some(e) = self.entries.iter_mut().find(|e| *e.key == **key) else {
            return Memo::Unknown;
        };
        match &mut e.state {
            State::Kept { template, .. } => template.take().map_or(Memo::Unknown, Memo::Kept),
            State::NotKept => Memo::NotKept,
        }
    }

    /// Remembers what the shared cache said of the shape `key` (`Some`: kept with this template).
    pub(super) fn remember(&mut self, key: &Key, template: Option<&Template>) {
        if key.len() > MAX_KEY {
            return;
        }
        let state = match template {
            Some(t) => State::Kept { template: Some(t.clone()), id: id(t) },
            None => State::NotKept,
        };
        if let Some(e) = self.entries.iter_mut().find(|e| *e.key == **key) {
            e.state = state;
            return;
        }
        let entry = Entry { key: key.as_slice().into(), state };
        if self.entries.len() < MAX_ENTRIES {
            self.entries.push(entry);
        } else {
            self.entries[self.next] = entry;
            self.next = (self.next + 1) % MAX_ENTRIES;
        }
    }

    /// A statement is done with the template it was lent (or was given by the shared cache).
    pub fn give_back(&mut self, template: Template) {
        let lent = id(&template);
        for e in &mut self.entries {
            if let State::Kept { template: slot @ None, id } = &mut e.state {
                if *id == lent {
                    *slot = Some(template);
                    return;
                }
            }
        }
    }
}

/// A template's identity while it is alive (its address).
fn id(t: &Template) -> usize {
    std::sync::Arc::as_ptr(t) as usize
}

#[cfg(test)]
mod tests;
