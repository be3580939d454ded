//! This process's private directory, `$TMPDIR/toolhost-<pid>-<random>/`: the private copies
//! of plugin libraries and the temporary directories of isolated plugins' workers.
//!
//! It is made with mode 0700 under a name nobody can know beforehand, so that nobody can plant
//! it (a directory made ahead under a guessed name would let its maker replace a library
//! between its copy and its loading). Commands see it read-only (the command sandbox).
//!
//! An exclusive lock on its `.lock` file, held for the life of the process, marks it in use
//! ([`tool_api::sdk::private_dir`], which plugins use for directories of their own).
//! The `toolhost` binary removes it when it exits ([`remove`]); what a host that was killed
//! left behind is removed by the next host that makes its own (this user's directories whose
//! lock nobody holds, plugins' among them).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use tool_api::sdk::private_dir::PrivateDir;

use super::error::LoadError;

/// The private directory, or why it could not be made (what [`PrivateDir::create`] says).
static PRIVATE: OnceLock<Result<PrivateDir, String>> = OnceLock::new();

/// Why the private directory, or a directory in it, is not there.
#[derive(Debug, thiserror::Error)]
pub enum PrivateDirError {
    /// The private directory could not be made.
    #[error("{reason}")]
    Create {
        /// Why, naming the directory.
        reason: String,
    },
    /// A directory inside it could not be made.
    #[error("cannot create {}: {source}", dir.display())]
    Subdir {
        /// The directory.
        dir: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

impl From<PrivateDirError> for LoadError {
    /// A library that needs the directory (its private copy, its worker's temporary
    /// directory) cannot be opened.
    fn from(error: PrivateDirError) -> Self {
        Self::Open(error.to_string())
    }
}

/// This process's private directory, made on first use.
pub fn path() -> Result<&'static Path, PrivateDirError> {
    match PRIVATE.get_or_init(|| PrivateDir::create(&std::env::temp_dir(), "")) {
        Ok(private) => Ok(private.path()),
        Err(reason) => Err(PrivateDirError::Create {
            reason: reason.clone(),
        }),
    }
}

/// The directory `name` inside the private directory, made when missing.
pub fn subdir(name: &str) -> Result<PathBuf, PrivateDirError> {
    let dir = path()?.join(name);
    std::fs::create_dir_all(&dir).map_err(|source| PrivateDirError::Subdir {
        dir: dir.clone(),
        source,
    })?;
    Ok(dir)
}

/// Removes the private directory, if this process made one (at exit: nothing in it is used
/// any more).
pub fn remove() {
    if let Some(Ok(private)) = PRIVATE.get() {
        private.remove();
    }
}
