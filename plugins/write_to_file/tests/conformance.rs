//! Runs every case of the shared conformance vectors `replace_in_file.jsonl` against the pure
//! SEARCH/REPLACE matcher.
//!
//! The data lives in the repository's `tests/conformance/` (or `$TOOLHOST_CONFORMANCE_DIR`). A
//! missing or unreadable file fails the test: it is never skipped.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use serde_json::{json, Value};
use write_to_file::construct_new_file_content;

/// Cases where the port deliberately differs from Cline, with the reason. Each listed case must
/// exist in the data (so that a stale entry is noticed) and is checked against the port's own
/// expectation instead of Cline's. None is needed today: the spec's corrections do not concern
/// the v1 matcher.
const DEVIATIONS: &[(&str, &str)] = &[];

fn conformance_file(name: &str) -> PathBuf {
    let dir = std::env::var_os("TOOLHOST_CONFORMANCE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/conformance")
        });
    dir.join(name)
}

fn load_cases() -> Vec<Value> {
    let path = conformance_file("replace_in_file.jsonl");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read the conformance data {} ({e}); set TOOLHOST_CONFORMANCE_DIR to the directory holding replace_in_file.jsonl",
            path.display()
        )
    });
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .enumerate()
        .map(|(i, line)| {
            serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{}: line {} is not JSON: {e}", path.display(), i + 1))
        })
        .collect()
}

/// What the port produces, in the shape of the data's `expect`.
fn actual(input: &Value) -> Value {
    let original = input["original"]
        .as_str()
        .expect("input.original is a string");
    let diff = input["diff"].as_str().expect("input.diff is a string");
    let is_final = input["is_final"]
        .as_bool()
        .expect("input.is_final is a bool");
    match construct_new_file_content(diff, original, is_final) {
        Ok(replaced) => json!({
            "ok": true,
            "new_content": replaced.new_content,
            "match_indices": replaced.match_indices,
            "start_line_numbers": replaced.start_line_numbers,
        }),
        Err(error) => json!({"ok": false, "error": error}),
    }
}

/// The data's `expect` without the fields that only help humans (`error_key`), after checking
/// that the key really is part of the error.
fn expected(expect: &Value) -> Value {
    let mut expect = expect.clone();
    if let Some(map) = expect.as_object_mut() {
        if let Some(key) = map.remove("error_key") {
            let error = map.get("error").and_then(Value::as_str).unwrap_or_default();
            let key = key.as_str().unwrap_or_default();
            assert!(
                error.contains(key),
                "error_key {key:?} is not part of the error {error:?}"
            );
        }
    }
    expect
}

#[test]
fn every_replace_in_file_case_matches_cline() {
    let cases = load_cases();
    assert!(!cases.is_empty(), "replace_in_file.jsonl holds no cases");

    let mut failures = Vec::new();
    let mut checked = 0;
    for case in &cases {
        let id = case["id"].as_str().expect("every case has an id");
        assert_eq!(
            case["area"],
            json!("replace_in_file"),
            "case {id}: wrong area"
        );
        if DEVIATIONS.iter().any(|(dev, _)| *dev == id) {
            continue;
        }
        let want = expected(&case["expect"]);
        let got = actual(&case["input"]);
        if got != want {
            failures.push(format!(
                "case {id}:\n  expected {want}\n  actual   {got}\n  note: {}",
                case["note"].as_str().unwrap_or("-")
            ));
        }
        checked += 1;
    }
    assert!(
        failures.is_empty(),
        "{} of {checked} cases differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(checked + DEVIATIONS.len(), cases.len());
}

#[test]
fn listed_deviations_exist_in_the_data() {
    let cases = load_cases();
    let ids: Vec<&str> = cases.iter().filter_map(|c| c["id"].as_str()).collect();
    let stale: Vec<&str> = DEVIATIONS
        .iter()
        .map(|(id, _)| *id)
        .filter(|id| !ids.contains(id))
        .collect();
    assert_eq!(stale, Vec::<&str>::new(), "deviations name unknown cases");
}
