//! Plugin libraries: where they are found (`discovery`), how they are opened and checked
//! (`elf` before the dynamic loader sees a file, then `loader`, with the ABI adapter `abi`), what an earlier run learnt of them (`index`), the
//! registry of tool names they provide (`registry`), the names they serve at run time
//! (`runtime_tools`), curated bundles (`bundle`), replaced libraries (`watch`), the seam
//! every call goes through (`handler`), where plugins run (`isolation`; isolated ones in
//! `worker` processes, with the `access` they declare and are granted, and the `grants` the
//! user gave one build), and the process's private directory of library copies and workers'
//! temporary directories (`private_dir`).

pub(crate) mod abi;
pub mod access;
pub mod bundle;
pub(crate) mod discovery;
pub(crate) mod elf;
pub(crate) mod error;
pub mod grants;
pub mod handler;
pub mod handler_call;
pub(crate) mod index;
pub mod isolation;
pub mod loader;
pub(crate) mod private_dir;
pub mod registry;
pub(crate) mod runtime_tools;
pub(crate) mod sealed;
pub(crate) mod watch;
pub(crate) mod worker;

pub use handler::CallServices;
pub use handler_call::{Context, HandlerCall, Params, Ran};
pub use registry::{Handler, LoadWarning, RegisteredTool, Registry};
