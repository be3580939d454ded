//! `toolhost mcp`: every loaded tool served as an MCP server on stdio (rmcp).
//!
//! - `tools/list` gives each registered tool with its JSON-Schema input and the
//!   `readOnlyHint`/`destructiveHint` annotations of its spec (the entries `toolhost schema
//!   --format mcp` prints).
//! - `tools/call` runs [`Host::call`] on tokio's blocking pool (a call blocks for as long as the
//!   tool runs) and answers with the text the model reads plus the result's images. Every tool
//!   failure (bad parameters, policy refusal, denial, timeout, panic) is a result with
//!   `isError: true`; only a name no plugin registered is a JSON-RPC error (`-32602`, "Unknown
//!   tool: NAME"), as the MCP specification's tools page prescribes for unknown tools.
//! - Approvals follow the settings file (nobody is at a terminal to ask) unless `--yes`.
//! - Errors and notifications the user should see reach the client as `notifications/message`
//!   ([`super::mcp_ui`]); a hook's cancel of the task is also said in the result's text.
//! - The protocol owns the client's pipes ([`super::protocol_stdio`]): before any plugin is
//!   loaded, fd 0 is pointed at `/dev/null` and fd 1 at stderr, so a plugin (or a process it
//!   starts) that prints, reads or closes them cannot corrupt or silence the stream. The server
//!   exits when stdin closes.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, ServerInitializeError};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;
use tool_api::texts;

use super::mcp_ui::{ClientLink, McpUi};
use crate::agent::schema::{render, SchemaFormat};
use crate::call::CallOutcome;
use crate::policy::ApprovalMode;
use crate::ui::Ui;
use crate::Host;

/// Arguments of `toolhost mcp`.
#[derive(Debug, clap::Args)]
pub struct McpArgs {
    /// The workspace directory. Default: the current directory.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<std::path::PathBuf>,
    /// Approve everything without asking. Otherwise only what the settings auto-approve runs.
    #[arg(long)]
    pub yes: bool,
    /// Hot swap (the tools list is read anew for every `tools/list`).
    #[command(flatten)]
    pub hot_swap: super::HotSwapArgs,
}

/// Serves every loaded tool over MCP on stdin/stdout until the client closes stdin.
///
/// `build_host` makes the [`Host`] for a workspace (`None`: the current directory), an
/// approval mode and the session's UI; it is called once the standard streams are safe, so
/// that nothing a plugin prints while loading reaches the protocol stream. `Err` is a usage
/// error.
pub fn run(
    args: McpArgs,
    build_host: impl FnOnce(Option<&Path>, ApprovalMode, Box<dyn Ui>) -> Result<Arc<Host>, String>,
) -> Result<ExitCode, String> {
    // One thread drives the protocol; calls run on the blocking pool, so a multi-threaded
    // scheduler would only add wake-ups between threads.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let result = runtime.block_on(async {
        let (input, output) = protocol_stdio::take()
            .map_err(|e| format!("cannot take over stdin/stdout for the protocol: {e}"))?;
        let approval = if args.yes {
            ApprovalMode::ApproveAll
        } else {
            ApprovalMode::DenyUnlessAuto
        };
        let client = ClientLink::default();
        let ui = Box::new(McpUi::new(client.clone()));
        let host = build_host(args.cwd.as_deref(), approval, ui)?;
        let code = serve(
            McpServer::new(host.clone()).with_client(client),
            input,
            output,
        )
        .await;
        host.registry().shutdown();
        Ok(code)
    });
    // A call still running when the client left must not hold the exit: its thread is
    // abandoned (the tool has been told nothing; the process ends).
    runtime.shutdown_background();
    result
}

/// Runs the protocol on `input`/`output` until the client closes `input`.
async fn serve(
    server: McpServer,
    input: protocol_stdio::Reader,
    output: protocol_stdio::Writer,
) -> ExitCode {
    let client = server.client.clone();
    let running = match server.serve((input, output)).await {
        Ok(running) => running,
        Err(ServerInitializeError::ConnectionClosed(_)) => {
            tracing::info!(target: "toolhost::mcp", "the client closed stdin before initializing");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            tracing::error!(target: "toolhost::mcp", "MCP initialization failed: {e}");
            return ExitCode::FAILURE;
        }
    };
    client.connect(running.peer().clone(), tokio::runtime::Handle::current());
    match running.waiting().await {
        Ok(reason) => {
            tracing::info!(target: "toolhost::mcp", "MCP session ended: {reason:?}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            tracing::error!(target: "toolhost::mcp", "the MCP service failed: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The MCP server over one [`Host`].
#[derive(Clone)]
pub struct McpServer {
    host: Arc<Host>,
    /// Where the host's [`McpUi`] sends events, and the level the client asked for.
    client: ClientLink,
}

impl McpServer {
    /// A server for the tools `host` has loaded.
    pub fn new(host: Arc<Host>) -> Self {
        Self {
            host,
            client: ClientLink::default(),
        }
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

    /// Runs one `tools/call` on the host; `None` when no tool has that name.
    pub async fn call(&self, name: &str, arguments: Option<Value>) -> Option<CallToolResult> {
        self.host.lookup(name)?;
        let params = arguments.unwrap_or_else(|| Value::Object(Default::default()));
        let params = params.to_string();
        let host = self.host.clone();
        let tool = name.to_string();
        let joined = tokio::task::spawn_blocking(move || host.call(&tool, &params)).await;
        protocol_stdio::restore();
        Some(match joined {
            Ok(outcome) => call_result(&outcome),
            // Host::call turns every tool failure into an outcome; reaching this is a host bug,
            // still reported to the model as a failed call rather than a protocol error.
            Err(e) => CallToolResult::error(vec![ContentBlock::text(texts::tool_error(&format!(
                "toolhost failed while running {name}: {e}"
            )))]),
        })
    }
}

/// A call's outcome as an MCP result: the model's text, then the images.
fn call_result(outcome: &CallOutcome) -> CallToolResult {
    let text = outcome.unattended_text();
    let images = outcome.images();
    let mut content = Vec::with_capacity(1 + images.len());
    if !text.is_empty() || images.is_empty() {
        content.push(ContentBlock::text(text));
    }
    content.extend(
        images
            .into_iter()
            .map(|image| ContentBlock::image(image.data, image.media_type)),
    );
    if outcome.is_error() {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    }
}

impl ServerHandler for McpServer {
    #[allow(deprecated)] // MCP logging: see `super::mcp_ui`.
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_logging()
                .build(),
        )
        .with_server_info(Implementation::new("toolhost", env!("CARGO_PKG_VERSION")))
        .with_instructions(format!(
            "Tools of a coding agent. Relative paths are resolved against the workspace {}.",
            self.host.workspace().cwd().display()
        ))
    }

    #[allow(deprecated)] // MCP logging: see `super::mcp_ui`.
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.client.set_level(request.level);
        Ok(())
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
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.map(Value::Object);
        match self.call(&request.name, arguments).await {
            Some(result) => Ok(result.into()),
            None => Err(ErrorData::invalid_params(
                format!("Unknown tool: {}", request.name),
                None,
            )),
        }
    }
}

/// The client's stdin and stdout, taken over for the protocol alone
/// ([`super::protocol_stdio`]), as the async streams rmcp reads and writes.
#[cfg(unix)]
mod protocol_stdio {
    use std::fs::File;
    use std::io;
    use std::os::unix::fs::FileTypeExt;

    use tokio::io::{AsyncRead, AsyncWrite};
    use tokio::net::unix::pipe;

    /// The protocol's input.
    pub type Reader = Box<dyn AsyncRead + Send + Unpin>;
    /// The protocol's output.
    pub type Writer = Box<dyn AsyncWrite + Send + Unpin>;

    /// Moves the protocol onto private copies of fds 0 and 1 (see
    /// [`crate::frontends::protocol_stdio::take`]). Must run inside the runtime: pipes register
    /// with its reactor.
    pub fn take() -> io::Result<(Reader, Writer)> {
        let (input, output) = crate::frontends::protocol_stdio::take()?;
        Ok((reader(input)?, writer(output)?))
    }

    /// Points the standard streams away from the protocol again if a plugin closed them.
    pub fn restore() {
        crate::frontends::protocol_stdio::restore();
    }

    /// A pipe (how MCP clients start servers) is read on the reactor; anything else (a file, a
    /// terminal) on the blocking pool.
    fn reader(file: File) -> io::Result<Reader> {
        if is_fifo(&file) {
            Ok(Box::new(pipe::Receiver::from_file(file)?))
        } else {
            Ok(Box::new(tokio::fs::File::from_std(file)))
        }
    }

    fn writer(file: File) -> io::Result<Writer> {
        if is_fifo(&file) {
            Ok(Box::new(pipe::Sender::from_file(file)?))
        } else {
            Ok(Box::new(tokio::fs::File::from_std(file)))
        }
    }

    fn is_fifo(file: &File) -> bool {
        file.metadata().is_ok_and(|m| m.file_type().is_fifo())
    }
}

/// Elsewhere the standard streams are used as they are.
#[cfg(not(unix))]
mod protocol_stdio {
    use std::io;

    use tokio::io::{AsyncRead, AsyncWrite};

    /// The protocol's input.
    pub type Reader = Box<dyn AsyncRead + Send + Unpin>;
    /// The protocol's output.
    pub type Writer = Box<dyn AsyncWrite + Send + Unpin>;

    /// The standard streams.
    pub fn take() -> io::Result<(Reader, Writer)> {
        let (input, output) = rmcp::transport::stdio();
        Ok((Box::new(input), Box::new(output)))
    }

    /// Nothing to restore.
    pub fn restore() {}
}
