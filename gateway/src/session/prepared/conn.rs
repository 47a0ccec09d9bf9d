//! What one server connection has prepared of its client's statements: client id → server id,
//! and which parameter types it was last sent. Meant to live in the connection's sync record.

use std::collections::HashMap;

/// One statement as prepared on one server connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerStmt {
    /// The id the server gave it.
    pub id: u32,
    /// [`super::Statement::types_version`] last sent to this connection (0: none yet).
    pub types_version: u32,
}

/// The statements prepared on one server connection, by client id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConnStatements {
    by_client: HashMap<u32, ServerStmt, super::registry::IdHasher>,
    /// Text statements prepared here: lower-case name → [`super::text::TextStatement::generation`].
    text: HashMap<String, u64>,
    /// The session's close epoch when closed statements were last dropped from here.
    swept: u64,
}

impl ConnStatements {
    /// The server statement for client id `client_id`, if prepared here.
    pub fn get(&self, client_id: u32) -> Option<ServerStmt> {
        self.by_client.get(&client_id).copied()
    }

    /// Records a prepare on this connection (the client's or a lazy re-prepare): no types sent yet.
    pub fn insert(&mut self, client_id: u32, server_id: u32) {
        self.by_client.insert(client_id, ServerStmt { id: server_id, types_version: 0 });
    }

    /// Whether an EXECUTE must carry the types (`types_version` is the statement's current one):
    /// the connection never got types for this statement, or got other ones.
    pub fn needs_types(&self, client_id: u32, types_version: u32) -> bool {
        self.get(client_id).is_none_or(|s| s.types_version != types_version)
    }

    /// Records that an EXECUTE with types of version `types_version` went to this connection.
    pub fn types_sent(&mut self, client_id: u32, types_version: u32) {
        if let Some(s) = self.by_client.get_mut(&client_id) {
            s.types_version = types_version;
        }
    }

    /// COM_STMT_CLOSE: forgets the statement; returns the server id to close.
    pub fn remove(&mut self, client_id: u32) -> Option<u32> {
        self.by_client.remove(&client_id).map(|s| s.id)
    }

    /// COM_RESET_CONNECTION, or the connection goes to another client: nothing is prepared.
    pub fn clear(&mut self) {
        self.by_client.clear();
        self.text.clear();
    }

    /// Whether text statement `name` is prepared here in generation `generation`.
    pub fn has_text(&self, name: &str, generation: u64) -> bool {
        self.text.get(&name.to_lowercase()) == Some(&generation)
    }

    /// Records a text `PREPARE name` run here.
    pub fn insert_text(&mut self, name: &str, generation: u64) {
        self.text.insert(name.to_lowercase(), generation);
    }

    /// `DEALLOCATE PREPARE name` (or a failed `PREPARE`) here; whether it was prepared here.
    pub fn remove_text(&mut self, name: &str) -> bool {
        self.text.remove(&name.to_lowercase()).is_some()
    }

    /// Whether statements the client closed since `epoch` changed may still be here (nothing
    /// to do when this connection holds none).
    pub fn needs_sweep(&self, epoch: u64) -> bool {
        self.swept != epoch && !self.is_empty()
    }

    /// Records that the connection holds nothing the client closed before `epoch`.
    pub fn set_swept(&mut self, epoch: u64) {
        self.swept = epoch;
    }

    /// Names (lower case) and generations of the text statements prepared here.
    pub fn text_statements(&self) -> impl Iterator<Item = (&str, u64)> + '_ {
        self.text.iter().map(|(n, g)| (n.as_str(), *g))
    }

    /// Number of statements prepared here.
    pub fn len(&self) -> usize {
        self.by_client.len()
    }

    /// Whether nothing is prepared here.
    pub fn is_empty(&self) -> bool {
        self.by_client.is_empty() && self.text.is_empty()
    }

    /// (client id, server statement) pairs, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (u32, ServerStmt)> + '_ {
        self.by_client.iter().map(|(c, s)| (*c, *s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_insert_types_remove_clear() {
        let mut c = ConnStatements::default();
        assert!(c.get(1).is_none());
        assert!(c.needs_types(1, 0), "not prepared here: a prepare and types are needed");
        c.insert(1, 501);
        assert_eq!(c.get(1), Some(ServerStmt { id: 501, types_version: 0 }));
        assert!(c.needs_types(1, 1), "fresh prepare never saw types");
        c.types_sent(1, 1);
        assert!(!c.needs_types(1, 1));
        assert!(c.needs_types(1, 2), "the client bound other types since");
        c.insert(2, 502);
        assert_eq!(c.len(), 2);
        assert_eq!(c.remove(1), Some(501));
        assert_eq!(c.remove(1), None);
        c.insert_text("S1", 4);
        assert!(c.has_text("s1", 4) && !c.has_text("s1", 5));
        c.clear();
        assert!(c.is_empty());
        assert!(!c.remove_text("s1"));
    }

    #[test]
    fn sweeps_only_when_the_epoch_moved_and_something_is_held() {
        let mut c = ConnStatements::default();
        assert!(!c.needs_sweep(3), "nothing held here");
        c.insert(1, 10);
        c.insert_text("S", 2);
        assert!(c.needs_sweep(3));
        c.set_swept(3);
        assert!(!c.needs_sweep(3));
        assert!(c.needs_sweep(4));
        assert_eq!(c.text_statements().collect::<Vec<_>>(), vec![("s", 2)]);
    }

    #[test]
    fn re_prepare_forgets_the_types_sent() {
        let mut c = ConnStatements::default();
        c.insert(7, 1);
        c.types_sent(7, 3);
        c.insert(7, 9);
        assert!(c.needs_types(7, 3));
    }
}
