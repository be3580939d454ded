//! A call whose tool found a path changed after the host checked it ([`ErrorKind::
//! PATH_CHANGED`]: a directory on the way replaced, or made a symbolic link, while the approval
//! question waited, say). The tool reached nothing through it; the host checks the call's paths
//! again and, where the spec declares a category, asks again with where they lead now, and the
//! handler runs again with the new verdicts. A tool that asks for itself asks again when it
//! runs again. Nobody to ask is a refusal that says so; a path that keeps changing is refused.

use crate::error::{CallError, ErrorKind};
use tool_api::model::ApprovalRequest;

use super::checks;
use super::flow::ReadyCall;
use super::host::Host;
use super::outcome::denied;
use crate::permissions::approval;

/// How many times one call's paths may change before the call is refused.
const MAX_CHANGES: u32 = 3;

impl Host {
    /// Checks the paths of `ready` again after its handler failed with `changed` (the
    /// `changes`th time in this call): the call ready to run again, or why it may not.
    pub(super) fn check_again(
        &self,
        ready: &mut ReadyCall,
        changed: &CallError,
        changes: u32,
    ) -> Result<(), CallError> {
        if changes > MAX_CHANGES {
            return Err(CallError::new(
                ErrorKind::Blocked,
                format!(
                    "{} It changed {MAX_CHANGES} times while the call was being checked, so it was not run.",
                    changed.message
                ),
            ));
        }
        let name = ready.tool.spec.name.clone();
        let paths = checks::path_values(&ready.tool.spec, &ready.params);
        let verdicts = checks::verdicts(&self.workspace, &paths);
        checks::paths_allowed(&verdicts)?;
        ready.call.carry_verdicts(&verdicts);
        let Some(category) = ready.tool.spec.approval else {
            return Ok(());
        };
        let first = verdicts.first();
        let request = ApprovalRequest {
            tool: name.clone(),
            category,
            path: paths.first().cloned(),
            message: asked_again(&approval::message(
                &name,
                category,
                first,
                &checks::shown_params(&ready.tool.spec, &ready.params),
            )),
        };
        let inside = verdicts.iter().all(|v| v.inside_workspace);
        let ui = self.ui_for(&ready.options);
        let (decision, how) = self.decide_approval_for(&request, inside, ready.subagent, ui);
        if decision.approved {
            Ok(())
        } else if how == approval::BY_THE_USER {
            Err(denied(Some(&decision)))
        } else {
            let now = first.map_or_else(|| name.clone(), |v| v.shown());
            Err(CallError::new(
                ErrorKind::Denied,
                format!(
                    "{} It now leads to {now}, which was not approved ({how}); nothing was done.",
                    changed.message
                ),
            ))
        }
    }
}

/// An approval's message asked a second time: its first line says why.
fn asked_again(message: &str) -> String {
    const WHY: &str = " (asked again: the path changed after it was checked)";
    match message.split_once('\n') {
        Some((operation, rest)) => format!("{operation}{WHY}\n{rest}"),
        None => format!("{message}{WHY}"),
    }
}
