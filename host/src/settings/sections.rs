//! The host's typed sections of the settings file: `[auto_approve]`, `[limits]`, `[hooks]`,
//! `[workspace]`, `[egress]` (`[plugins]` is [`super::plugins`]).

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::error::InvalidSettings;

/// Which approval categories are granted without asking (Cline's auto-approval settings).
///
/// The defaults differ from Cline's on purpose: only reads inside the workspace are
/// auto-approved, because with no terminal nobody could see what else ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AutoApprove {
    /// Read files inside the workspace.
    pub read_files: bool,
    /// Also read files outside it (only together with `read_files`).
    pub read_files_externally: bool,
    /// Create and change files inside the workspace.
    pub edit_files: bool,
    /// Also outside it (only together with `edit_files`).
    pub edit_files_externally: bool,
    /// Run commands the model marks as safe.
    pub execute_safe_commands: bool,
    /// Run any command (only together with `execute_safe_commands`).
    pub execute_all_commands: bool,
    /// Drive the browser.
    pub use_browser: bool,
    /// Fetch and search the web.
    pub use_web: bool,
    /// Use MCP servers.
    pub use_mcp: bool,
    /// Tell the user when an auto-approved command is still running after a while (Cline's
    /// `enableNotifications`; the tool reads it).
    pub enable_notifications: bool,
}

impl Default for AutoApprove {
    fn default() -> Self {
        Self {
            read_files: true,
            read_files_externally: false,
            edit_files: false,
            edit_files_externally: false,
            execute_safe_commands: false,
            execute_all_commands: false,
            use_browser: false,
            use_web: false,
            use_mcp: false,
            enable_notifications: false,
        }
    }
}

/// Limits the host enforces on every call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// A call still running after this many seconds is cancelled and reported as timed out.
    pub call_timeout_secs: u64,
    /// Consecutive mistakes after which the task is stopped (Cline's default: 3).
    pub max_consecutive_mistakes: u32,
    /// The largest JSON-RPC message `toolhost mcp` accepts, in bytes (a larger one is answered
    /// with an error and skipped).
    pub max_request_bytes: u64,
    /// How long a question to the user of a client (an MCP elicitation, a `serve --ask`
    /// question) waits for its answer, in seconds; unanswered, it is withdrawn and counts as
    /// declined (an approval is a denial).
    pub ask_timeout_secs: u64,
    /// `mcp --http`: how long a client may take to send a request's headers, in seconds (also
    /// how long an idle keep-alive connection stays open); slower, the connection is closed.
    pub header_timeout_secs: u64,
    /// `mcp --http`: connections open at once; beyond it the oldest connection that has not
    /// yet sent an authorized request is closed to make room, else the new one is refused.
    pub max_connections: u32,
    /// `mcp --http`: connections open at once from one peer address, likewise.
    pub max_connections_per_peer: u32,
    /// `mcp --http`: sessions open at once for the bearer token; a new one beyond it ends the
    /// session idle the longest (one with no call running).
    pub max_sessions: u32,
}

/// A hundred years: a longer limit is never, and would overflow a deadline.
const NEVER_SECS: u64 = 100 * 365 * 24 * 3600;

impl Limits {
    /// How long a handler may run before its call is given up (at least a second).
    pub fn call_timeout(&self) -> Duration {
        Duration::from_secs(self.call_timeout_secs.clamp(1, NEVER_SECS))
    }

    /// How long a question waits for its answer (at least a second).
    pub fn ask_timeout(&self) -> Duration {
        Duration::from_secs(self.ask_timeout_secs.clamp(1, NEVER_SECS))
    }

    /// How long an HTTP client may take to send a request's headers (at least a second).
    pub fn header_timeout(&self) -> Duration {
        Duration::from_secs(self.header_timeout_secs.clamp(1, NEVER_SECS))
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            call_timeout_secs: 900,
            max_consecutive_mistakes: 3,
            max_request_bytes: 16 * 1024 * 1024,
            ask_timeout_secs: 600,
            header_timeout_secs: 10,
            max_connections: 512,
            // A local client's sessions all come from 127.0.0.1, each with an event stream
            // and a request open: twice the sessions.
            max_connections_per_peer: 128,
            max_sessions: 64,
        }
    }
}

/// Where hook scripts come from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HookSettings {
    /// Whether PreToolUse/PostToolUse hooks run at all.
    pub enabled: bool,
    /// An extra directory searched first (like Cline's `--hooks-dir`).
    pub dir: Option<PathBuf>,
    /// Where the trusted workspace hook scripts are kept (see [`crate::call::hooks::trust`]);
    /// default `$TOOLHOST_TRUSTED_HOOKS`, else `~/.config/toolhost/trusted-hooks.json`.
    pub trust_file: Option<PathBuf>,
}

impl Default for HookSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            dir: None,
            trust_file: None,
        }
    }
}

/// The tool set a host serves when the command line names none (`[tools] set`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ToolsSettings {
    /// `NAME` or `NAME:PRESET` (`cline-sdk:plan`); none: `cline-legacy`.
    pub set: Option<String>,
}

/// The workspace's roots when the command line names none (`[workspace] roots`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WorkspaceSettings {
    /// The roots, the primary first: each `PATH` (named after its directory) or `NAME=PATH`,
    /// with `~` and `${env:NAME}` expanded.
    pub roots: Vec<String>,
}

impl WorkspaceSettings {
    /// The roots the settings name, expanded; empty when none.
    pub fn root_specs(&self) -> Result<Vec<tool_api::workspace::RootSpec>, InvalidSettings> {
        use tool_api::workspace::RootSpec;
        const KEY: &str = "workspace.roots";
        self.roots
            .iter()
            .map(|entry| {
                let (name, path) = match entry.split_once('=') {
                    Some((name, path)) if !name.contains('/') => (Some(name), path),
                    _ => (None, entry.as_str()),
                };
                let path = tool_api::sdk::paths::expand(path)
                    .map_err(|reason| InvalidSettings::Expand { key: KEY, reason })?;
                tool_api::sdk::paths::existing_dir(KEY, &path)
                    .map_err(|reason| InvalidSettings::Path { key: KEY, reason })?;
                Ok(match name {
                    Some(name) => RootSpec::named(name, path),
                    None => RootSpec::unnamed(path),
                })
            })
            .collect()
    }
}

/// Where connections may go (`[egress]`): the one policy of the egress proxy that commands
/// reach the network through. Rules are host names (`example.com`), a domain's subdomains
/// (`*.example.com`), addresses (`10.0.0.5`, `[::1]`), each optionally with a port
/// (`example.com:443`, `[::1]:8080`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EgressSettings {
    /// Allowed without asking, besides the package registries. An address reached through a
    /// name (loopback, private, link-local, the cloud metadata address, this machine's own)
    /// is refused unless a rule here names that exact address.
    pub allow: Vec<String>,
    /// Refused without asking, before anything is allowed.
    pub deny: Vec<String>,
    /// Whether the package registries of the common ecosystems are allowed (Cargo, npm,
    /// PyPI, Go, Maven; the list `toolhost policy egress` shows).
    pub registries: bool,
    /// Whether the user is asked about a host no rule names (`false`: it is refused).
    pub ask: bool,
    /// Where the hosts answered "always" are kept, one rule a line (`~` expanded); default
    /// the configuration directory's `egress-allowed.txt`.
    pub allowed_file: Option<String>,
    /// Where each task's connection log is kept (`~` expanded); default
    /// `$XDG_STATE_HOME/toolhost/egress`, else `~/.local/state/toolhost/egress`.
    pub log_dir: Option<String>,
}

impl Default for EgressSettings {
    fn default() -> Self {
        Self {
            allow: Vec::new(),
            deny: Vec::new(),
            registries: true,
            ask: true,
            allowed_file: None,
            log_dir: None,
        }
    }
}
