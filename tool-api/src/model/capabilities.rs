//! What a plugin declares it is and needs (capabilities, among them the host features it
//! needs), and the handler extensions the host sends it: names shared by both sides.

/// The plugin capability (in `export_plugin!(capabilities: [...])`) saying that the plugin's
/// handlers serve names discovered at run time, beyond their specs: the tools of MCP servers,
/// tools declared in the settings. The host then asks its handlers with the handler extension
/// [`DYNAMIC_TOOLS_METHOD`].
pub const DYNAMIC_TOOLS_CAPABILITY: &str = "dynamic_tools";

/// The plugin capability saying that the plugin owns the MCP client of the settings' MCP
/// servers: `toolhost mcp-servers` asks its first handler with the handler extension
/// [`MCP_SERVERS_METHOD`] (payload: a [`DynamicToolsQuery`] without a name).
pub const MCP_SERVERS_CAPABILITY: &str = "mcp_servers";

/// The handler extension answering with the MCP servers, their status and their tools.
pub const MCP_SERVERS_METHOD: &str = "mcp_servers";

/// The handler extension beginning the sign-in to the MCP server named by the query
/// (`toolhost mcp-servers login NAME`): it answers `{"authorization_url", "redirect_uri"}`,
/// the page the user opens, and listens for the redirect that ends it.
pub const MCP_SIGN_IN_METHOD: &str = "mcp_sign_in";

/// The handler extension waiting for the sign-in begun with [`MCP_SIGN_IN_METHOD`] to end:
/// `{"server", "issuer", "scopes"}` once the user signed in, an error otherwise.
pub const MCP_SIGN_IN_WAIT_METHOD: &str = "mcp_sign_in_wait";

/// The handler extension forgetting the user's sign-in to the MCP server named by the query.
pub const MCP_SIGN_OUT_METHOD: &str = "mcp_sign_out";

/// How a plugin names, among its capabilities, a feature it needs of its host
/// (`needs:resources`): a host that does not know the feature refuses to load the plugin and
/// says which one, instead of running it without.
pub const NEEDS_PREFIX: &str = "needs:";

/// The features a host of this tool-api has, which a plugin may need ([`NEEDS_PREFIX`]).
/// Features are only ever added; a plugin that needs none of them loads in every 1.x host.
///
/// - `mcp_result`: a result's MCP structures answered as they are (`ToolContent::mcp_result`).
/// - `ui_services`: the `ui` services (a tool's own forms, sampling, progress with a total,
///   log messages by level).
/// - `resources`, `prompts`, `completion`: what [`RESOURCES_CAPABILITY`],
///   [`PROMPTS_CAPABILITY`] and [`COMPLETION_CAPABILITY`] serve, offered to MCP clients.
/// - `output_schema`: a spec's output schema shown to MCP clients.
/// - `runs_long`: a long tool's calls made tasks for the clients that follow them.
/// - `egress_route`: the `egress.route` service.
/// - `input_required`: a result that needs input first (`mcp_result::InputRequired`), and the
///   answers in the task context (`TaskContext::mcp`).
/// - `client_needs`: the client capabilities a spec says its calls need.
/// - `tools_list`: the `tools.list` service (the served tools, as a model sees them).
/// - `toolset_conditions`: a set entry for some models only ([`TOOLSET_PREFIX`]'s `?`).
pub const HOST_FEATURES: &[&str] = &[
    "mcp_result",
    "ui_services",
    "resources",
    "prompts",
    "completion",
    "output_schema",
    "runs_long",
    "egress_route",
    "input_required",
    "client_needs",
    "tools_list",
    "toolset_conditions",
];

/// The plugin capability saying that its first handler serves MCP resources, as an MCP
/// server does: the handler extensions `resources_list` (answer: MCP's `ListResourcesResult`),
/// `resource_templates_list` (`ListResourceTemplatesResult`), `resources_read` (`{"uri"}`;
/// `ReadResourceResult`, or the error `INVALID_PARAMS` for a URI it does not serve: the host
/// then asks the next such plugin),
/// `resources_subscribe` and `resources_unsubscribe` (`{"uri"}`; `{}`). Each payload is an
/// [`super::OfferRequest`]: those parameters, the task's workspace and the settings.
pub const RESOURCES_CAPABILITY: &str = "resources";

/// The plugin capability saying that its first handler serves MCP prompts: the handler
/// extensions `prompts_list` (MCP's `ListPromptsResult`) and `prompts_get` (`{"name",
/// "arguments"}`; `GetPromptResult`, or `INVALID_PARAMS`), with the workspace as for resources.
pub const PROMPTS_CAPABILITY: &str = "prompts";

/// The plugin capability saying that its first handler completes the arguments of its
/// prompts and resource templates: the handler extension `complete` (MCP's
/// `completion/complete` params; `CompleteResult`).
pub const COMPLETION_CAPABILITY: &str = "completion";

/// The handler extension the host sends to a handler whose session other tools close
/// ([`Handling::closed_by_other_tools`]); payload `{"task_id"}`.
pub const CLOSE_SESSION_METHOD: &str = "close_session";

/// The handler extension every opened handler hears when a task's host goes away; payload
/// `{"task_id"}`.
pub const TASK_ENDED_METHOD: &str = "task_ended";

/// The plugin capability saying that the plugin's specs depend on its environment when it is
/// loaded (files, variables), so the host must open it at every start rather than take its
/// names and specs from the plugin index of an earlier run.
pub const SPECS_FROM_ENVIRONMENT_CAPABILITY: &str = "specs_from_environment";

/// The handler extension listing a handler's run-time tools. Its payload is a
/// [`DynamicToolsQuery`]; its answer `{"tools": [ToolSpec, ...]}`.
pub const DYNAMIC_TOOLS_METHOD: &str = "dynamic_tools";

/// How a plugin names, among its capabilities, a tool set it belongs to: `toolset:NAME` (in
/// every preset of the set) or `toolset:NAME@PRESET` (in that preset), optionally for some
/// models only: `?model~gpt,codex|provider~openai-native` (the model's id or the provider
/// contains one of the texts), `?!...` (none does). A host serves one set (`--tools
/// NAME[:PRESET]`, `[tools] set`); a plugin that names no set is in every one.
pub const TOOLSET_PREFIX: &str = "toolset:";
