//! What the host's policies say about a command: the command permissions
//! (`CLINE_COMMAND_PERMISSIONS`, the `command-policy` crate) and Cline's `.clineignore`
//! heuristic for file-reading commands, together.

use serde::Serialize;

pub use command_policy::*;

use super::Workspace;

/// Everything the policies say about a command: the permission verdict, the argument
/// `.clineignore` blocks (Cline's heuristic for file-reading commands), and whether permissions
/// are configured at all.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CommandCheck {
    /// The permission verdict.
    #[serde(flatten)]
    pub verdict: CommandVerdict,
    /// The first argument `.clineignore` blocks, for commands that read files.
    pub clineignore_path: Option<String>,
    /// Whether `CLINE_COMMAND_PERMISSIONS` is set.
    pub configured: bool,
}

/// Checks `command`, which runs in the workspace root `root`, against the permissions and
/// `.clineignore`.
pub fn check_command(
    workspace: &Workspace,
    root: usize,
    permissions: &CommandPermissions,
    command: &str,
) -> CommandCheck {
    CommandCheck {
        verdict: permissions.check(command),
        clineignore_path: super::clineignore::blocked_command_arg(workspace, root, command),
        configured: permissions.is_configured(),
    }
}

/// Everything `toolhost policy check-command` reports: the check, how each stage went, and
/// what is wrong with a malformed configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CommandExplanation {
    /// The check, as execute_command gets it.
    #[serde(flatten)]
    pub check: CommandCheck,
    /// What each stage looked at.
    #[serde(flatten)]
    pub trace: Trace,
    /// What is wrong with `CLINE_COMMAND_PERMISSIONS`, when it is malformed.
    pub configuration_problem: Option<String>,
}

/// [`check_command`], with how each stage went.
pub fn explain_command(
    workspace: &Workspace,
    root: usize,
    permissions: &CommandPermissions,
    command: &str,
) -> CommandExplanation {
    let (verdict, trace) = permissions.explain(command);
    CommandExplanation {
        check: CommandCheck {
            verdict,
            clineignore_path: super::clineignore::blocked_command_arg(workspace, root, command),
            configured: permissions.is_configured(),
        },
        trace,
        configuration_problem: permissions.problem().map(str::to_string),
    }
}
