//! The `search_files` tool: a regex search over a directory tree, each hit shown with the line
//! before and after it, in Cline's result format.
//!
//! The search runs in process with ripgrep's own libraries (`ignore` for a parallel walk,
//! `grep-regex` and `grep-searcher` per file) rather than by starting `rg`. Results come in the
//! order of `rg --sort path` whichever thread finds them, so the same search always gives the
//! same text; at most 300 results and 0.25 MiB of text are returned, with Cline's headers and
//! notices. Files `.clineignore` blocks never appear.
//!
//! The pieces work without a host: [`search`] gathers the hits, [`format_results`] writes the
//! text.
//!
//! ```no_run
//! use std::path::{Path, PathBuf};
//! use search_files::{format_results, search, Gate, Query, Target, MAX_RESULTS};
//! use tool_api::workspace::Workspace;
//!
//! struct Everything;
//! impl Gate for Everything {
//!     fn allows(&self, _: &Path) -> bool { true }
//!     fn is_cancelled(&self) -> bool { false }
//! }
//!
//! let query = Query { regex: r"TODO\b", file_pattern: Some("*.rs"), include_hidden: false };
//! let workspace = Workspace::new(Path::new("/work/project"))?;
//! let dir = workspace.open_dir(&workspace.verdict("src"))?;
//! let target = Target::Dir { dir, path: PathBuf::from("/work/project/src") };
//! let files = search(&target, &query, MAX_RESULTS, &Everything)?;
//! println!("{}", format_results(&files, Path::new("/work/project")));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Differences from Cline, all deliberate:
//! - Hidden files and files that `.gitignore`/`.ignore` exclude are not searched (ripgrep's
//!   defaults). Cline searches them because it always passes a `--glob` to ripgrep; the setting
//!   `search_files.include_hidden = true` restores that.
//! - Context lines belong to their own match in their own file. Cline attaches each context line
//!   to the last match it parsed, so a file's first line of context was lost, and a match's line
//!   before often showed up after the previous match, even in another file. A line between two
//!   matches is shown once, after the first.
//! - Files come in `rg --sort path` order; Cline shows them in whatever order ripgrep's threads
//!   finish, so its results (and which ones survive the cap) vary from run to run.
//! - `file_pattern` is relative to the searched directory; Cline's ripgrep anchored patterns with
//!   a `/` at the editor's working directory, where they matched nothing.
//! - An unreadable file is skipped; in Cline any ripgrep error message (an unreadable file, a bad
//!   line in a `.gitignore`) turned the whole search into `Found 0 results.`.
//! - A line that is not valid UTF-8 is shown with replacement characters; Cline showed it empty.
//! - A binary file is skipped even when `path` names it; ripgrep searches a named file as text.
//! - The cap is exact: Cline stopped reading ripgrep after 1,500 lines of JSON, so matches with
//!   much context, or many small files, could show fewer than 300 results.
//! - An invalid regex or `file_pattern` is an error the model reads, and a mistake: the text is
//!   Cline's for a ripgrep failure, `ripgrep process error: ` and ripgrep's own message
//!   (`regex parse error:` with the pattern, a caret under the fault and the reason). Cline
//!   caught that error and answered `Found 0 results.`, so the model never learnt why.
//! - A missing path gives `Found 0 results.` as Cline does, but cannot count as a mistake: the
//!   host offers no way to count one for a successful result.
//!
//! In a multi-root workspace ([`roots`]), a relative path without a `@name:` hint is searched
//! in every root at once and the results are bucketed by root, as in Cline, with these
//! differences: an absolute path is searched once, as it is (Cline joined it to every root's
//! path, searching `<root>/etc` for `/etc`); another root than the primary is searched only
//! when the path there is inside the workspace and not blocked by `.clineignore` (only the
//! primary root's path was approved); and a root with 300 or more results is kept
//! ([`combine`]).

mod answer;
mod collect;
mod format;
mod read;
mod roots;
mod search;
mod sink;
mod walk;

pub use answer::ripgrep_error;
pub use collect::{Collector, FileHits};
pub use format::{
    display_path, format_results, MAX_OUTPUT_BYTES, MAX_RESULTS, NO_RESULTS, TRUNCATION_NOTICE,
};
pub use read::{FileReader, WHOLE_FILE_LIMIT};
pub use roots::{combine, RootResults};
pub use search::{search, validate, Gate, Query, SearchError, Target};
pub use sink::{FileSink, Hit};
pub use walk::{check_pattern, walker, DEFAULT_PATTERN};

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};
use tool_api::sdk::js::strip_partial_closing_tag;
use tool_api::sdk::prelude::*;

use crate::answer::failed_search;
use crate::search::search_verdict;

/// The setting that restores Cline's search of hidden and ignored files.
pub const INCLUDE_HIDDEN_SETTING: &str = "search_files.include_hidden";

const DESCRIPTION: &str = "Search the files under a directory for a regular expression and see \
every matching line with the line before and after it, grouped by file. The regex uses Rust \
syntax (no look-around or back-references; escape literal braces and other special characters). \
`file_pattern` narrows the search to files matching a glob such as `*.ts` or `!*.test.ts`. \
Unless configured otherwise, hidden files and files excluded by .gitignore are not searched. At \
most 300 results are shown; when there are more, search a smaller directory or use a more \
specific pattern. Use it to find where something is defined or used before reading or changing \
files.";

/// The search_files tool.
#[derive(Debug, Default)]
pub struct SearchFiles;

impl Tool for SearchFiles {
    fn specs(&self) -> Vec<ToolSpec> {
        vec![ToolSpec::simple(
            "search_files",
            DESCRIPTION,
            &[
                (
                    "path",
                    "The directory to search, recursively, relative to the current working \
                     directory (or a single file).",
                    true,
                ),
                (
                    "regex",
                    "The regular expression to look for, in Rust regex syntax.",
                    true,
                ),
                (
                    "file_pattern",
                    "A glob the searched files must match, e.g. `*.rs`; a leading `!` excludes \
                     instead. Every file when left out.",
                    false,
                ),
            ],
        )
        .approval(ApprovalCategory::Read)
        .path_params(&["path"])
        .with_partial()
        .read_only()
        .title("Search files")
        .idempotent()]
    }

    /// While the call streams: where and what is about to be searched (Cline's partial
    /// `searchFiles` message, empty content), as a `say` when the search will be auto-approved,
    /// else as an `ask`. Nothing is searched.
    fn handle_partial(&self, call: &Call, ctx: &Ctx<'_>) -> Result<(), ToolError> {
        if call.task.is_subagent {
            return Ok(());
        }
        let value = |name: &str| {
            strip_partial_closing_tag(&call.params.string_or_empty(name), name).to_string()
        };
        let path = value("path");
        if path.is_empty() {
            return Ok(());
        }
        let verdict = ctx.check_path(&path)?;
        if verdict.ignored {
            return Ok(());
        }
        let message = json!({
            "tool": "searchFiles",
            "path": verdict.display,
            "content": "",
            "regex": value("regex"),
            "filePattern": value("file_pattern"),
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
        let regex = call.params.string_or_empty("regex");
        match call.params.string("file_pattern").filter(|p| !p.is_empty()) {
            Some(pattern) => format!("[search_files for '{regex}' in '{pattern}']"),
            None => format!("[search_files for '{regex}']"),
        }
    }

    fn execute(&self, call: &Call, ctx: &Ctx<'_>) -> ToolResult {
        let path = call.params.required_nonblank("path")?;
        let regex = call.params.required("regex")?;
        let file_pattern = call.params.string("file_pattern");
        let verdict = ctx.check_path(&path)?;
        let query = Query {
            regex: &regex,
            file_pattern: file_pattern.as_deref(),
            include_hidden: ctx.setting::<bool>(INCLUDE_HIDDEN_SETTING).unwrap_or(false),
        };
        if let Err(SearchError::Regex(message) | SearchError::Pattern(message)) =
            validate(&query, Path::new(&verdict.absolute))
        {
            // ripgrep's message, as Cline words a ripgrep failure.
            return Err(ToolError::new(
                ToolErrorKind::FAILED,
                ripgrep_error(&message),
            ));
        }
        let gate = HostGate { ctx };
        let result = match roots::every_root(ctx, &path, &verdict)? {
            Some(targets) => roots::search_every_root(ctx, &targets, &query, &gate)?,
            None => {
                let base = results_base(ctx, &path, &call.task.cwd);
                match search_verdict(ctx.workspace(), &verdict, &query, &gate) {
                    Ok(files) => format_results(&files, &base),
                    Err(SearchError::Root(e)) if e.is_blocked() => return Err(e.into()),
                    Err(e) => failed_search(ctx, e)?,
                }
            }
        };
        ctx.say("tool", &ui_message(&verdict, &result, &regex, file_pattern));
        Ok(ToolContent::text(result))
    }
}

/// What result paths are relative to: with a hint, the root of exactly that name (else the
/// primary), as in Cline; otherwise the primary root.
fn results_base(ctx: &Ctx<'_>, path: &str, cwd: &str) -> PathBuf {
    let workspace = ctx.workspace();
    match tool_api::workspace::parse_hint(path) {
        Some((hint, _)) if workspace.is_multi_root() => workspace
            .root_named(hint)
            .map(|root| workspace.root_path(root).to_path_buf())
            .unwrap_or_else(|| PathBuf::from(cwd)),
        _ => PathBuf::from(cwd),
    }
}

/// The `say("tool")` message: Cline's `searchFiles` payload.
fn ui_message(
    verdict: &PathVerdict,
    result: &str,
    regex: &str,
    file_pattern: Option<String>,
) -> String {
    let mut message = Map::new();
    message.insert("tool".into(), json!("searchFiles"));
    message.insert("path".into(), json!(verdict.display));
    message.insert("content".into(), json!(result));
    message.insert("regex".into(), json!(regex));
    if let Some(pattern) = file_pattern {
        message.insert("filePattern".into(), json!(pattern));
    }
    message.insert(
        "operationIsLocatedInWorkspace".into(),
        json!(verdict.inside_workspace),
    );
    Value::Object(message).to_string()
}

/// `.clineignore` on the paths the walk reports, and cancellation, for the search threads.
/// (Where each file really is, is checked as it is opened.)
struct HostGate<'c, 'h> {
    ctx: &'c Ctx<'h>,
}

impl Gate for HostGate<'_, '_> {
    fn allows(&self, file: &Path) -> bool {
        !self.ctx.workspace().blocks_as_typed(file, false)
    }

    fn is_cancelled(&self) -> bool {
        self.ctx.is_cancelled()
    }
}

tool_api::submit_tool!(SearchFiles);
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

    fn call(params: &str) -> Call {
        tool_api::sdk::testing::TestHost::call_of("search_files", params)
    }

    #[test]
    fn describe_names_the_regex_and_the_pattern() {
        let tool = SearchFiles;
        assert_eq!(
            tool.describe(&call(r#"{"path":".","regex":"a|b"}"#)),
            "[search_files for 'a|b']"
        );
        assert_eq!(
            tool.describe(&call(r#"{"path":".","regex":"x","file_pattern":"*.rs"}"#)),
            "[search_files for 'x' in '*.rs']"
        );
        assert_eq!(
            tool.describe(&call(r#"{"path":".","regex":"x","file_pattern":""}"#)),
            "[search_files for 'x']"
        );
    }

    #[test]
    fn an_invalid_regex_or_pattern_is_ripgreps_error() {
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(ws.path().join("a.txt"), "TODO\n").unwrap();
        let host = tool_api::sdk::testing::TestHost::new(ws.path());
        let error = |params: Value| {
            let error = host.call(&SearchFiles, "search_files", params).unwrap_err();
            assert_eq!(error.kind, ToolErrorKind::FAILED);
            error.message.to_string()
        };
        // ripgrep's own messages (`rg -e REGEX` prints them the same way).
        assert_eq!(
            error(json!({"path": ".", "regex": "("})),
            "ripgrep process error: regex parse error:\n    (\n    ^\nerror: unclosed group"
        );
        assert_eq!(
            error(json!({"path": ".", "regex": "[a-"})),
            "ripgrep process error: regex parse error:\n    [a-\n    ^\nerror: unclosed character class"
        );
        assert_eq!(
            error(json!({"path": ".", "regex": "a{2,1}"})),
            "ripgrep process error: regex parse error:\n    a{2,1}\n     ^^^^^\nerror: invalid repetition count range, the start must be <= the end"
        );
        assert_eq!(
            error(json!({"path": ".", "regex": "\\p{Nope}"})),
            "ripgrep process error: regex parse error:\n    \\p{Nope}\n    ^^^^^^^^\nerror: Unicode property not found"
        );
        let glob = "ripgrep process error: error parsing glob '[a-': unclosed character class; missing ']'";
        assert_eq!(
            error(json!({"path": ".", "regex": "TODO", "file_pattern": "[a-"})),
            glob
        );
        // Whatever the path: a single file, or one that does not exist.
        assert_eq!(
            error(json!({"path": "a.txt", "regex": "TODO", "file_pattern": "[a-"})),
            glob
        );
        assert!(error(json!({"path": "missing", "regex": "("})).contains("unclosed group"));
        // A valid search of a missing path still finds nothing.
        let found = host
            .call(
                &SearchFiles,
                "search_files",
                json!({"path": "missing", "regex": "x"}),
            )
            .unwrap();
        assert_eq!(found.joined_text(), NO_RESULTS);
    }

    #[test]
    fn a_streaming_search_shows_what_is_searched_and_searches_nothing() {
        use tool_api::sdk::testing::{Preview, TestHost};
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(ws.path().join("a.txt"), "TODO\n").unwrap();
        let message = |regex: &str, pattern: &str, inside: bool, path: &str| {
            json!({"tool": "searchFiles", "path": path, "content": "", "regex": regex,
                "filePattern": pattern, "operationIsLocatedInWorkspace": inside})
            .to_string()
        };
        let host = TestHost::new(ws.path());
        for params in [
            json!({"path": "."}),
            json!({"path": ".", "regex": "TO"}),
            json!({"path": ".", "regex": "TODO", "file_pattern": "*.t</file_patt"}),
            // An invalid regex while it streams is no error: nothing runs yet.
            json!({"path": ".", "regex": "(unclosed"}),
        ] {
            host.partial(&SearchFiles, "search_files", params).unwrap();
        }
        let cwd = ws
            .path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert_eq!(
            host.previews(),
            [
                Preview::Say("tool".into(), message("", "", true, &cwd)),
                Preview::Say("tool".into(), message("TO", "", true, &cwd)),
                Preview::Say("tool".into(), message("TODO", "*.t", true, &cwd)),
                Preview::Say("tool".into(), message("(unclosed", "", true, &cwd)),
            ]
        );
        assert!(host.said().is_empty());
        let asking =
            TestHost::new(ws.path()).with_settings(json!({"auto_approve": {"read_files": false}}));
        asking
            .partial(
                &SearchFiles,
                "search_files",
                json!({"path": ".", "regex": "x"}),
            )
            .unwrap();
        assert_eq!(
            asking.previews(),
            [Preview::Ask("tool".into(), message("x", "", true, &cwd))]
        );
        assert!(SearchFiles.specs()[0].partial);
    }

    #[test]
    fn the_spec_declares_a_read_of_the_path() {
        let spec = &SearchFiles.specs()[0];
        assert_eq!(spec.name, "search_files");
        assert_eq!(spec.required_params(), ["path", "regex"]);
        assert_eq!(spec.approval, Some(ApprovalCategory::Read));
        assert_eq!(spec.path_params, ["path"]);
        assert!(spec.read_only && !spec.destructive);
    }
}
