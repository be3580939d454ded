//! The steps of one call between its parameters and its outcome: the checks, approval, the
//! sessions other tools close and the PreToolUse hooks ([`Host::prepare_run`]), the handler
//! ([`ReadyCall::run_handler`]), then the PostToolUse hooks ([`Host::complete_run`]). The
//! handler runs between two steps of the host, not inside one, so that a call abandoned
//! while its handler runs holds the host only while the handler waits on a host service
//! ([`super::pending`]).
//!
//! A hook's `cancel` cancels the task, as in Cline: its message is an `error` UI event and the
//! outcome carries [`TaskCancelled`]; a PreToolUse cancel also denies the call. Ending the task
//! is the frontend's part (see ARCHITECTURE.md, "A hook's cancel").

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use crate::error::{CallError, ErrorKind};
use serde_json::{json, Map, Value};
use tool_api::model::{ApprovalRequest, ToolContent, CLOSE_SESSION_METHOD};
use tool_api::texts;

use super::arguments::Arguments;
use super::clock::HandlerClock;
use super::host::Host;
use super::options::CallOptions;
use super::outcome::TaskCancelled;
use super::outcome::{denied, CallOutcome};
use super::prepare::{self, PreparedCall};
use super::services::{Cancellation, HostCallServices};
use super::{checks, input_required, run};
use crate::call::hooks::{Consent, HookName, HookOutcome};
use crate::permissions::{approval, ApprovalMode};
use crate::plugins::RegisteredTool;
use crate::ui::{Ui, ERROR_EVENT};

/// How deep tools may call tools through `invoke_tool`.
const MAX_NESTING: u32 = 8;

/// One call as its thread runs it.
pub(super) struct Call {
    /// The tool called.
    pub tool: Arc<RegisteredTool>,
    /// Its arguments as its frontend gave them.
    pub arguments: Arguments,
    /// How deep in tools calling tools (0: the model's call).
    pub depth: u32,
    /// Whether a subagent makes the call.
    pub subagent: bool,
    /// What its frontend gives it.
    pub options: CallOptions,
    /// The call's own cancellation (a child of the frontend's): what the tool sees, and
    /// what its timeout cancels.
    pub cancellation: Arc<Cancellation>,
}

impl Call {
    /// Runs the call on this thread: the host's steps before the handler, the handler, the
    /// host's steps after it. The host is held for its steps only, not while the handler runs.
    /// `None` when the host is gone or the caller gave the call up.
    pub fn run(self, host: &Weak<Host>, clock: &HandlerClock) -> Option<CallOutcome> {
        let prepared = host.upgrade()?.prepare_run(
            self.tool,
            self.arguments,
            self.depth,
            self.subagent,
            self.options,
            self.cancellation,
        );
        let mut ready = match prepared {
            Prepared::Ready(ready) => ready,
            Prepared::Ended(outcome) => return Some(outcome),
        };
        let mut result = if ready.services.cancellation.is_cancelled() {
            // Cancelled while it waited for its approval or its hooks: the tool never starts.
            Err(CallError::new(
                ErrorKind::Cancelled,
                "The call was cancelled before the tool ran.",
            ))
        } else {
            ready.run_handler(clock)
        };
        // A path changed after it was checked: the tool did nothing; it runs again once the
        // paths are checked (and approved) again where they lead now.
        let mut changes = 0;
        while let Err(changed) = &result {
            if changed.kind != ErrorKind::PathChanged || clock.abandoned() {
                break;
            }
            changes += 1;
            let changed = changed.clone();
            result = match host.upgrade()?.check_again(&mut ready, &changed, changes) {
                Ok(()) if clock.again() => ready.run_handler(clock),
                Ok(()) => return None,
                Err(e) => Err(e),
            };
        }
        // A result that needs input, for a client that does not answer it: the host answers
        // it and the handler runs again with the answers.
        let mut round = 0;
        while let Some(needed) = input_required::needed(&result) {
            if clock.abandoned() || ready.options.input_relay.take() {
                break;
            }
            round += 1;
            let answered =
                host.upgrade()?
                    .answer_input(needed, &ready.options, ready.subagent, round);
            result = match answered {
                Ok(input) if clock.again() => {
                    ready.call.carry_mcp(input);
                    ready.run_handler(clock)
                }
                Ok(_) => return None,
                Err(e) => Err(e),
            };
        }
        if clock.abandoned() {
            return None;
        }
        Some(host.upgrade()?.complete_run(ready, result))
    }
}

/// A call after the steps before its handler ([`Host::prepare_run`]).
#[allow(
    clippy::large_enum_variant,
    reason = "made once per call and taken apart at once: boxing would only add an allocation"
)]
pub(super) enum Prepared {
    /// Its handler is to run.
    Ready(ReadyCall),
    /// It ended before (bad parameters, a check, a denial, a hook): its outcome.
    Ended(CallOutcome),
}

/// A call past its checks, approval and PreToolUse hooks, its handler about to run.
pub(super) struct ReadyCall {
    pub(super) tool: Arc<RegisteredTool>,
    pub(super) params: Map<String, Value>,
    pub(super) call: PreparedCall,
    pub(super) options: CallOptions,
    pub(super) subagent: bool,
    /// What the PreToolUse hooks add to a successful result.
    pre_context: Option<String>,
    /// Its host services, its own cancellation among them.
    services: HostCallServices,
    timeout: Duration,
    started: Instant,
}

impl ReadyCall {
    /// Runs the handler: in this process on this thread (its start and return marked on
    /// `clock`, the caller keeping the timeout), or in its worker process, which keeps the
    /// timeout itself. A panic disables the plugin.
    fn run_handler(&mut self, clock: &HandlerClock) -> Result<ToolContent, CallError> {
        run::handler(
            &self.tool,
            &mut self.call,
            &self.services,
            self.timeout,
            clock,
        )
    }
}

impl Host {
    /// Parses the parameters, then the checks, approval, sessions and PreToolUse hooks: the
    /// call ready for its handler, or its outcome when it stops before.
    fn prepare_run(
        &self,
        tool: Arc<RegisteredTool>,
        arguments: Arguments,
        depth: u32,
        subagent: bool,
        options: CallOptions,
        cancellation: Arc<Cancellation>,
    ) -> Prepared {
        let name = tool.spec.name.as_str();
        let params = match prepare::parse_params(&tool.spec, arguments) {
            Ok(params) => params,
            Err(e) => return Prepared::Ended(self.not_run(name, e)),
        };
        let mut call = PreparedCall::new(&params, self.context(subagent));
        if let Some(mcp) = &options.mcp {
            call.carry_mcp(mcp.clone());
        }
        let checked = if depth > MAX_NESTING {
            Err(CallError::new(
                ErrorKind::Failed,
                format!("Tool calls nested more than {MAX_NESTING} deep; {name} was not run."),
            ))
        } else {
            self.before_handler(&tool, &params, &mut call, subagent, &options)
        };
        let pre_context = match checked {
            Ok(pre_context) => pre_context,
            Err(e) => return Prepared::Ended(self.conclude(&tool, call, Err(e))),
        };
        let services = self.services(&tool, cancellation, depth, subagent, &options);
        Prepared::Ready(ReadyCall {
            timeout: self.settings.limits.call_timeout(),
            started: Instant::now(),
            tool,
            params,
            call,
            options,
            subagent,
            pre_context,
            services,
        })
    }

    /// Checks, approval, sessions and PreToolUse hooks; what the hooks add to the result.
    fn before_handler(
        &self,
        tool: &RegisteredTool,
        params: &Map<String, Value>,
        call: &mut PreparedCall,
        subagent: bool,
        options: &CallOptions,
    ) -> Result<Option<String>, CallError> {
        let name = tool.spec.name.as_str();
        let ui = self.ui_for(options);
        checks::plugin_enabled(tool, name)?;
        if let Some(required) = checks::missing_required(&tool.spec, params) {
            let rel_path = params.get("path").and_then(prepare::value_as_string);
            ui.say(
                "error",
                &texts::missing_param_notice(name, required, rel_path.as_deref()),
                false,
            );
            return Err(CallError::new(
                ErrorKind::InvalidParams,
                texts::missing_param_error(required),
            ));
        }
        let paths = checks::path_values(&tool.spec, params);
        // Each path is resolved once per call; the verdicts travel with the call.
        let verdicts = checks::verdicts(&self.workspace, &paths);
        checks::paths_allowed(&verdicts)?;
        call.carry_verdicts(&verdicts);
        if let Some(category) = tool.spec.approval {
            let inside = verdicts.iter().all(|v| v.inside_workspace);
            let request = ApprovalRequest {
                tool: name.to_string(),
                category,
                path: paths.first().cloned(),
                message: approval::message(
                    name,
                    category,
                    verdicts.first(),
                    &checks::shown_params(&tool.spec, params),
                ),
            };
            let (decision, _) = self.decide_approval_for(&request, inside, subagent, ui);
            if !decision.approved {
                return Err(denied(Some(&decision)));
            }
        }
        for handler in self.sessions.to_close_before(tool) {
            if handler.handler.is_open() {
                let _ = handler
                    .handler
                    .request(CLOSE_SESSION_METHOD, &json!({"task_id": self.task_id}));
            }
        }
        self.sessions.mark_used(tool);
        if tool.spec.handling.skips_pre_tool_use {
            return Ok(None);
        }
        let pre = self.run_hook(
            HookName::PreToolUse,
            || json!({"toolName": name, "parameters": params}),
            subagent,
            ui,
        );
        if pre.cancel {
            // Cline shows the message and cancels the whole task; the call is denied.
            call.task_cancelled = Some(self.hook_cancelled(
                HookName::PreToolUse,
                pre.error_message,
                "PreToolUse hook requested cancellation",
                ui,
            ));
            return Err(denied(None));
        }
        Ok(pre.context)
    }

    /// The PostToolUse hooks and the outcome of a call whose handler gave `result`.
    fn complete_run(
        &self,
        ready: ReadyCall,
        result: Result<ToolContent, CallError>,
    ) -> CallOutcome {
        let ReadyCall {
            tool,
            params,
            mut call,
            options,
            subagent,
            pre_context,
            started,
            ..
        } = ready;
        // Again: another tool may have closed the session while this call opened one.
        self.sessions.mark_used(&tool);
        let result = result.and_then(|mut content| {
            if content.is_error {
                // The tool ran and reports a failure with content (an MCP server's `isError`).
                call.failed_mcp_result = content.mcp_result.take();
                return Err(CallError::new(ErrorKind::Failed, content.joined_text()));
            }
            if let Some(context) = pre_context {
                content.add_text(context, true);
            }
            if !tool.spec.handling.skips_post_tool_use {
                self.post_tool_use(
                    &tool,
                    &params,
                    &mut call,
                    &mut content,
                    started,
                    subagent,
                    &options,
                );
            }
            Ok(content)
        });
        self.conclude(&tool, call, result)
    }

    /// Runs the PostToolUse hooks for a call that succeeded with `content`.
    #[allow(clippy::too_many_arguments)]
    fn post_tool_use(
        &self,
        tool: &RegisteredTool,
        params: &Map<String, Value>,
        call: &mut PreparedCall,
        content: &mut ToolContent,
        started: Instant,
        subagent: bool,
        options: &CallOptions,
    ) {
        let ui = self.ui_for(options);
        let elapsed = started.elapsed();
        let post = self.run_hook(
            HookName::PostToolUse,
            || {
                json!({
                    "toolName": tool.spec.name,
                    "parameters": params,
                    "result": content.joined_text(),
                    "success": true,
                    "executionTimeMs": u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
                })
            },
            subagent,
            ui,
        );
        if post.cancel {
            call.task_cancelled = Some(self.hook_cancelled(
                HookName::PostToolUse,
                post.error_message,
                "Hook requested task cancellation",
                ui,
            ));
        }
        if let Some(context) = post.context {
            content.add_text(context, false);
        }
    }

    /// The outcome of `call` ending with `result`: its description (the handler's, else asked
    /// now), the task's state updated.
    fn conclude(
        &self,
        tool: &RegisteredTool,
        mut call: PreparedCall,
        result: Result<ToolContent, CallError>,
    ) -> CallOutcome {
        let name = tool.spec.name.as_str();
        let description = call
            .description
            .take()
            .unwrap_or_else(|| run::describe(tool, name, &call));
        let mut outcome = self.finish(name, description, result, call.task_cancelled.take());
        outcome.failed_mcp_result = call.failed_mcp_result.take();
        outcome
    }

    /// A hook's cancel of the task: its message (else Cline's `default`) shown on `ui` as an
    /// error event.
    fn hook_cancelled(
        &self,
        hook: HookName,
        message: Option<String>,
        default: &str,
        ui: &dyn Ui,
    ) -> TaskCancelled {
        let message = message
            .filter(|m| !m.trim().is_empty())
            .unwrap_or_else(|| default.to_string());
        ui.say(ERROR_EVENT, &message, false);
        TaskCancelled {
            hook: hook.as_str(),
            message,
        }
    }

    /// The host services of one call of `tool`.
    pub(super) fn services(
        &self,
        tool: &RegisteredTool,
        cancellation: Arc<Cancellation>,
        depth: u32,
        subagent: bool,
        options: &CallOptions,
    ) -> HostCallServices {
        HostCallServices {
            host: self.me.clone(),
            settings: self.settings.clone(),
            tool: tool.spec.name.clone(),
            cancellation,
            ui: options.ui.clone(),
            scope: options.scope.clone(),
            depth,
            subagent,
            calls_as_subagent: tool.spec.handling.calls_as_subagent,
        }
    }

    /// Runs a hook's scripts. An untrusted workspace script runs with `--yes`; otherwise the
    /// user is asked on `ui`, except during a subagent's call (subagents never ask).
    pub(super) fn run_hook(
        &self,
        hook: HookName,
        payload: impl FnOnce() -> Value,
        subagent: bool,
        ui: &dyn Ui,
    ) -> HookOutcome {
        let consent = match self.approval {
            ApprovalMode::ApproveAll => Consent::All,
            ApprovalMode::Ask if !subagent => Consent::Ask(ui),
            ApprovalMode::Ask | ApprovalMode::DenyUnlessAuto => Consent::Nobody,
        };
        self.hooks.run(
            hook,
            &self.hook_input,
            payload,
            self.workspace.cwd(),
            consent,
        )
    }
}
