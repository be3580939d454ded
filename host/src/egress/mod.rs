//! Egress: where connections may go, and the proxy that makes it so for commands.
//!
//! - [`policy`]: `[egress]` as rules ([`rules`]): deny, then allow (the settings, the hosts
//!   answered "always", the package registries of `registries.txt`), then ask. Decided on
//!   the name as given, before resolving it, so a refused name is never looked up.
//! - [`addresses`]: after resolving, loopback, private, link-local, metadata and this
//!   machine's own addresses are refused unless a rule names that exact address.
//! - The proxy (`proxy.rs`): one per process, on a Unix socket in the host's private
//!   directory. A sandboxed command's supervisor connects with the token of a [`Grant`]
//!   ([`link`]) and hands over every connection the command makes to its namespace's
//!   loopback port; the proxy serves each as an HTTP proxy (CONNECT and plain HTTP),
//!   decides, asks through the grant's [`Asker`], connects, and writes [`log`].
//!   Refusals are also sent back to the supervisor, which prints them on the command's
//!   standard error, so the model reads which host was refused and which setting allows it.

pub mod addresses;
mod answers;
mod connect;
pub mod error;
pub mod grant;
mod http;
pub mod log;
pub mod policy;
mod proxy;
pub mod rules;
mod session;
mod socks;
mod splice;
pub mod tokens;

pub use error::EgressError;
pub use grant::{Answer, Asker, Grant};
pub use policy::Policy;
pub use proxy::{client_route, dedicated_route, link, refusals};
