//! V4A patches that add, update, delete and move files, as both generations' `apply_patch`
//! apply them: the legacy tool and the one of Cline's SDK set differ only in their texts.
//!
//! A patch goes through four stages, and nothing touches the disk before the last one:
//! 1. [`preprocess`]: shell wrappers stripped, sentinels checked; the files the patch updates or
//!    deletes are checked against `.clineignore` and read ([`files`]).
//! 2. [`parser`]: the patch's actions, every hunk placed in its file by [`matching`].
//! 3. [`plan`]: every file's new content computed in memory ([`apply`]), every destination
//!    checked; then one approval for the whole patch ([`question`]).
//! 4. [`commit`]: all files written or removed together, or none.
//!
//! A stage that refuses returns a [`Failure`] ([`error`]).
//!
//! Where Cline loses data or hangs, the port fails instead; each module lists its deliberate
//! differences. In short: hunks that cannot be placed fail the patch (Cline's legacy tool skips
//! them silently); blank lines never hang the parser nor split hunks; `*** End of File` works
//! when the file ends with a newline; `*** Add File` and `*** Move to` refuse to overwrite
//! existing files; a failure part-way leaves every file as it was; a patch with no file section
//! at all is an error (Cline reports success having changed nothing).
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
pub mod js;
pub mod matching;
pub mod parser;
pub mod plan;
pub mod preprocess;
mod question;
pub mod texts;

use std::collections::HashMap;

use serde_json::json;
use tool_api::sdk::prelude::*;

pub use crate::error::{Failure, PatchError};

use crate::files::Loaded;
use crate::parser::Action;
use crate::plan::{Entry, Touched};

/// A patch applied.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    /// Each file's result entry, in the order Cline inserts them.
    pub results: Vec<(String, Entry)>,
    /// Each file the patch names, as Cline's SDK lists it (`a.txt`, `a.txt: [deleted]`,
    /// `a.txt -> b.txt`), in the order a JavaScript object lists them.
    pub files: Vec<String>,
    /// How far hunks were from matching exactly (0: every one matched).
    pub fuzz: u64,
}

/// Applies the patch `input` to the workspace behind `ctx`, for the tool `tool`.
///
/// Every path the patch names is checked (boundary, `.clineignore`) first, and each one outside
/// the workspace is approved, before any file is read: a result never tells anything about a
/// file the call may not read. Files inside are approved as in Cline, after planning, with the
/// lines the hunks start at.
pub fn apply_patch(input: &str, ctx: &Ctx<'_>, tool: &str) -> Result<Applied, Failure> {
    let lines = preprocess::patch_lines(input)?;
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
        approve(ctx, tool, first, question())?;
        approved = true;
    }
    let loaded = load_files(input, ctx)?;
    let texts: HashMap<String, String> = loaded
        .iter()
        .map(|(path, file)| (path.clone(), file.text.clone()))
        .collect();
    let cancelled = || ctx.is_cancelled();
    let parsed = parser::parse(&lines, &texts, &cancelled)?;
    // A patch without a single file section would report success having changed nothing.
    if parsed.actions.is_empty() {
        return Err(PatchError::new(texts::NO_ACTIONS).into());
    }
    let check = |path: &str| checked_verdict(path, ctx);
    let plan = plan::plan(&parsed, &loaded, ctx.workspace(), &check)?;

    let messages: Vec<String> = plan
        .touched
        .iter()
        .map(|file| ui_message(file, input))
        .collect();
    if let (false, Some(first)) = (approved, plan.touched.first()) {
        approve(ctx, tool, &first.path, question())?;
    }
    for message in &messages {
        ctx.say("tool", message);
    }
    if ctx.is_cancelled() {
        return Err(Failure::Host(ToolError::new(
            ToolErrorKind::CANCELLED,
            texts::CANCELLED,
        )));
    }
    commit::commit(ctx.workspace(), &plan.ops).map_err(|e| {
        if e.path_changed {
            // Nothing was changed: the host checks the paths again and runs the patch again.
            Failure::Host(ToolError::new(ToolErrorKind::PATH_CHANGED, e.message))
        } else {
            Failure::from(PatchError(e.message))
        }
    })?;

    // The files changed: a later read must not answer "already read".
    for file in &plan.touched {
        ctx.forget_file_read(&file.verdict.absolute);
        if file.verdict.resolved != file.verdict.absolute {
            ctx.forget_file_read(&file.verdict.resolved);
        }
    }
    let keys: Vec<&str> = parsed.actions.iter().map(|(p, _)| p.as_str()).collect();
    let files = js::object_order(&keys)
        .into_iter()
        .map(|i| {
            let (path, action) = &parsed.actions[i];
            match action {
                Action::Delete => format!("{path}: [deleted]"),
                Action::Update {
                    move_to: Some(to), ..
                } => format!("{path} -> {to}"),
                Action::Add { .. } | Action::Update { .. } => path.clone(),
            }
        })
        .collect();
    Ok(Applied {
        results: plan.results,
        files,
        fuzz: parsed.fuzz,
    })
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
fn approve(ctx: &Ctx<'_>, tool: &str, path: &str, message: String) -> Result<(), Failure> {
    ctx.approve(
        &ApprovalRequest {
            tool: tool.to_string(),
            category: ApprovalCategory::Edit,
            path: Some(path.to_string()),
            message,
        },
        texts::PATCH_DENIED,
    )
    .map_err(Failure::Host)
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
