//! Plugins isolated in worker processes: the same library and ABI as in-process, served by the
//! `toolhost` binary in a hidden worker mode over a private channel, so that whatever the
//! plugin does — crash, abort, exit, run out of memory, hang — ends only its worker.
//!
//! - [`protocol`]: the channel's frames and messages;
//! - [`serve`]: the worker side (`toolhost __plugin-worker`): confine itself, open the
//!   library, serve calls; [`remote`]: its end of the channel and the host's services reached
//!   over it;
//! - [`process`]: starting a worker (clean environment, own process group, output to the log)
//!   and naming how it ended;
//! - [`connection`]: the host side of one running worker (routing, cancellation, the end of
//!   the worker), answering service requests with [`answer`];
//! - [`plugin`]: an isolated plugin behind `HandlerApi`: workers started on demand, crashes
//!   counted, the plugin disabled after too many;
//! - [`config`]: the limits and sandbox a worker starts with.

mod answer;
mod config;
mod connection;
mod plugin;
mod process;
pub(crate) mod protocol;
mod remote;
pub mod serve;

pub use config::{WorkerConfig, WorkerLimits};
pub use plugin::WorkerPlugin;
pub use process::{Launch, WORKER_MODE};
