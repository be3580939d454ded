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

pub(crate) mod http;
mod http_conns;
mod http_sessions;
pub mod log;
mod peer_origin;
mod result;
mod roots;
mod stdio;
mod transport;
pub mod ui;

use std::process::ExitCode;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ProgressToken, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{Peer, RequestContext, ServerInitializeError};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;
use tool_api::texts;

use tokio_util::sync::CancellationToken;

use crate::agent::schema::{render, SchemaFormat};
use crate::call::{CallOptions, CallScope};
use crate::permissions::ApprovalMode;
use crate::plugins::handler::Cancellation;
use crate::ui::Ui;
use crate::{Host, RegisteredTool, RootSpec};
use roots::{client_roots, follows_client_roots, root_specs, ROOT_REFUSED};
use stdio as protocol_stdio;
use transport::LineTransport;
use ui::{CallUi, ClientLink, McpUi};

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
    build_host: impl FnOnce(&[RootSpec], ApprovalMode, Box<dyn Ui>) -> Result<Arc<Host>, String>,
) -> Result<ExitCode, String> {
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
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let result = runtime.block_on(async {
        let (input, output) = protocol_stdio::take()
            .map_err(|e| format!("cannot take over stdin/stdout for the protocol: {e}"))?;
        let client = ClientLink::default();
        let ui = Box::new(McpUi::new(client.clone()));
        let roots = args.workspace.roots();
        let host = build_host(&roots, approval, ui)?;
        client.set_ask_timeout(host.settings().limits.ask_timeout());
        let server = McpServer::new(host.clone())
            .with_client(client)
            .following_roots(follows_client_roots(&roots, &host));
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
    build_host: impl FnOnce(&[RootSpec], ApprovalMode, Box<dyn Ui>) -> Result<Arc<Host>, String>,
) -> Result<ExitCode, String> {
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
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let base = build_host(
        &args.workspace.roots(),
        approval,
        Box::new(crate::ui::HeadlessUi),
    )?;
    let follow_roots = follows_client_roots(&args.workspace.roots(), &base);
    let served = runtime.block_on(http::serve(base.clone(), options, move |base| {
        let client = ClientLink::default();
        client.set_ask_timeout(base.settings().limits.ask_timeout());
        let workspace = crate::permissions::Workspace::with_roots(&root_specs(base.workspace()))?;
        let task = base.new_task(crate::TaskConfig {
            workspace,
            ui: Box::new(McpUi::new(client.clone())),
            approval,
        });
        Ok(McpServer::new(task)
            .with_client(client)
            .following_roots(follow_roots))
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
    client.connect(running.peer().clone(), tokio::runtime::Handle::current());
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

/// Sends `notifications/tools/list_changed` to `peer` after every hot swap, for as long as the
/// session lasts.
fn announce_tool_changes(host: &Host, peer: Peer<RoleServer>) {
    let handle = tokio::runtime::Handle::current();
    host.on_tools_changed(move || {
        if peer.is_transport_closed() {
            return false;
        }
        let peer = peer.clone();
        handle.spawn(async move {
            if let Err(e) = peer.notify_tool_list_changed().await {
                tracing::debug!(target: "toolhost::mcp", "tools/list_changed not sent: {e}");
            }
        });
        true
    });
}

/// The MCP server of one session over one [`Host`] (the session's task).
#[derive(Clone)]
pub struct McpServer {
    host: Arc<Host>,
    /// Where the host's [`McpUi`] sends events, and the level the client asked for.
    client: ClientLink,
    /// Cancelled when the session ends; every call's cancellation is a child of it.
    session: Arc<Cancellation>,
    /// Whether the workspace is the client's roots (no `--cwd` was given).
    follow_roots: bool,
    /// The task over the client's roots, once asked for; `None` again when they change.
    rooted: Arc<tokio::sync::Mutex<Option<Arc<Host>>>>,
}

impl McpServer {
    /// A server for the tools `host` has loaded.
    pub fn new(host: Arc<Host>) -> Self {
        Self {
            host,
            client: ClientLink::default(),
            session: Arc::default(),
            follow_roots: false,
            rooted: Arc::default(),
        }
    }

    /// The same server, its workspace the client's roots when it offers them (no `--cwd`).
    pub fn following_roots(self, follow: bool) -> Self {
        Self {
            follow_roots: follow,
            ..self
        }
    }

    /// The task a call runs in: the session's host, or, following the client's roots, a task
    /// over them (asked for with `roots/list` on the first call after a change). `/` is never
    /// an implicit workspace.
    async fn task(&self, peer: &Peer<RoleServer>) -> Result<Arc<Host>, String> {
        if !self.follow_roots {
            return Ok(self.host.clone());
        }
        let mut rooted = self.rooted.lock().await;
        if let Some(task) = rooted.as_ref() {
            return Ok(task.clone());
        }
        let dirs = client_roots(peer).await?;
        let task = if dirs.is_empty() {
            if self.host.workspace().cwd() == std::path::Path::new("/") {
                return Err(ROOT_REFUSED.to_string());
            }
            self.host.clone()
        } else {
            if dirs.iter().any(|d| d == std::path::Path::new("/")) {
                return Err(ROOT_REFUSED.to_string());
            }
            let specs: Vec<RootSpec> = dirs.into_iter().map(RootSpec::unnamed).collect();
            let workspace = crate::permissions::Workspace::with_roots(&specs)
                .map_err(|e| format!("cannot use the client's roots as the workspace: {e}"))?;
            self.host.new_task(crate::TaskConfig {
                workspace,
                ui: Box::new(McpUi::new(self.client.clone())),
                approval: self.host.approval_mode(),
            })
        };
        *rooted = Some(task.clone());
        Ok(task)
    }

    /// The same server, connecting `client` (the link of the host's [`McpUi`]) once the
    /// session is up.
    pub fn with_client(self, client: ClientLink) -> Self {
        Self { client, ..self }
    }

    /// The `tools/list` entries, from the same entries `toolhost schema --format mcp` renders.
    /// Built on each request (a few dozen tools): the host may swap its registry while it runs.
    pub fn tools(&self) -> Vec<Tool> {
        let registry = self.host.registry();
        let specs: Vec<_> = registry.tools().map(|(_, tool)| &tool.spec).collect();
        let rendered = render(&specs, SchemaFormat::Mcp);
        let entries: Vec<Value> = serde_json::from_str(&rendered).unwrap_or_default();
        entries
            .into_iter()
            .filter_map(|entry| {
                let name = entry["name"].as_str().unwrap_or_default().to_string();
                serde_json::from_value::<Tool>(entry)
                    .map_err(|e| {
                        // A spec whose input schema is not a JSON object cannot be listed.
                        tracing::warn!(target: "toolhost::mcp", "tool {name} is not served over MCP: {e}");
                    })
                    .ok()
            })
            .collect()
    }

    /// The tool called `name`: a loaded plugin's at once; a run-time tool (an MCP server's,
    /// whose lookup may start that server) is looked up on the blocking pool, so that the
    /// protocol goes on meanwhile (pings, cancellations, other calls).
    async fn find_tool(&self, name: &str) -> Option<Arc<RegisteredTool>> {
        let registry = self.host.registry();
        if let Some(tool) = registry.get(name) {
            return Some(tool.clone());
        }
        if registry.dynamic_handlers().is_empty() {
            return None;
        }
        let (host, name) = (self.host.clone(), name.to_string());
        match tokio::task::spawn_blocking(move || host.lookup(&name)).await {
            Ok(tool) => tool,
            Err(e) => {
                tracing::error!(target: "toolhost::mcp", "looking a tool up failed: {e}");
                None
            }
        }
    }

    /// Runs one `tools/call` on the host; `None` when no tool has that name. Cancelling
    /// `cancelled` (the request's token) cancels the call; its events go out as progress with
    /// `progress` (the request's token).
    pub async fn call(
        &self,
        name: &str,
        arguments: Option<Value>,
        cancelled: CancellationToken,
        progress: Option<ProgressToken>,
        peer: &Peer<RoleServer>,
    ) -> Option<CallToolResult> {
        let tool = self.find_tool(name).await?;
        let host = match self.task(peer).await {
            Ok(host) => host,
            Err(refused) => {
                return Some(CallToolResult::error(vec![ContentBlock::text(
                    texts::tool_error(&refused),
                )]))
            }
        };
        let params = arguments.unwrap_or_else(|| Value::Object(Default::default()));
        let cancellation = self.session.child();
        let ui: Arc<dyn Ui> = Arc::new(CallUi::new(
            self.client.clone(),
            progress,
            cancellation.clone(),
        ));
        let client = self.client.clone();
        let options = CallOptions {
            cancellation: Some(cancellation.clone()),
            ui: Some(ui),
            scope: CallScope::new(move |call| log::in_session(&client, call)),
        };
        // The call runs on a call thread of its own; this task waits for it, keeping its
        // timeout, and passes on the client's cancellation.
        let (sender, mut delivered) = tokio::sync::oneshot::channel();
        let deliver = move |outcome| {
            let _ = sender.send(outcome);
        };
        let pending = match host.start_call(&tool, &params.to_string(), &options, deliver) {
            Ok(pending) => pending,
            Err(outcome) => return Some(result::call_result(&outcome)),
        };
        let mut cancel_passed = false;
        let outcome = loop {
            tokio::select! {
                outcome = &mut delivered => break outcome.unwrap_or_else(|_| pending.lost()),
                () = cancelled.cancelled(), if !cancel_passed => {
                    cancellation.cancel();
                    cancel_passed = true;
                }
                () = tokio::time::sleep_until(pending.next_look().into()) => {
                    if let Some(outcome) = pending.give_up_if_overdue() {
                        // Also this call's questions to the user, which wait on this token.
                        cancellation.cancel();
                        break outcome;
                    }
                }
            }
        };
        drop(pending);
        if Arc::strong_count(&host) == 1 {
            // The task ended during the call (its roots changed, its session closed). Ending
            // it tells its handlers (`task_ended`), which may block: not on the protocol's
            // thread.
            tokio::task::spawn_blocking(move || drop(host));
        }
        protocol_stdio::restore();
        Some(result::call_result(&outcome))
    }
}

impl ServerHandler for McpServer {
    #[allow(deprecated)] // MCP logging: see `ui`.
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_logging()
                .build(),
        )
        .with_server_info(Implementation::new("toolhost", env!("CARGO_PKG_VERSION")))
        .with_instructions(format!(
            "Tools of a coding agent. {}",
            super::describe_workspace(self.host.workspace())
        ))
    }

    #[allow(deprecated)] // MCP logging: see `ui`.
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.client.set_level(request.level);
        Ok(())
    }

    async fn on_initialized(&self, context: rmcp::service::NotificationContext<RoleServer>) {
        self.client
            .connect_once(context.peer.clone(), tokio::runtime::Handle::current());
        announce_tool_changes(&self.host, context.peer);
    }

    async fn on_roots_list_changed(
        &self,
        _context: rmcp::service::NotificationContext<RoleServer>,
    ) {
        // The next call asks for the roots again and runs in a task over them.
        *self.rooted.lock().await = None;
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.map(Value::Object);
        let progress = context.meta.get_progress_token();
        self.client
            .connect_once(context.peer.clone(), tokio::runtime::Handle::current());
        match self
            .call(
                &request.name,
                arguments,
                context.ct.clone(),
                progress,
                &context.peer,
            )
            .await
        {
            Some(result) => Ok(result.into()),
            None => Err(ErrorData::invalid_params(
                format!("Unknown tool: {}", request.name),
                None,
            )),
        }
    }
}
