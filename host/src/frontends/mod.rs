//! The ways in: the command line (`cli`), JSON lines on stdio (`serve`), an MCP server
//! (`mcp`; its UI, elicitation and progress in `mcp_ui`, its stdio lines in `mcp_transport` and
//! `mcp_stdio`, streamable HTTP in `mcp_http`), a recorded assistant message replayed
//! (`replay`), and the reports of `toolhost mcp-servers`, `toolhost bundle` and
//! `toolhost hooks`; `workspace_args` is where the workspace's roots come from. `serve` and `mcp` keep the client's stdin and stdout for their protocol
//! alone (`protocol_stdio`).

pub mod bundle;
pub mod cli;
pub mod hooks;
pub mod mcp;
mod mcp_http;
mod mcp_http_conns;
mod mcp_http_sessions;
pub mod mcp_log;
mod mcp_result;
mod mcp_roots;
pub mod mcp_servers;
mod mcp_stdio;
mod mcp_transport;
pub mod mcp_ui;
mod peer_origin;
#[cfg(unix)]
pub mod protocol_stdio;
pub mod replay;
pub mod serve;
mod serve_channel;
pub mod workspace_args;

pub use workspace_args::{describe_workspace, open_workspace, WorkspaceArgs};

/// The hot-swap options of the long-running frontends (`serve`, `mcp`).
#[derive(Debug, clap::Args, Default)]
pub struct HotSwapArgs {
    /// Reload a plugin when its library in a plugin directory is replaced (hot swap).
    #[arg(long)]
    pub watch: bool,
    /// With `--watch`: also load a library whose version is older than the running one.
    #[arg(long, requires = "watch")]
    pub allow_downgrade: bool,
}
