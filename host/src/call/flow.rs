//! The steps of one call between preparing it and its outcome: the checks, approval, the
//! sessions other tools close, the hooks, and the run.
//!
//! A hook's `cancel` cancels the task, as in Cline: its message is an `error` UI event and the
//! outcome carries [`TaskCancelled`]; a PreToolUse cancel also denies the call. Ending the task
//! is the frontend's part (see ARCHITECTURE.md, "A hook's cancel").

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Map, Value};
use tool_api::abi::{ToolError, ToolErrorKind};
use tool_api::model::{ApprovalRequest, ToolContent, CLOSE_SESSION_METHOD};
use tool_api::texts;

use super::outcome::TaskCancelled;
use super::prepare::{self, PreparedCall};
use super::services::{Cancellation, HostCallServices};
use super::task_host::CallOptions;
use super::{checks, denied, run, Host};
use crate::hooks::{Consent, HookName, HookOutcome};
use crate::plugins::RegisteredTool;
use crate::policy::{approval, ApprovalMode};
use crate::ui::{Ui, ERROR_EVENT};

impl Host {
    /// Checks, approval, sessions, hooks and execution.
    pub(super) fn checked_run(
        &self,
        tool: &RegisteredTool,
        params: &Map<String, Value>,
        call: &mut PreparedCall,
        depth: u32,
        subagent: bool,
        options: &CallOptions,
    ) -> Result<ToolContent, ToolError> {
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
            return Err(tool_api::sdk::missing(required));
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
                message: approval::message(name, verdicts.first()),
            };
            let decision = self.decide_approval_for(&request, inside, subagent, ui);
            if !decision.approved {
                return Err(denied(decision.feedback));
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
        let pre = if tool.spec.handling.skips_pre_tool_use {
            HookOutcome::default()
        } else {
            self.run_hook(
                HookName::PreToolUse,
                || json!({"toolName": name, "parameters": params}),
                subagent,
                ui,
            )
        };
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
        let started = std::time::Instant::now();
        let cancellation = options.call_cancellation();
        let services = self.services(tool, cancellation.clone(), depth, subagent, options);
        let timeout = Duration::from_secs(self.settings.limits.call_timeout_secs.max(1));
        let result = run::on_worker(&self.workers, tool, call, services, &cancellation, timeout);
        // Again: another tool may have closed the session while this call opened one.
        self.sessions.mark_used(tool);
        let mut content = result?;
        if content.is_error {
            // The tool ran and reports a failure with content (an MCP server's `isError`).
            call.failed_mcp_result = content.mcp_result.take();
            return Err(ToolError::new(ToolErrorKind::FAILED, content.joined_text()));
        }
        if let Some(context) = pre.context {
            content.add_text(context, true);
        }
        if !tool.spec.handling.skips_post_tool_use {
            let elapsed = started.elapsed();
            let post = self.run_hook(
                HookName::PostToolUse,
                || {
                    json!({
                        "toolName": name,
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
        Ok(content)
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
            tool: tool.spec.name.clone(),
            cancellation,
            ui: options.ui.clone(),
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
