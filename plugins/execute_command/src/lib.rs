//! The `execute_command` tool: runs a shell command in the workspace and returns its exit
//! status and output.
//!
//! The order of a call is Cline's: the host's command permissions (`CLINE_COMMAND_PERMISSIONS`,
//! asked through the `policy.check_command` host service), then `.clineignore`'s check of
//! file-reading commands, then approval (category `safe_command`, or `command` when the model
//! says the command needs approval), then the run, and finally the task's file-read cache is
//! emptied (the command may have changed any file).
//!
//! In a multi-root workspace, `@name:command` runs `command` in the root of that name (else the
//! first whose path contains the name, else the primary), as in Cline; the permissions,
//! `.clineignore`, approval and the messages all see the command without its hint.
//!
//! The run ([`process`]): `$SHELL -c` (bash when permissions are configured, because that is
//! the syntax they are checked in), in the workspace directory (the hinted root's), standard input closed, no pager
//! or editor, in a process group of its own; output streamed to the user as `command_output`
//! events and shaped for the model as Cline does ([`output`]), within bounds in bytes
//! ([`capture`]). Every run has a timeout ([`timeout`]).
//!
//! Known differences from Cline, all deliberate:
//! - A timed-out or cancelled command is stopped with its whole process group (SIGTERM, then
//!   SIGKILL after two seconds) instead of running on in the background; so are processes a
//!   command leaves behind when it exits. The timeout result reads `Command timed out after N
//!   seconds and was stopped.` followed by the output so far.
//! - A timeout always applies (Cline applies one only in yolo or background-exec mode).
//! - No login shell by default: the command sees the host's environment as it is, without
//!   profile scripts' output, and starts much faster (`bash -l -c true` took about 330 ms against
//!   3 ms for `bash -c true` on the development machine); the setting
//!   `execute_command.login_shell = true` restores Cline's `-l`.
//! - Commands run in the host's sandbox ([`sandbox`]; `[execute_command] sandbox`, default
//!   `workspace-write`): writes outside the writable roots, to `.git/hooks` and `.git/config`,
//!   and (network off) the network are denied, files `.clineignore` blocks look empty, and
//!   nothing the command started outlives it or the host, even what left its process group.
//!   When the sandbox seems to have denied something, the result says what; the parameter
//!   `sandbox_escalation` asks for a run outside the sandbox, always approved by the user in
//!   the `command` category (never as a safe command).
//! - Without a sandbox (`sandbox = "off"`, or an older host), a process that leaves the group
//!   (`setsid`, daemons) is not stopped; one that keeps the output pipe open is no longer read
//!   half a second after the group is gone.
//! - The permission check is stricter than Cline's (see the host's `policy::commands`).
//! - A missing `command` gets the host's standard missing-parameter error.
//! - While the call streams, the command is shown (a partial `ask("command")`) when the settings
//!   will not auto-approve it; Cline's check there is always true, so it never shows one.
//! - Output is bounded in bytes whatever its shape ([`capture`]): the model sees at most
//!   `output_byte_limit` bytes (`... (N bytes truncated) ...`), lines longer than 64 KiB are
//!   pieces, a log keeps at most `output_log_limit_mb` and is written also when the byte limit
//!   cuts output that was not large; logs are private and go with their task ([`logs`]).
//!
//! Settings: `execute_command.output_line_limit` (default 500 lines for the model),
//! `execute_command.output_byte_limit` (default 65536 bytes of output for the model),
//! `execute_command.output_log_limit_mb` (default 32 MiB per log; 0: no limit),
//! `execute_command.output_logs_total_mb` (default 256 MiB for all of the process's logs; 0: no
//! limit),
//! `execute_command.notify_after_secs` (default 30: with `auto_approve.enable_notifications`,
//! an auto-approved command still running after that long is a `notification` UI event, as
//! Cline's desktop notification),
//! `execute_command.login_shell` (default false), `model.id` (Gemini models get HTML entities
//! in the command unescaped, as in Cline); the sandbox's keys (`sandbox`, `network`,
//! `writable_roots`, `mask_ignored`, `max_processes`, `sandbox_required`) are read by the host,
//! which answers `sandbox.wrap_command`.
//!
//! The pieces work without a host:
//!
//! ```
//! use std::time::Duration;
//! use execute_command::{output, timeout};
//!
//! assert_eq!(timeout::resolve(None, "npm install"), Duration::from_secs(300));
//! let lines: Vec<String> = (1..=6).map(|n| n.to_string()).collect();
//! assert_eq!(output::process_output(&lines, 4), "1\n2\n... (output truncated) ...\n5\n6");
//! ```

pub mod capture;
pub mod collector;
pub mod events;
pub mod log;
pub mod logs;
pub mod messages;
pub mod output;
pub mod process;
pub mod timeout;

use std::path::{Path, PathBuf};

use tool_api::sdk::js::strip_partial_closing_tag;
use tool_api::sdk::prelude::*;

use command_support::{policy, sandbox};

use crate::messages::Ending;
use crate::process::Request;

const DESCRIPTION: &str = "Run a command in the system shell, in the workspace directory, and \
get back its exit status and output (standard output and standard error together). Use it for \
builds, tests, version control, package managers and any other command-line work. The command \
runs without a terminal and cannot read input, so pass the flags that make programs \
non-interactive. It is stopped, together with everything it started, when it finishes or when its \
timeout passes, so do not start servers or watchers expecting them to keep running. Chain steps \
with && and use paths relative to the workspace. Long output is shortened to its beginning and \
end. Commands usually run in a sandbox: writes outside the workspace, the temporary directory \
and the package caches fail, .git/hooks and .git/config cannot be changed, files hidden by \
.clineignore look empty, and the network may be off; when the result says the sandbox denied \
something the task needs, run the command again with sandbox_escalation \"true\" (the user is \
asked).";

/// The execute_command tool.
#[derive(Debug, Default)]
pub struct ExecuteCommand;

impl Tool for ExecuteCommand {
    /// `task_ended`: the task's output logs are removed.
    fn extension(
        &self,
        method: &str,
        payload: &serde_json::Value,
    ) -> Result<serde_json::Value, ToolError> {
        match method {
            tool_api::model::TASK_ENDED_METHOD => {
                logs::task_ended(payload["task_id"].as_str().unwrap_or_default());
                Ok(serde_json::Value::Null)
            }
            other => Err(ToolError::new(
                ToolErrorKind::UNAVAILABLE,
                format!("unknown handler extension '{other}'"),
            )),
        }
    }

    fn specs(&self) -> Vec<ToolSpec> {
        vec![ToolSpec::simple(
            "execute_command",
            DESCRIPTION,
            &[
                (
                    "command",
                    "The command line to run, as you would type it in a shell.",
                    true,
                ),
                (
                    "requires_approval",
                    "\"true\" when the command could change or delete things, install software, \
                     reach the network or otherwise do more than read; \"false\" for commands \
                     that only read or build, such as listing files or running tests.",
                    true,
                ),
                (
                    "sandbox_escalation",
                    "\"true\" to run this command outside the sandbox (needs the user's \
                     approval every time). Use it only after a sandboxed run was denied \
                     something the task needs, such as the network or a write outside the \
                     workspace.",
                    false,
                ),
                (
                    "timeout",
                    "Seconds after which the command is stopped. Without it, installs, builds \
                     and test runs get 300 seconds and other commands 30.",
                    false,
                ),
            ],
        )
        .with_partial()
        .destructive()
        .title("Run command")
        .open_world()
        .runs_long()]
    }

    /// While the call streams: the command as it is written, as a partial `ask("command")`,
    /// when it will need the user's approval. A command the settings may auto-approve shows
    /// nothing until the call is complete (its message may still become a question once
    /// `requires_approval` is known), nor does a subagent's. Nothing runs.
    fn handle_partial(&self, call: &Call, ctx: &Ctx<'_>) -> Result<(), ToolError> {
        if call.task.is_subagent || may_auto_approve(call, ctx) {
            return Ok(());
        }
        let raw = call.params.string_or_empty("command");
        let command = strip_partial_closing_tag(&raw, "command");
        if !command.is_empty() {
            ctx.ask_partial("command", command);
        }
        Ok(())
    }

    fn describe(&self, call: &Call) -> String {
        format!(
            "[execute_command for '{}']",
            call.params.string_or_empty("command")
        )
    }

    fn execute(&self, call: &Call, ctx: &Ctx<'_>) -> ToolResult {
        let mut command = call.params.required("command")?;
        call.params.required("requires_approval")?;
        let requires_approval = call.params.flag("requires_approval");
        let timeout = timeout::resolve(call.params.int("timeout"), &command);
        if ctx
            .setting::<String>("model.id")
            .is_some_and(|id| id.contains("gemini"))
        {
            command = unescape_html(&command);
        }

        // Cline's multi-root hint: `@name:command` runs `command` in that root.
        let root = target_root(ctx, &mut command);
        let check = policy::check(ctx, &command, ctx.workspace().root_name(root))?;
        if !check.allowed {
            let message = check.denial_message.unwrap_or_default();
            ctx.say("command_permission_denied", &message);
            return Err(ToolError::new(
                ToolErrorKind::BLOCKED,
                messages::permission_denied_error(&message),
            ));
        }
        if let Some(path) = check.clineignore_path {
            ctx.say("clineignore_error", &path);
            return Err(ToolError::new(
                ToolErrorKind::BLOCKED,
                texts::clineignore_error(&path),
            ));
        }

        // A run outside the sandbox is never a safe command: the user approves it as a command.
        let escalated = call.params.flag("sandbox_escalation");
        let cwd = ctx.workspace().root_path(root).to_path_buf();
        let wrap = sandbox::wrap(ctx, &cwd.to_string_lossy(), escalated)?;
        let category = if requires_approval || escalated {
            ApprovalCategory::Command
        } else {
            ApprovalCategory::SafeCommand
        };
        // The command first (Cline's ask text), then where and how it runs.
        let how = if escalated && !wrap.argv_prefix.is_empty() {
            "outside the sandbox: it may write anywhere you can, reach the network and read \
             files .clineignore hides"
                .to_string()
        } else {
            sandbox::summary(&wrap)
        };
        let message = format!("{command}\n\n(in {}; {how})", cwd.display());
        let decision = ctx.request_approval(&ApprovalRequest {
            tool: call.name.clone(),
            category,
            path: None,
            message,
        })?;
        if !decision.approved {
            return Err(ToolError::new(
                ToolErrorKind::DENIED,
                decision.denial(texts::TOOL_DENIED),
            ));
        }
        ctx.say("command", &command);

        let request = Request {
            command: strip_cd_prefix(&command, &cwd),
            cwd: &cwd,
            timeout,
            shell: shell(check.configured),
            login: ctx
                .setting::<bool>("execute_command.login_shell")
                .unwrap_or(false),
            prefix: &wrap.argv_prefix,
            limits: limits(call, ctx),
        };
        if let Some(warning) = &wrap.warning {
            ctx.say("sandbox_warning", warning);
        }
        let mut events = events::CtxEvents::new(call, ctx, category);
        let outcome = process::run(&request, &mut events).map_err(|e| {
            ToolError::new(
                ToolErrorKind::FAILED,
                format!("Error executing execute_command: {e}"),
            )
        })?;
        // A cancelled run counts as rejected, as in Cline; any other run may have changed files.
        if outcome.ending != Ending::Cancelled {
            ctx.clear_file_reads();
        }
        let mut text = messages::result_text(
            outcome.ending,
            &outcome.collected.text,
            outcome.collected.log.as_deref(),
        );
        if outcome.ending != Ending::Cancelled {
            if let Some(note) = sandbox::denial_note(&wrap, &outcome.collected.lines) {
                text.push_str("\n\n");
                text.push_str(&note);
            }
        }
        if let Some(warning) = &wrap.warning {
            text.push_str(&format!("\n\nNote: {warning}."));
        }
        Ok(ToolContent::text(text))
    }
}

/// How much of the output is kept: the settings `output_line_limit`, `output_byte_limit`,
/// `output_log_limit_mb` and `output_logs_total_mb` (0: no limit) of `[execute_command]`.
fn limits(call: &Call, ctx: &Ctx<'_>) -> capture::Limits {
    let defaults = capture::Limits::default();
    let count = |key: &str| {
        ctx.setting::<u64>(&format!("execute_command.{key}"))
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
    };
    let megabytes = |key: &str, default: Option<u64>| {
        ctx.setting::<u64>(&format!("execute_command.{key}"))
            .map_or(default, |mb| (mb > 0).then_some(mb))
    };
    capture::Limits {
        line_limit: count("output_line_limit").unwrap_or(defaults.line_limit),
        byte_limit: count("output_byte_limit").unwrap_or(defaults.byte_limit),
        log_limit_mb: megabytes("output_log_limit_mb", defaults.log_limit_mb),
        logs_total_mb: megabytes("output_logs_total_mb", defaults.logs_total_mb),
        task_id: call.task.task_id.clone(),
    }
}

/// The root the command runs in: in a multi-root workspace, the one its `@name:` hint selects
/// (by name, else by path, else the primary), and the hint is taken off the command; else the
/// primary.
fn target_root(ctx: &Ctx<'_>, command: &mut String) -> usize {
    let workspace = ctx.workspace();
    if !workspace.is_multi_root() {
        return 0;
    }
    match tool_api::workspace::parse_command_hint(command) {
        Some((hint, rest)) => {
            let root = workspace.command_root(hint);
            *command = rest.to_string();
            root
        }
        None => 0,
    }
}

/// Whether the settings may approve this call without asking: a command marked as needing
/// approval needs both command settings; one not (yet) marked needs the safe-command setting.
fn may_auto_approve(call: &Call, ctx: &Ctx<'_>) -> bool {
    let category = if call.params.flag("requires_approval") {
        ApprovalCategory::Command
    } else {
        ApprovalCategory::SafeCommand
    };
    ctx.auto_approves(category, true)
}

/// The shell: bash when permissions are configured (the syntax they are checked in; another
/// shell could read the same text differently), else `$SHELL`, else bash.
pub fn shell(permissions_configured: bool) -> PathBuf {
    let bash = PathBuf::from("/bin/bash");
    if permissions_configured {
        return if bash.exists() {
            bash
        } else {
            PathBuf::from("/bin/sh")
        };
    }
    std::env::var_os("SHELL")
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .unwrap_or(bash)
}

/// Cline drops a leading `cd <cwd> && ` (the model often adds it; the command runs there anyway).
pub fn strip_cd_prefix<'c>(command: &'c str, cwd: &Path) -> &'c str {
    let prefix = format!("cd {} && ", cwd.display());
    command.strip_prefix(prefix.as_str()).unwrap_or(command)
}

/// Cline's fix-up for Gemini models: HTML entities unescaped and U+FFFD removed.
pub fn unescape_html(command: &str) -> String {
    command
        .replace("&gt;", ">")
        .replace("&lt;", "<")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
        .replace("&apos;", "'")
        .replace('\u{FFFD}', "")
}

tool_api::submit_tool!(ExecuteCommand);
// At the host's exit the logs go with their directory.
tool_api::export_plugin!(
    capabilities: [
        "partial",
        tool_api::model::access::FS_FULL,
        tool_api::model::access::SPAWN,
        tool_api::model::access::NETWORK_ANY,
        "toolset:cline-legacy",
    ],
    shutdown: crate::logs::remove_all
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cd_prefix_goes() {
        let cwd = Path::new("/work/p");
        assert_eq!(strip_cd_prefix("cd /work/p && ls", cwd), "ls");
        assert_eq!(strip_cd_prefix("cd /work/q && ls", cwd), "cd /work/q && ls");
        assert_eq!(
            strip_cd_prefix("cd \"/work/p\" && ls", cwd),
            "cd \"/work/p\" && ls"
        );
    }

    #[test]
    fn gemini_entities_are_unescaped() {
        assert_eq!(unescape_html("a &gt; b &amp;&amp; c\u{FFFD}"), "a > b && c");
    }

    #[test]
    fn a_streaming_command_is_shown_only_when_it_will_be_asked_for() {
        use serde_json::json;
        use tool_api::sdk::testing::{Preview, TestHost};
        let dir = std::env::temp_dir();
        // Default settings auto-approve no command: the command streams as a question.
        let asking = TestHost::new(&dir);
        for params in [
            json!({}),
            json!({"command": "rm -rf bu"}),
            json!({"command": "rm -rf build</comm"}),
            json!({"command": "rm -rf build", "requires_approval": "true"}),
        ] {
            asking
                .partial(&ExecuteCommand, "execute_command", params)
                .unwrap_or_else(|e| panic!("{e}"));
        }
        assert_eq!(
            asking.previews(),
            [
                Preview::Ask("command".into(), "rm -rf bu".into()),
                Preview::Ask("command".into(), "rm -rf build".into()),
                Preview::Ask("command".into(), "rm -rf build".into()),
            ]
        );
        assert!(asking.said().is_empty(), "nothing ran");

        // Safe commands auto-approved: wait for the complete block, unless the model marks the
        // command as needing approval and all commands are not auto-approved.
        let safe = TestHost::new(&dir)
            .with_settings(json!({"auto_approve": {"execute_safe_commands": true}}));
        for params in [
            json!({"command": "ls"}),
            json!({"command": "ls", "requires_approval": "false"}),
            json!({"command": "git push", "requires_approval": "true"}),
        ] {
            safe.partial(&ExecuteCommand, "execute_command", params)
                .unwrap_or_else(|e| panic!("{e}"));
        }
        assert_eq!(
            safe.previews(),
            [Preview::Ask("command".into(), "git push".into())]
        );
        let all = TestHost::new(&dir).with_settings(json!({"auto_approve": {
            "execute_safe_commands": true, "execute_all_commands": true}}));
        all.partial(
            &ExecuteCommand,
            "execute_command",
            json!({"command": "git push", "requires_approval": "true"}),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let subagent = TestHost::new(&dir).as_subagent();
        subagent
            .partial(&ExecuteCommand, "execute_command", json!({"command": "ls"}))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(all.previews().is_empty() && subagent.previews().is_empty());
        assert!(ExecuteCommand.specs()[0].partial);
    }

    #[test]
    fn permissions_force_bash() {
        assert!(shell(true).ends_with("bash") || shell(true).ends_with("sh"));
    }
}
