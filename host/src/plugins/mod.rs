//! Plugin libraries: where they are found, how they are loaded and checked, and the registry of
//! tool names they provide.

pub mod discovery;
pub mod dynamic;
pub mod index;
pub mod loader;
pub mod registry;
pub mod watch;

pub use loader::{LoadError, PluginInfo};
pub use registry::{LoadWarning, RegisteredTool, Registry};
