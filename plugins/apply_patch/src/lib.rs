//! The `apply_patch` tool: V4A patches that add, update, delete and move files.
//!
//! A call goes through four stages, and nothing touches the disk before the last one:
//! 1. [`preprocess`]: shell wrappers stripped, sentinels checked; the files the patch updates or
//!    deletes are checked against `.clineignore` and read ([`files`]).
//! 2. [`parser`]: the patch's actions, every hunk placed in its file by [`matching`].
//! 3. [`plan`]: every file's new content computed in memory ([`apply`]), every destination
//!    checked; then one approval for the whole patch ([`question`]).
//! 4. [`commit`]: all files written or removed together, or none.
//!
//! A stage that refuses returns a [`Failure`] ([`error`]).
//!
//! The result texts and error messages are Cline's (`Error executing apply_patch: <message>`).
//! Where Cline loses data or hangs, the port fails instead; each module lists its deliberate
//! differences. In short: hunks that cannot be placed fail the patch (Cline skips them
//! silently); blank lines never hang the parser nor split hunks; `*** End of File` works when
//! the file ends with a newline; `*** Add File` and `*** Move to` refuse to overwrite existing
//! files; a failure part-way leaves every file as it was; a patch with no file section at all
//! is an error (Cline reports success having changed nothing).
//!
//! Approval: one question for the whole patch, listing every file with what the patch does to
//! it and the lines it adds and removes (Cline asks once per file; a patch is applied whole or
//! not at all, so it is approved whole). The request names a file outside the workspace when
//! there is one, so the host's inside/outside-workspace rule holds for every file: a patch that
//! reaches outside needs what an edit outside needs. With a file outside, the question comes
//! before any file is read; otherwise after planning, so a patch that cannot apply asks nobody.
//! A refusal changes nothing.

pub mod apply;
pub mod commit;
pub mod error;
pub mod files;
mod js;
pub mod matching;
pub mod parser;
pub mod plan;
pub mod preprocess;
mod question;
pub mod report;
mod texts;

use std::collections::HashMap;

use serde_json::json;
use tool_api::sdk::prelude::*;

pub use crate::error::{Failure, PatchError};

use crate::files::Loaded;
use crate::plan::Touched;

/// The apply_patch tool.
#[derive(Debug, Default)]
pub struct ApplyPatch;

impl Tool for ApplyPatch {
    fn specs(&self) -> Vec<ToolSpec> {
        // No path parameters (the paths are inside the patch) and no declared approval: the
        // tool checks and asks per file itself.
        vec![ToolSpec::simple(
            "apply_patch",
            texts::DESCRIPTION,
            &[("input", texts::INPUT_PARAM, true)],
        )
        .destructive()
        .title("Apply patch")]
    }

    fn describe(&self, _call: &Call) -> String {
        texts::DESCRIBE.to_string()
    }

    fn execute(&self, call: &Call, ctx: &Ctx<'_>) -> ToolResult {
        // The host has checked it already; this covers a host that did not.
        let input = call.params.required("input")?;
        apply_patch(&input, ctx)
    }
}

/// Runs one patch against the workspace behind `ctx`.
///
/// Every path the patch names is checked (boundary, `.clineignore`) first, and each one outside
/// the workspace is approved, before any file is read: a result never tells anything about a
/// file the call may not read. Files inside are approved as in Cline, after planning, with the
/// lines the hunks start at.
fn apply_patch(input: &str, ctx: &Ctx<'_>) -> ToolResult {
    let lines = preprocess::patch_lines(input).map_err(Failure::from)?;
    // Each path the patch names, and where it leads as the user is shown it.
    let mut outside: Vec<(String, String)> = Vec::new();
    let mut shown = HashMap::new();
    for (path, _) in preprocess::patch_paths(input) {
        let verdict = checked_verdict(&path, ctx)?;
        if !verdict.inside_workspace {
            outside.push((path.clone(), verdict.shown()));
        }
        shown.insert(path, verdict.shown());
    }
    let changes = preprocess::changes(input);
    let shown = |path: &str| shown.get(path).cloned().unwrap_or_else(|| path.to_string());
    let outside_shown: Vec<String> = outside.iter().map(|(_, s)| s.clone()).collect();
    let question = || question::text(&changes, &shown, &outside_shown);
    let mut approved = false;
    if let Some((first, _)) = outside.first() {
        approve(ctx, first, question())?;
        approved = true;
    }
    let loaded = load_files(input, ctx)?;
    let texts: HashMap<String, String> = loaded
        .iter()
        .map(|(path, file)| (path.clone(), file.text.clone()))
        .collect();
    let cancelled = || ctx.is_cancelled();
    let parsed = parser::parse(&lines, &texts, &cancelled).map_err(Failure::from)?;
    // A patch without a single file section would report success having changed nothing.
    if parsed.actions.is_empty() {
        return Err(Failure::from(PatchError::new(texts::NO_ACTIONS)).into());
    }
    let check = |path: &str| checked_verdict(path, ctx);
    let plan = plan::plan(&parsed, &loaded, ctx.workspace(), &check)?;

    let messages: Vec<String> = plan
        .touched
        .iter()
        .map(|file| ui_message(file, input))
        .collect();
    if let (false, Some(first)) = (approved, plan.touched.first()) {
        approve(ctx, &first.path, question())?;
    }
    for message in &messages {
        ctx.say("tool", message);
    }
    if ctx.is_cancelled() {
        return Err(ToolError::new(ToolErrorKind::CANCELLED, texts::CANCELLED));
    }
    commit::commit(ctx.workspace(), &plan.ops).map_err(|e| {
        if e.path_changed {
            // Nothing was changed: the host checks the paths again and runs the patch again.
            Failure::Host(ToolError::new(ToolErrorKind::PATH_CHANGED, e.message))
        } else {
            Failure::from(PatchError(e.message))
        }
    })?;

    // The files changed: a later read_file must not answer "already read".
    for file in &plan.touched {
        ctx.forget_file_read(&file.verdict.absolute);
        if file.verdict.resolved != file.verdict.absolute {
            ctx.forget_file_read(&file.verdict.resolved);
        }
    }
    Ok(ToolContent::text(report::success_text(
        &plan.results,
        parsed.fuzz,
    )))
}

/// Checks and reads every file the patch updates or deletes, in patch order.
fn load_files(input: &str, ctx: &Ctx<'_>) -> Result<HashMap<String, Loaded>, Failure> {
    let mut loaded = HashMap::new();
    for path in preprocess::files_to_load(input) {
        if loaded.contains_key(&path) {
            continue;
        }
        let verdict = checked_verdict(&path, ctx)?;
        let file = files::load(ctx.workspace(), &path, verdict)?;
        loaded.insert(path, file);
    }
    Ok(loaded)
}

/// Asks for the approval of the patch, its request naming `path`; a denial ends the patch.
fn approve(ctx: &Ctx<'_>, path: &str, message: String) -> Result<(), ToolError> {
    ctx.approve(
        &ApprovalRequest {
            tool: "apply_patch".to_string(),
            category: ApprovalCategory::Edit,
            path: Some(path.to_string()),
            message,
        },
        texts::PATCH_DENIED,
    )
}

/// The host's verdict on a path the patch touches; a `.clineignore`d one (or one through a
/// magic link) is refused.
fn checked_verdict(path: &str, ctx: &Ctx<'_>) -> Result<PathVerdict, Failure> {
    let verdict = ctx.check_path(path).map_err(Failure::Host)?;
    if verdict.refused {
        return Err(Failure::Host(
            FsError::Refused {
                path: path.to_string(),
            }
            .into(),
        ));
    }
    if verdict.ignored {
        ctx.say("clineignore_error", path);
        return Err(Failure::Blocked(path.to_string()));
    }
    Ok(verdict)
}

/// The `ClineSayTool` JSON for one file: what the user approves and the UI shows. Like Cline,
/// the content is the whole patch.
fn ui_message(file: &Touched, input: &str) -> String {
    // The path and, when a link makes it lead elsewhere, where: what the user approves.
    let mut message = json!({
        "tool": file.tool,
        "path": file.verdict.shown(),
        "content": input,
        "operationIsLocatedInWorkspace": file.verdict.inside_workspace,
    });
    if !file.start_line_numbers.is_empty() {
        message["startLineNumbers"] = json!(file.start_line_numbers);
    }
    message.to_string()
}

tool_api::submit_tool!(ApplyPatch);
tool_api::export_plugin!(
    capabilities: [
        tool_api::model::access::FS_FULL,
        "toolset:cline-legacy",
    ]
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spec_declares_one_required_input_and_no_paths() {
        let specs = ApplyPatch.specs();
        let summary: Vec<_> = specs
            .iter()
            .map(|s| {
                (
                    s.name.as_str(),
                    s.required_params(),
                    s.destructive,
                    s.approval,
                    s.path_params.is_empty(),
                    s.partial,
                )
            })
            .collect();
        assert_eq!(
            summary,
            vec![("apply_patch", vec!["input"], true, None, true, false)]
        );
    }

    #[test]
    fn failures_are_wrapped_like_clines_executor() {
        let patch: ToolError = Failure::Patch(PatchError::new("File not found: a")).into();
        let blocked: ToolError = Failure::Blocked("s/k".to_string()).into();
        assert_eq!(
            [
                (patch.kind, patch.message.to_string()),
                (blocked.kind, blocked.message.to_string())
            ],
            [
                (
                    ToolErrorKind::FAILED,
                    "Error executing apply_patch: File not found: a".to_string()
                ),
                (
                    ToolErrorKind::BLOCKED,
                    "Error executing apply_patch: Access denied: s/k".to_string()
                )
            ]
        );
    }

    #[test]
    fn a_patch_without_file_sections_is_an_error_and_changes_nothing() {
        let ws = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(ws.path().join("a.txt"), "one\n").unwrap_or_else(|e| panic!("{e}"));
        let host = tool_api::sdk::testing::TestHost::new(ws.path());
        for input in [
            "*** Begin Patch\n*** End Patch",
            "*** Begin Patch\n\n*** End Patch\n",
            // A heredoc wrapper around an empty patch.
            "apply_patch <<'EOF'\n*** Begin Patch\n*** End Patch\nEOF",
        ] {
            let error = host
                .call(&ApplyPatch, "apply_patch", json!({ "input": input }))
                .err()
                .unwrap_or_else(|| panic!("{input:?} was applied"));
            assert_eq!(error.kind, ToolErrorKind::FAILED, "{input:?}");
            assert_eq!(
                error.message.as_str(),
                texts::failed(texts::NO_ACTIONS),
                "{input:?}"
            );
        }
        assert!(texts::NO_ACTIONS.contains("*** Update File: path/to/file"));
        let files: Vec<_> = std::fs::read_dir(ws.path())
            .unwrap_or_else(|e| panic!("{e}"))
            .map(|e| e.map(|e| e.file_name()).ok())
            .collect();
        assert_eq!(files, [Some("a.txt".into())]);
        assert_eq!(
            std::fs::read_to_string(ws.path().join("a.txt"))
                .ok()
                .as_deref(),
            Some("one\n")
        );
    }

    #[test]
    fn denials_carry_the_users_feedback() {
        assert_eq!(
            tool_api::texts::denied_with_feedback(texts::PATCH_DENIED, None),
            "The user denied this patch operation."
        );
        assert_eq!(
            tool_api::texts::denied_with_feedback(texts::PATCH_DENIED, Some("not now")),
            "The user denied this patch operation.\n\nThe user provided the following feedback:\n<feedback>\nnot now\n</feedback>"
        );
    }
}
