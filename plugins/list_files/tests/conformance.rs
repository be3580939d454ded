//! Every case of the shared `list_files.jsonl` conformance vectors, run against the listing and
//! formatting functions on fixture trees recreated in a temporary directory.
//!
//! The host's part of a call is emulated: `.clineignore` checks (the path itself, then each
//! entry for the 🔒 marks) use the `ignore` crate's gitignore matcher with the fixture's
//! `.clineignore`, plus the file itself, as the host's policy does. Cases the host answers
//! before the tool runs (a blocked path) are checked against the host's error text.

// A failed set-up step should stop the test with its message; that is what unwrap does here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::convert::Infallible;
use std::fs;
use std::path::{Component, Path, PathBuf};

use base64::Engine as _;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use list_files::{format_files_list, list_files_with, ListOptions, TRUNCATION_HINT};
use serde_json::Value;

/// The conformance data: `TOOLHOST_CONFORMANCE_DIR`, or the shared folder beside the workspace.
fn conformance_dir() -> PathBuf {
    match std::env::var_os("TOOLHOST_CONFORMANCE_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance"),
    }
}

fn read_data(name: &str) -> String {
    let path = conformance_dir().join(name);
    fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read the conformance file {} ({e}); set TOOLHOST_CONFORMANCE_DIR to the folder \
             holding list_files.jsonl and fixtures.json",
            path.display()
        )
    })
}

/// Recreates fixture `name` from `fixtures.json` under `parent/name` (README, "Fixture trees").
fn make_fixture(fixtures: &Value, name: &str, parent: &Path) -> PathBuf {
    let fixture = fixtures["fixtures"]
        .as_array()
        .and_then(|list| list.iter().find(|f| f["name"] == name))
        .unwrap_or_else(|| panic!("fixture {name} is not in fixtures.json"));
    let root = parent.join(name);
    fs::create_dir_all(&root).unwrap();
    for dir in fixture["dirs"].as_array().unwrap() {
        fs::create_dir_all(root.join(dir.as_str().unwrap())).unwrap();
    }
    for file in fixture["files"].as_array().unwrap() {
        let path = root.join(file["path"].as_str().unwrap());
        let bytes = if let Some(text) = file["content"].as_str() {
            text.as_bytes().to_vec()
        } else if let Some(encoded) = file["base64"].as_str() {
            base64::engine::general_purpose::STANDARD
                .decode(encoded)
                .unwrap()
        } else if let Some(lines) = file.get("lines") {
            let template = lines["template"].as_str().unwrap();
            let count = lines["count"].as_u64().unwrap();
            (1..=count)
                .map(|n| format!("{}\n", template.replace("{n}", &n.to_string())))
                .collect::<String>()
                .into_bytes()
        } else {
            panic!("unknown fixture entry {file}");
        };
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, bytes).unwrap();
    }
    root
}

/// The host's `.clineignore` policy for one workspace root.
struct ClineIgnore {
    cwd: PathBuf,
    matcher: Option<Gitignore>,
}

impl ClineIgnore {
    fn load(cwd: &Path) -> Self {
        let matcher = fs::read_to_string(cwd.join(".clineignore"))
            .ok()
            .map(|text| {
                let mut builder = GitignoreBuilder::new(cwd);
                for line in text.lines() {
                    builder.add_line(None, line).unwrap();
                }
                builder.add_line(None, ".clineignore").unwrap();
                builder.build().unwrap()
            });
        Self {
            cwd: cwd.to_path_buf(),
            matcher,
        }
    }

    /// Whether `path` (relative to the root, or absolute) is blocked: a trailing `/` makes it a
    /// directory; the root itself and paths outside it are never blocked.
    fn blocks(&self, path: &str) -> bool {
        let Some(matcher) = &self.matcher else {
            return false;
        };
        let absolute = normalize(&self.cwd.join(path));
        match absolute.strip_prefix(&self.cwd) {
            Ok(rel) if !rel.as_os_str().is_empty() => matcher
                .matched_path_or_any_parents(rel, path.ends_with('/'))
                .is_ignore(),
            _ => false,
        }
    }
}

/// Resolves `.` and `..` lexically, as the host does.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// What the model receives for one case: the host's error for a blocked path, or the listing.
fn run_case(root: &Path, input: &Value) -> String {
    let path = input["path"].as_str().unwrap();
    let recursive = input["recursive"]
        .as_str()
        .is_some_and(|r| r.eq_ignore_ascii_case("true"));
    let policy = ClineIgnore::load(root);
    if policy.blocks(path) {
        return tool_api::texts::tool_error(&tool_api::texts::clineignore_error(path));
    }
    let options = ListOptions {
        // The temporary directory is never the home directory; keep the check out of the way.
        home: None,
        ..ListOptions::default()
    };
    let listing = list_files_with(&normalize(&root.join(path)), recursive, &options).unwrap();
    let text = format_files_list(&listing.entries, listing.did_hit_limit, |entry| {
        Ok::<_, Infallible>(policy.blocks(&entry.path.to_string_lossy()))
    });
    match text {
        Ok(text) => text,
        Err(never) => match never {},
    }
}

/// Checks a case whose exact output depends on directory order (`expect.output` is null).
fn check_order_dependent(id: &str, output: &str, expect: &Value) {
    let truncated = output.ends_with(TRUNCATION_HINT);
    if let Some(want) = expect["truncated"].as_bool() {
        assert_eq!(truncated, want, "{id}: truncated\n{output}");
    }
    if let Some(suffix) = expect["output_suffix"].as_str() {
        assert!(output.ends_with(suffix), "{id}: output suffix\n{output}");
    }
    if let Some(want) = expect["entries_shown"].as_u64() {
        let body = output.strip_suffix(TRUNCATION_HINT).unwrap_or(output);
        let shown = if body == list_files::NO_FILES || body.is_empty() {
            0
        } else {
            body.split('\n').count()
        };
        assert_eq!(shown as u64, want, "{id}: entries shown\n{output}");
    }
}

#[test]
fn every_list_files_case_matches() {
    let fixtures: Value = serde_json::from_str(&read_data("fixtures.json")).unwrap();
    let cases = read_data("list_files.jsonl");
    let temp = tempfile::tempdir().unwrap();
    let mut roots = std::collections::HashMap::new();
    let mut failures = Vec::new();
    let mut count = 0;
    for line in cases.lines().filter(|l| !l.trim().is_empty()) {
        let case: Value = serde_json::from_str(line).unwrap();
        let id = case["id"].as_str().unwrap().to_string();
        let fixture = case["input"]["fixture"].as_str().unwrap().to_string();
        let root = roots
            .entry(fixture.clone())
            .or_insert_with(|| make_fixture(&fixtures, &fixture, temp.path()))
            .clone();
        let output = run_case(&root, &case["input"]);
        let expect = &case["expect"];
        match expect["output"].as_str() {
            Some(want) if output != want => {
                failures.push(format!("{id}:\n--- want\n{want}\n--- got\n{output}"))
            }
            Some(_) => {}
            None => check_order_dependent(&id, &output, expect),
        }
        count += 1;
    }
    assert!(count > 0, "list_files.jsonl holds no cases");
    assert!(
        failures.is_empty(),
        "{} of {count} cases failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn blocked_paths_are_reported_by_the_host_policy() {
    // The two cases the host answers: the emulated policy must block them (and only them).
    let fixtures: Value = serde_json::from_str(&read_data("fixtures.json")).unwrap();
    let temp = tempfile::tempdir().unwrap();
    let policy = ClineIgnore::load(&make_fixture(&fixtures, "ws", temp.path()));
    assert!(policy.blocks("private"));
    assert!(policy.blocks("certs/server.pem"));
    assert!(policy.blocks(".clineignore"));
    assert!(!policy.blocks("secrets"));
    assert!(policy.blocks("secrets/key.txt"));
    assert!(!policy.blocks("."));
}

#[test]
fn a_directory_over_the_limit_shows_the_first_200_entries_in_order() {
    let fixtures: Value = serde_json::from_str(&read_data("fixtures.json")).unwrap();
    let temp = tempfile::tempdir().unwrap();
    let big = make_fixture(&fixtures, "big", temp.path());
    for (dir, recursive) in [("over", false), ("over", true), ("exact200", false)] {
        let output = run_case(
            &big,
            &serde_json::json!({"path": dir, "recursive": recursive.to_string()}),
        );
        let body = output.strip_suffix(TRUNCATION_HINT).unwrap_or_else(|| {
            panic!("{dir} (recursive: {recursive}) is not truncated:\n{output}")
        });
        let lines: Vec<&str> = body.split('\n').collect();
        assert_eq!(lines.len(), 200, "{dir}");
        let mut sorted = lines.clone();
        sorted.sort_by_cached_key(|line| list_files::sort_key(line));
        assert_eq!(lines, sorted, "{dir}: entries are in Cline's order");
    }
}
