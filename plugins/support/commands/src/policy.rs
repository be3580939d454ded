//! The host's verdict on a command: `CLINE_COMMAND_PERMISSIONS`, `.clineignore` and, in the
//! plan preset, the rule against commands that modify files are the host's policies, asked
//! through the `policy.check_command` host service.

use serde::Deserialize;
use serde_json::json;
use tool_api::sdk::prelude::*;

/// What the host says about a command.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct CommandCheck {
    /// Whether the permissions allow it.
    pub allowed: bool,
    /// The refusal's message, when refused.
    #[serde(default)]
    pub denial_message: Option<String>,
    /// The argument `.clineignore` blocks, if any.
    #[serde(default)]
    pub clineignore_path: Option<String>,
    /// Whether permissions are configured (commands then run under bash, the syntax checked).
    #[serde(default)]
    pub configured: bool,
}

/// Asks the host about `command`, run in the workspace root named `root`. A host without the
/// service cannot vouch for the command: it is refused.
pub fn check(ctx: &Ctx<'_>, command: &str, root: &str) -> Result<CommandCheck, ToolError> {
    ask(ctx, json!({ "command": command, "root": root }))
}

/// Asks the host about `program` run with `args` without a shell (`command` is how it reads as
/// one line, for the permissions).
pub fn check_argv(
    ctx: &Ctx<'_>,
    command: &str,
    program: &str,
    args: &[String],
    root: &str,
) -> Result<CommandCheck, ToolError> {
    ask(
        ctx,
        json!({ "command": command, "program": program, "args": args, "root": root }),
    )
}

fn ask(ctx: &Ctx<'_>, request: serde_json::Value) -> Result<CommandCheck, ToolError> {
    match ctx.call_service("policy", "check_command", &request) {
        Ok(reply) => serde_json::from_value(reply).map_err(|e| {
            ToolError::new(
                ToolErrorKind::INTERNAL,
                format!("invalid command check from the host: {e}"),
            )
        }),
        Err(e) if e.kind == ToolErrorKind::UNAVAILABLE => Err(ToolError::new(
            ToolErrorKind::BLOCKED,
            "This host cannot check commands against its policies, so the command was not run.",
        )),
        Err(e) => Err(e),
    }
}
