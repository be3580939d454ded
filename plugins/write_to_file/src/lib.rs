//! The `write_to_file`, `replace_in_file` and `new_rule` tools: one handler, as in Cline (its
//! `WriteToFileToolHandler`, shared by the three names), branching on the name it was called by.
//!
//! - `write_to_file` writes the given content as the whole file (Markdown code fences around it
//!   are stripped first).
//! - `replace_in_file` applies SEARCH/REPLACE blocks with Cline's v1 matcher ([`matcher`]).
//! - `new_rule` is `write_to_file` for rule files; like Cline, it writes exactly where it is told
//!   (its description asks for `.clinerules/`).
//!
//! Every write is atomic (a temporary file renamed over the target), keeps the file's
//! permissions, and happens only once the new content is known: a failed edit changes nothing
//! and creates nothing. The host checks required parameters, `.clineignore` and approval before
//! a call gets here.
//!
//! Deliberate differences from Cline: the HTML-entity fixes for non-Claude models apply only when
//! the host names the model (setting `model.id`), an empty content is written (Cline's
//! headless mode silently skips it), and a `replace_in_file` diff that applies no SEARCH/REPLACE
//! block (no markers at all, or no complete block) is an error that says what a valid diff looks
//! like (Cline saves the file unchanged and reports success).

mod content;
mod edit;
mod js;
pub mod matcher;
mod texts;
mod write;

pub use content::{final_content, strip_code_fences};
pub use edit::{commit, prepare, EditKind, EditRequest, PrepareError, Prepared};
pub use matcher::{construct_new_file_content, Replaced};

use serde_json::{json, Value};
use tool_api::sdk::js::strip_partial_closing_tag;
use tool_api::sdk::{missing, prelude::*};

/// The tool serving `write_to_file`, `replace_in_file` and `new_rule`.
#[derive(Debug, Default)]
pub struct WriteToFile;

/// A spec with what the three tools share: edit approval, path parameters, destructive.
fn spec(name: &str, description: &str, params: &[(&str, &str, bool)]) -> ToolSpec {
    ToolSpec::simple(name, description, params)
        .approval(ApprovalCategory::Edit)
        .path_params(&["path", "absolutePath"])
        .destructive()
        .with_partial()
}

impl Tool for WriteToFile {
    fn specs(&self) -> Vec<ToolSpec> {
        // In an XML call the content runs to the last `</content>`: a file may contain the tag.
        let mut write = spec(
            "write_to_file",
            texts::WRITE_TO_FILE_DESCRIPTION,
            &[
                ("path", texts::PATH_PARAM, true),
                ("content", texts::CONTENT_PARAM, true),
            ],
        )
        .title("Write file")
        .idempotent()
        .raw_xml_param("content");
        // An empty content is a valid file; the host treats "" as missing unless told so.
        if let Some(content) = write
            .input_schema
            .pointer_mut("/properties/content")
            .and_then(Value::as_object_mut)
        {
            content.insert("minLength".to_string(), json!(0));
        }
        let replace = spec(
            "replace_in_file",
            texts::REPLACE_IN_FILE_DESCRIPTION,
            &[
                ("path", texts::PATH_PARAM, true),
                ("diff", texts::DIFF_PARAM, true),
            ],
        )
        .title("Edit file");
        let rule = spec(
            "new_rule",
            texts::NEW_RULE_DESCRIPTION,
            &[
                ("path", texts::PATH_PARAM, true),
                ("content", texts::RULE_CONTENT_PARAM, true),
            ],
        )
        .title("Create rule")
        .idempotent();
        vec![write, replace, rule]
    }

    fn describe(&self, call: &Call) -> String {
        // JavaScript's `path || absolutePath` in a template string: "undefined" when neither.
        let path = call
            .params
            .string("path")
            .filter(|p| !p.is_empty())
            .or_else(|| call.params.string("absolutePath"))
            .unwrap_or_else(|| "undefined".to_string());
        format!("[{} for '{path}']", call.name)
    }

    fn execute(&self, call: &Call, ctx: &Ctx<'_>) -> ToolResult {
        let kind = EditKind::from_name(&call.name).ok_or_else(|| {
            ToolError::new(
                ToolErrorKind::INTERNAL,
                format!("the write_to_file handler does not serve '{}'", call.name),
            )
        })?;
        let Some(path) = path_param(&call.params) else {
            let param = if call.params.contains("absolutePath") {
                "absolutePath"
            } else {
                "path"
            };
            ctx.say(
                "error",
                &tool_api::texts::missing_param_notice(&call.name, param, None),
            );
            return Err(missing(param));
        };
        let text = required_text(kind, call, &path, ctx)?;
        let verdict = ctx.check_path(&path)?;
        let model_id = ctx.setting::<String>("model.id");
        let request = EditRequest {
            kind,
            text: &text,
            workspace: ctx.workspace(),
            verdict: &verdict,
            display: &verdict.display,
            model_id: model_id.as_deref(),
        };

        let prepared = prepare(&request, true).map_err(|error| {
            if let PrepareError::Diff(_) = error {
                ctx.say("diff_error", &verdict.display);
            }
            let kind = match error {
                PrepareError::Blocked(_) => ToolErrorKind::BLOCKED,
                PrepareError::Changed(_) => ToolErrorKind::PATH_CHANGED,
                PrepareError::Diff(_) | PrepareError::File(_) => ToolErrorKind::FAILED,
            };
            ToolError::new(kind, error.message())
        })?;
        ctx.say("tool", &ui_message(&prepared, &verdict));
        let result = commit(&request, &prepared)?;

        // The file changed: a later read_file must not answer "already read".
        ctx.forget_file_read(&verdict.absolute);
        if verdict.resolved != verdict.absolute {
            ctx.forget_file_read(&verdict.resolved);
        }
        Ok(ToolContent::text(result))
    }

    fn handle_partial(&self, call: &Call, ctx: &Ctx<'_>) -> Result<(), ToolError> {
        let Some(kind) = EditKind::from_name(&call.name) else {
            return Ok(());
        };
        let Some(raw_path) = path_param(&call.params) else {
            return Ok(());
        };
        // Like Cline: wait for a non-empty diff, or for content to be present at all.
        let text = match kind {
            EditKind::ReplaceInFile => call.params.string("diff").filter(|d| !d.is_empty()),
            EditKind::WriteToFile | EditKind::NewRule => call.params.string("content"),
        };
        let Some(text) = text else {
            return Ok(());
        };
        let tag = if call.params.string("path").is_some_and(|p| !p.is_empty()) {
            "path"
        } else {
            "absolutePath"
        };
        let path = strip_partial_closing_tag(&raw_path, tag);
        if path.is_empty() {
            return Ok(());
        }
        let verdict = ctx.check_path(path)?;
        if verdict.ignored {
            return Ok(());
        }
        let model_id = ctx.setting::<String>("model.id");
        let request = EditRequest {
            kind,
            text: &text,
            workspace: ctx.workspace(),
            verdict: &verdict,
            display: &verdict.display,
            model_id: model_id.as_deref(),
        };
        // Mid-stream a diff often does not apply yet; that is no error, there is just no preview.
        if let Ok(prepared) = prepare(&request, false) {
            ctx.say_partial("tool", &ui_message(&prepared, &verdict));
        }
        Ok(())
    }
}

/// `path`, or else `absolutePath` (Cline's `path || absolutePath`: empty counts as absent).
fn path_param(params: &Params) -> Option<String> {
    params
        .string("path")
        .filter(|p| !p.is_empty())
        .or_else(|| params.string("absolutePath").filter(|p| !p.is_empty()))
}

/// The `diff` or `content` parameter, checked the way Cline checks it for each tool.
fn required_text(
    kind: EditKind,
    call: &Call,
    path: &str,
    ctx: &Ctx<'_>,
) -> Result<String, ToolError> {
    let param = kind.text_param();
    let value = call.params.string(param);
    match (kind, value) {
        // write_to_file accepts an empty content: it makes an empty file.
        (EditKind::WriteToFile, Some(content)) => Ok(content),
        (_, Some(text)) if !text.is_empty() => Ok(text),
        (EditKind::ReplaceInFile, _) => {
            ctx.say(
                "error",
                &tool_api::texts::missing_param_notice(&call.name, param, Some(path)),
            );
            Err(ToolError::new(
                ToolErrorKind::INVALID_PARAMS,
                texts::missing_diff_help(path),
            ))
        }
        (EditKind::WriteToFile, None) => {
            ctx.say(
                "error",
                &tool_api::texts::missing_param_notice(&call.name, param, Some(path)),
            );
            Err(missing(param))
        }
        (EditKind::NewRule, _) => {
            ctx.say(
                "error",
                &tool_api::texts::missing_param_notice(&call.name, param, None),
            );
            Err(missing(param))
        }
    }
}

/// Where to write: the path with symlinks resolved, so that a symlinked file is written through
/// The `ClineSayTool` JSON of the UI event.
fn ui_message(prepared: &Prepared, verdict: &PathVerdict) -> String {
    json!({
        "tool": if prepared.existed { "editedExistingFile" } else { "newFileCreated" },
        "path": verdict.display,
        "content": prepared.ui_content,
        "operationIsLocatedInWorkspace": verdict.inside_workspace,
        "startLineNumbers": prepared.start_line_numbers,
    })
    .to_string()
}

tool_api::submit_tool!(WriteToFile);
tool_api::export_plugin!(
    capabilities: [
        tool_api::model::access::FS_FULL,
        "toolset:cline-legacy",
    ]
);

#[cfg(test)]
mod tests {
    use super::*;

    fn params(json: &str) -> Params {
        Params::from_json(json).unwrap_or_default()
    }

    fn call(name: &str, json: &str) -> Call {
        tool_api::sdk::testing::TestHost::call_of(name, json)
    }

    /// Name, required parameters, destructive, partial, approval, path parameters.
    type SpecSummary<'a> = (
        String,
        Vec<&'a str>,
        bool,
        bool,
        Option<ApprovalCategory>,
        Vec<String>,
    );

    #[test]
    fn one_handler_serves_three_edit_tools() {
        let specs = WriteToFile.specs();
        let summary: Vec<SpecSummary<'_>> = specs
            .iter()
            .map(|s| {
                (
                    s.name.clone(),
                    s.required_params(),
                    s.destructive,
                    s.partial,
                    s.approval,
                    s.path_params.clone(),
                )
            })
            .collect();
        let paths = vec!["path".to_string(), "absolutePath".to_string()];
        let edit = Some(ApprovalCategory::Edit);
        assert_eq!(
            summary,
            vec![
                (
                    "write_to_file".to_string(),
                    vec!["path", "content"],
                    true,
                    true,
                    edit,
                    paths.clone()
                ),
                (
                    "replace_in_file".to_string(),
                    vec!["path", "diff"],
                    true,
                    true,
                    edit,
                    paths.clone()
                ),
                (
                    "new_rule".to_string(),
                    vec!["path", "content"],
                    true,
                    true,
                    edit,
                    paths
                ),
            ]
        );
    }

    #[test]
    fn only_write_to_file_allows_an_empty_content() {
        let specs = WriteToFile.specs();
        let min_lengths: Vec<Option<&Value>> = specs
            .iter()
            .map(|s| {
                let param = if s.name == "replace_in_file" {
                    "diff"
                } else {
                    "content"
                };
                s.input_schema["properties"][param].get("minLength")
            })
            .collect();
        assert_eq!(min_lengths, vec![Some(&json!(0)), None, None]);
    }

    #[test]
    fn descriptions_name_the_path_like_cline() {
        let described: Vec<String> = [
            call("write_to_file", r#"{"path":"src/a.ts","content":"x"}"#),
            call("replace_in_file", r#"{"path":"","absolutePath":"/w/b.ts"}"#),
            call("new_rule", r#"{"absolutePath":""}"#),
            call("new_rule", r#"{}"#),
        ]
        .iter()
        .map(|c| WriteToFile.describe(c))
        .collect();
        assert_eq!(
            described,
            vec![
                "[write_to_file for 'src/a.ts']",
                "[replace_in_file for '/w/b.ts']",
                "[new_rule for '']",
                "[new_rule for 'undefined']",
            ]
        );
    }

    #[test]
    fn path_falls_back_to_absolute_path() {
        assert_eq!(
            [
                path_param(&params(r#"{"path":"a","absolutePath":"/b"}"#)),
                path_param(&params(r#"{"path":"","absolutePath":"/b"}"#)),
                path_param(&params(r#"{"absolutePath":""}"#)),
            ],
            [Some("a".to_string()), Some("/b".to_string()), None]
        );
    }

    #[test]
    fn partial_closing_tags_are_removed() {
        assert_eq!(
            [
                strip_partial_closing_tag("src/a.ts</pa", "path"),
                strip_partial_closing_tag("src/a.ts <", "path"),
                strip_partial_closing_tag("src/a.ts</path", "path"),
                strip_partial_closing_tag("src/a.ts<ph", "path"),
                strip_partial_closing_tag("src/a<b>.ts", "path"),
                strip_partial_closing_tag("src/a.ts", "path"),
                strip_partial_closing_tag("a</ap", "path"),
            ],
            [
                "src/a.ts",
                "src/a.ts",
                "src/a.ts",
                "src/a.ts",
                "src/a<b>.ts",
                "src/a.ts",
                "a</ap"
            ]
        );
    }
}
