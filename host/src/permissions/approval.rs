//! Approval: whether a call may go ahead without asking, and what happens when nobody can be asked.

use tool_api::model::{
    ApprovalCategory, ApprovalDecision, ApprovalRequest, AskResponse, PathVerdict,
};

use crate::settings::AutoApprove;
use crate::ui::Ui;

/// How approvals are decided for a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalMode {
    /// `--yes`: everything is approved.
    ApproveAll,
    /// Auto-approved categories go ahead; the rest is asked on the terminal.
    Ask,
    /// No terminal and no `--yes`: auto-approved categories go ahead; the rest is denied.
    DenyUnlessAuto,
}

/// Cline's auto-approval rule (the SDK's [`tool_api::sdk::auto_approves`], which plugins use
/// to preview streaming calls) over the typed `[auto_approve]` settings.
pub fn auto_approves(
    settings: &AutoApprove,
    category: ApprovalCategory,
    inside_workspace: bool,
) -> bool {
    let setting = |key: &str| match key {
        "read_files" => Some(settings.read_files),
        "read_files_externally" => Some(settings.read_files_externally),
        "edit_files" => Some(settings.edit_files),
        "edit_files_externally" => Some(settings.edit_files_externally),
        "execute_safe_commands" => Some(settings.execute_safe_commands),
        "execute_all_commands" => Some(settings.execute_all_commands),
        "use_browser" => Some(settings.use_browser),
        "use_web" => Some(settings.use_web),
        "use_mcp" => Some(settings.use_mcp),
        _ => None,
    };
    tool_api::sdk::auto_approves(setting, category, inside_workspace)
}

/// Everything an approval depends on besides the request.
pub struct Asked<'a> {
    /// How approvals are decided for the session.
    pub mode: ApprovalMode,
    /// The settings' auto-approval switches.
    pub auto_approve: &'a AutoApprove,
    /// Whether the operation stays inside the workspace.
    pub inside: bool,
    /// Whether a subagent made the call (subagents never ask the user).
    pub subagent: bool,
    /// Who would be asked.
    pub ui: &'a dyn Ui,
}

/// How a decision the user made was reached (see [`decide`]).
pub const BY_THE_USER: &str = "by the user";

/// The decision on `request`, and how it was reached (for the `approval` event): `--yes`,
/// the settings, the user, or nobody to ask.
pub fn decide(request: &ApprovalRequest, asked: &Asked<'_>) -> (ApprovalDecision, &'static str) {
    let approved = ApprovalDecision {
        approved: true,
        feedback: None,
    };
    if asked.mode == ApprovalMode::ApproveAll {
        return (approved, "--yes");
    }
    if auto_approves(asked.auto_approve, request.category, asked.inside) {
        return (approved, "auto-approved by the settings");
    }
    let refused = |feedback| ApprovalDecision {
        approved: false,
        feedback,
    };
    if asked.subagent {
        return (
            refused(None),
            "not auto-approved, and subagents do not ask the user",
        );
    }
    match asked.mode {
        ApprovalMode::Ask => match asked.ui.ask("tool", &request.message) {
            Some(reply) if reply.response == AskResponse::Yes => (approved, BY_THE_USER),
            Some(reply) => (refused(reply.text.filter(|t| !t.is_empty())), BY_THE_USER),
            None => (refused(None), "nobody to ask"),
        },
        ApprovalMode::ApproveAll | ApprovalMode::DenyUnlessAuto => {
            (refused(None), "not auto-approved and no terminal to ask")
        }
    }
}

/// The message of the host's own approval request for a call of `tool` whose first path
/// parameter has `verdict`: the path, and where it really leads when a link makes that
/// somewhere else (`PathVerdict::shown`).
pub fn message(tool: &str, verdict: Option<&PathVerdict>) -> String {
    match verdict {
        Some(v) if v.inside_workspace => format!("{tool} wants to use {}", v.shown()),
        Some(v) => format!("{tool} wants to use {} (outside the workspace)", v.shown()),
        None => format!("{tool} wants to run"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn external_needs_local_too() {
        let mut s = AutoApprove {
            read_files: false,
            read_files_externally: true,
            ..AutoApprove::default()
        };
        assert!(!auto_approves(&s, ApprovalCategory::Read, false));
        s.read_files = true;
        assert!(auto_approves(&s, ApprovalCategory::Read, false));
        s.read_files_externally = false;
        assert!(!auto_approves(&s, ApprovalCategory::Read, false));
        assert!(auto_approves(&s, ApprovalCategory::Read, true));
    }

    #[test]
    fn all_commands_need_safe_commands() {
        let s = AutoApprove {
            execute_all_commands: true,
            ..AutoApprove::default()
        };
        assert!(!auto_approves(&s, ApprovalCategory::Command, true));
    }
}
