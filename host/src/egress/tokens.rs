//! The tokens of the host's own clients (the web tools' HTTP clients): each names the grant
//! its requests are decided under, for as long as it is used.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::grant::Grant;

/// How long a client token lives unused.
const IDLE_LIFETIME: Duration = Duration::from_secs(3600);

type Clients = HashMap<String, (Arc<Grant>, Instant)>;

static CLIENTS: Mutex<Option<Clients>> = Mutex::new(None);

/// A new random token: 24 bytes of the operating system's randomness, in hex.
pub fn new_token() -> String {
    let mut bytes = [0u8; 24];
    rand_core::RngCore::fill_bytes(&mut rand_core::OsRng, &mut bytes);
    hex::encode(bytes)
}

/// Registers `grant` for a client; returns its token.
pub fn register_client(grant: Arc<Grant>) -> String {
    let token = new_token();
    let mut clients = CLIENTS.lock().unwrap_or_else(PoisonError::into_inner);
    let clients = clients.get_or_insert_with(HashMap::new);
    clients.retain(|_, (_, used)| used.elapsed() < IDLE_LIFETIME);
    clients.insert(token.clone(), (grant, Instant::now()));
    token
}

/// The grant of a client's token, if it is one (and marks it used).
pub fn client(token: &str) -> Option<Arc<Grant>> {
    let mut clients = CLIENTS.lock().unwrap_or_else(PoisonError::into_inner);
    let (grant, used) = clients.as_mut()?.get_mut(token)?;
    *used = Instant::now();
    Some(grant.clone())
}
