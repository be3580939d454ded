//! What is wrong with settings: a file that cannot be read or used ([`SettingsError`]), and
//! settings text that does not parse or breaks a rule of the host's sections
//! ([`InvalidSettings`]).

use std::path::PathBuf;

/// A settings file that could not be read or parsed.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// The file exists but cannot be read.
    #[error("cannot read settings file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not valid TOML or has a wrong value.
    #[error("invalid settings file {path}: {source}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong (boxed: a TOML error is large).
        source: Box<InvalidSettings>,
    },
    /// A path the file configures cannot be used (it does not exist, say).
    #[error("settings file {path}: {source}")]
    Unusable {
        /// The file.
        path: PathBuf,
        /// What is wrong, naming the key.
        source: Box<InvalidSettings>,
    },
}

/// Settings text that does not parse, or whose host sections have a wrong key or value.
#[derive(Debug, thiserror::Error)]
pub enum InvalidSettings {
    /// Not valid TOML.
    #[error(transparent)]
    Toml(#[from] toml::de::Error),
    /// The TOML has no JSON form (what tools' lookups read).
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// A host section has a key it does not know.
    #[error("[{section}]: {unknown}")]
    UnknownKey {
        /// The section (`auto_approve`, `plugins.read_file`).
        section: String,
        /// The key and the ones it may have meant.
        unknown: UnknownKey,
    },
    /// A host section's value has the wrong type or shape.
    #[error("[{section}]: {source}")]
    Section {
        /// The section (`limits`, `plugins.read_file`).
        section: String,
        /// What serde found.
        source: serde_json::Error,
    },
    /// A host section that must be a table is not one.
    #[error("[{section}] must be a table")]
    NotATable {
        /// The section.
        section: &'static str,
    },
    /// A path a key names has a `~` or `${env:NAME}` that cannot be expanded.
    #[error("{key}: {reason}")]
    Expand {
        /// The key (`workspace.roots`).
        key: &'static str,
        /// Why (no HOME, an unset variable).
        reason: String,
    },
    /// A key's value is not one it takes.
    #[error("{key}: {reason}")]
    Value {
        /// The key (`tools.set`).
        key: &'static str,
        /// Why.
        reason: String,
    },
    /// A path-valued key cannot be used: not a path, or a directory that does not exist.
    #[error("{reason}")]
    Path {
        /// The key (`hooks.dir`).
        key: &'static str,
        /// The sentence that says so, naming the key and the path.
        reason: String,
    },
}

/// A key a section does not have, with the known key nearest to it when it looks like a slip.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownKey {
    /// The key found.
    pub key: String,
    /// The known key one or two letters away, if any.
    pub nearest: Option<String>,
    /// The section's keys.
    pub known: Vec<String>,
}

impl std::fmt::Display for UnknownKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.nearest {
            Some(near) => write!(f, "unknown key `{}` (did you mean `{near}`?)", self.key),
            None => write!(
                f,
                "unknown key `{}` (the keys are: {})",
                self.key,
                self.known.join(", ")
            ),
        }
    }
}
