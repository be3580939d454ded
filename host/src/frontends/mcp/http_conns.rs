//! The connections `toolhost mcp --http` holds open, within `[limits] max_connections` and
//! `max_connections_per_peer`.
//!
//! A connection is *unproven* until one of its requests carries the bearer token. A new
//! connection beyond a limit makes room by closing the oldest unproven connection in that
//! limit's scope (the peer's, or all); when every one is proven, the new connection is refused:
//! `503` is written at once and the connection closed. So connections that send nothing, or
//! their headers a byte at a time (they are cut at `[limits] header_timeout_secs` anyway),
//! never keep an authorized client out.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};

use tokio_util::sync::CancellationToken;

/// The open connections and their limits.
pub struct Connections {
    total: usize,
    per_peer: usize,
    table: Mutex<Table>,
}

#[derive(Default)]
struct Table {
    next: u64,
    /// By accept order: the first unproven one is the oldest.
    open: BTreeMap<u64, Entry>,
    per_peer: HashMap<IpAddr, usize>,
}

struct Entry {
    peer: IpAddr,
    proven: bool,
    closed: CancellationToken,
}

/// Why a connection was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// Its peer has `max_connections_per_peer` open, all authorized.
    Peer(usize),
    /// `max_connections` are open, all authorized.
    Total(usize),
}

impl Refused {
    /// The text of the `503` answer: who refused, why, and the setting.
    pub fn text(self) -> String {
        let (count, what, key) = match self {
            Self::Peer(n) => (n, "from this address", "max_connections_per_peer"),
            Self::Total(n) => (n, "in all", "max_connections"),
        };
        format!(
            "toolhost mcp refused the connection: {count} connections {what} are open and all \
             of them are in use by authorized clients ([limits] {key} allows more)\n"
        )
    }
}

/// One admitted connection; dropping it frees its place.
pub struct Admitted {
    id: u64,
    connections: Arc<Connections>,
    /// Cancelled when the connection is closed to make room for another.
    pub closed: CancellationToken,
}

impl Connections {
    /// At most `total` connections, `per_peer` of them from one address (each at least 1).
    pub fn new(total: usize, per_peer: usize) -> Arc<Self> {
        Arc::new(Self {
            total: total.max(1),
            per_peer: per_peer.max(1),
            table: Mutex::default(),
        })
    }

    /// Admits a connection from `peer`, closing the oldest unproven connection of a full
    /// scope to make room.
    pub fn admit(self: &Arc<Self>, peer: IpAddr) -> Result<Admitted, Refused> {
        let mut table = self.table.lock().unwrap_or_else(PoisonError::into_inner);
        if table.per_peer.get(&peer).copied().unwrap_or(0) >= self.per_peer
            && !table.evict_oldest(|e| e.peer == peer)
        {
            return Err(Refused::Peer(self.per_peer));
        }
        if table.open.len() >= self.total && !table.evict_oldest(|_| true) {
            return Err(Refused::Total(self.total));
        }
        let id = table.next;
        table.next += 1;
        let closed = CancellationToken::new();
        table.open.insert(
            id,
            Entry {
                peer,
                proven: false,
                closed: closed.clone(),
            },
        );
        *table.per_peer.entry(peer).or_default() += 1;
        Ok(Admitted {
            id,
            connections: self.clone(),
            closed,
        })
    }

    /// How many connections are open.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.table
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .open
            .len()
    }
}

impl Table {
    /// Closes the oldest unproven connection that `scope` selects; false when there is none.
    fn evict_oldest(&mut self, scope: impl Fn(&Entry) -> bool) -> bool {
        let Some(id) = self
            .open
            .iter()
            .find(|(_, e)| !e.proven && scope(e))
            .map(|(id, _)| *id)
        else {
            return false;
        };
        if let Some(entry) = self.remove(id) {
            tracing::debug!(target: "toolhost::mcp", "closed an unauthorized connection from {} to make room", entry.peer);
            entry.closed.cancel();
        }
        true
    }

    fn remove(&mut self, id: u64) -> Option<Entry> {
        let entry = self.open.remove(&id)?;
        if let Some(count) = self.per_peer.get_mut(&entry.peer) {
            *count -= 1;
            if *count == 0 {
                self.per_peer.remove(&entry.peer);
            }
        }
        Some(entry)
    }
}

impl Admitted {
    /// Marks the connection as an authorized client's: it is no longer closed to make room.
    pub fn prove(&self) {
        let mut table = self
            .connections
            .table
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(entry) = table.open.get_mut(&self.id) {
            entry.proven = true;
        }
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        let mut table = self
            .connections
            .table
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        table.remove(self.id);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([127, 0, 0, last])
    }

    #[test]
    fn a_full_peer_makes_room_by_closing_its_oldest_unproven_connection() {
        let connections = Connections::new(10, 2);
        let first = connections.admit(ip(1)).unwrap();
        let second = connections.admit(ip(1)).unwrap();
        let other = connections.admit(ip(2)).unwrap();
        let third = connections.admit(ip(1)).unwrap();
        assert!(first.closed.is_cancelled());
        assert!(!second.closed.is_cancelled() && !other.closed.is_cancelled());
        assert_eq!(connections.len(), 3);
        // Proven connections stay; with none unproven the new one is refused.
        second.prove();
        third.prove();
        assert_eq!(connections.admit(ip(1)).err(), Some(Refused::Peer(2)));
        drop(first);
        assert_eq!(connections.len(), 3);
        drop(second);
        assert!(connections.admit(ip(1)).is_ok());
    }

    #[test]
    fn a_full_server_makes_room_across_peers_and_refuses_when_all_are_proven() {
        let connections = Connections::new(2, 2);
        let a = connections.admit(ip(1)).unwrap();
        let b = connections.admit(ip(2)).unwrap();
        b.prove();
        let c = connections.admit(ip(3)).unwrap();
        assert!(a.closed.is_cancelled());
        c.prove();
        assert_eq!(connections.admit(ip(4)).err(), Some(Refused::Total(2)));
        assert!(Refused::Total(2)
            .text()
            .contains("[limits] max_connections"));
    }
}
