//! replace_in_file through the real plugin: every final conformance case edits a real file
//! (the streaming cases are checked against the matcher in the plugin's own tests). A failed
//! edit must leave the file byte-identical.

use serde_json::{json, Value};
use tool_api::texts::tool_error;
use toolhost::Settings;
use toolhost_tests::{cases, workdir, PluginDir};

use crate::in_process;

fn edits_allowed() -> Settings {
    Settings::from_toml("[auto_approve]\nedit_files = true\n").unwrap()
}

/// Final cases where the port deliberately differs: a diff that applies no SEARCH/REPLACE block
/// is an error that leaves the file as it was (Cline saved it unchanged and reported success).
/// Each id maps to the start of the port's error.
const NO_BLOCK_DEVIATIONS: &[(&str, &str)] = &[
    (
        "diff-only-newline",
        "The diff contains no SEARCH/REPLACE block",
    ),
    (
        "search-only-no-separator-final",
        "The diff has no complete SEARCH/REPLACE block",
    ),
    (
        "partial-trailing-equals",
        "The diff has no complete SEARCH/REPLACE block",
    ),
];

#[test]
fn final_conformance_cases_edit_real_files() {
    let plugins = PluginDir::empty();
    plugins.add_library("write_to_file");
    let mut checked = 0;
    for case in cases("replace_in_file") {
        if case.input["is_final"] != true {
            continue;
        }
        let ws = workdir();
        let file = ws.path().join("file.txt");
        let original = case.input["original"].as_str().unwrap();
        std::fs::write(&file, original).unwrap();
        let (host, ui) = in_process::host_with(plugins.path(), ws.path(), edits_allowed());
        let params = json!({"path": "file.txt", "diff": case.input["diff"]});
        let outcome = host.call("replace_in_file", &params.to_string());
        let text = outcome.model_text();
        let after = std::fs::read_to_string(&file).unwrap();
        if let Some((_, start)) = NO_BLOCK_DEVIATIONS.iter().find(|(id, _)| *id == case.id) {
            // Intended deviation: Cline reports success with the file unchanged.
            assert_eq!(case.expect["ok"], true, "case {}", case.id);
            assert_eq!(case.expect["new_content"], original, "case {}", case.id);
            assert_eq!(after, original, "case {}: the file changed", case.id);
            assert!(outcome.is_error(), "case {}: {text}", case.id);
            let head =
                format!("The tool execution failed with the following error:\n<error>\n{start}");
            assert!(text.starts_with(&head), "case {}: {text}", case.id);
        } else if case.expect["ok"] == true {
            assert_eq!(
                after,
                case.expect["new_content"].as_str().unwrap(),
                "case {}",
                case.id
            );
            assert!(
                text.starts_with("The content was successfully saved to file.txt."),
                "case {}: {text}",
                case.id
            );
            let event: Value =
                serde_json::from_str(ui.of_kind("tool").last().expect("a tool event")).unwrap();
            assert_eq!(
                event["startLineNumbers"], case.expect["start_line_numbers"],
                "case {}",
                case.id
            );
        } else {
            assert_eq!(
                after, original,
                "case {}: a failed edit changed the file",
                case.id
            );
            let wrapped = tool_error(case.expect["error"].as_str().unwrap());
            let head = wrapped.trim_end_matches("\n</error>");
            assert!(
                text.starts_with(head),
                "case {}:\n{text}\n---\nexpected to start with:\n{head}",
                case.id
            );
        }
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} final cases");
}

#[test]
fn write_to_file_creates_parents_and_reports_the_saved_content() {
    let plugins = PluginDir::empty();
    plugins.add_library("write_to_file");
    let ws = workdir();
    let (host, _ui) = in_process::host_with(plugins.path(), ws.path(), edits_allowed());
    let outcome = host.call(
        "write_to_file",
        &json!({"path": "deep/er/new.ts", "content": "export const x = 1"}).to_string(),
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("deep/er/new.ts")).unwrap(),
        "export const x = 1"
    );
    let text = outcome.model_text();
    assert!(text.starts_with(
        "The content was successfully saved to deep/er/new.ts.\n\nHere is the full, updated content of the file that was saved:\n\n<final_file_content path=\"deep/er/new.ts\">\nexport const x = 1\n\n</final_file_content>"
    ), "{text}");
}

#[test]
fn edits_are_denied_by_default_without_a_terminal() {
    let plugins = PluginDir::empty();
    plugins.add_library("write_to_file");
    let ws = workdir();
    std::fs::write(ws.path().join("a.txt"), "a\n").unwrap();
    let (host, _ui) = in_process::host(plugins.path(), ws.path());
    let outcome = host.call(
        "write_to_file",
        &json!({"path": "a.txt", "content": "b"}).to_string(),
    );
    assert_eq!(
        outcome.model_text(),
        toolhost_tests::nobody_to_ask("write_to_file", &["edit_files"])
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "a\n"
    );
}
