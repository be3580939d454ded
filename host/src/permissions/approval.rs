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
/// the settings, the user, or nobody to ask. A refusal the user did not make says who made
/// it and the setting that allows the operation ([`ApprovalDecision::refusal`]).
pub fn decide(request: &ApprovalRequest, asked: &Asked<'_>) -> (ApprovalDecision, &'static str) {
    let approved = ApprovalDecision {
        approved: true,
        feedback: None,
        refusal: None,
    };
    if asked.mode == ApprovalMode::ApproveAll {
        return (approved, "--yes");
    }
    if auto_approves(asked.auto_approve, request.category, asked.inside) {
        return (approved, "auto-approved by the settings");
    }
    let by_user = |feedback| ApprovalDecision {
        approved: false,
        feedback,
        refusal: None,
    };
    let refused = |who: &str, how: &'static str| {
        let refusal = format!(
            "{} was not run: it needs the user's approval, and {who}. {} allows it.",
            request.tool,
            allowing(request.category, asked.inside)
        );
        let decision = ApprovalDecision {
            approved: false,
            feedback: None,
            refusal: Some(refusal),
        };
        (decision, how)
    };
    if asked.subagent {
        return refused(
            "subagents do not ask the user",
            "not auto-approved, and subagents do not ask the user",
        );
    }
    match asked.mode {
        ApprovalMode::Ask => match asked.ui.ask("tool", &request.message) {
            Some(reply) if reply.response == AskResponse::Yes => (approved, BY_THE_USER),
            Some(reply) => (by_user(reply.text.filter(|t| !t.is_empty())), BY_THE_USER),
            None => refused(
                "nobody answered (the client cannot ask its user, or no answer came in time)",
                "nobody to ask",
            ),
        },
        ApprovalMode::ApproveAll | ApprovalMode::DenyUnlessAuto => refused(
            "there is nobody to ask (no terminal, and the frontend asks nothing)",
            "not auto-approved and no terminal to ask",
        ),
    }
}

/// The settings that auto-approve `category` (inside the workspace or not), as a user
/// writes them, or `--yes`.
fn allowing(category: ApprovalCategory, inside: bool) -> String {
    let keys: &[&str] = match (category, inside) {
        (ApprovalCategory::Read, true) => &["read_files"],
        (ApprovalCategory::Read, false) => &["read_files", "read_files_externally"],
        (ApprovalCategory::Edit, true) => &["edit_files"],
        (ApprovalCategory::Edit, false) => &["edit_files", "edit_files_externally"],
        (ApprovalCategory::SafeCommand, _) => &["execute_safe_commands"],
        (ApprovalCategory::Command, _) => &["execute_safe_commands", "execute_all_commands"],
        (ApprovalCategory::Browser, _) => &["use_browser"],
        (ApprovalCategory::Web, _) => &["use_web"],
        (ApprovalCategory::Mcp, _) => &["use_mcp"],
    };
    let settings: Vec<String> = keys.iter().map(|key| format!("{key} = true")).collect();
    format!(
        "[auto_approve] {} in the settings, or --yes,",
        settings.join(" and ")
    )
}

/// Lines of one parameter an approval shows, at most.
const SHOWN_LINES: usize = 20;

/// The message of the host's own approval request for a call of `tool` (approved as
/// `category`) whose first path parameter has `verdict`: a question naming the path, and
/// where it really leads when a link makes that somewhere else (`PathVerdict::shown`); then
/// the call's other parameters (`shown`), each cut to its first lines, so that the user sees
/// what is approved. The first line alone names the operation (the `approval` event's).
pub fn message(
    tool: &str,
    category: ApprovalCategory,
    verdict: Option<&PathVerdict>,
    shown: &[(&str, String)],
) -> String {
    let verb = match category {
        ApprovalCategory::Read => "read",
        ApprovalCategory::Edit => "change",
        _ => "use",
    };
    let mut message = match verdict {
        Some(v) if v.inside_workspace => format!("Let {tool} {verb} {}?", v.shown()),
        Some(v) => format!("Let {tool} {verb} {} (outside the workspace)?", v.shown()),
        None => format!("Let {tool} run?"),
    };
    for (name, value) in shown {
        let lines: Vec<&str> = value.lines().collect();
        message.push_str(&format!("\n\n{name}: "));
        message.push_str(&lines[..lines.len().min(SHOWN_LINES)].join("\n"));
        if lines.len() > SHOWN_LINES {
            message.push_str(&format!("\n… {} more lines", lines.len() - SHOWN_LINES));
        }
    }
    message
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
    fn a_refusal_nobody_made_says_so_and_names_the_setting() {
        let request = ApprovalRequest {
            tool: "write_to_file".into(),
            category: ApprovalCategory::Edit,
            path: None,
            message: "write a.txt".into(),
        };
        let settings = AutoApprove::default();
        let asked = |mode, subagent, inside| Asked {
            mode,
            auto_approve: &settings,
            inside,
            subagent,
            ui: &crate::ui::HeadlessUi,
        };
        let (decision, how) = decide(&request, &asked(ApprovalMode::DenyUnlessAuto, false, true));
        assert_eq!(how, "not auto-approved and no terminal to ask");
        assert_eq!(
            decision.denial(tool_api::texts::TOOL_DENIED),
            "write_to_file was not run: it needs the user's approval, and there is nobody to ask \
             (no terminal, and the frontend asks nothing). [auto_approve] edit_files = true in \
             the settings, or --yes, allows it."
        );
        let (decision, _) = decide(&request, &asked(ApprovalMode::Ask, true, false));
        assert_eq!(
            decision.refusal.as_deref(),
            Some(
                "write_to_file was not run: it needs the user's approval, and subagents do not \
                 ask the user. [auto_approve] edit_files = true and edit_files_externally = true \
                 in the settings, or --yes, allows it."
            )
        );
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
