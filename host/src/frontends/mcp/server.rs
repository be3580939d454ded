//! The MCP server of one session ([`McpServer`]): its task over the client's roots, its
//! `tools/list` and the protocol's handlers; its calls are [`super::calls`]'.

use std::sync::Arc;

use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CancelTaskParams, CompleteRequestParams,
    CompleteResult, GetPromptRequestParams, GetPromptResponse, GetTaskParams, GetTaskResult,
    Implementation, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, PromptsCapability, ReadResourceRequestParams,
    ReadResourceResponse, ResourcesCapability, ServerCapabilities, ServerConfig,
    SubscribeRequestParams, SubscriptionFilter, Tool, UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{Peer, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::json;
use serde_json::Value;
use tokio::sync::broadcast;
use tool_api::model::{COMPLETION_CAPABILITY, PROMPTS_CAPABILITY, RESOURCES_CAPABILITY};

use super::roots::{client_roots, root_specs, ROOT_REFUSED};
use super::shared::Shared;
use super::ui::{ClientLink, McpUi};
use crate::agent::schema::{render, SchemaFormat};
use crate::plugins::handler::Cancellation;
use crate::{Host, RegisteredTool, RootSpec};

/// How long a client may keep the tool list (`ttlMs`) when the host does not watch its
/// libraries: five minutes.
const TOOLS_TTL_MS: u64 = 300_000;

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

/// The MCP server of one session over one [`Host`] (the session's task, or, over HTTP, the
/// plugins' base whose task the session makes on its first call).
#[derive(Clone)]
pub struct McpServer {
    pub(super) host: Arc<Host>,
    /// Where the host's [`McpUi`] sends events, and the level the client asked for.
    pub(super) client: ClientLink,
    /// Cancelled when the session ends; every call's cancellation is a child of it.
    pub(super) session: Arc<Cancellation>,
    /// Whether the workspace is the client's roots (no `--cwd` was given).
    follow_roots: bool,
    /// Whether calls run in a task of the session's own, made on its first call (`--http`;
    /// `host` is then the base).
    session_task: bool,
    /// The session's task (over the client's roots, when followed), once made; `None` again
    /// when the roots change.
    rooted: Arc<tokio::sync::Mutex<Option<Arc<Host>>>>,
    /// What every server of the process shares.
    pub(super) shared: Arc<Shared>,
    /// How long a client may keep the tool list (`ttlMs`).
    tools_ttl_ms: u64,
}

impl McpServer {
    /// A server for the tools `host` has loaded, its calls in `host`'s task.
    pub fn new(host: Arc<Host>) -> Self {
        let shared = Shared::new(&host, host.settings().limits.ask_timeout());
        Self {
            host,
            client: ClientLink::default(),
            session: Arc::default(),
            follow_roots: false,
            session_task: false,
            rooted: Arc::default(),
            shared,
            tools_ttl_ms: TOOLS_TTL_MS,
        }
    }

    /// A server of one HTTP session over the plugins of `base`, its calls in a task of the
    /// session's own (2026-07-28 requests: in the conversation task of `shared`).
    pub fn for_session(base: Arc<Host>, shared: Arc<Shared>) -> Self {
        Self {
            host: base,
            client: ClientLink::default(),
            session: Arc::default(),
            follow_roots: false,
            session_task: true,
            rooted: Arc::default(),
            shared,
            tools_ttl_ms: TOOLS_TTL_MS,
        }
    }

    /// The same server for a host that watches its libraries (`--watch`): the tool list may
    /// change at any time, so clients keep none (`ttlMs` 0).
    pub fn watching(self, watched: bool) -> Self {
        Self {
            tools_ttl_ms: if watched { 0 } else { TOOLS_TTL_MS },
            ..self
        }
    }

    /// The same server, its workspace the client's roots when it offers them (no `--cwd`).
    pub fn following_roots(self, follow: bool) -> Self {
        Self {
            follow_roots: follow,
            ..self
        }
    }

    /// The task a call runs in: the session's host, a task of the session's own (`--http`),
    /// or, following the client's roots, a task over them (asked for with `roots/list` on the
    /// first call after a change). A `modern` (2026-07-28) request has no session: over HTTP it
    /// runs in the process's conversation task, and its client is not asked for roots (a
    /// request of the server's own is not allowed then). `/` is never an implicit workspace.
    pub(super) async fn task(
        &self,
        peer: &Peer<RoleServer>,
        modern: bool,
    ) -> Result<Arc<Host>, String> {
        if modern && self.session_task {
            return self.shared.conversation(&self.host).await;
        }
        if !self.follow_roots && !self.session_task {
            return Ok(self.host.clone());
        }
        let mut rooted = self.rooted.lock().await;
        if let Some(task) = rooted.as_ref() {
            return Ok(task.clone());
        }
        let dirs = if self.follow_roots && !modern {
            client_roots(peer).await?
        } else {
            Vec::new()
        };
        let task = if dirs.is_empty() {
            if self.follow_roots && self.host.workspace().cwd() == std::path::Path::new("/") {
                return Err(ROOT_REFUSED.to_string());
            }
            if self.session_task {
                let workspace =
                    crate::permissions::Workspace::with_roots(&root_specs(self.host.workspace()))
                        .map_err(|e| format!("cannot open the workspace: {e}"))?;
                self.host.new_task(crate::TaskConfig {
                    workspace,
                    ui: Box::new(McpUi::new(self.client.clone())),
                    approval: self.host.approval_mode(),
                })
            } else {
                self.host.clone()
            }
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
        as_mcp_tools(&specs)
    }

    /// The tool called `name`: a loaded plugin's at once; a run-time tool (an MCP server's,
    /// whose lookup may start that server) is looked up on the blocking pool, so that the
    /// protocol goes on meanwhile (pings, cancellations, other calls).
    pub(super) async fn find_tool(&self, name: &str) -> Option<Arc<RegisteredTool>> {
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
}

impl ServerHandler for McpServer {
    #[allow(deprecated)] // MCP logging: see `ui`.
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_logging()
            .enable_tasks()
            .build();
        if self.offers(RESOURCES_CAPABILITY) {
            let mut offered = ResourcesCapability::default();
            offered.subscribe = Some(true);
            capabilities.resources = Some(offered);
        }
        if self.offers(PROMPTS_CAPABILITY) {
            capabilities.prompts = Some(PromptsCapability::default());
        }
        if self.offers(COMPLETION_CAPABILITY) {
            capabilities.completions = Some(Default::default());
        }
        ServerConfig::new(capabilities)
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
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        // 2026-07-28 has no `logging/setLevel`: each request names its level in `_meta`.
        if super::modern::is_modern(&context) {
            return Err(ErrorData::method_not_found::<
                rmcp::model::SetLevelRequestMethod,
            >());
        }
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

    /// A loaded plugin's tool by name, for the HTTP transport's check of its `Mcp-Param-*`
    /// headers against the arguments (SEP-2243: parameters marked `x-mcp-header`).
    fn get_tool(&self, name: &str) -> Option<Tool> {
        let registry = self.host.registry();
        let tool = registry.get(name)?;
        as_mcp_tools(&[&tool.spec]).pop()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // The list is the same for every client and changes only by a hot swap (which
        // `listChanged` announces): public, and cached for a while unless the host watches its
        // libraries.
        Ok(ListToolsResult::with_all_items(self.tools())
            .with_ttl_ms(self.tools_ttl_ms)
            .with_cache_scope(CacheScope::Public))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let items = self
            .listed(RESOURCES_CAPABILITY, "resources_list", "resources")
            .await?;
        listing(json!({"resources": items}))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let items = self
            .listed(
                RESOURCES_CAPABILITY,
                "resource_templates_list",
                "resourceTemplates",
            )
            .await?;
        listing(json!({"resourceTemplates": items}))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri.clone();
        let answer = self
            .first_answer(RESOURCES_CAPABILITY, "resources_read", json!({"uri": uri}))
            .await
            .map_err(|mut e| {
                // The resource's URI travels with a "not found" (SEP-2164).
                if e.code == rmcp::model::ErrorCode::INVALID_PARAMS {
                    e.data = Some(json!({"uri": uri}));
                }
                e
            })?;
        Ok(ReadResourceResponse::Complete(listing(answer)?))
    }

    #[allow(deprecated)] // resources/subscribe is 2025-11-25's; rmcp refuses it for 2026-07-28.
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let payload = json!({"uri": request.uri});
        self.first_answer(RESOURCES_CAPABILITY, "resources_subscribe", payload)
            .await
            .map(drop)
    }

    #[allow(deprecated)] // as `subscribe`.
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let payload = json!({"uri": request.uri});
        self.first_answer(RESOURCES_CAPABILITY, "resources_unsubscribe", payload)
            .await
            .map(drop)
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let items = self
            .listed(PROMPTS_CAPABILITY, "prompts_list", "prompts")
            .await?;
        listing(json!({"prompts": items}))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        self.answer_prompt(request, &context).await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let payload = serde_json::to_value(&request)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let answer = self
            .first_answer(COMPLETION_CAPABILITY, "complete", payload)
            .await?;
        listing(answer)
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        Ok(GetTaskResult::new(
            self.shared.tasks.get_task(&request.task_id)?,
        ))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.shared
            .tasks
            .update_task(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.shared.tasks.cancel_task(&request.task_id)
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.supported_by(&self.get_info().capabilities))
    }

    /// A 2026-07-28 client's `subscriptions/listen`: `notifications/tools/list_changed` after
    /// every hot swap, until the client ends it.
    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let mut changes = self.shared.tool_changes();
        loop {
            tokio::select! {
                () = context.cancelled() => return Ok(()),
                changed = changes.recv() => match changed {
                    Ok(()) | Err(broadcast::error::RecvError::Lagged(_)) => {
                        if let Err(e) = context.sink().notify_tool_list_changed().await {
                            tracing::debug!(target: "toolhost::mcp", "tools/list_changed not sent: {e}");
                            return Ok(());
                        }
                    }
                    Err(broadcast::error::RecvError::Closed) => return Ok(()),
                },
            }
        }
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.answer_call(request, context).await
    }
}

/// `specs` as MCP lists its tools (a spec whose input schema is not an object is left out).
fn as_mcp_tools(specs: &[&tool_api::model::ToolSpec]) -> Vec<Tool> {
    let rendered = render(specs, SchemaFormat::Mcp);
    let entries: Vec<Value> = serde_json::from_str(&rendered).unwrap_or_default();
    entries
        .into_iter()
        .filter_map(|entry| {
            let name = entry["name"].as_str().unwrap_or_default().to_string();
            serde_json::from_value::<Tool>(entry)
                .map_err(|e| {
                    tracing::warn!(target: "toolhost::mcp", "tool {name} is not served over MCP: {e}");
                })
                .ok()
        })
        .collect()
}

/// A plugin's answer as the MCP result it must be (`resultType: "complete"`, which rmcp takes
/// out again for a client older than 2026-07-28); a malformed one is an internal error naming
/// what is wrong.
fn listing<T: serde::de::DeserializeOwned>(mut answer: Value) -> Result<T, ErrorData> {
    super::result::complete(&mut answer);
    serde_json::from_value(answer).map_err(|e| {
        ErrorData::internal_error(
            format!("a plugin answered with a malformed result: {e}"),
            None,
        )
    })
}
