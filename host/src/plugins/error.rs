//! Why a plugin library could not be loaded.

/// Why a library could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", content = "message", rename_all = "snake_case")]
pub enum LoadError {
    /// The dynamic loader refused the file (not a library, corrupt, missing dependency).
    #[error("not a loadable library: {0}")]
    Open(String),
    /// The file is not a complete ELF shared object for this machine (truncated, half written,
    /// another architecture); found before the dynamic loader maps it.
    #[error("not a loadable library: {0}")]
    Elf(String),
    /// A library, but it exports no toolhost root module.
    #[error("not a toolhost plugin (it exports no tool-api root module)")]
    NotAPlugin,
    /// Built against a tool-api (or ABI library) whose version this host cannot load.
    #[error("incompatible ABI version: {0}")]
    AbiVersion(String),
    /// It needs a feature of its host that this host does not have.
    #[error("needs a newer host: {0}")]
    NeedsNewerHost(String),
    /// The types it was built with do not match this host's.
    #[error("incompatible ABI layout: {0}")]
    AbiLayout(String),
    /// The manifest is malformed.
    #[error("invalid manifest: {0}")]
    Manifest(String),
    /// The plugin failed (or panicked) while building its handlers.
    #[error("failed to start: {0}")]
    Init(String),
    /// Its worker process could not be started, or ended before it answered.
    #[error("its worker process failed: {0}")]
    Worker(String),
}
