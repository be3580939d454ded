//! The `apply_patch` tool of Cline's SDK tool set (`cline-sdk`): served in the act preset
//! instead of `editor` when the model is a GPT or Codex one, or the provider OpenAI's native
//! one (Cline's model routing; the host reads `model.id` and `model.provider` from the
//! settings). The crate is named after its set as well as its tool, since the legacy set has
//! an `apply_patch` of its own.
//!
//! The patch is applied by [`patch_support`], as the legacy tool applies it: every path
//! checked, one approval for the whole patch, all files written or none. The answer is one
//! operation result: `{"query": "apply_patch", "result": "Successfully applied patch to the
//! following files:\n...", "success": true}`, or `"error": "apply_patch failed: ..."` when the
//! patch was not applied (a `.clineignore`d file is named as the set's other tools name it). A
//! denial, a cancellation or a path that changed is the call's error, as for every tool here.

use patch_support::Failure;
use serde_json::{json, Value};
use tool_api::sdk::operation::{invalid_param, required_string_param, OperationResult};
use tool_api::sdk::prelude::*;

/// The tool's name (the legacy set's tool has the same).
pub const NAME: &str = "apply_patch";

const DESCRIPTION: &str = r#"Use `apply_patch` to edit files with the canonical freeform patch grammar. Pass the patch text directly as the `input` string. Prefer the exact format below:

*** Begin Patch
*** Update File: path/to/file.ts
@@ optional section marker
 [context before]
-[old line]
+[new line]
 [context after]
*** End Patch

Supported actions:
- `*** Add File: <path>`
- `*** Update File: <path>`
- `*** Delete File: <path>`
- optional `*** Move to: <new path>` immediately after an Update File header

Rules:
- In an Add File section, every file-content line must start with `+`.
- In an Update section, use context lines plus `-` and `+` lines to describe the change.
- Use `@@` markers when extra context is needed to disambiguate repeated code blocks.
- Do not use line numbers; this format is context-based.
- Prefer sending the patch body directly. Legacy shell wrappers such as `%%bash` and `apply_patch <<"EOF"` are accepted for compatibility but are not preferred.

Example:

*** Begin Patch
*** Update File: src/page.tsx
@@
   return (
     <div>
       <button onClick={() => console.log("clicked")}>Click me</button>
+      <button onClick={() => console.log("cancel clicked")}>Cancel</button>
     </div>
   );
 }
*** End Patch"#;

/// The tool's input schema, as Cline's SDK shows it to the model.
fn input_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "input": {
                "type": "string",
                "minLength": 1,
                "description": "The freeform apply_patch payload in the canonical patch grammar (e.g *** Begin Patch, *** Update File:, @@, and *** End Patch)."
            }
        },
        "required": ["input"],
        "additionalProperties": false,
        "description": "Modify or create a text file by applying patches using the canonical apply_patch diff grammar. Prefer sending the patch body directly rather than wrapping it in shell syntax. IMPORTANT: large patches can time out, so use small chunks and multiple calls when possible."
    })
}

/// The answer to an applied patch: the files it changed, in Cline's SDK's words.
pub fn success_text(files: &[String], fuzz: u64) -> String {
    let mut lines = vec!["Successfully applied patch to the following files:".to_string()];
    lines.extend(files.iter().cloned());
    if fuzz > 0 {
        lines.push(format!("Note: Patch applied with fuzz factor {fuzz}"));
    }
    lines.join("\n")
}

/// The patch as Cline's SDK reads its sentinels: from the first line that starts with
/// `*** Begin Patch` to the last that starts with `*** End Patch`, whatever follows them on
/// their lines (`*** End Patch ` ends a patch). Without both, the input is left as it is.
pub fn sentinels_cut(input: &str) -> String {
    const BEGIN: &str = "*** Begin Patch";
    const END: &str = "*** End Patch";
    let lines: Vec<&str> = input
        .split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .collect();
    let begin = lines.iter().position(|line| line.starts_with(BEGIN));
    let end = lines.iter().rposition(|line| line.starts_with(END));
    match (begin, end) {
        (Some(begin), Some(end)) if begin < end => std::iter::once(BEGIN)
            .chain(lines[begin + 1..end].iter().copied())
            .chain(std::iter::once(END))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => input.to_string(),
    }
}

/// A patch not applied, as Cline's SDK words it.
fn failed(message: &str) -> String {
    format!("{NAME} failed: {message}")
}

/// The SDK set's apply_patch tool.
#[derive(Debug, Default)]
pub struct SdkApplyPatch;

impl Tool for SdkApplyPatch {
    fn specs(&self) -> Vec<ToolSpec> {
        // No path parameters (the paths are inside the patch) and no declared approval: the
        // patch is checked and approved whole by patch_support.
        let mut spec = ToolSpec::simple(NAME, DESCRIPTION, &[])
            .destructive()
            .title("Apply patch")
            .checks_own_params();
        spec.input_schema = input_schema();
        vec![spec]
    }

    fn describe(&self, _call: &Call) -> String {
        format!("[{NAME}]")
    }

    fn execute(&self, call: &Call, ctx: &Ctx<'_>) -> ToolResult {
        let input = required_string_param(call.params.as_map(), "input")?;
        if input.is_empty() {
            return Err(invalid_param(
                "Too small: expected string to have >=1 characters",
                "input",
            ));
        }
        let result = match patch_support::apply_patch(&sentinels_cut(&input), ctx, NAME) {
            Ok(applied) => {
                OperationResult::success(NAME, success_text(&applied.files, applied.fuzz))
            }
            // `.clineignore` is named as the SDK set's other tools name it.
            Err(Failure::Blocked(path)) => {
                OperationResult::failure(NAME, failed(&texts::clineignore_error(&path)))
            }
            Err(Failure::Patch(error)) => OperationResult::failure(NAME, failed(&error.0)),
            Err(Failure::Host(error)) => return Err(error),
        };
        Ok(ToolContent::text(OperationResult::to_json(&result)))
    }
}

tool_api::submit_tool!(SdkApplyPatch);
tool_api::export_plugin!(
    capabilities: [
        tool_api::model::access::FS_FULL,
        "needs:toolset_conditions",
        "toolset:cline-sdk@act?model~codex,gpt|provider~openai-native",
        "toolset:cline-sdk@default?model~codex,gpt|provider~openai-native",
    ]
);

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use tool_api::sdk::testing::TestHost;

    use super::*;

    fn call(host: &TestHost, input: &str) -> Value {
        let content = host
            .call(&SdkApplyPatch, NAME, json!({ "input": input }))
            .unwrap();
        serde_json::from_str(&content.joined_text()).unwrap()
    }

    #[test]
    fn an_applied_patch_lists_its_files_in_cline_s_words() {
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(ws.path().join("a.txt"), "one\ntwo\n").unwrap();
        std::fs::write(ws.path().join("gone.txt"), "x\n").unwrap();
        let host = TestHost::new(ws.path());
        let patch = "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n one\n-two\n+three\n*** Delete File: gone.txt\n*** Add File: new.txt\n+new\n*** End Patch";
        assert_eq!(
            call(&host, patch),
            json!({
                "query": "apply_patch",
                "result": "Successfully applied patch to the following files:\na.txt -> b.txt\ngone.txt: [deleted]\nnew.txt",
                "success": true
            })
        );
        assert_eq!(
            std::fs::read_to_string(ws.path().join("b.txt")).unwrap(),
            "one\nthree\n"
        );
        assert!(!ws.path().join("a.txt").exists() && !ws.path().join("gone.txt").exists());
    }

    #[test]
    fn the_sentinels_are_read_as_cline_s_sdk_reads_them() {
        assert_eq!(
            sentinels_cut("noise\n*** Begin Patch\r\n*** Add File: a\r\n+a\n*** End Patch  \nEOF"),
            "*** Begin Patch\n*** Add File: a\n+a\n*** End Patch"
        );
        assert_eq!(sentinels_cut("*** Add File: a\n+a"), "*** Add File: a\n+a");
        assert_eq!(
            sentinels_cut("*** End Patch\n*** Begin Patch"),
            "*** End Patch\n*** Begin Patch"
        );
    }

    #[test]
    fn a_patch_that_does_not_fit_is_a_failed_operation_and_changes_nothing() {
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(ws.path().join("a.txt"), "one\n").unwrap();
        let host = TestHost::new(ws.path());
        let answer = call(
            &host,
            "*** Begin Patch\n*** Add File: b.txt\n+b\n*** Delete File: missing.txt\n*** End Patch",
        );
        assert_eq!(answer["success"], false);
        assert_eq!(answer["result"], "");
        assert_eq!(
            answer["error"],
            "apply_patch failed: File not found: missing.txt"
        );
        assert!(!ws.path().join("b.txt").exists());
    }
}
