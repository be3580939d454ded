//! The JSON payloads that cross the boundary inside the ABI's strings.
//!
//! These are ordinary serde types. Fields may be added freely (with `#[serde(default)]`); the
//! ABI does not change when they do.

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub mod access;
mod capabilities;
mod mcp_input;
mod offers;
pub use capabilities::*;
pub use mcp_input::McpInput;
pub use offers::OfferRequest;

/// What a tool looks like to the host and to the model: one entry per tool name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The tool's name, as the model calls it.
    pub name: String,
    /// The model-facing description.
    pub description: String,
    /// JSON Schema of the parameters (an object schema; `required` is checked by the host).
    pub input_schema: Value,
    /// Whether the handler implements `handle_partial` for streaming calls.
    #[serde(default)]
    pub partial: bool,
    /// When set, the host asks for approval in this category before `execute`, using the path
    /// parameters to decide between inside and outside the workspace. When unset, the tool asks
    /// for approval itself (or needs none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalCategory>,
    /// Parameters that hold paths: the host checks `.clineignore` and the workspace boundary on them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub path_params: Vec<String>,
    /// The tool only reads (MCP's `readOnlyHint`).
    #[serde(default)]
    pub read_only: bool,
    /// The tool may destroy data (MCP's `destructiveHint`).
    #[serde(default)]
    pub destructive: bool,
    /// A title for people (MCP's `title`); without one, hosts derive it from the name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Calling it again with the same arguments changes nothing more (MCP's `idempotentHint`).
    #[serde(default)]
    pub idempotent: bool,
    /// It reaches what lies beyond the workspace and the host's policies: the web, a browser,
    /// another MCP server (MCP's `openWorldHint`).
    #[serde(default)]
    pub open_world: bool,
    /// How the host treats the tool's calls beyond their parameters.
    #[serde(default, skip_serializing_if = "Handling::is_default")]
    pub handling: Handling,
    /// JSON Schema of the `structuredContent` the tool's results carry (MCP's
    /// `outputSchema`; see [`crate::sdk::mcp_result::McpResult::structured`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
}

/// How the host treats a tool's calls beyond their parameters: what a plugin declares so that
/// the host never needs to know a tool by its name. Every default is the common case.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Handling {
    /// PreToolUse hooks do not run for it (Cline exempts the tools that neither read nor change
    /// anything themselves: the interaction tools).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub skips_pre_tool_use: bool,
    /// PostToolUse hooks do not run after it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub skips_post_tool_use: bool,
    /// Other names a parameter is accepted under, `alias → parameter`; an alias is used only
    /// when the parameter itself is absent.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub param_aliases: std::collections::BTreeMap<String, String>,
    /// Parameters whose value in an XML tool call is everything between the first opening and
    /// the last closing tag (a file's content may itself contain the closing tag).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub raw_xml_params: Vec<String>,
    /// The handler keeps a session for the task (a browser) that the host closes, with the
    /// handler extension `close_session`, before any other tool of the task runs.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub closed_by_other_tools: bool,
    /// The tools it calls through `invoke_tool` run as a subagent's calls: they never ask the
    /// user, and what is not auto-approved is denied.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub calls_as_subagent: bool,
    /// Its calls may run long (a command, a page, subagents): a client that can follow a task
    /// (MCP's tasks extension) gets one for each call instead of waiting for the result.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub runs_long: bool,
    /// The MCP client capabilities its calls need (`sampling`, `elicitation`, `roots`, or
    /// `tasks` for the tasks extension: every call a task): `toolhost mcp` refuses a call from
    /// a client that did not declare one (MCP's error -32021, naming it) rather than run it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub client_needs: Vec<String>,
    /// It accepts more shapes of parameters than its schema shows (Cline's SDK tools take a
    /// path where the schema asks for a list of files) and checks them itself: the host does
    /// not refuse a call for a `required` parameter it lacks.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub checks_own_params: bool,
}

impl Handling {
    /// Whether nothing differs from the common case.
    pub fn is_default(&self) -> bool {
        self == &Self::default()
    }
}

/// Cline's auto-approval categories.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalCategory {
    /// Reading files (and listing, searching).
    Read,
    /// Creating or changing files.
    Edit,
    /// A command the model marked as safe.
    SafeCommand,
    /// Any command.
    Command,
    /// Driving the browser.
    Browser,
    /// Fetching from or searching the web.
    Web,
    /// Using an MCP server.
    Mcp,
}

impl ApprovalCategory {
    /// The category's name in settings files and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Edit => "edit",
            Self::SafeCommand => "safe_command",
            Self::Command => "command",
            Self::Browser => "browser",
            Self::Web => "web",
            Self::Mcp => "mcp",
        }
    }
}

/// Plan or act mode.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Planning: file-modifying tools may be restricted.
    Plan,
    /// Acting.
    #[default]
    Act,
}

/// A workspace root.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkspaceRoot {
    /// The root's name (its directory name unless configured).
    pub name: String,
    /// Its absolute path.
    pub path: String,
    /// Its `.clineignore` rules (with `!include` lines expanded), when it has any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clineignore: Option<String>,
}

/// The per-call task context (Cline's TaskConfig, as data). Built by the host for every call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskContext {
    /// The task's id.
    pub task_id: String,
    /// The primary working directory (the first workspace root), absolute.
    pub cwd: String,
    /// All workspace roots; the first is `cwd`.
    #[serde(default)]
    pub workspace_roots: Vec<WorkspaceRoot>,
    /// Plan or act.
    #[serde(default)]
    pub mode: Mode,
    /// Whether the call runs inside a subagent (no UI questions, everything pre-approved).
    #[serde(default)]
    pub is_subagent: bool,
    /// Non-interactive "yolo" mode: nobody answers questions.
    #[serde(default)]
    pub yolo: bool,
    /// Whether several tools may run in one assistant message.
    #[serde(default)]
    pub parallel_tool_calling: bool,
    /// The host's verdicts on this call's path parameters, made just before the call: a
    /// plugin's `check_path` of one of these paths gets its verdict without asking the host.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub path_verdicts: Vec<PathVerdict>,
    /// What the MCP client sent with the call, for a call made through `toolhost mcp`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<McpInput>,
}

/// One block of a tool's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// MIME type, e.g. `image/png`.
        media_type: String,
        /// Base64 data.
        data: String,
    },
}

/// A tool's result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolContent {
    /// The blocks, in order: what the model reads.
    pub content: Vec<ContentBlock>,
    /// The tool ran and reports a failure with this content (an MCP server's `isError`): the
    /// host treats the call as failed (kind `failed`, the content's text as its message).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// The same result as an MCP `tools/call` result (`content` blocks with their annotations,
    /// resource links and embedded resources, `structuredContent`), for a tool that relays an
    /// MCP server's answer: `toolhost mcp` answers with it, everyone else reads `content`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_result: Option<Value>,
}

impl ToolContent {
    /// A result of one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::blocks(vec![ContentBlock::Text { text: text.into() }])
    }

    /// A result of these blocks.
    pub fn blocks(content: Vec<ContentBlock>) -> Self {
        Self {
            content,
            ..Self::default()
        }
    }

    /// Adds a text block first (`at_start`) or last, in [`ToolContent::mcp_result`] too.
    pub fn add_text(&mut self, text: String, at_start: bool) {
        if let Some(blocks) = self
            .mcp_result
            .as_mut()
            .and_then(|result| result.get_mut("content"))
            .and_then(Value::as_array_mut)
        {
            let block = serde_json::json!({"type": "text", "text": text});
            if at_start {
                blocks.insert(0, block);
            } else {
                blocks.push(block);
            }
        }
        let block = ContentBlock::Text { text };
        if at_start {
            self.content.insert(0, block);
        } else {
            self.content.push(block);
        }
    }

    /// All text blocks joined with blank lines: the text the model reads.
    pub fn joined_text(&self) -> String {
        let texts: Vec<&str> = self
            .content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text { text } => Some(text.as_str()),
                ContentBlock::Image { .. } => None,
            })
            .collect();
        texts.join("\n\n")
    }
}

/// A request for approval, sent by a tool (or by the host for tools with a declared category).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRequest {
    /// The tool asking.
    pub tool: String,
    /// The approval category.
    pub category: ApprovalCategory,
    /// The path the operation touches, if any; decides inside vs. outside the workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// What to show the user (Cline's ask text or ClineSayTool JSON).
    pub message: String,
}

/// The answer to an [`ApprovalRequest`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalDecision {
    /// Whether the operation may go ahead.
    pub approved: bool,
    /// Text the user added, to be passed on to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
    /// When the user did not refuse: who did (a rule, nobody to ask, a subagent's limits)
    /// and the setting that would allow it. The tool's result says this instead of Cline's
    /// "The user denied this operation." ([`ApprovalDecision::denial`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<String>,
}

impl ApprovalDecision {
    /// What the model is told of a refusal: [`ApprovalDecision::refusal`] when the user was
    /// not the one who refused, else `denial` (the tool's Cline text) with the user's
    /// feedback.
    pub fn denial(&self, denial: &str) -> String {
        match &self.refusal {
            Some(refusal) => refusal.clone(),
            None => crate::texts::denied_with_feedback(denial, self.feedback.as_deref()),
        }
    }
}

/// Which button the user pressed (Cline's ask responses).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum AskResponse {
    /// Yes / approve / primary button.
    #[serde(rename = "yesButtonClicked")]
    Yes,
    /// No / reject.
    #[serde(rename = "noButtonClicked")]
    No,
    /// The user typed a message.
    #[serde(rename = "messageResponse")]
    Message,
}

/// The user's answer to an ask.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AskReply {
    /// The button or message.
    pub response: AskResponse,
    /// The text the user typed, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// What the host knows about a path, relative to the workspace and its policies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PathVerdict {
    /// The path as given.
    pub path: String,
    /// The path made absolute against the workspace (no symlinks resolved).
    pub absolute: String,
    /// Where the path really leads: symlinks resolved as far as the path exists.
    pub resolved: String,
    /// Whether it leads inside a workspace root (a symlink out of the workspace is outside).
    pub inside_workspace: bool,
    /// Whether `.clineignore` blocks it: the path as typed, or the file it leads to.
    pub ignored: bool,
    /// The path for display: relative to cwd when inside it, absolute otherwise.
    pub display: String,
    /// Whether the path goes through a magic link (`/proc/*/root`, `/dev/fd/*`...) or a
    /// symbolic link loop: refused outright.
    #[serde(default)]
    pub refused: bool,
    /// The `.clineignore` rule that blocks it, when one does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore_rule: Option<String>,
    /// Where it really leads, for people, when that is not where it seems to lead (a symbolic
    /// link on the way): relative to cwd inside it, else absolute with the home directory as
    /// `~`. Approval questions show it ([`PathVerdict::shown`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leads_to: Option<String>,
    /// What the target was reached from when the verdict was made (the target itself, or the
    /// directory that will hold it): the workspace capability reaches the target through this
    /// same file or directory or not at all. `None` from a host that pins nothing (an older
    /// one): the path is then resolved again and held to its real path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anchor: Option<PathAnchor>,
}

impl PathVerdict {
    /// The path for an approval question: its display, and where it really leads when that
    /// differs (`build/keys → ~/.ssh/keys`).
    pub fn shown(&self) -> String {
        match &self.leads_to {
            Some(target) => format!("{} → {target}", self.display),
            None => self.display.clone(),
        }
    }
}

/// What a verdict's target is reached from, by identity: the deepest existing component of
/// the path where it really leads, when the verdict was made (the target itself when it
/// exists, else the deepest existing directory above it). The target,
/// [`PathVerdict::resolved`], is this or below it, reached without following any symbolic link.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PathAnchor {
    /// Its real path when the verdict was made.
    pub path: String,
    /// Its device (`st_dev`).
    pub device: u64,
    /// Its inode (`st_ino`).
    pub inode: u64,
}

/// What the host asks a handler that serves run-time tools.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DynamicToolsQuery {
    /// Only this name is wanted (the host is resolving a call): a handler may then skip the
    /// work the other names would cost. `None`: every tool (a listing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The host's settings, as a JSON document (the TOML file's tables as objects).
    #[serde(default)]
    pub settings: Value,
    /// Where the handler's own connections made to answer (an MCP server it starts to list
    /// its tools) go, so that the host's egress policy decides and logs them; `None` from a
    /// host without an egress proxy. Its questions are asked of nobody.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub egress: Option<EgressRoute>,
}

/// Where a plugin's HTTP client sends its requests so that the host's egress policy decides
/// them: the host's egress proxy and the `Proxy-Authorization` value that names the grant
/// they are decided under (the answer of the `egress.route` service, see
/// [`crate::sdk::Ctx::egress_route`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EgressRoute {
    /// The proxy, `http://127.0.0.1:PORT`.
    pub url: String,
    /// The `Proxy-Authorization` value of every request.
    pub authorization: String,
}

impl EgressRoute {
    /// The `Proxy-Authorization` value of a client whose every request goes to `endpoint`,
    /// a URL the user configured for the plugin (an MCP server's): the policy counts that
    /// endpoint as allowed, exactly, as it does the `configured` URLs of `egress.route`.
    pub fn authorization_for(&self, endpoint: &str) -> String {
        format!("{} {}", self.authorization, endpoint.trim())
    }
}

impl DynamicToolsQuery {
    /// The setting at a dotted key (`mcp.settings_file`).
    pub fn setting(&self, key: &str) -> Option<&Value> {
        setting_at(&self.settings, key)
    }

    /// Whether `name` is wanted by this query.
    pub fn wants(&self, name: &str) -> bool {
        self.name.as_deref().is_none_or(|wanted| wanted == name)
    }
}

/// The value at a dotted key (`mcp.settings_file`) of a settings document; `None` for a
/// missing or null one.
fn setting_at<'a>(settings: &'a Value, key: &str) -> Option<&'a Value> {
    key.split('.')
        .try_fold(settings, |value, part| value.get(part))
        .filter(|value| !value.is_null())
}
