//! What a routed session remembers of the pools it checked out from: the key pools of its last
//! few servers, found again without the pool map's lock and hash of the whole key, each with the
//! session's parking spot for a connection kept between statements ([`super::park`]).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use super::park::{Parked, Spot};
use super::{KeyPool, PoolKey, PooledConn};

/// A [`PoolKey`] by reference: what a checkout names without cloning the key's names.
#[derive(Debug, Clone, Copy)]
pub struct KeyRef<'a> {
    /// The server.
    pub server: SocketAddr,
    /// The tenant.
    pub tenant: &'a Arc<str>,
    /// The user.
    pub user: &'a Arc<str>,
}

impl KeyRef<'_> {
    pub(super) fn to_owned(self) -> PoolKey {
        PoolKey { server: self.server, tenant: Arc::clone(self.tenant), user: Arc::clone(self.user) }
    }

    fn names(self, key: &PoolKey) -> bool {
        let same = |a: &Arc<str>, b: &Arc<str>| Arc::ptr_eq(a, b) || a == b;
        self.server == key.server && same(self.tenant, &key.tenant) && same(self.user, &key.user)
    }
}

/// The key pools a session checked out from last ([`super::Pool::get_remembered`]), at most
/// [`Homes::MAX`]: a session's statements go to the few servers of its tables, and a checkout of
/// one of them then finds its pool without the map of all keys. Entries stay valid: the pool
/// never drops a key's pool.
#[derive(Default)]
pub struct Homes {
    known: smallvec::SmallVec<[Home; Homes::MAX]>,
}

/// A remembered pool and the session's parking spot in it.
struct Home {
    pool: Arc<KeyPool>,
    spot: Arc<Spot>,
}

impl Homes {
    /// Pools remembered at most; the oldest is forgotten first.
    pub const MAX: usize = 4;

    fn home(&self, key: KeyRef<'_>, wire: u64) -> Option<&Home> {
        self.known.iter().find(|h| h.pool.wire == wire && key.names(&h.pool.key))
    }

    pub(super) fn find(&self, key: KeyRef<'_>, wire: u64) -> Option<Arc<KeyPool>> {
        self.home(key, wire).map(|h| h.pool.clone())
    }

    /// Remembers `pool` (the oldest one is forgotten, and a connection parked there goes back to
    /// its pool).
    pub(super) fn keep(&mut self, pool: Arc<KeyPool>) -> Arc<KeyPool> {
        if self.known.len() == Self::MAX {
            self.known.remove(0);
        }
        let spot = Spot::new(&pool);
        self.known.push(Home { pool: pool.clone(), spot });
        pool
    }

    /// The connection the session parked for `key`, if it still has it.
    pub(super) fn take_parked(&self, key: KeyRef<'_>, wire: u64) -> Option<Parked> {
        self.home(key, wire)?.spot.take()
    }

    /// Keeps `conn` for the session's next statement to its key (a connection that cannot be
    /// reused, or of a pool no longer remembered, goes back to the pool as a drop does).
    /// On a session thread, the connection stays on its ring while parked, [settled] first: then
    /// another thread may take it ([`super::Pool::get`], the reaper).
    ///
    /// [settled]: crate::tls::Stream::settle
    /// `since`: when it became idle (the end of its last answer).
    pub fn park(&mut self, mut conn: PooledConn, since: Instant) {
        if !conn.reusable() || !conn.wire.io.settle() {
            return;
        }
        match self.known.iter().find(|h| Arc::ptr_eq(&h.pool, conn.home())) {
            Some(h) => h.spot.park(&h.pool, conn, since),
            None => drop(conn),
        }
    }

    /// Returns every parked connection to its pool (the session ends or resets: they are then
    /// reset for it, [`super::Pool::release_client`]).
    pub fn unpark(&mut self) {
        for h in &self.known {
            drop(h.spot.take());
        }
    }
}

impl std::fmt::Debug for Homes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.known.iter().map(|h| (&h.pool.key, h.pool.wire))).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(server: u16, tenant: &str, user: &str, wire: u64) -> Arc<KeyPool> {
        let key = PoolKey { server: ([127, 0, 0, 1], server).into(), tenant: tenant.into(), user: user.into() };
        Arc::new(KeyPool::new(key, wire, 1))
    }

    fn key<'a>(server: u16, tenant: &'a Arc<str>, user: &'a Arc<str>) -> KeyRef<'a> {
        KeyRef { server: ([127, 0, 0, 1], server).into(), tenant, user }
    }

    #[test]
    fn a_pool_is_found_by_server_names_and_wire() {
        let mut homes = Homes::default();
        let kept = homes.keep(pool(1, "t1", "alice", 7));
        // Other Arcs of the same names name the same pool.
        let (t1, alice, bob): (Arc<str>, Arc<str>, Arc<str>) = ("t1".into(), "alice".into(), "bob".into());
        let found = homes.find(key(1, &t1, &alice), 7).expect("same key and wire");
        assert!(Arc::ptr_eq(&found, &kept));
        assert!(homes.find(key(1, &t1, &alice), 8).is_none(), "another wire identity");
        assert!(homes.find(key(2, &t1, &alice), 7).is_none(), "another server");
        assert!(homes.find(key(1, &t1, &bob), 7).is_none(), "another user");
        let t2: Arc<str> = "t2".into();
        assert!(homes.find(key(1, &t2, &alice), 7).is_none(), "another tenant");
    }

    #[test]
    fn the_oldest_pool_is_forgotten_first() {
        let mut homes = Homes::default();
        let (t, u): (Arc<str>, Arc<str>) = ("t".into(), "u".into());
        for server in 1..=Homes::MAX as u16 + 1 {
            homes.keep(pool(server, "t", "u", 0));
        }
        assert!(homes.find(key(1, &t, &u), 0).is_none(), "the first one is gone");
        for server in 2..=Homes::MAX as u16 + 1 {
            assert!(homes.find(key(server, &t, &u), 0).is_some(), "server {server}");
        }
    }
}
