//! toolhost: loads tool plugins and runs tool calls for coding agents.
//!
//! - [`plugins`]: discovery, loading and checking of plugin libraries; the [`plugins::Registry`]
//!   of tool names.
//! - [`executor`]: the [`Host`] and the flow of one call (parameters, policies, approval,
//!   execution under a timeout, errors as tool results).
//! - [`services`]: the host services a plugin receives during a call.
//! - [`policy`]: the workspace boundary, `.clineignore` and approval rules.
//! - [`settings`]: the settings file.
//! - [`sandbox_service`]: the command sandbox's host service and supervisor mode.
//! - [`cli`]: the `toolhost` command line.
//!
//! ```no_run
//! use toolhost::{Host, HostConfig, policy::{ApprovalMode, Workspace}, settings::Settings, ui::HeadlessUi};
//!
//! let host = Host::new(HostConfig {
//!     plugin_dirs: vec!["target/debug/plugins".into()],
//!     workspace: Workspace::new(std::path::Path::new(".")).unwrap(),
//!     settings: Settings::default(),
//!     approval: ApprovalMode::DenyUnlessAuto,
//!     ui: Box::new(HeadlessUi),
//!     task_id: "example".into(),
//! });
//! let outcome = host.call("list_files", r#"{"path":"."}"#);
//! println!("{}", outcome.model_text());
//! ```
#![deny(missing_docs)]

pub mod bundle;
pub mod cli;
pub mod executor;
pub mod hooks;
pub mod known_tools;
pub mod mcp_server;
pub mod mcp_servers;
pub mod outcome;
pub mod parser;
pub mod plugins;
pub mod policy;
pub mod replay;
pub mod sandbox_service;
pub mod schema;
pub mod serve;
pub mod services;
pub mod session;
pub mod settings;
pub mod task;
pub mod ui;
pub mod workers;

pub use executor::{Host, HostConfig};
pub use outcome::CallOutcome;
