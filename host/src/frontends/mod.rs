//! The ways in: the command line (`cli`, with the reports of `toolhost mcp-servers`,
//! `toolhost bundle` and `toolhost hooks`), JSON lines on stdio (`serve`), an MCP server on
//! stdio or over streamable HTTP (`mcp`), a recorded assistant message replayed (`replay`);
//! `workspace_args` is where the workspace's roots come from. `serve` and `mcp` keep the
//! client's stdin and stdout for their protocol alone (`protocol_stdio`). What stops a command
//! is a [`FrontendError`].

pub mod cli;
mod error;
pub mod mcp;
#[cfg(unix)]
pub mod protocol_stdio;
pub mod replay;
pub mod serve;
pub mod workspace_args;

pub use error::FrontendError;
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
