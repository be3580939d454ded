//! The ABI adapter: the only host code that knows abi_stable.
//!
//! - [`library`] opens a plugin library with abi_stable's checks and reads its manifest;
//! - [`handler`] implements [`super::handler::HandlerApi`] over an in-process library's
//!   handlers (Rust types in, the ABI's JSON strings across);
//! - [`services`] presents a call's [`super::handler::CallServices`] to the plugin as the
//!   ABI's `HostServices`, catching every panic (abi_stable ends the process on one that
//!   escapes).

pub mod error;
pub mod handler;
pub mod library;
pub mod services;
