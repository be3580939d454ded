//! apply_patch through the real plugin: every conformance case on a real workspace (the exact
//! tool result and every file afterwards), all-or-nothing across files, approvals (denied,
//! outside the workspace), `.clineignore`, and the inputs on which Cline never returns.
//!
//! Intended deviations from the recorded Cline behaviour are listed in [`deviation`], each with
//! its reason; for them the corrected behaviour is asserted instead.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{json, Value};
use tool_api::texts::{missing_param_error, tool_error};
use toolhost::CallOutcome;
use toolhost::ErrorKind;
use toolhost::Settings;
use toolhost_tests::{cases, workdir, Case, PluginDir};

use crate::in_process;

fn plugins() -> PluginDir {
    let dir = PluginDir::empty();
    dir.add_library("apply_patch");
    dir
}

fn edits_allowed() -> Settings {
    Settings::from_toml("[auto_approve]\nedit_files = true\n").unwrap()
}

type Files = BTreeMap<String, String>;

/// Writes `files` (relative path → content) under `root`.
fn write_files(root: &Path, files: &Files) {
    for (path, content) in files {
        let target = root.join(path);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::write(target, content).unwrap();
    }
}

/// Every file under `root` (relative, `/`-separated) with its content; directories are not
/// listed, so an empty one does not show. Leftover temporary files would.
fn read_files(root: &Path) -> Files {
    let mut files = Files::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let rel = path.strip_prefix(root).unwrap();
            let rel: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            let bytes = std::fs::read(&path).unwrap();
            files.insert(rel.join("/"), String::from_utf8(bytes).unwrap());
        }
    }
    files
}

fn files_of(value: &Value) -> Files {
    value
        .as_object()
        .map(|map| {
            map.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
                .collect()
        })
        .unwrap_or_default()
}

fn files(entries: &[(&str, &str)]) -> Files {
    entries
        .iter()
        .map(|(p, c)| (p.to_string(), c.to_string()))
        .collect()
}

/// Runs `apply_patch` with `params` in a fresh workspace holding `before`.
fn call(
    settings: Settings,
    before: &Files,
    params: &Value,
) -> (CallOutcome, Files, in_process::RecordingUi) {
    let plugins = plugins();
    let ws = workdir();
    write_files(ws.path(), before);
    let (host, ui) = in_process::host_with(plugins.path(), ws.path(), settings);
    let outcome = host.call("apply_patch", &params.to_string());
    (outcome, read_files(ws.path()), ui)
}

fn error_kind(outcome: &CallOutcome) -> Option<ErrorKind> {
    outcome.result.as_ref().err().map(|e| e.kind)
}

/// What the port does instead of what Cline recorded: the model-visible result and the files.
struct Corrected {
    reason: &'static str,
    tool_result: String,
    files_after: Files,
}

/// The intended deviations of a case, if any.
fn deviation(case: &Case) -> Option<Corrected> {
    let before = files_of(&case.input["files"]);
    let patch = case.input["patch"].as_str();
    let Some(patch) = patch else {
        return Some(Corrected {
            reason: "the missing-parameter reminder is in the project's own words (models get \
                     the same structure and first line, not Cline's prompt text)",
            tool_result: tool_error(&missing_param_error("input")),
            files_after: before,
        });
    };
    // `*** Add File` on an existing file: Cline overwrites it, losing its content.
    let overwritten = patch.lines().find_map(|line| {
        let path = line.strip_prefix("*** Add File: ")?.trim();
        before.contains_key(path).then(|| path.to_string())
    });
    if let (Some(path), true) = (overwritten, case.expect["ok"] == true) {
        return Some(Corrected {
            reason: "Add File on an existing file would silently destroy it (data loss): the \
                     port refuses with the error Cline's own parser has for it",
            tool_result: tool_error(&format!(
                "Error executing apply_patch: Add File Error: File already exists: {path}"
            )),
            files_after: before,
        });
    }
    match case.id.as_str() {
        "update-end-of-file-marker" => Some(Corrected {
            reason: "Cline's End-of-File attempt fails when the file ends with a newline and \
                     the hunk lands on the first match (fuzz 10000); the port places it at the end",
            tool_result: "Successfully applied patch to the following files:\n\n\
                          <final_file_content path=\"a.txt\">\nx\nend\nx\nEND\n\n</final_file_content>"
                .to_string(),
            files_after: files(&[("a.txt", "x\nend\nx\nEND\n")]),
        }),
        _ => None,
    }
}

#[test]
fn conformance_cases() {
    let mut checked = 0;
    let mut deviations = Vec::new();
    for case in cases("apply_patch") {
        let before = files_of(&case.input["files"]);
        let mut params = json!({});
        if let Some(patch) = case.input.get("patch") {
            params["input"] = patch.clone();
        }
        let (outcome, after, ui) = call(edits_allowed(), &before, &params);
        let text = outcome.model_text();
        if case.expect["hangs"] == true {
            // Cline never returns here; the port must end with an error and change nothing.
            assert_eq!(
                error_kind(&outcome),
                Some(ErrorKind::Failed),
                "case {}: {text}",
                case.id
            );
            assert!(
                text.contains("Error executing apply_patch: "),
                "case {}: {text}",
                case.id
            );
            assert_eq!(after, before, "case {}", case.id);
        } else if let Some(corrected) = deviation(&case) {
            assert_eq!(
                text, corrected.tool_result,
                "case {} ({})",
                case.id, corrected.reason
            );
            assert_eq!(
                after, corrected.files_after,
                "case {} ({})",
                case.id, corrected.reason
            );
            deviations.push(case.id.clone());
        } else {
            assert_eq!(
                text,
                case.expect["tool_result"].as_str().unwrap(),
                "case {}",
                case.id
            );
            assert_eq!(
                after,
                files_of(&case.expect["files_after"]),
                "case {}",
                case.id
            );
            if case.expect["ok"] == false {
                assert!(outcome.is_error(), "case {}", case.id);
            }
        }
        if case.expect["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("Access denied: "))
        {
            let path =
                case.expect["error"].as_str().unwrap()["Access denied: ".len()..].to_string();
            assert_eq!(
                ui.of_kind("clineignore_error"),
                vec![path],
                "case {}",
                case.id
            );
        }
        checked += 1;
    }
    assert!(checked >= 23, "only {checked} cases");
    // The known deviations of the published half, so that none goes unnoticed.
    for id in [
        "update-end-of-file-marker",
        "add-existing-file-overwrites",
        "missing-input",
    ] {
        if cases("apply_patch").iter().any(|c| c.id == id) {
            assert!(
                deviations.iter().any(|d| d == id),
                "{id} was not treated as a deviation"
            );
        }
    }
}

#[test]
fn a_hunk_that_does_not_apply_in_the_second_file_changes_nothing() {
    let before = files(&[
        ("a.txt", "a\nb\n"),
        ("b.txt", "x\ny\n"),
        ("gone.txt", "g\n"),
    ]);
    let patch = "*** Begin Patch\n\
                 *** Add File: new/created.txt\n+new\n\
                 *** Update File: a.txt\n@@\n a\n-b\n+B\n\
                 *** Update File: b.txt\n@@\n x\n-not in the file\n+z\n\
                 *** Delete File: gone.txt\n\
                 *** End Patch";
    let (outcome, after, _ui) = call(edits_allowed(), &before, &json!({ "input": patch }));
    assert_eq!(
        outcome.model_text(),
        tool_error(
            "Error executing apply_patch: b.txt: hunk 1 does not match the file; these lines \
             were not found:\nx\nnot in the file\nNo file was changed. Read the file again and \
             copy the context lines exactly."
        )
    );
    assert_eq!(after, before);
}

#[test]
fn a_multi_file_patch_applies_every_file() {
    let before = files(&[("a.txt", "a\nb\n"), ("m.txt", "m\n"), ("gone.txt", "g\n")]);
    let patch = "*** Begin Patch\n\
                 *** Add File: new/created.txt\n+new\n\n\
                 *** Update File: a.txt\n\n@@\n a\n-b\n+B\n\n\
                 *** Update File: m.txt\n*** Move to: moved/m.txt\n@@\n-m\n+M\n\
                 *** Delete File: gone.txt\n\
                 *** End Patch";
    let (outcome, after, ui) = call(edits_allowed(), &before, &json!({ "input": patch }));
    assert_eq!(
        outcome.model_text(),
        "Successfully applied patch to the following files:\n\n\
         <final_file_content path=\"new/created.txt\">\nnew\n\n</final_file_content>\n\n\
         <final_file_content path=\"a.txt\">\na\nB\n\n</final_file_content>\n\n\
         <final_file_content path=\"moved/m.txt\">\nM\n\n</final_file_content>\n\n\
         m.txt: [deleted]\n\n\
         gone.txt: [deleted]"
    );
    assert_eq!(
        after,
        files(&[
            ("a.txt", "a\nB\n"),
            ("moved/m.txt", "M\n"),
            ("new/created.txt", "new")
        ])
    );
    let tools: Vec<(String, String)> = ui
        .of_kind("tool")
        .iter()
        .map(|m| {
            let v: Value = serde_json::from_str(m).unwrap();
            (
                v["tool"].as_str().unwrap().to_string(),
                v["path"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let expected: Vec<(String, String)> = [
        ("newFileCreated", "new/created.txt"),
        ("editedExistingFile", "a.txt"),
        ("newFileCreated", "moved/m.txt"),
        ("fileDeleted", "m.txt"),
        ("fileDeleted", "gone.txt"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(tools, expected);
}

#[test]
fn without_edit_approval_nothing_changes() {
    let before = files(&[("a.txt", "a\nb\n")]);
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n a\n-b\n+B\n*** Add File: n.txt\n+n\n*** End Patch";
    // Default settings and no terminal: edits are not approved.
    let (outcome, after, _ui) = call(Settings::default(), &before, &json!({ "input": patch }));
    assert_eq!(
        outcome.model_text(),
        toolhost_tests::nobody_to_ask("apply_patch", &["edit_files"])
    );
    assert_eq!(error_kind(&outcome), Some(ErrorKind::Denied));
    assert_eq!(after, before);
}

#[test]
fn clineignored_targets_are_refused_and_nothing_changes() {
    let before = files(&[(".clineignore", "secret/\n"), ("a.txt", "a\n")]);
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** Add File: secret/new.txt\n+x\n*** End Patch";
    let (outcome, after, ui) = call(edits_allowed(), &before, &json!({ "input": patch }));
    assert_eq!(
        outcome.model_text(),
        tool_error("Error executing apply_patch: Access denied: secret/new.txt")
    );
    assert_eq!(error_kind(&outcome), Some(ErrorKind::Blocked));
    assert_eq!(
        ui.of_kind("clineignore_error"),
        vec!["secret/new.txt".to_string()]
    );
    assert_eq!(after, before);
}

/// A workspace inside a parent directory that also holds `outside.txt`.
fn run_outside(settings: Settings) -> (CallOutcome, Files) {
    let plugins = plugins();
    let parent = workdir();
    let ws = parent.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(ws.join("in.txt"), "in\n").unwrap();
    std::fs::write(parent.path().join("outside.txt"), "out\n").unwrap();
    let (host, _ui) = in_process::host_with(plugins.path(), &ws, settings);
    let patch = "*** Begin Patch\n*** Update File: in.txt\n@@\n-in\n+IN\n*** Update File: ../outside.txt\n@@\n-out\n+OUT\n*** End Patch";
    let outcome = host.call("apply_patch", &json!({ "input": patch }).to_string());
    (outcome, read_files(parent.path()))
}

#[test]
fn a_file_outside_the_workspace_needs_the_outside_approval() {
    let (outcome, after) = run_outside(edits_allowed());
    assert_eq!(
        outcome.model_text(),
        toolhost_tests::nobody_to_ask("apply_patch", &["edit_files", "edit_files_externally"])
    );
    assert_eq!(
        after,
        files(&[("outside.txt", "out\n"), ("ws/in.txt", "in\n")])
    );

    let both =
        Settings::from_toml("[auto_approve]\nedit_files = true\nedit_files_externally = true\n")
            .unwrap();
    let (outcome, after) = run_outside(both);
    assert!(!outcome.is_error(), "{}", outcome.model_text());
    assert_eq!(
        after,
        files(&[("outside.txt", "OUT\n"), ("ws/in.txt", "IN\n")])
    );
}

#[test]
fn inputs_on_which_cline_never_returns_terminate() {
    let before = files(&[("a.txt", "a\nb\n")]);
    // A blank line right after `*** Update File:` is a separator: the patch applies.
    let blank = "*** Begin Patch\n*** Update File: a.txt\n\n@@\n a\n-b\n+B\n*** End Patch";
    let (outcome, after, _ui) = call(edits_allowed(), &before, &json!({ "input": blank }));
    assert!(!outcome.is_error(), "{}", outcome.model_text());
    assert_eq!(after, files(&[("a.txt", "a\nB\n")]));
    // `***` or `@@x` where the first hunk should start are errors.
    for (line, shown) in [("***", "***"), ("@@x", "@@x")] {
        let patch = format!("*** Begin Patch\n*** Update File: a.txt\n{line}\n a\n*** End Patch");
        let (outcome, after, _ui) = call(edits_allowed(), &before, &json!({ "input": patch }));
        assert_eq!(
            outcome.model_text(),
            tool_error(&format!(
                "Error executing apply_patch: Invalid Line:\n{shown}"
            ))
        );
        assert_eq!(after, before);
    }
}

#[test]
fn the_description_names_the_call() {
    let plugins = plugins();
    let ws = workdir();
    let (host, _ui) = in_process::host_with(plugins.path(), ws.path(), edits_allowed());
    let outcome = host.call(
        "apply_patch",
        &json!({ "input": "*** Delete File: x" }).to_string(),
    );
    assert_eq!(outcome.description, "[apply_patch for patch application]");
}
