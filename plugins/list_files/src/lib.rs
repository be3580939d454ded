//! The `list_files` tool: the entries of a directory, its top level or breadth-first.
//!
//! Behaviour follows Cline's: at most 200 entries (reaching 200 adds a truncation hint), the
//! file system root and the home directory are never listed, a recursive listing skips
//! dependency and build directories, the contents of hidden directories and what `.gitignore`
//! files exclude, and entries `.clineignore` blocks are shown with a 🔒 mark. Entries come in
//! Cline's order: at each level files first, then each directory followed by its contents,
//! names compared naturally and without case.
//!
//! The pieces work without a host: [`list_files`] collects a [`Listing`], and
//! [`format_files_list`] turns it into the model's text.
//!
//! ```no_run
//! use std::convert::Infallible;
//! use std::path::Path;
//! use tool_api::workspace::Workspace;
//!
//! let workspace = Workspace::new(Path::new("/work/project"))?;
//! let dir = workspace.open_dir(&workspace.verdict("src"))?;
//! let listing = list_files::list_files(&dir, Path::new("/work/project/src"), true, 200)?;
//! let text = list_files::format_files_list(&listing.entries, listing.did_hit_limit, |e| {
//!     Ok::<_, Infallible>(e.ignored)
//! });
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Known differences from Cline, all deliberate:
//! - Entries of one directory are read in collation order rather than in the file system's
//!   order, so which entries survive the limit is the same on every machine.
//! - Directory names with glob characters (`[id]`, `{a,b}`) are listed like any other; Cline
//!   escapes only `\`, `(` and `)` and silently lists nothing inside such directories.
//! - Failing to read the listed directory itself (permission denied) is an error rather than
//!   `No files found.`; unreadable subdirectories are skipped as in Cline.
//! - Names that compare equal without case or accents keep a fixed order (by their text).

mod collate;
mod format;
mod rules;
mod walk;

pub use collate::{collation_key, natural_cmp, CollationKey};
pub use format::{format_files_list, sort_key, PathKey, LOCK_PREFIX, NO_FILES, TRUNCATION_HINT};
pub use rules::{gitignore_to_globs, IgnoreRules, DEFAULT_IGNORED_DIRS};
pub use walk::{
    is_restricted, list_files, list_files_with, Entry, ListOptions, Listing, DEFAULT_LIMIT,
    DEFAULT_TIMEOUT,
};

use std::path::Path;

use serde_json::json;
use tool_api::sdk::js::strip_partial_closing_tag;
use tool_api::sdk::prelude::*;

const DESCRIPTION: &str = "List the files and directories inside a directory. Without \
`recursive` only the directory's own entries are listed; with `recursive` set to true its whole \
tree is listed breadth-first, leaving out dependency and build folders, the contents of hidden \
folders and whatever .gitignore excludes. Directories end with `/`. At most 200 entries are \
returned; for a larger tree, list specific subdirectories. Use it to get to know a project's \
layout; to check whether a file you just created exists, do not use it (the result of the \
creation already says so).";

/// The list_files tool.
#[derive(Debug, Default)]
pub struct ListFiles;

impl Tool for ListFiles {
    fn specs(&self) -> Vec<ToolSpec> {
        vec![ToolSpec::simple(
            "list_files",
            DESCRIPTION,
            &[
                (
                    "path",
                    "The directory to list, relative to the current working directory.",
                    true,
                ),
                (
                    "recursive",
                    "\"true\" to list the whole tree below the directory; otherwise only its \
                     own entries are listed.",
                    false,
                ),
            ],
        )
        .approval(ApprovalCategory::Read)
        .path_params(&["path"])
        .with_partial()
        .read_only()
        .title("List files")
        .idempotent()]
    }

    /// While the call streams: the directory about to be listed (Cline's partial
    /// `listFilesTopLevel`/`listFilesRecursive` message, empty content), as a `say` when the
    /// listing will be auto-approved, else as an `ask` (the approval it will need). Nothing is
    /// listed.
    fn handle_partial(&self, call: &Call, ctx: &Ctx<'_>) -> Result<(), ToolError> {
        if call.task.is_subagent {
            return Ok(());
        }
        let raw = call.params.string_or_empty("path");
        let path = strip_partial_closing_tag(&raw, "path");
        if path.is_empty() {
            return Ok(());
        }
        let verdict = ctx.check_path(path)?;
        if verdict.ignored {
            return Ok(());
        }
        let message = json!({
            "tool": tool_kind(call.params.flag("recursive")),
            "path": verdict.display,
            "content": "",
            "operationIsLocatedInWorkspace": verdict.inside_workspace,
        })
        .to_string();
        if ctx.auto_approves(ApprovalCategory::Read, verdict.inside_workspace) {
            ctx.say_partial("tool", &message);
        } else {
            ctx.ask_partial("tool", &message);
        }
        Ok(())
    }

    fn describe(&self, call: &Call) -> String {
        format!("[list_files for '{}']", call.params.string_or_empty("path"))
    }

    fn execute(&self, call: &Call, ctx: &Ctx<'_>) -> ToolResult {
        let path = call.params.required_nonblank("path")?;
        let recursive = call.params.flag("recursive");
        let verdict = ctx.check_path(&path)?;
        let failed =
            |e: FsError| ToolError::new(ToolErrorKind::FAILED, format!("Error listing files: {e}"));
        let listing = match ctx.workspace().open_dir(&verdict) {
            Ok(dir) => list_files(&dir, Path::new(&verdict.absolute), recursive, DEFAULT_LIMIT)
                .map_err(failed)?,
            // As in Cline: a path that is no directory lists nothing.
            Err(FsError::NotFound | FsError::NotADirectory) => Listing::default(),
            Err(e) if e.is_blocked() => return Err(e.into()),
            Err(e) => return Err(failed(e)),
        };
        // Entries were checked against .clineignore where they are listed and where they really
        // are; Cline checks a path without the directory's trailing slash.
        let result = format_files_list(&listing.entries, listing.did_hit_limit, |entry| {
            Ok::<_, ToolError>(entry.ignored)
        })?;
        let ui = json!({
            "tool": tool_kind(recursive),
            "path": verdict.display,
            "content": result,
            "operationIsLocatedInWorkspace": verdict.inside_workspace,
        });
        ctx.say("tool", &ui.to_string());
        Ok(ToolContent::text(result))
    }
}

/// The `ClineSayTool` kind of a listing.
fn tool_kind(recursive: bool) -> &'static str {
    if recursive {
        "listFilesRecursive"
    } else {
        "listFilesTopLevel"
    }
}

tool_api::submit_tool!(ListFiles);
tool_api::export_plugin!(
    capabilities: [
        "partial",
        tool_api::model::access::FS_FULL,
        "toolset:cline-legacy",
    ]
);

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use tool_api::sdk::testing::{Preview, TestHost};

    fn message(kind: &str, path: &str, inside: bool) -> String {
        json!({"tool": kind, "path": path, "content": "", "operationIsLocatedInWorkspace": inside})
            .to_string()
    }

    #[test]
    fn a_streaming_listing_shows_the_directory_and_lists_nothing() {
        let ws = tempfile::tempdir().unwrap();
        std::fs::create_dir(ws.path().join("src")).unwrap();
        let host = TestHost::new(ws.path());
        for params in [
            json!({"path": "sr"}),
            json!({"path": "src</"}),
            json!({"path": "src", "recursive": "tr"}),
            json!({"path": "src", "recursive": "TRUE"}),
        ] {
            host.partial(&ListFiles, "list_files", params).unwrap();
        }
        assert_eq!(
            host.previews(),
            [
                Preview::Say("tool".into(), message("listFilesTopLevel", "sr", true)),
                Preview::Say("tool".into(), message("listFilesTopLevel", "src", true)),
                Preview::Say("tool".into(), message("listFilesTopLevel", "src", true)),
                Preview::Say("tool".into(), message("listFilesRecursive", "src", true)),
            ]
        );
        assert!(host.said().is_empty());

        // The approval path: a listing that will be asked for streams as an ask.
        let asking =
            TestHost::new(ws.path()).with_settings(json!({"auto_approve": {"read_files": false}}));
        asking
            .partial(&ListFiles, "list_files", json!({"path": "src"}))
            .unwrap();
        let outside = TestHost::new(ws.path())
            .with_settings(json!({"auto_approve": {"read_files_externally": true}}));
        outside
            .partial(
                &ListFiles,
                "list_files",
                json!({"path": "/tmp", "recursive": "true"}),
            )
            .unwrap();
        assert_eq!(
            [asking.previews(), outside.previews()].concat(),
            [
                Preview::Ask("tool".into(), message("listFilesTopLevel", "src", true)),
                Preview::Say("tool".into(), message("listFilesRecursive", "/tmp", false)),
            ]
        );
        let subagent = TestHost::new(ws.path()).as_subagent();
        subagent
            .partial(&ListFiles, "list_files", json!({"path": "src"}))
            .unwrap();
        assert!(subagent.previews().is_empty());
        assert!(ListFiles.specs()[0].partial);
    }
}
