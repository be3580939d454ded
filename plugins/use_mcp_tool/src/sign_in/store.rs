//! The user's sign-ins, one file in toolhost's configuration directory
//! (`$XDG_CONFIG_HOME/toolhost/mcp-sign-ins.json`, else `~/.config/toolhost/…`): per server
//! URL, rmcp's stored credentials (bound to the issuer that minted them), the scopes each
//! sign-in asked for and the scopes a server asked for since.
//!
//! The file is the user's alone (0600 in a 0700 directory), written whole and atomically, and
//! never logged. The host masks its configuration directory from every command it runs, so a
//! sandboxed command cannot read it.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use serde::{Deserialize, Serialize};

/// The file's name in toolhost's configuration directory.
const FILE_NAME: &str = "mcp-sign-ins.json";

/// Serializes this process's read-modify-write of the file (other processes: [`locked`]).
static FILE_LOCK: Mutex<()> = Mutex::new(());

/// An exclusive lock on `<file>.lock` beside the file, held while it is read and written, so
/// that two toolhost processes (a login and a host refreshing a token) do not lose each other's
/// changes. `None` when there is no directory to lock in yet (nothing to lose either).
fn locked(path: &Path) -> Option<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(path.with_extension("lock"))
        .ok()?;
    lock.lock().ok()?;
    Some(lock)
}

/// What is kept for one server.
#[derive(Default, Clone, Serialize, Deserialize)]
pub struct Entry {
    /// The credentials of the last sign-in (with the issuer), refreshed in place.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<StoredCredentials>,
    /// The scopes each sign-in since the last sign-out asked for, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sign_ins: Vec<Vec<String>>,
    /// Scopes the server asked for (a 403 `insufficient_scope`) that the next sign-in adds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wanted_scopes: Vec<String>,
}

#[derive(Default, Serialize, Deserialize)]
struct Document {
    #[serde(default)]
    servers: BTreeMap<String, Entry>,
}

/// The file, when there is a place for it.
pub fn path() -> Option<PathBuf> {
    crate::locations::toolhost_config_dir().map(|dir| dir.join(FILE_NAME))
}

/// What is kept for the server at `url` (empty when nothing is).
pub fn entry(url: &str) -> Result<Entry, String> {
    entry_in(path(), url)
}

/// Changes what is kept for the server at `url` (an entry left empty is removed).
pub fn update(url: &str, change: impl FnOnce(&mut Entry)) -> Result<(), String> {
    update_in(path(), url, change)
}

fn entry_in(path: Option<PathBuf>, url: &str) -> Result<Entry, String> {
    let _held = FILE_LOCK.lock().unwrap_or_else(PoisonError::into_inner);
    let _locked = path.as_deref().and_then(locked);
    Ok(read(path)?.servers.remove(url).unwrap_or_default())
}

fn update_in(
    path: Option<PathBuf>,
    url: &str,
    change: impl FnOnce(&mut Entry),
) -> Result<(), String> {
    let _held = FILE_LOCK.lock().unwrap_or_else(PoisonError::into_inner);
    let path = path.ok_or("no place to keep sign-ins: set XDG_CONFIG_HOME or HOME")?;
    if let Some(dir) = path.parent() {
        use std::os::unix::fs::DirBuilderExt;
        let _ = std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir);
    }
    let _locked = locked(&path);
    let mut document = read(Some(path.clone()))?;
    let entry = document.servers.entry(url.to_string()).or_default();
    change(entry);
    if entry.credentials.is_none() && entry.sign_ins.is_empty() && entry.wanted_scopes.is_empty() {
        document.servers.remove(url);
    }
    write(&path, &document)
}

fn read(path: Option<PathBuf>) -> Result<Document, String> {
    let Some(path) = path else {
        return Ok(Document::default());
    };
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| {
            format!(
                "{} is not a sign-in file toolhost wrote: {e}",
                path.display()
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Document::default()),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

fn write(path: &Path, document: &Document) -> Result<(), String> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    let dir = path.parent().ok_or("the sign-in file has no directory")?;
    let failed = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(failed)?;
    let text = serde_json::to_vec_pretty(document).map_err(|e| e.to_string())?;
    // A temporary file is created 0600 before anything is written to it.
    let mut file = tempfile::NamedTempFile::new_in(dir).map_err(failed)?;
    file.as_file()
        .set_permissions(std::fs::Permissions::from_mode(0o600))
        .map_err(failed)?;
    file.write_all(&text).map_err(failed)?;
    file.as_file().sync_all().map_err(failed)?;
    file.persist(path).map_err(|e| failed(e.error))?;
    Ok(())
}

/// rmcp's view of one server's credentials in the file.
pub struct FileStore {
    /// The server's URL, the entry's key.
    pub url: String,
}

fn store_error(message: String) -> AuthError {
    AuthError::CredentialStoreError(message)
}

#[async_trait::async_trait]
impl CredentialStore for FileStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        Ok(entry(&self.url).map_err(store_error)?.credentials)
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        update(&self.url, |entry| entry.credentials = Some(credentials)).map_err(store_error)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        update(&self.url, |entry| entry.credentials = None).map_err(store_error)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn the_file_is_the_users_alone_and_entries_come_back() {
        use std::os::unix::fs::PermissionsExt;
        let home = tempfile::tempdir().unwrap();
        let file = home.path().join("toolhost").join(FILE_NAME);
        let at = || Some(file.clone());
        let url = "https://mcp.example.com/mcp";
        update_in(at(), url, |entry| {
            entry.wanted_scopes = vec!["write".into()]
        })
        .unwrap();
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let dir_mode = std::fs::metadata(file.parent().unwrap())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(dir_mode & 0o777, 0o700);
        let kept = entry_in(at(), url).unwrap();
        assert_eq!(kept.wanted_scopes, vec!["write".to_string()]);
        update_in(at(), url, |entry| entry.wanted_scopes.clear()).unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(!text.contains(url), "an emptied entry is removed: {text}");
    }
}
