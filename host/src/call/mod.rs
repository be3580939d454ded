//! The host and the flow of one tool call.
//!
//! [`Host`] ([`host`]) holds the plugins, the workspace and the task. The files that add its
//! methods use `host.rs`, which uses none of them: how a call enters ([`entry`], with the
//! [`CallOptions`] of its frontend), starts on a pooled thread and is waited for ([`pending`],
//! with the handler's [`clock`]), and runs its steps ([`flow`], [`recheck`]); the services a
//! call's handler gets ([`services`]); more tasks over the same plugins ([`task_host`]);
//! replaced libraries ([`hot_swap`]).
//!
//! The caller finds the handler; then the call runs on a thread of its own ([`pending`]):
//! prepare the parameters ([`prepare`]), check the plugin, the required parameters and the
//! path parameters ([`checks`]), ask for approval ([`crate::permissions::approval`]), close the
//! sessions other tools close ([`sessions`]), run the PreToolUse hooks, run the handler
//! ([`run`]) while the caller keeps its timeout, run the PostToolUse hooks, and turn whatever
//! happened into a result the model can read ([`outcome`]). A failure of any kind (error,
//! panic, timeout, bad input) becomes a tool error; it never reaches the host's own control
//! flow.

pub(crate) mod arguments;
mod checks;
mod clock;
mod egress_routes;
mod entry;
mod flow;
pub(crate) mod hooks;
mod host;
mod hot_swap;
mod input_required;
mod options;
pub mod outcome;
mod pending;
mod prepare;
mod recheck;
mod run;
mod services;
mod sessions;
pub mod task;
mod task_host;
mod ui_services;
pub(crate) mod workers;

pub use arguments::Arguments;
pub use host::{Host, HostConfig};
pub use options::{CallOptions, CallScope, InputRelay};
pub use outcome::{CallOutcome, TaskCancelled};
pub use pending::PendingCall;
pub use task_host::TaskConfig;
pub use workers::Workers;
