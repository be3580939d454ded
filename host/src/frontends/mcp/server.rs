//! The MCP server of one session ([`McpServer`]): its task over the client's roots, its
//! `tools/list`, its calls (each on a call thread of its own, its cancellation a child of the
//! session's) and the protocol's handlers.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ProgressToken, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{Peer, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tool_api::texts;

use super::result;
use super::roots::{client_roots, ROOT_REFUSED};
use super::stdio as protocol_stdio;
use super::ui::{CallUi, ClientLink, McpUi};
use crate::agent::schema::{render, SchemaFormat};
use crate::call::{CallOptions, CallScope};
use crate::plugins::handler::Cancellation;
use crate::ui::Ui;
use crate::{Host, RegisteredTool, RootSpec};

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
    pub(super) client: ClientLink,
    /// Cancelled when the session ends; every call's cancellation is a child of it.
    pub(super) session: Arc<Cancellation>,
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
            scope: CallScope::new(move |call| super::log::in_session(&client, call)),
        };
        // The call runs on a call thread of its own; this task waits for it, keeping its
        // timeout, and passes on the client's cancellation.
        let (sender, mut delivered) = tokio::sync::oneshot::channel();
        let deliver = move |outcome| {
            let _ = sender.send(outcome);
        };
        let pending = match host.start_call(&tool, params, &options, deliver) {
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
            crate::frontends::describe_workspace(self.host.workspace())
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
        super::log::connect_once(
            &self.client,
            context.peer.clone(),
            tokio::runtime::Handle::current(),
        );
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
        super::log::connect_once(
            &self.client,
            context.peer.clone(),
            tokio::runtime::Handle::current(),
        );
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
