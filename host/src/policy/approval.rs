//! Approval: whether a call may go ahead without asking, and what happens when nobody can be asked.

use tool_api::model::ApprovalCategory;

use crate::settings::AutoApprove;

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

/// Cline's auto-approval rule: a category grants inside-workspace operations; its "externally"
/// companion extends that to outside, and only on top of the inside grant.
pub fn auto_approves(
    settings: &AutoApprove,
    category: ApprovalCategory,
    inside_workspace: bool,
) -> bool {
    let (local, external) = match category {
        ApprovalCategory::Read => (settings.read_files, settings.read_files_externally),
        ApprovalCategory::Edit => (settings.edit_files, settings.edit_files_externally),
        ApprovalCategory::SafeCommand => (settings.execute_safe_commands, false),
        ApprovalCategory::Command => (
            settings.execute_safe_commands && settings.execute_all_commands,
            false,
        ),
        ApprovalCategory::Browser => (settings.use_browser, settings.use_browser),
        ApprovalCategory::Web => (settings.use_web, settings.use_web),
        ApprovalCategory::Mcp => (settings.use_mcp, settings.use_mcp),
    };
    match category {
        // Commands have no path; their grants do not depend on the workspace boundary.
        ApprovalCategory::SafeCommand | ApprovalCategory::Command => local,
        _ if inside_workspace => local,
        _ => local && external,
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
