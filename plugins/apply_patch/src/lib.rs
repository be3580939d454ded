//! The `apply_patch` tool of the legacy set: V4A patches that add, update, delete and move
//! files, applied all-or-nothing by [`patch_support`] (shared with Cline's SDK set's tool).
//!
//! The result texts and error messages are Cline's (`Error executing apply_patch: <message>`);
//! [`report`] writes the result, with each saved file's content.

pub mod report;
mod texts;

use tool_api::sdk::prelude::*;

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
        let applied = patch_support::apply_patch(&input, ctx, "apply_patch")
            .map_err(|failure| failure.into_tool_error(texts::failed))?;
        Ok(ToolContent::text(report::success_text(
            &applied.results,
            applied.fuzz,
        )))
    }
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
    use patch_support::texts::{NO_ACTIONS, PATCH_DENIED};
    use patch_support::{Failure, PatchError};
    use serde_json::json;

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
        let patch =
            Failure::Patch(PatchError::new("File not found: a")).into_tool_error(texts::failed);
        let blocked = Failure::Blocked("s/k".to_string()).into_tool_error(texts::failed);
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
                texts::failed(NO_ACTIONS),
                "{input:?}"
            );
        }
        assert!(NO_ACTIONS.contains("*** Update File: path/to/file"));
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
            tool_api::texts::denied_with_feedback(PATCH_DENIED, None),
            "The user denied this patch operation."
        );
        assert_eq!(
            tool_api::texts::denied_with_feedback(PATCH_DENIED, Some("not now")),
            "The user denied this patch operation.\n\nThe user provided the following feedback:\n<feedback>\nnot now\n</feedback>"
        );
    }
}
