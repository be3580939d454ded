//! The host services of one call, in Rust types ([`CallServices`]); the ABI adapter presents
//! them to an in-process plugin.

use std::sync::{Arc, Weak};
use std::time::Duration;

use crate::error::{CallError, ErrorKind};
use serde_json::Value;
use tool_api::model::{
    ApprovalDecision, ApprovalRequest, AskReply, AskResponse, PathVerdict, ToolContent,
};
use tool_api::texts;

use super::host::Host;
use super::options::{CallOptions, CallScope};
pub use crate::plugins::handler::Cancellation;
use crate::plugins::CallServices;
use crate::settings::Settings;
use crate::ui::Ui;

/// The services of one call.
pub struct HostCallServices {
    /// Weak, so that a call abandoned after a timeout does not keep the host alive.
    pub host: Weak<Host>,
    /// The host's settings (they outlive the task: every task of the host shares them).
    pub settings: Arc<Settings>,
    /// The tool being called.
    pub tool: String,
    /// The call's cancellation.
    pub cancellation: Arc<Cancellation>,
    /// The call's own UI (its frontend's), instead of the host's.
    pub ui: Option<Arc<dyn Ui>>,
    /// What runs around the calls this call makes (its frontend's).
    pub scope: CallScope,
    /// How deep in nested `invoke_tool` calls this call is.
    pub depth: u32,
    /// Whether a subagent made this call (its nested calls are subagent calls too).
    pub subagent: bool,
    /// Whether the tools this one calls run as a subagent's (its spec says so).
    pub calls_as_subagent: bool,
}

/// The error of a call made while the host is ending.
pub(super) fn host_gone() -> CallError {
    CallError::new(ErrorKind::Cancelled, "the host is shutting down")
}

impl HostCallServices {
    fn host(&self) -> Result<Arc<Host>, CallError> {
        self.host.upgrade().ok_or_else(host_gone)
    }

    /// The host, unless the call is cancelled (given up, or by its frontend): a cancelled
    /// call asks the user nothing.
    fn host_to_ask(&self) -> Result<Arc<Host>, CallError> {
        if self.cancellation.is_cancelled() {
            return Err(CallError::new(
                ErrorKind::Cancelled,
                "The call was cancelled; nobody is asked.",
            ));
        }
        self.host()
    }

    /// Who answers the egress proxy's questions for this call.
    fn egress_questions(&self) -> EgressQuestions {
        EgressQuestions {
            host: self.host.clone(),
            options: self.options(),
            subagent: self.subagent,
        }
    }

    /// What the calls this call makes run with: its cancellation and its UI.
    fn options(&self) -> CallOptions {
        CallOptions {
            cancellation: Some(self.cancellation.clone()),
            ui: self.ui.clone(),
            scope: self.scope.clone(),
            ..CallOptions::default()
        }
    }
}

/// Why a subagent's call gets no answer to its question.
const SUBAGENTS_DO_NOT_ASK: &str = "This question was not put to the user: subagents do not \
ask the user. Decide with what you have, or end your run and say what you need to know.";

impl CallServices for HostCallServices {
    fn say(&self, kind: &str, text: &str, partial: bool) {
        if let Some(host) = self.host.upgrade() {
            let options = self.options();
            host.ui_for(&options).say(kind, text, partial);
        }
    }

    fn ask(&self, kind: &str, text: &str, partial: bool) -> Result<AskReply, CallError> {
        // As for approvals: a subagent's call never puts a question to the user.
        if self.subagent && !partial {
            return Err(CallError::new(ErrorKind::Blocked, SUBAGENTS_DO_NOT_ASK));
        }
        let host = if partial {
            self.host()?
        } else {
            self.host_to_ask()?
        };
        let options = self.options();
        let ui = host.ui_for(&options);
        if partial {
            ui.say(kind, text, true);
            return Ok(AskReply {
                response: AskResponse::No,
                text: None,
            });
        }
        ui.ask(kind, text).ok_or_else(|| {
            CallError::new(ErrorKind::Unavailable, "No user is available to answer.")
        })
    }

    fn request_approval(&self, request: &ApprovalRequest) -> Result<ApprovalDecision, CallError> {
        let host = self.host_to_ask()?;
        let options = self.options();
        Ok(host.decide_approval_in(request, self.subagent, host.ui_for(&options)))
    }

    fn check_path(&self, path: &str) -> PathVerdict {
        match self.host.upgrade() {
            Some(host) => host.workspace().verdict(path),
            None => crate::plugins::handler::refused_verdict(path),
        }
    }

    fn record_file_read(&self, absolute_path: &str, mtime_ms: u64) -> u32 {
        self.host.upgrade().map_or(1, |host| {
            host.task().record_file_read(absolute_path, mtime_ms)
        })
    }

    fn forget_file_reads(&self, absolute_path: &str) {
        if let Some(host) = self.host.upgrade() {
            host.task().forget_file_reads(absolute_path);
        }
    }

    fn mistake_count(&self) -> u32 {
        self.host.upgrade().map_or(0, |host| host.task().mistakes())
    }

    fn setting(&self, key: &str) -> Option<Value> {
        self.settings.lookup(key).cloned()
    }

    fn log(&self, level: u8, target: &str, message: &str) {
        let tool = self.tool.as_str();
        match level {
            0 | 1 => tracing::error!(target: "toolhost::plugin", tool, task = target, "{message}"),
            2 => tracing::warn!(target: "toolhost::plugin", tool, task = target, "{message}"),
            3 => tracing::info!(target: "toolhost::plugin", tool, task = target, "{message}"),
            4 => tracing::debug!(target: "toolhost::plugin", tool, task = target, "{message}"),
            _ => tracing::trace!(target: "toolhost::plugin", tool, task = target, "{message}"),
        }
    }

    fn is_cancelled(&self) -> bool {
        self.cancellation.is_cancelled()
    }

    fn wait_cancelled(&self, timeout_ms: u64) -> bool {
        self.cancellation.wait(Duration::from_millis(timeout_ms))
    }

    fn invoke_tool(&self, name: &str, params_json: &str) -> Result<ToolContent, CallError> {
        let host = self.host()?;
        let subagent = self.subagent || self.calls_as_subagent;
        let result = host
            .call_nested_with(name, params_json, self.depth + 1, subagent, &self.options())
            .result;
        // A subagent's model calls tools natively: no reminder of the XML format.
        match result {
            Err(mut e) if subagent => {
                e.message = texts::without_tool_use_reminder(&e.message).to_string();
                Err(e)
            }
            other => other,
        }
    }

    /// Services beyond v1. `policy.check_command` (`{"command": "...", "root": NAME}`,
    /// `root` the workspace root it runs in, default the primary) answers with the
    /// [`crate::permissions::commands::CommandCheck`] of the command; `sandbox.wrap_command` with the prefix
    /// that runs a command in the sandbox ([`crate::command_sandbox`]); `egress.route`
    /// (`{"configured": [URL, ...]}`: the tool's endpoints the user configured, allowed)
    /// with where the call's own HTTP requests go (`{"url", "authorization"}`: the egress
    /// proxy, and the `Proxy-Authorization` value that names this call's grant; with
    /// `"dedicated": true`, `{"url"}` of a port of its own, for a client that sends no token);
    /// `egress.refusals` (`{"authorization"}`) with the refusals since the last time
    /// (`{"refusals": [...]}`); `ui.elicit`, `ui.sample`, `ui.progress` and `ui.log` as
    /// [`super::ui_services`] says; `tools.list` (`{"description_limit": N}` optional) with
    /// the tools the host serves, as a model sees them (`{"tools": [{"name", "description",
    /// "input_schema"}]}`, by name, each description cut to the limit as `toolhost schema`
    /// cuts it; the MCP servers' tools among them, so it may start servers); anything else is
    /// `UNAVAILABLE`.
    fn call_service(
        &self,
        service: &str,
        method: &str,
        payload: &Value,
    ) -> Result<Value, CallError> {
        match (service, method) {
            ("policy", "check_command") => {
                let host = self.host()?;
                let command = payload["command"].as_str().ok_or_else(|| {
                    CallError::new(
                        ErrorKind::InvalidParams,
                        "check_command needs a string `command`",
                    )
                })?;
                let workspace = host.workspace();
                let root = match payload["root"].as_str() {
                    None => 0,
                    Some(name) => workspace.root_named(name).ok_or_else(|| {
                        CallError::new(
                            ErrorKind::InvalidParams,
                            format!("check_command: no workspace root is named `{name}`"),
                        )
                    })?,
                };
                let mut check = crate::permissions::check_command(
                    workspace,
                    root,
                    host.command_permissions(),
                    command,
                );
                // The plan preset's rule (Cline's SDK plan mode): nothing that modifies files.
                if host.registry().tool_set().is_plan() {
                    // A program with its arguments (`args`) runs without a shell.
                    let args: Option<Vec<String>> = payload["args"].as_array().map(|items| {
                        items
                            .iter()
                            .filter_map(|a| a.as_str().map(str::to_string))
                            .collect()
                    });
                    let program = payload["program"].as_str().unwrap_or(command);
                    let entry = match &args {
                        Some(args) => command_policy::plan_guard::Entry::Argv(program, args),
                        None => command_policy::plan_guard::Entry::Shell(command),
                    };
                    check.verdict = command_policy::plan_guard::plan_verdict(entry, check.verdict);
                }
                serde_json::to_value(&check)
                    .map_err(|e| CallError::new(ErrorKind::Internal, e.to_string()))
            }
            ("sandbox", "wrap_command") => {
                let host = self.host()?;
                let egress = crate::command_sandbox::EgressAsking {
                    task: host.task_id().to_string(),
                    tool: self.tool.clone(),
                    asker: Arc::new(self.egress_questions()),
                };
                let context = crate::command_sandbox::Context {
                    workspace: host.workspace(),
                    settings: host.settings(),
                    private_dir: crate::plugins::private_dir::path().ok(),
                    egress: Some(&egress),
                };
                // The plan preset modifies no file: its commands run in a read-only sandbox,
                // never outside it, whatever the command policy let through.
                if host.registry().tool_set().is_plan() {
                    let mut payload = payload.clone();
                    payload["escalated"] = Value::Bool(false);
                    payload["settings"]["sandbox"] = Value::String("read-only".to_string());
                    return crate::command_sandbox::wrap_command(context, &payload);
                }
                crate::command_sandbox::wrap_command(context, payload)
            }
            ("egress", "route") => {
                let host = self.host()?;
                let configured: Vec<&str> = payload["configured"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .collect();
                let asker = Arc::new(self.egress_questions());
                let grant = host.egress_grant(&self.tool, &configured, asker)?;
                if payload["dedicated"].as_bool() == Some(true) {
                    let url = super::egress_routes::dedicated_route(grant)?;
                    return Ok(serde_json::json!({"url": url}));
                }
                let route = super::egress_routes::client_route(grant)?;
                serde_json::to_value(route)
                    .map_err(|e| CallError::new(ErrorKind::Internal, e.to_string()))
            }
            ("egress", "refusals") => {
                let authorization = payload["authorization"].as_str().unwrap_or_default();
                Ok(serde_json::json!({"refusals": crate::egress::refusals(authorization)}))
            }
            ("tools", "list") => {
                let host = self.host()?;
                let limit = payload["description_limit"]
                    .as_u64()
                    .and_then(|limit| usize::try_from(limit).ok());
                let tools: Vec<Value> = host
                    .tools()
                    .into_iter()
                    .map(|(name, tool)| {
                        serde_json::json!({
                            "name": name,
                            "description": match limit {
                                Some(limit) => tool.spec.description_within(limit),
                                None => tool.spec.description.clone(),
                            },
                            "input_schema": tool.spec.input_schema,
                        })
                    })
                    .collect();
                Ok(serde_json::json!({ "tools": tools }))
            }
            ("ui", method) => {
                let host = self.host()?;
                super::ui_services::ui_service(
                    &host,
                    &self.options(),
                    self.subagent,
                    method,
                    payload,
                )
            }
            (service, method) => Err(CallError::new(
                ErrorKind::Unavailable,
                format!("this host offers no service '{service}.{method}'"),
            )),
        }
    }
}

/// The egress proxy's questions for one call's commands: asked of the call's user, under
/// the session's approval mode.
struct EgressQuestions {
    host: Weak<Host>,
    options: CallOptions,
    subagent: bool,
}

impl crate::egress::Asker for EgressQuestions {
    fn ask(&self, question: &str) -> crate::egress::Answer {
        use crate::egress::Answer;
        use crate::permissions::approval::{ApprovalMode, BY_THE_USER};
        let Some(host) = self.host.upgrade() else {
            return Answer::Refused("with nobody to ask (the host is ending)".into());
        };
        if self
            .options
            .cancellation
            .as_ref()
            .is_some_and(|c| c.is_cancelled())
        {
            return Answer::Refused("with nobody to ask (the call was cancelled)".into());
        }
        if self.subagent {
            return Answer::Refused("because subagents do not ask the user".into());
        }
        let ui = host.ui_for(&self.options);
        let answer = match host.approval_mode() {
            ApprovalMode::ApproveAll => Answer::ThisTask("by --yes"),
            ApprovalMode::DenyUnlessAuto => Answer::Refused(
                "with nobody to ask (no terminal, and the frontend asks nothing)".into(),
            ),
            ApprovalMode::Ask => match ui.ask("egress", question) {
                None => Answer::Refused("with nobody to ask".into()),
                Some(reply) if reply.response == AskResponse::Yes => Answer::ThisTask(BY_THE_USER),
                Some(reply) => match reply.text.as_deref().map(str::trim) {
                    Some(text)
                        if text.eq_ignore_ascii_case("always")
                            || text.eq_ignore_ascii_case("a") =>
                    {
                        Answer::Always
                    }
                    // A frontend that takes only text: a typed yes allows for the task.
                    Some(text)
                        if text.eq_ignore_ascii_case("yes") || text.eq_ignore_ascii_case("y") =>
                    {
                        Answer::ThisTask(BY_THE_USER)
                    }
                    _ => Answer::Refused(BY_THE_USER.into()),
                },
            },
        };
        let verdict = match &answer {
            Answer::ThisTask(by) => format!("allowed for this task {by}"),
            Answer::Always => "allowed from now on by the user".to_string(),
            Answer::Refused(by) => format!("refused {by}"),
        };
        ui.say("approval", &format!("{question}: {verdict}"), false);
        answer
    }
}
