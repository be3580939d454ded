//! The `list_code_definition_names` tool: an outline of the source files directly inside one
//! directory, made with tree-sitter.
//!
//! For each file (up to 50, by name; subdirectories are not descended into) the tool prints the
//! file name and the source lines where definitions are named, `│`-prefixed, with `|----` where
//! lines in between were skipped, in Cline's format:
//!
//! ```text
//! server.ts
//! |----
//! │export class Server {
//! │  start(port: number) {
//! |----
//! │export function createServer(opts: Options) {
//! |----
//! ```
//!
//! The kinds of definition are Cline's, per language (see [`Language`] for the extensions):
//! Rust structs and functions (methods, trait and nested functions included); JavaScript
//! classes, functions, methods other than constructors, and variables bound to arrow functions
//! or function expressions; TypeScript classes (abstract too), functions and overload
//! signatures, methods and method signatures, and `module` blocks; Python classes and
//! functions; Go functions, methods and type specs; Java classes, interfaces and methods; C
//! structs, named unions, function declarators and typedefs; C++ the same plus classes and
//! `Scope::name` and member functions. The queries live in `src/queries/`.
//!
//! [`outline`] turns one file's text into its block, [`definitions_text`] a directory into the
//! tool's text; neither needs a host.
//!
//! Known differences from Cline, all deliberate:
//! - A method in a Rust `impl` block is listed once; Cline's two overlapping patterns list it
//!   twice.
//! - Files are taken by name (byte order) instead of in the file system's order, so the files
//!   kept at the limits and the output order are the same on every machine.
//! - C#, Ruby, PHP, Swift and Kotlin files are not parsed (no grammar is built in); they do not
//!   count towards the 50 files.
//! - A file that cannot be read is left out; in Cline it fails the whole call. A directory that
//!   cannot be read is an error rather than "No source code definitions found.".
//! - A directory whose own path `.clineignore` matches (a `vault` rule; `vault/` only matches
//!   the files inside) is refused by the host with the `.clineignore` error, since `path` is a
//!   declared path parameter; Cline lists it, leaving out the ignored files inside.

mod directory;
mod language;
mod outline;

pub use directory::{
    definitions_text, source_files, DirectoryError, SourceFile, LISTING_LIMIT, MAX_FILES,
    NO_DEFINITIONS,
};
pub use language::Language;
pub use outline::{outline, OutlineError, LINE_MARK, SEPARATOR};

use std::path::{Path, PathBuf};

use serde_json::json;
use tool_api::sdk::prelude::*;

/// The error when the path is a file.
pub const NOT_A_DIRECTORY: &str = "The provided path is a file, not a directory. To view this \
file use read_file instead, or pass the parent directory to list_code_definition_names.";

/// The error when the path does not exist (or cannot be looked at).
pub const NO_SUCH_DIRECTORY: &str =
    "This directory does not exist or you do not have permission to access it.";

const DESCRIPTION: &str = "Outline the code in one directory: for every source file directly \
inside it (subdirectories are not entered), the lines that declare classes, structs, \
interfaces, functions, methods and similar definitions, so you can see how the code is \
organised and where the important parts are before reading whole files. Rust, JavaScript/JSX, \
TypeScript/TSX, Python, Go, Java, C and C++ files are read, at most 50 of them. The path must be \
a directory; for a single file, pass its parent directory.";

/// The list_code_definition_names tool.
#[derive(Debug, Default)]
pub struct ListCodeDefinitionNames;

impl Tool for ListCodeDefinitionNames {
    fn specs(&self) -> Vec<ToolSpec> {
        vec![ToolSpec::simple(
            "list_code_definition_names",
            DESCRIPTION,
            &[(
                "path",
                "The directory whose source files to outline, relative to the current working \
                 directory.",
                true,
            )],
        )
        .approval(ApprovalCategory::Read)
        .path_params(&["path"])
        .read_only()
        .title("List code definitions")
        .idempotent()]
    }

    fn describe(&self, call: &Call) -> String {
        format!(
            "[list_code_definition_names for '{}']",
            call.params.string_or_empty("path")
        )
    }

    fn execute(&self, call: &Call, ctx: &Ctx<'_>) -> ToolResult {
        let path = call.params.required_nonblank("path")?;
        let verdict = ctx.check_path(&path)?;
        let dir = match ctx.workspace().open_dir(&verdict) {
            Ok(dir) => dir,
            Err(FsError::NotADirectory) => {
                return Err(ToolError::new(ToolErrorKind::FAILED, NOT_A_DIRECTORY))
            }
            Err(e) if e.is_blocked() => return Err(e.into()),
            Err(_) => return Err(ToolError::new(ToolErrorKind::FAILED, NO_SUCH_DIRECTORY)),
        };
        let home = home_dir();
        let result = definitions_text(&dir, Path::new(&verdict.absolute), home.as_deref(), || {
            ctx.is_cancelled()
        })
        .map_err(|e| {
            ToolError::new(
                ToolErrorKind::FAILED,
                format!("Error listing code definitions: {e}"),
            )
        })?;
        let ui = json!({
            "tool": "listCodeDefinitionNames",
            "path": verdict.display,
            "content": result,
            "operationIsLocatedInWorkspace": verdict.inside_workspace,
        });
        ctx.say("tool", &ui.to_string());
        Ok(ToolContent::text(result))
    }
}

/// Node's `os.homedir()`: `HOME` (`USERPROFILE` on Windows), whose listing Cline refuses.
fn home_dir() -> Option<PathBuf> {
    let var = if cfg!(windows) { "USERPROFILE" } else { "HOME" };
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

tool_api::submit_tool!(ListCodeDefinitionNames);
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
    fn the_spec_declares_a_read_on_a_required_path() {
        let specs = ListCodeDefinitionNames.specs();
        assert_eq!(specs.len(), 1);
        let spec = &specs[0];
        assert_eq!(spec.name, "list_code_definition_names");
        assert_eq!(spec.required_params(), ["path"]);
        assert_eq!(spec.approval, Some(ApprovalCategory::Read));
        assert_eq!(spec.path_params, ["path"]);
        assert!(spec.read_only);
        assert!(!spec.destructive);
    }

    #[test]
    fn the_description_names_the_path() {
        let call = tool_api::sdk::testing::TestHost::call_of(
            "list_code_definition_names",
            r#"{"path":"src/app"}"#,
        );
        assert_eq!(
            ListCodeDefinitionNames.describe(&call),
            "[list_code_definition_names for 'src/app']"
        );
    }
}
