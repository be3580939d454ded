//! apply_patch's parser and applier through the real tool on a temporary workspace: all or
//! nothing across files. A patch that fails leaves every file's bytes as they were and adds or
//! removes none.
//!
//! Input: NUL-separated parts: the patch (skipped when it could name a path outside), then pairs of a file name and its bytes (names are
//! made into plain relative names; at most four files).
#![no_main]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use apply_patch::ApplyPatch;
use libfuzzer_sys::fuzz_target;
use serde_json::json;
use tool_api::sdk::testing::TestHost;

fn workspace() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("temporary directory: {e}"));
        dir.keep()
    })
}

/// A file name the fuzzer chose, made plain: letters, digits, `.`, `_`, `-`, and `/` between
/// non-empty parts other than `.` and `..`.
fn plain_name(raw: &[u8]) -> Option<String> {
    let name: String = String::from_utf8_lossy(raw)
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/'))
        .take(40)
        .collect();
    let parts: Vec<&str> = name
        .split('/')
        .filter(|p| !p.is_empty() && *p != "." && *p != "..")
        .take(3)
        .collect();
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&next) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else {
                let bytes = std::fs::read(&path).unwrap_or_default();
                files.insert(path, bytes);
            }
        }
    }
    files
}

/// Whether the patch could name a file outside the workspace (the test host approves every
/// path, so such a patch would really change it): `..`, `~`, a backslash, or a `/` that does
/// not follow a name's character (an absolute path, wherever the parser finds one). Such
/// inputs are skipped.
fn could_leave(patch: &str) -> bool {
    let bytes = patch.as_bytes();
    patch.contains("..")
        || patch.contains(['~', '\\'])
        || bytes.iter().enumerate().any(|(i, &b)| {
            b == b'/'
                && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || b"._-".contains(&bytes[i - 1])))
        })
}

fuzz_target!(|data: &[u8]| {
    let mut parts = data.split(|&b| b == 0);
    let patch = String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
    if could_leave(&patch) {
        return;
    }
    let dir = workspace();
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("create: {e}"));
    for _ in 0..4 {
        let (Some(name), Some(bytes)) = (parts.next(), parts.next()) else {
            break;
        };
        let Some(name) = plain_name(name) else {
            continue;
        };
        let path = dir.join(&name);
        if let Some(parent) = path.parent() {
            if std::fs::create_dir_all(parent).is_err() {
                continue;
            }
        }
        let _ = std::fs::write(&path, bytes);
    }
    let before = snapshot(dir);
    let host = TestHost::new(dir);
    let result = host.call(&ApplyPatch, "apply_patch", json!({ "input": patch }));
    if result.is_err() {
        assert_eq!(snapshot(dir), before, "a failed patch changed the workspace");
    }
});
