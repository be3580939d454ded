//! The vectors recorded from Cline's SDK tools (`tests/conformance/sdk_*.jsonl`, v4.1.12),
//! replayed through `toolhost --tools cline-sdk call` in a workspace of their own: each case's
//! files are written, the tool is called with the case's parameters, and the answer (with the
//! workspace's path written `{ws}`) and the files afterwards must be Cline's. The cases where
//! toolhost deliberately differs are listed with the reason, and are checked to differ.

use std::path::Path;

use serde_json::Value;
use toolhost_tests::{cases, run, Case, Home};

/// Cases toolhost answers differently on purpose, by area and id, with why.
const DEVIATIONS: &[(&str, &str, &str)] = &[
    // toolhost's parameters are always a JSON object (Cline's runtime also takes a string or
    // an array as the whole input).
    (
        "sdk_read_files",
        "loose-string",
        "parameters are a JSON object",
    ),
    (
        "sdk_read_files",
        "loose-array-of-strings",
        "parameters are a JSON object",
    ),
    (
        "sdk_read_files",
        "loose-array-of-objects",
        "parameters are a JSON object",
    ),
    (
        "sdk_read_files",
        "loose-top-level-json-string",
        "parameters are a JSON object",
    ),
    (
        "sdk_read_files",
        "loose-filePath-in-array",
        "parameters are a JSON object",
    ),
    (
        "sdk_read_files",
        "orphan-range-after-string",
        "parameters are a JSON object",
    ),
    (
        "sdk_run_commands",
        "loose-top-level-string",
        "parameters are a JSON object",
    ),
    (
        "sdk_run_commands",
        "loose-top-level-array",
        "parameters are a JSON object",
    ),
    (
        "sdk_run_commands",
        "loose-top-level-structured-array",
        "parameters are a JSON object",
    ),
    (
        "sdk_run_commands",
        "loose-top-level-json-string",
        "parameters are a JSON object",
    ),
    // A path outside the workspace is asked about (and approved here) rather than refused.
    (
        "sdk_editor",
        "path-escapes-cwd",
        "outside the workspace: approval, not refusal",
    ),
    // Node's spawn error text.
    (
        "sdk_run_commands",
        "structured-not-found",
        "a missing program's error is the OS's",
    ),
];

fn deviation(area: &str, id: &str) -> bool {
    DEVIATIONS.iter().any(|(a, i, _)| *a == area && *i == id)
}

/// The files under `dir`, by path relative to it.
fn files_in(dir: &Path, base: &Path, out: &mut serde_json::Map<String, Value>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files_in(&path, base, out);
        } else {
            let name = path.strip_prefix(base).unwrap().display().to_string();
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            out.insert(name, Value::String(text));
        }
    }
}

/// Whether toolhost's answer to `case` (a call of `tool`) is Cline's; the reason when not.
fn replay(tool: &str, case: &Case) -> Result<(), String> {
    // Cline's SDK recorded these without a model that takes images.
    let settings = "[auto_approve]\nread_files = true\n[model]\nsupports_images = false\n";
    let home = Home::new(settings, &[tool]);
    for (name, content) in case.input["files"].as_object().into_iter().flatten() {
        let path = home.ws.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, content.as_str().unwrap_or_default()).unwrap();
    }
    let params = case.input["params"].to_string();
    let cwd = home.ws.display().to_string();
    let ran = run(home.toolhost().args([
        "--tools",
        "cline-sdk",
        "call",
        "--yes",
        tool,
        &params,
        "--cwd",
        &cwd,
    ]));
    let ours = ran.stdout.replace(&cwd, "{ws}");
    if let Some(output) = case.expect["output"].as_str() {
        if ours != output {
            return Err(format!("answer\n  ours:  {ours}\n  Cline: {output}"));
        }
    }
    if let Some(error) = case.expect["error"].as_str() {
        if !ours.contains(error) {
            return Err(format!("error\n  ours:  {ours}\n  Cline: {error}"));
        }
    }
    if let Some(expected) = case.expect["files"].as_object() {
        let mut after = serde_json::Map::new();
        files_in(&home.ws, &home.ws, &mut after);
        if &after != expected {
            return Err(format!(
                "files\n  ours:  {}\n  Cline: {}",
                Value::Object(after),
                Value::Object(expected.clone())
            ));
        }
    }
    Ok(())
}

fn replay_area(area: &str, tool: &str) {
    let mut failed = Vec::new();
    let mut deviations = 0;
    for case in cases(area) {
        let outcome = replay(tool, &case);
        match (deviation(area, &case.id), outcome) {
            (false, Err(why)) => failed.push(format!("{}: {why}", case.id)),
            (true, Ok(())) => failed.push(format!(
                "{}: listed as a deviation but answered as Cline does",
                case.id
            )),
            (true, Err(_)) => deviations += 1,
            (false, Ok(())) => {}
        }
    }
    assert!(failed.is_empty(), "{area}:\n{}", failed.join("\n"));
    let listed = DEVIATIONS.iter().filter(|(a, _, _)| *a == area).count();
    assert_eq!(
        deviations, listed,
        "{area}: every listed deviation is a case"
    );
}

#[test]
fn read_files_answers_as_clines_sdk() {
    replay_area("sdk_read_files", "read_files");
}

#[test]
fn editor_answers_and_edits_as_clines_sdk() {
    replay_area("sdk_editor", "editor");
}

#[test]
fn run_commands_answers_as_clines_sdk() {
    replay_area("sdk_run_commands", "run_commands");
}
