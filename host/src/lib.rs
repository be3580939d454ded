//! toolhost: loads tool plugins and runs tool calls for coding agents.
//!
//! The rooms (see ARCHITECTURE.md for how a call flows through them):
//!
//! - `call`: the [`Host`] and the flow of one call (prepare, checks, approval, the
//!   PreToolUse/PostToolUse hooks and the trust in a workspace's own, the run under a timeout,
//!   the outcome);
//! - `plugins`: discovery, the plugin index, loading through the ABI adapter, the registry,
//!   run-time tools, curated bundles, hot swap;
//! - `command_sandbox`: the host side of the command sandbox (`sandbox.wrap_command`, the
//!   policy built from the settings, the supervisor mode of the binary);
//! - `egress`: where connections may go (`[egress]`) and the proxy commands reach the
//!   network through;
//! - `permissions`: the workspace capability, `.clineignore`, approval, command permissions;
//! - `agent`: the assistant-message parser, the message session, schema rendering;
//! - `frontends`: the command line, JSON lines, MCP, replay.
//!
//! ```no_run
//! use toolhost::{
//!     ApprovalMode, CommandPermissions, HeadlessUi, Host, HostConfig, Placement, Settings, Workspace,
//! };
//!
//! let host = Host::new(HostConfig {
//!     plugin_dirs: vec!["target/debug/plugins".into()],
//!     workspace: Workspace::new(std::path::Path::new(".")).unwrap(),
//!     settings: Settings::default(),
//!     approval: ApprovalMode::DenyUnlessAuto,
//!     command_permissions: CommandPermissions::from_env(),
//!     ui: Box::new(HeadlessUi),
//!     task_id: "example".into(),
//!     placement: Placement::default(),
//! });
//! let outcome = host.call("list_files", r#"{"path":"."}"#);
//! println!("{}", outcome.model_text());
//! ```
#![deny(missing_docs)]

pub(crate) mod agent;
pub(crate) mod call;
pub(crate) mod command_sandbox;
pub(crate) mod egress;
pub(crate) mod error;
pub(crate) mod frontends;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub(crate) mod known_tools;
pub(crate) mod permissions;
pub(crate) mod plugins;
pub(crate) mod settings;
pub(crate) mod ui;

pub use agent::parser::{Block, StreamParser, ToolUse, XmlParser};
pub use agent::session::{parser_for, Conversation, SessionEvent};
pub use call::hooks::{ScriptVersion, TrustStore};
pub use call::{
    Arguments, CallOptions, CallOutcome, CallScope, Host, HostConfig, PendingCall, TaskCancelled,
    TaskConfig, Workers,
};
pub use error::{CallError, ErrorKind};
pub use frontends::cli::main;
pub use known_tools::CLINE_TOOL_NAMES;
pub use permissions::{ApprovalMode, CommandPermissions, Workspace};
pub use plugins::bundle::sha256_file;
pub use plugins::isolation::Placement;
pub use plugins::{LoadWarning, RegisteredTool, Registry};
pub use settings::{InvalidSettings, Isolation, Settings, SettingsError, UnknownKey};
pub use tool_api::workspace::RootSpec;
pub use ui::{HeadlessUi, StderrUi, Ui};
