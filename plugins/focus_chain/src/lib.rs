//! The `focus_chain` tool: keeps the task's progress checklist (Cline's "focus chain").
//!
//! In Cline `focus_chain` is a name without a handler: the checklist travels as the optional
//! `task_progress` parameter of other tools, and the executor stores it after every call. Here
//! the name is a real tool, so that a host without Cline's executor (or the model directly) can
//! keep the checklist:
//! - with `task_progress`, the list (trimmed) is saved and shown to the user (`task_progress`
//!   event);
//! - without it, the saved list is read back (the user may have edited the file) and shown.
//!
//! Where the list lives: handlers keep no task state, so the list is kept where Cline keeps it,
//! in a markdown file per task (`focus_chain_taskid_<task id>.md`, Cline's format, editable by
//! the user). The directory is the setting `focus_chain.dir` (`~` and `${env:NAME}` expanded), else
//! `$XDG_DATA_HOME/toolhost/focus_chain`, else `~/.local/share/toolhost/focus_chain`. A list
//! therefore lives as long as the host's task id: across the calls of one host, not across
//! separate `toolhost call` runs, each of which is a new task. `focus_chain.enabled = false`
//! turns the tool off (Cline's focus-chain setting).
//!
//! The result texts are this port's own: Cline never runs this tool, so it has none.

mod checklist;

use std::path::{Path, PathBuf};

use tool_api::sdk::prelude::*;

const DESCRIPTION: &str = "Keep the task's progress checklist. Pass `task_progress` as a markdown \
checklist, one item per line (\"- [ ] step\" for open steps, \"- [x] step\" for done ones), to \
create or replace the list; it is shown to the user. Call it without `task_progress` to read the \
current list back, for example after the user has edited it. Update it as steps get done.";

/// The result when there is no list yet.
pub const NO_LIST: &str = "No task progress list exists for this task yet. Call focus_chain \
with task_progress set to a markdown checklist (\"- [ ] step\" / \"- [x] step\", one per line) \
to create one.";

/// The focus_chain tool.
#[derive(Debug, Default)]
pub struct FocusChain;

impl Tool for FocusChain {
    fn specs(&self) -> Vec<ToolSpec> {
        vec![ToolSpec::simple(
            "focus_chain",
            DESCRIPTION,
            &[(
                "task_progress",
                "Optional: the whole checklist in markdown; leave it out to read the current list.",
                false,
            )],
        )
        .title("Task checklist")
        .idempotent()]
    }

    fn execute(&self, call: &Call, ctx: &Ctx<'_>) -> ToolResult {
        if ctx.setting::<bool>("focus_chain.enabled") == Some(false) {
            return Err(ToolError::new(
                ToolErrorKind::UNAVAILABLE,
                "The focus chain is turned off in the settings (focus_chain.enabled = false).",
            ));
        }
        let dir = list_dir(ctx)?.ok_or_else(|| {
            ToolError::new(
                ToolErrorKind::UNAVAILABLE,
                "There is no directory to keep the task progress list in: set focus_chain.dir in the toolhost settings.",
            )
        })?;
        let file = dir.join(checklist::file_name(&call.task.task_id));
        let given = call.params.string_or_empty("task_progress");
        let list = given.trim();
        if !list.is_empty() {
            save(&file, &checklist::file_content(&call.task.task_id, list))?;
            ctx.say("task_progress", list);
            let (done, total) = checklist::counts(list);
            return Ok(ToolContent::text(format!(
                "Task progress list updated: {done} of {total} items completed."
            )));
        }
        let saved = std::fs::read_to_string(&file)
            .ok()
            .and_then(|text| checklist::extract(&text));
        match saved {
            Some(list) => {
                ctx.say("task_progress", &list);
                let (done, total) = checklist::counts(&list);
                Ok(ToolContent::text(format!(
                    "Current task progress ({done} of {total} items completed):\n{list}"
                )))
            }
            None => Ok(ToolContent::text(NO_LIST)),
        }
    }
}

/// Where the lists are kept (see the crate docs).
fn list_dir(ctx: &Ctx<'_>) -> Result<Option<PathBuf>, ToolError> {
    if let Some(dir) = ctx.setting_path("focus_chain.dir")? {
        return Ok(Some(dir));
    }
    Ok(tool_api::sdk::paths::data_dir().map(|dir| dir.join("focus_chain")))
}

fn save(file: &Path, content: &str) -> Result<(), ToolError> {
    let written = match file.parent() {
        Some(dir) => std::fs::create_dir_all(dir).and_then(|()| std::fs::write(file, content)),
        None => std::fs::write(file, content),
    };
    written.map_err(|e| {
        ToolError::new(
            ToolErrorKind::FAILED,
            format!(
                "Cannot save the task progress list to {}: {e}",
                file.display()
            ),
        )
    })
}

tool_api::submit_tool!(FocusChain);
tool_api::export_plugin!(
    capabilities: [
        tool_api::model::access::FS_FULL,
        "toolset:cline-legacy",
    ]
);
