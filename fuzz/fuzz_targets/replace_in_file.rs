//! The SEARCH/REPLACE matcher and replace_in_file: a failed edit leaves the file's bytes
//! identical, and an exact single-block edit equals the plain string replacement.
//!
//! Input: one mode byte, then NUL-separated parts. Even mode: the file's bytes and a raw diff,
//! run through the real tool on a file of a temporary workspace. Odd mode: the file's text, a
//! SEARCH text and a REPLACE text, made into one block; when the SEARCH text occurs exactly
//! once, the matcher's result must be the file with that one occurrence replaced.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use serde_json::json;
use tool_api::sdk::testing::TestHost;
use write_to_file::{construct_new_file_content, WriteToFile};

fn workspace() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("temporary directory: {e}"));
        dir.keep()
    })
}

/// A line the matcher could read as a marker (or the start of one).
fn could_be_marker(line: &str) -> bool {
    let line = line.trim_start();
    line.starts_with(['-', '=', '+', '<', '>']) || line.contains("SEARCH") || line.contains("REPLACE")
}

fn through_the_tool(original: &[u8], diff: &[u8]) {
    let dir = workspace();
    let file = dir.join("f.txt");
    std::fs::write(&file, original).unwrap_or_else(|e| panic!("write: {e}"));
    let host = TestHost::new(dir);
    let diff = String::from_utf8_lossy(diff);
    let result = host.call(
        &WriteToFile,
        "replace_in_file",
        json!({"path": "f.txt", "diff": diff}),
    );
    let after = std::fs::read(&file).unwrap_or_else(|e| panic!("read: {e}"));
    if result.is_err() {
        assert_eq!(after, original, "a failed edit changed the file");
    }
    let names: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read_dir: {e}"))
        .filter_map(|e| e.ok().map(|e| e.file_name()))
        .collect();
    assert_eq!(names, ["f.txt"], "an edit left another file behind");
}

fn exact_single_block(original: &str, search: &str, replace: &str) {
    if search.is_empty()
        || original.contains('\r')
        || search.contains('\r')
        || replace.contains('\r')
        || search.split('\n').chain(replace.split('\n')).any(could_be_marker)
    {
        return;
    }
    let block = format!("{search}\n");
    let Some(first) = original.find(&block) else {
        return;
    };
    let after_first = first + original[first..].chars().next().map_or(1, char::len_utf8);
    if original[after_first..].contains(&block) {
        return;
    }
    let replacement = if replace.is_empty() {
        String::new()
    } else {
        format!("{replace}\n")
    };
    let diff = format!("------- SEARCH\n{search}\n=======\n{replace}\n+++++++ REPLACE");
    let diff = if replace.is_empty() {
        format!("------- SEARCH\n{search}\n=======\n+++++++ REPLACE")
    } else {
        diff
    };
    let replaced = construct_new_file_content(&diff, original, true)
        .unwrap_or_else(|e| panic!("an exact block did not apply: {e}"));
    assert_eq!(
        replaced.new_content,
        original.replacen(&block, &replacement, 1)
    );
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let mut parts = rest.splitn(3, |&b| b == 0);
    let original = parts.next().unwrap_or_default();
    let second = parts.next().unwrap_or_default();
    if mode % 2 == 0 {
        through_the_tool(original, second);
    } else {
        let third = parts.next().unwrap_or_default();
        exact_single_block(
            &String::from_utf8_lossy(original),
            &String::from_utf8_lossy(second),
            &String::from_utf8_lossy(third),
        );
    }
});
