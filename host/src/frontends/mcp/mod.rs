//! `toolhost mcp`: every loaded tool served as an MCP server (rmcp), on stdio or, with
//! `--http`, over streamable HTTP ([`http`]).
//!
//! - `tools/list` gives each registered tool with its JSON-Schema input, its title and the four
//!   hints of its spec (the entries `toolhost schema --format mcp` prints). `listChanged` is
//!   advertised: after a hot swap every session gets `notifications/tools/list_changed`.
//! - `tools/call` starts the call on a call thread of its own ([`Host::start_call`]), waits
//!   for its outcome without blocking the protocol (keeping the call's timeout) and answers
//!   with the text the model reads plus the result's images (a relayed MCP server's result
//!   with that server's own structures: [`result`]).
//!   Every tool failure (bad parameters, policy refusal, denial, timeout, panic) is a result with
//!   `isError: true`; only a name no plugin registered is a JSON-RPC error (`-32602`, "Unknown
//!   tool: NAME"), as the MCP specification's tools page prescribes for unknown tools.
//! - Cancellation: `notifications/cancelled` for the request, the end of stdin and the end of
//!   an HTTP session cancel the call (the tool sees it; execute_command stops the command's
//!   process group; an isolated worker that does not stop is killed after a grace period); rmcp
//!   sends no answer for a cancelled request.
//! - Approvals and questions go to the client's user by elicitation ([`ui`]) unless
//!   `--yes`; without elicitation, what the settings do not auto-approve is denied. Events
//!   become `notifications/progress` for a request with a `progressToken`; errors and
//!   notifications become `notifications/message`, and so do the host's own warnings, while
//!   stderr stays quiet unless asked ([`log`]).
//! - The workspace is `--cwd`, else the client's roots (asked for on the first call, again
//!   after `roots/list_changed`; a change starts a new task), else the current directory — but
//!   never `/` by default.
//! - Over stdio the protocol owns the client's pipes ([`super::protocol_stdio`]): before any
//!   plugin is loaded, fd 0 is pointed at `/dev/null` and fd 1 at stderr, so a plugin (or a
//!   process it starts) that prints, reads or closes them cannot corrupt or silence the stream.
//!   Lines are read by [`transport`] (JSON-RPC errors for what cannot be served, the
//!   size limit). The server exits when stdin closes.

mod ask;
mod call_ui;
mod calls;
pub(crate) mod http;
mod http_conns;
mod http_sessions;
mod input_required;
pub mod log;
mod modern;
mod offers;
mod peer_origin;
mod progress;
mod questions;
mod result;
mod roots;
mod running;
mod server;
mod shared;
mod tasks;

pub use server::McpServer;
mod stdio;
mod transport;
pub mod ui;

use std::process::ExitCode;
use std::sync::Arc;

use rmcp::service::ServerInitializeError;
use rmcp::ServiceExt;

use super::FrontendError;
use crate::permissions::ApprovalMode;
use crate::ui::Ui;
use crate::{Host, RootSpec};
use roots::follows_client_roots;
use stdio as protocol_stdio;
use transport::LineTransport;
use ui::{ClientLink, McpUi};

/// Arguments of `toolhost mcp`.
#[derive(Debug, clap::Args)]
pub struct McpArgs {
    /// The workspace.
    #[command(flatten)]
    pub workspace: super::WorkspaceArgs,
    /// Approve everything without asking. Otherwise only what the settings auto-approve runs.
    #[arg(long)]
    pub yes: bool,
    /// Hot swap (the tools list is read anew for every `tools/list`).
    #[command(flatten)]
    pub hot_swap: super::HotSwapArgs,
    /// Serve streamable HTTP at ADDR (`HOST:PORT`, or a port on 127.0.0.1) instead of stdio.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
    /// `--http`: the file whose first line is the bearer token. Default: $TOOLHOST_MCP_TOKEN,
    /// else a token generated and printed on stderr.
    #[arg(long, value_name = "FILE", requires = "http")]
    pub token_file: Option<std::path::PathBuf>,
    /// `--http`: a browser origin allowed besides the loopback ones (`https://app.example:443`).
    #[arg(long, value_name = "ORIGIN", requires = "http")]
    pub allow_origin: Vec<String>,
    /// `--http`: seconds after which an idle session expires.
    #[arg(long, value_name = "SECS", default_value_t = 1800)]
    pub session_idle: u64,
}

/// Serves every loaded tool over MCP on stdin/stdout until the client closes stdin.
///
/// `build_host` makes the [`Host`] for the workspace's roots (none: the settings' roots, else
/// the current directory; see [`super::open_workspace`]), an approval mode and the session's
/// UI; it is called once the standard streams are safe, so that nothing a plugin prints while
/// loading reaches the protocol stream. `Err` is a usage error.
pub fn run(
    args: McpArgs,
    build_host: impl FnOnce(&[RootSpec], ApprovalMode, Box<dyn Ui>) -> Result<Arc<Host>, FrontendError>,
) -> Result<ExitCode, FrontendError> {
    // Questions go to the client's user when it declared elicitation ([`McpUi`]);
    // otherwise nobody answers and what the settings do not auto-approve is denied.
    let approval = if args.yes {
        ApprovalMode::ApproveAll
    } else {
        ApprovalMode::Ask
    };
    if let Some(addr) = &args.http {
        return run_http(&args, addr, approval, build_host);
    }
    // One thread drives the protocol; calls run on call threads of their own, so a
    // multi-threaded scheduler would only add wake-ups between threads.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(FrontendError::Runtime)?;
    let result = runtime.block_on(async {
        let (input, output) = protocol_stdio::take().map_err(FrontendError::TakeStdio)?;
        let client = ClientLink::default();
        let ui = Box::new(McpUi::new(client.clone()));
        let roots = args.workspace.roots();
        let host = build_host(&roots, approval, ui)?;
        client.set_ask_timeout(host.settings().limits.ask_timeout());
        let server = McpServer::new(host.clone())
            .with_client(client)
            .following_roots(follows_client_roots(&roots, &host))
            .watching(args.hot_swap.watch);
        let limit = usize::try_from(host.settings().limits.max_request_bytes).unwrap_or(usize::MAX);
        let transport = LineTransport::new(input, output, limit.max(1), server.session.clone());
        let code = serve(server, transport).await;
        host.registry().shutdown();
        Ok(code)
    });
    // A call still running when the client left must not hold the exit: its thread is
    // abandoned (the tool has been told nothing; the process ends).
    runtime.shutdown_background();
    result
}

/// `--http`: the plugins are loaded once; every HTTP session is a new task over them.
fn run_http(
    args: &McpArgs,
    addr: &str,
    approval: ApprovalMode,
    build_host: impl FnOnce(&[RootSpec], ApprovalMode, Box<dyn Ui>) -> Result<Arc<Host>, FrontendError>,
) -> Result<ExitCode, FrontendError> {
    if let Some(file) = &args.token_file {
        crate::command_sandbox::own_files::hide_from_commands(
            std::path::absolute(file).unwrap_or_else(|_| file.clone()),
        );
    }
    let options = http::HttpOptions {
        addr: http::parse_addr(addr)?,
        token: http::token(args.token_file.as_deref())?,
        allowed_origins: args.allow_origin.clone(),
        session_idle: std::time::Duration::from_secs(args.session_idle.max(1)),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(FrontendError::Runtime)?;
    let base = build_host(
        &args.workspace.roots(),
        approval,
        Box::new(crate::ui::HeadlessUi),
    )?;
    let follow_roots = follows_client_roots(&args.workspace.roots(), &base);
    let shared = shared::Shared::new(&base, base.settings().limits.ask_timeout());
    let watched = args.hot_swap.watch;
    let served = runtime.block_on(http::serve(base.clone(), options, move |base| {
        let client = ClientLink::default();
        client.set_ask_timeout(base.settings().limits.ask_timeout());
        McpServer::for_session(base.clone(), shared.clone())
            .with_client(client)
            .following_roots(follow_roots)
            .watching(watched)
    }));
    base.registry().shutdown();
    runtime.shutdown_background();
    served.map(|()| ExitCode::SUCCESS)
}

/// Runs the protocol on `transport` until the client closes its input; the calls still
/// running are cancelled then.
async fn serve(
    server: McpServer,
    transport: LineTransport<protocol_stdio::Reader, protocol_stdio::Writer>,
) -> ExitCode {
    let client = server.client.clone();
    let session = server.session.clone();
    let running = match server.serve(transport).await {
        Ok(running) => running,
        Err(ServerInitializeError::ConnectionClosed(_)) => {
            tracing::info!(target: "toolhost::mcp", "the client closed stdin before initializing");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            // The server's own end: on stderr whatever the log level (it is quiet otherwise).
            eprintln!("toolhost mcp: MCP initialization failed: {e}");
            return ExitCode::FAILURE;
        }
    };
    log::connect(
        &client,
        running.peer().clone(),
        tokio::runtime::Handle::current(),
    );
    let ended = running.waiting().await;
    session.cancel();
    match ended {
        Ok(reason) => {
            tracing::info!(target: "toolhost::mcp", "MCP session ended: {reason:?}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("toolhost mcp: the MCP service failed: {e}");
            ExitCode::FAILURE
        }
    }
}
