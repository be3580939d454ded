//! The `run_commands` tool of Cline's SDK tool set (`cline-sdk`): shell command lines (or
//! programs with their arguments, run without a shell) in the workspace's root, answered as an
//! array of operation results in the order given: the output, or the exit code and output of a
//! command that failed.
//!
//! Every command meets what execute_command's meet, through the shared `command_support`: the
//! host's verdict (`CLINE_COMMAND_PERMISSIONS`, `.clineignore`, and in the `plan` preset the
//! rule against commands that modify files, which refuses the whole call with Cline's text),
//! the user's approval (one question for the call), and the command sandbox.
//!
//! Deliberate differences from Cline's SDK executor:
//! - The commands run one after another, not all at once: the sandbox, the approval and the
//!   output stay in order, and a command cannot race another one of the same call.
//! - A command's process group is ended when the command ends, so a process it left running
//!   in the background does not hold the call open until the timeout.

mod input;
mod run;

use command_support::{policy, sandbox};
use tool_api::sdk::operation::OperationResult;
use tool_api::sdk::prelude::*;

pub use input::{commands, Command, INVALID_INPUT};
pub use run::{combine, run, Ended, MAX_OUTPUT_CHARS, TIMEOUT};

/// The shell command lines run in (Cline's default on Linux and macOS).
const SHELL: &str = "/bin/bash";

const DESCRIPTION: &str = "Run non-interactive shell commands from the root of the workspace. Use for listing files, checking git status, running builds, executing tests, etc. Commands must be non-interactive. Commands that require follow-up input like pagers should be skipped or used with supported flags/env (e.g. git --no-pager, --non-interactive) to bypass the interaction steps. Commands should be properly shell-escaped and targeted to avoid error or timeout. Include multiple commands in the same call when they are independent complete shell commands and safe to run concurrently; multiline scripts and heredocs must be a single command string. When independent reads, searches, or edits are also needed, call those tools in the same response. Output beyond ~48k characters is middle-truncated (start and end preserved); pipe through grep/head/tail when you need specific sections of large output. For long-running commands, run them in background and redirect output to a tmp file that you can read from later.";

/// The tool's input schema, as Cline's SDK shows it to the model.
fn input_schema() -> serde_json::Value {
    serde_json::json!({
        "type": "object",
        "properties": {
            "commands": {
                "type": "array",
                "items": {
                    "type": "string",
                    "description": "The non-interactive shell command to execute - MUST keep input short and concise (within 12000 characters) to avoid timeouts."
                },
                "description": "Array of complete shell command strings to execute."
            }
        },
        "required": ["commands"],
        "additionalProperties": false
    })
}

/// The run_commands tool.
#[derive(Debug, Default)]
pub struct RunCommands;

impl Tool for RunCommands {
    fn specs(&self) -> Vec<ToolSpec> {
        let mut spec = ToolSpec::simple("run_commands", DESCRIPTION, &[])
            .destructive()
            .open_world()
            .runs_long()
            .title("Run commands")
            .checks_own_params();
        spec.input_schema = input_schema();
        vec![spec]
    }

    fn describe(&self, call: &Call) -> String {
        let asked = commands(call.params.as_map()).unwrap_or_default();
        let lines: Vec<String> = asked.iter().map(Command::query).collect();
        format!("[run_commands for {}]", lines.join("; "))
    }

    fn execute(&self, call: &Call, ctx: &Ctx<'_>) -> ToolResult {
        let asked = commands(call.params.as_map())
            .map_err(|why| ToolError::new(ToolErrorKind::INVALID_PARAMS, why))?;
        if asked.is_empty() {
            return Ok(ToolContent::text("[]"));
        }
        let workspace = ctx.workspace();
        let root = workspace.root_name(0).to_string();
        for command in &asked {
            let check = match command {
                Command::Shell(line) => policy::check(ctx, line, &root)?,
                Command::Argv(program, args) => {
                    policy::check_argv(ctx, &command.shell_line(), program, args, &root)?
                }
            };
            if !check.allowed {
                let message = check.denial_message.unwrap_or_default();
                ctx.say("command_permission_denied", &message);
                return Err(ToolError::new(ToolErrorKind::BLOCKED, message));
            }
            if let Some(path) = check.clineignore_path {
                ctx.say("clineignore_error", &path);
                return Err(ToolError::new(
                    ToolErrorKind::BLOCKED,
                    tool_api::texts::clineignore_error(&path),
                ));
            }
        }
        let cwd = workspace.root_path(0).to_path_buf();
        // Each command gets a sandbox of its own (its egress token is good for one command).
        let wraps = asked
            .iter()
            .map(|_| sandbox::wrap(ctx, &cwd.to_string_lossy(), false))
            .collect::<Result<Vec<_>, _>>()?;
        let wrap = &wraps[0];
        let lines: Vec<String> = asked.iter().map(Command::line).collect();
        ctx.approve(
            &ApprovalRequest {
                tool: call.name.clone(),
                category: ApprovalCategory::Command,
                path: None,
                message: format!(
                    "{}\n\n(in {}; {})",
                    lines.join("\n"),
                    cwd.display(),
                    sandbox::summary(wrap)
                ),
            },
            tool_api::texts::TOOL_DENIED,
        )?;
        if let Some(warning) = &wrap.warning {
            ctx.say("sandbox_warning", warning);
        }
        let results: Vec<OperationResult> = asked
            .iter()
            .zip(&wraps)
            .map(|(command, wrap)| {
                ctx.say("command", &command.line());
                let mut argv = wrap.argv_prefix.clone();
                match command {
                    Command::Shell(line) => {
                        argv.extend([SHELL.to_string(), "-c".to_string(), line.clone()]);
                    }
                    Command::Argv(program, args) => {
                        argv.push(program.clone());
                        argv.extend(args.iter().cloned());
                    }
                }
                answer(command.query(), run(&argv, &cwd, &|| ctx.is_cancelled()))
            })
            .collect();
        // The commands may have changed files that were read.
        ctx.clear_file_reads();
        Ok(ToolContent::text(OperationResult::to_json(&results)))
    }
}

/// A command's result, worded as Cline's SDK words it.
fn answer(query: String, ended: Ended) -> OperationResult {
    match ended {
        Ended::Exited(0, output) => OperationResult::success(query, output),
        Ended::Exited(code, output) => {
            let heading = format!("[Command exited with code {code}]");
            let result = if output.is_empty() {
                heading
            } else {
                format!("{heading}\n{output}")
            };
            OperationResult::failure_with(query, result, format!("Command exited with code {code}"))
        }
        Ended::TimedOut => OperationResult::failure(
            query,
            format!(
                "Command failed: Command timed out after {}ms",
                TIMEOUT.as_millis()
            ),
        ),
        Ended::Cancelled => OperationResult::failure(query, "Command failed: Command was aborted"),
        Ended::NotStarted(why) => OperationResult::failure(query, format!("Command failed: {why}")),
    }
}

tool_api::submit_tool!(RunCommands);
tool_api::export_plugin!(
    capabilities: [
        tool_api::model::access::FS_FULL,
        tool_api::model::access::SPAWN,
        tool_api::model::access::NETWORK_ANY,
        "toolset:cline-sdk@act",
        "toolset:cline-sdk@plan",
        "toolset:cline-sdk@minimal",
        "toolset:cline-sdk@yolo",
        "toolset:cline-sdk@default",
    ]
);
