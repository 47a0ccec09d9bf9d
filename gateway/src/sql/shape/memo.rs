//! One session's memory of the shapes of its last statements, so that a statement of one of
//! them finds its template without the shared cache's lock, hash or reference count: the
//! template is lent to the statement and given back when the statement is done.
//!
//! What a shape's key maps to never changes (the template is a function of the key), so a
//! session may keep what the shared cache told it after the shared cache forgot it.
//!
//! The memo is a two-way set-associative table: a key's hash picks one set of two entries, so a
//! look is one hash and at most two comparisons, whatever the memo holds.

use super::{Key, Template};

/// Sets of the table; each holds two shapes (64 in all: sysbench's read_write uses 9 per table).
const SETS: usize = 32;
/// Longest shape key a session remembers (longer ones are looked up in the shared cache): at
/// most 16 KiB of keys per session.
const MAX_KEY: usize = 256;

/// A session's last shapes (empty at first, the table allocated at the first shape). One per
/// session: no locks.
#[derive(Debug, Default)]
pub struct ShapeMemo {
    sets: Vec<Set>,
    /// The entry (set, way) whose template is lent to the statement under way.
    lent: Option<(usize, usize)>,
}

#[derive(Debug, Default)]
struct Set {
    ways: [Option<Entry>; 2],
    /// The way used last: a new shape replaces the other one.
    recent: usize,
}

#[derive(Debug)]
struct Entry {
    /// The key's hash, compared before the key.
    hash: u64,
    key: Box<[u8]>,
    state: State,
}

#[derive(Debug)]
enum State {
    /// The shape is kept; its template is here, or lent to a statement (`None`).
    Kept(Option<Template>),
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
        let h = hash(key);
        let Some((set, way)) = self.find(h, key) else {
            return Memo::Unknown;
        };
        let s = &mut self.sets[set];
        s.recent = way;
        match s.ways[way].as_mut().map(|e| &mut e.state) {
            Some(State::Kept(template)) => match template.take() {
                Some(t) => {
                    self.lent = Some((set, way));
                    Memo::Kept(t)
                }
                None => Memo::Unknown,
            },
            Some(State::NotKept) => Memo::NotKept,
            None => Memo::Unknown,
        }
    }

    /// Remembers what the shared cache said of the shape `key` (`Some`: kept with this template).
    pub(super) fn remember(&mut self, key: &Key, template: Option<&Template>) {
        if key.len() > MAX_KEY {
            return;
        }
        if self.sets.is_empty() {
            self.sets.resize_with(SETS, Set::default);
        }
        let state = match template {
            Some(t) => State::Kept(Some(t.clone())),
            None => State::NotKept,
        };
        let h = hash(key);
        let (set, way) = match self.find(h, key) {
            Some(at) => at,
            None => {
                let set = slot(h);
                let s = &self.sets[set];
                (
                    set,
                    if s.ways[0].is_none() {
                        0
                    } else if s.ways[1].is_none() {
                        1
                    } else {
                        1 - s.recent
                    },
                )
            }
        };
        if self.lent == Some((set, way)) {
            self.lent = None;
        }
        let s = &mut self.sets[set];
        s.ways[way] = Some(Entry { hash: h, key: key.as_slice().into(), state });
        s.recent = way;
    }

    /// A statement is done with the template it was lent (or was given by the shared cache).
    pub fn give_back(&mut self, template: Template) {
        let Some((set, way)) = self.lent.take() else { return };
        if let Some(Entry { state: State::Kept(slot @ None), .. }) = self.sets[set].ways[way].as_mut() {
            *slot = Some(template);
        }
    }

    /// Where the shape `key` (hashed `h`) is, if remembered.
    fn find(&self, h: u64, key: &Key) -> Option<(usize, usize)> {
        let set = slot(h);
        let ways = &self.sets.get(set)?.ways;
        let way = ways.iter().position(|e| e.as_ref().is_some_and(|e| e.hash == h && *e.key == **key))?;
        Some((set, way))
    }
}

/// The set of a hash.
fn slot(h: u64) -> usize {
    (h as usize) % SETS
}

/// A key's hash (fixed seed: a session's own memo, with two entries per set, needs no defence).
fn hash(key: &Key) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::default().hash_one(key.as_slice())
}

#[cfg(test)]
mod tests;
