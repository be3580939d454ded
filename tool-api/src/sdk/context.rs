//! [`Ctx`]: the host services of one call, with Rust types.

use std::sync::OnceLock;
use std::time::Duration;

use abi_stable::std_types::{RErr, ROk, RSome, RStr};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::abi::{HostRef, ToolError, ToolErrorKind};
use crate::model::{
    ApprovalCategory, ApprovalDecision, ApprovalRequest, AskReply, EgressRoute, PathVerdict,
    TaskContext, ToolContent,
};
use crate::workspace::Workspace;

/// The user's answer to [`Ctx::propose`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Proposal {
    /// Accepted as it is.
    Accepted,
    /// The user typed this instead (already shown as `user_feedback`).
    Feedback(String),
    /// Nobody can answer (no terminal, no client that asks).
    NobodyToAsk,
}

/// The host services for one call.
pub struct Ctx<'a> {
    host: HostRef<'a>,
    task_id: String,
    /// The task's roots, for [`Ctx::workspace`], and the verdicts the host sent with the call.
    roots: TaskContext,
    workspace: OnceLock<Workspace>,
}

fn decode<T: DeserializeOwned>(what: &str, json: &str) -> Result<T, ToolError> {
    serde_json::from_str(json).map_err(|e| {
        ToolError::new(
            ToolErrorKind::INTERNAL,
            format!("invalid {what} from the host: {e}"),
        )
    })
}

fn encode<T: serde::Serialize>(value: &T) -> Result<String, ToolError> {
    serde_json::to_string(value).map_err(|e| {
        ToolError::new(
            ToolErrorKind::INTERNAL,
            format!("cannot encode a request: {e}"),
        )
    })
}

/// Cline's auto-approval rule over the `[auto_approve]` settings (`setting` looks a key up, e.g.
/// `read_files`; an unset key has the host's default, only `read_files` being on): a category's
/// setting grants operations inside the workspace, its `_externally` companion extends that to
/// outside, and only on top of it; `command` needs `execute_safe_commands` and
/// `execute_all_commands`; web, browser and MCP settings cover both.
pub fn auto_approves(
    setting: impl Fn(&str) -> Option<bool>,
    category: ApprovalCategory,
    inside_workspace: bool,
) -> bool {
    let on = |key: &str| setting(key).unwrap_or(key == "read_files");
    let (local, external) = match category {
        ApprovalCategory::Read => (on("read_files"), on("read_files_externally")),
        ApprovalCategory::Edit => (on("edit_files"), on("edit_files_externally")),
        ApprovalCategory::SafeCommand => return on("execute_safe_commands"),
        ApprovalCategory::Command => {
            return on("execute_safe_commands") && on("execute_all_commands")
        }
        ApprovalCategory::Browser => return on("use_browser"),
        ApprovalCategory::Web => return on("use_web"),
        ApprovalCategory::Mcp => return on("use_mcp"),
    };
    local && (inside_workspace || external)
}

/// What the user answered to a form of the tool's own ([`Ctx::elicit`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Elicited {
    /// `accept`, `decline` or `cancel`.
    pub action: String,
    /// What the form holds (accepted forms).
    pub content: Value,
}

impl<'a> Ctx<'a> {
    /// Wraps the host services of a call.
    pub fn new(host: HostRef<'a>, task: &TaskContext) -> Self {
        Self {
            host,
            task_id: task.task_id.clone(),
            roots: TaskContext {
                cwd: task.cwd.clone(),
                workspace_roots: task.workspace_roots.clone(),
                path_verdicts: task.path_verdicts.clone(),
                is_subagent: task.is_subagent,
                ..TaskContext::default()
            },
            workspace: OnceLock::new(),
        }
    }

    /// The workspace capability of this call: confined access to the files of the task's
    /// roots, with `.clineignore` applied to what is really opened. Reach a file through the
    /// verdict the host gave for its path ([`Ctx::check_path`]):
    ///
    /// ```no_run
    /// # use tool_api::sdk::prelude::*;
    /// # fn read(ctx: &Ctx<'_>, path: &str) -> Result<Vec<u8>, ToolError> {
    /// let verdict = ctx.check_path(path)?;
    /// let mut file = ctx.workspace().open_file(&verdict)?;
    /// Ok(file.read_all(1 << 20)?)
    /// # }
    /// ```
    pub fn workspace(&self) -> &Workspace {
        self.workspace
            .get_or_init(|| Workspace::from_context(&self.roots))
    }

    /// Sends a complete UI event.
    pub fn say(&self, kind: &str, text: &str) {
        self.host.say(RStr::from(kind), RStr::from(text), false);
    }

    /// Sends a partial (streaming) UI event.
    pub fn say_partial(&self, kind: &str, text: &str) {
        self.host.say(RStr::from(kind), RStr::from(text), true);
    }

    /// Asks the user; `UNAVAILABLE` when nobody can answer.
    pub fn ask(&self, kind: &str, text: &str) -> Result<AskReply, ToolError> {
        match self.host.ask(RStr::from(kind), RStr::from(text), false) {
            ROk(json) => decode("ask reply", json.as_str()),
            RErr(e) => Err(e),
        }
    }

    /// Sends a partial ask (a streaming preview); its answer is ignored.
    pub fn ask_partial(&self, kind: &str, text: &str) {
        let _ = self.host.ask(RStr::from(kind), RStr::from(text), true);
    }

    /// Whether the settings auto-approve an operation of `category` (inside the workspace or
    /// not): the `[auto_approve]` rule the host applies, read from the settings the host shares
    /// (see [`auto_approves`]); a subagent's calls always are. The host's `--yes` is not visible
    /// to plugins, so this is for choosing how to preview a streaming call (Cline's partial
    /// `say` for what will run unasked, a partial `ask` for what will be asked); the real
    /// decision is the host's, made when the complete call runs.
    pub fn auto_approves(&self, category: ApprovalCategory, inside_workspace: bool) -> bool {
        self.roots.is_subagent
            || auto_approves(
                |key| self.setting::<bool>(&format!("auto_approve.{key}")),
                category,
                inside_workspace,
            )
    }

    /// Applies the approval policy to a request.
    pub fn request_approval(
        &self,
        request: &ApprovalRequest,
    ) -> Result<ApprovalDecision, ToolError> {
        let json = encode(request)?;
        match self.host.request_approval(RStr::from(json.as_str())) {
            ROk(json) => decode("approval decision", json.as_str()),
            RErr(e) => Err(e),
        }
    }

    /// Asks for approval and turns a refusal into the tool's result: `DENIED` with Cline's
    /// denial text and the user's feedback ([`crate::texts::denied_with_feedback`] of
    /// `denial`, usually [`crate::texts::TOOL_DENIED`]), or, when the user was not the one
    /// who refused, who did and what would allow it ([`ApprovalDecision::denial`]).
    pub fn approve(&self, request: &ApprovalRequest, denial: &str) -> Result<(), ToolError> {
        let decision = self.request_approval(request)?;
        if decision.approved {
            Ok(())
        } else {
            Err(ToolError::new(
                ToolErrorKind::DENIED,
                decision.denial(denial),
            ))
        }
    }

    /// Proposes something to the user (Cline's ask with a yes/no answer and an optional typed
    /// message: a new task, a condensed summary, a bug report). Feedback the user typed is
    /// shown as `user_feedback` and returned; "no" without a message is `DENIED` with
    /// [`crate::texts::TOOL_DENIED`]; with nobody to answer, [`Proposal::NobodyToAsk`].
    pub fn propose(&self, kind: &str, text: &str) -> Result<Proposal, ToolError> {
        match self.ask(kind, text) {
            Ok(reply) => {
                let typed = reply.text.unwrap_or_default();
                if !typed.is_empty() {
                    self.say("user_feedback", &typed);
                    return Ok(Proposal::Feedback(typed));
                }
                if reply.response == crate::model::AskResponse::No {
                    return Err(ToolError::new(
                        ToolErrorKind::DENIED,
                        crate::texts::TOOL_DENIED,
                    ));
                }
                Ok(Proposal::Accepted)
            }
            Err(e) if e.kind == ToolErrorKind::UNAVAILABLE => Ok(Proposal::NobodyToAsk),
            Err(e) => Err(e),
        }
    }

    /// Where a path leads and what the policies say about it: the verdict the host sent with
    /// the call for one of its path parameters, else the host's answer now.
    pub fn check_path(&self, path: &str) -> Result<PathVerdict, ToolError> {
        if let Some(verdict) = self.roots.path_verdicts.iter().find(|v| v.path == path) {
            return Ok(verdict.clone());
        }
        decode(
            "path verdict",
            self.host.check_path(RStr::from(path)).as_str(),
        )
    }

    /// Records a read in the task's read cache; returns how many unchanged reads there have been.
    pub fn record_file_read(&self, absolute_path: &str, mtime_ms: u64) -> u32 {
        self.host
            .record_file_read(RStr::from(absolute_path), mtime_ms)
    }

    /// Drops a path from the task's read cache (after the file changed).
    pub fn forget_file_read(&self, absolute_path: &str) {
        if !absolute_path.is_empty() {
            self.host.forget_file_reads(RStr::from(absolute_path));
        }
    }

    /// Empties the task's read cache.
    pub fn clear_file_reads(&self) {
        self.host.forget_file_reads(RStr::from(""));
    }

    /// The task's consecutive-mistake count.
    pub fn mistake_count(&self) -> u32 {
        self.host.mistake_count()
    }

    /// A setting by dotted key, decoded; `None` when unset or of another type.
    pub fn setting<T: DeserializeOwned>(&self, key: &str) -> Option<T> {
        match self.host.setting(RStr::from(key)) {
            RSome(json) => serde_json::from_str(json.as_str()).ok(),
            _ => None,
        }
    }

    /// A path-valued setting with `~` and `${env:NAME}` expanded ([`super::paths`]): `None`
    /// when it is not set. A value that cannot be expanded is an error naming the key (kind
    /// `UNAVAILABLE`: the settings' problem, not the model's).
    pub fn setting_path(&self, key: &str) -> Result<Option<std::path::PathBuf>, ToolError> {
        let value = self.setting::<serde_json::Value>(key);
        super::paths::setting_path(key, value.as_ref())
            .map_err(|message| ToolError::new(ToolErrorKind::UNAVAILABLE, message))
    }

    /// Logs at error level through the host.
    pub fn log_error(&self, message: &str) {
        self.host
            .log(1, RStr::from(self.task_id.as_str()), RStr::from(message));
    }

    /// Logs at warn level through the host.
    pub fn log_warn(&self, message: &str) {
        self.host
            .log(2, RStr::from(self.task_id.as_str()), RStr::from(message));
    }

    /// Logs at debug level through the host.
    pub fn log_debug(&self, message: &str) {
        self.host
            .log(4, RStr::from(self.task_id.as_str()), RStr::from(message));
    }

    /// Whether the call was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.host.is_cancelled()
    }

    /// Sleeps up to `timeout`, waking on cancellation; returns whether it was cancelled.
    pub fn wait_cancelled(&self, timeout: Duration) -> bool {
        let ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
        self.host.wait_cancelled(ms)
    }

    /// Calls another tool through the host's full dispatch.
    pub fn invoke_tool(&self, name: &str, params: &Value) -> Result<ToolContent, ToolError> {
        let json = encode(params)?;
        match self
            .host
            .invoke_tool(RStr::from(name), RStr::from(json.as_str()))
        {
            ROk(output) => decode("tool output", output.content_json.as_str()),
            RErr(e) => Err(e),
        }
    }

    /// Asks the user with a form of the tool's own, as an MCP server elicits one: `schema` is
    /// an object of primitive fields (strings, numbers, booleans, enums; defaults allowed).
    /// `UNAVAILABLE` when nobody can answer (no user, a subagent's call, a host without the
    /// service).
    pub fn elicit(&self, message: &str, schema: &Value) -> Result<Elicited, ToolError> {
        let request = serde_json::json!({"message": message, "requestedSchema": schema});
        self.elicited(&request)
    }

    /// Sends the user to `url` to do something there (MCP's URL elicitation, `id` naming
    /// it); the answer says whether they went.
    pub fn elicit_url(&self, message: &str, url: &str, id: &str) -> Result<Elicited, ToolError> {
        let request = serde_json::json!({
            "mode": "url", "message": message, "url": url, "elicitationId": id,
        });
        self.elicited(&request)
    }

    fn elicited(&self, request: &Value) -> Result<Elicited, ToolError> {
        let answer = self.call_service("ui", "elicit", request)?;
        Ok(Elicited {
            action: answer["action"].as_str().unwrap_or("cancel").to_string(),
            content: answer.get("content").cloned().unwrap_or(Value::Null),
        })
    }

    /// Asks the user's model to write a message for the tool, as an MCP server samples one:
    /// `request` holds the params of MCP's `sampling/createMessage` (`messages`, `maxTokens`,
    /// ...), the answer its result (`role`, `content`, `model`, ...). `UNAVAILABLE` when no
    /// client model can.
    pub fn sample(&self, request: &Value) -> Result<Value, ToolError> {
        self.call_service("ui", "sample", request)
    }

    /// Tells the user how far the call is: `progress` of `total` (when known), and what it
    /// is doing (MCP's progress notifications carry all three).
    pub fn progress(&self, progress: f64, total: Option<f64>, message: &str) {
        let payload = serde_json::json!({"progress": progress, "total": total, "message": message});
        let _ = self.call_service("ui", "progress", &payload);
    }

    /// A log message for the user (MCP's log notifications): `level` one of `debug`,
    /// `info`, `notice`, `warning`, `error`, `critical`, `alert`, `emergency`; `data` any
    /// JSON. The host's own log is [`Ctx::log_error`] and its kin.
    pub fn log_to_user(&self, level: &str, data: &Value) {
        let payload = serde_json::json!({"level": level, "data": data});
        let _ = self.call_service("ui", "log", &payload);
    }

    /// A route through the host's egress proxy for this call's own HTTP requests, with
    /// `configured` (the endpoints the user configured for the tool) allowed; `None` from a
    /// host without the `egress.route` service. Requests through it are decided by the
    /// host's `[egress]` policy, asked about as the call's user, and logged under the call's
    /// task and tool.
    pub fn egress_route(&self, configured: &[&str]) -> Result<Option<EgressRoute>, ToolError> {
        let payload = serde_json::json!({ "configured": configured });
        match self.call_service("egress", "route", &payload) {
            Ok(answer) => serde_json::from_value(answer.clone())
                .map(Some)
                .map_err(|_| {
                    ToolError::new(
                        ToolErrorKind::INTERNAL,
                        format!("invalid egress route from the host: {answer}"),
                    )
                }),
            Err(e) if e.kind == ToolErrorKind::UNAVAILABLE => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Why the egress policy refused connections of `route` since the last time (a refused
    /// CONNECT reaches the client only as a failed tunnel, so a failed request is explained
    /// with these); empty from a host without the service.
    pub fn egress_refusals(&self, route: &EgressRoute) -> Vec<String> {
        let payload = serde_json::json!({ "authorization": route.authorization });
        let answer = self.call_service("egress", "refusals", &payload).ok();
        answer
            .as_ref()
            .and_then(|answer| answer["refusals"].as_array())
            .into_iter()
            .flatten()
            .filter_map(|line| line.as_str().map(str::to_string))
            .collect()
    }

    /// Calls a host service added after v1.
    pub fn call_service(
        &self,
        service: &str,
        method: &str,
        payload: &Value,
    ) -> Result<Value, ToolError> {
        let json = encode(payload)?;
        match self.host.call_service(
            RStr::from(service),
            RStr::from(method),
            RStr::from(json.as_str()),
        ) {
            ROk(reply) => decode("service reply", reply.as_str()),
            RErr(e) => Err(e),
        }
    }
}
