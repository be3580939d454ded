//! The frames of `toolhost serve`: any bytes on stdin are answered line by line and serving
//! goes on. Every non-blank line gets exactly one answer, and every answer is one JSON object
//! with an `id`; the exception is an answer to a question (`{"answer": N, ...}`, no `tool`),
//! which with no question waiting answers nothing.
//!
//! Input: the bytes the client sends. The host has no plugins (a request runs the real lookup
//! and gets the unknown-tool answer), so nothing the input names can run.
#![no_main]

use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use toolhost::fuzzing::{empty_host, serve_lines};
use toolhost::Host;

/// A host over an empty plugin directory and an empty workspace, denying what is not
/// auto-approved.
pub fn host() -> &'static Arc<Host> {
    static HOST: OnceLock<Arc<Host>> = OnceLock::new();
    HOST.get_or_init(empty_host)
}

fuzz_target!(|data: &[u8]| {
    let output = serve_lines(host(), data).unwrap_or_else(|e| panic!("serve failed: {e}"));
    let requests = data
        .split(|&b| b == b'\n')
        .filter(|line| !line.trim_ascii().is_empty() && !is_answer_line(line))
        .count();
    let answers: Vec<&[u8]> = output
        .split(|&b| b == b'\n')
        .filter(|line| !line.is_empty())
        .collect();
    assert_eq!(answers.len(), requests, "one answer per request line");
    for answer in answers {
        let value: Value = serde_json::from_slice(answer)
            .unwrap_or_else(|e| panic!("an answer is not JSON ({e}): {answer:?}"));
        assert!(value.get("id").is_some(), "an answer without id: {value}");
    }
});

/// Whether `line` is an answer to a question rather than a request: UTF-8 JSON with `answer`,
/// no `tool` string and no `"list": true`.
fn is_answer_line(line: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(line) else {
        return false;
    };
    let Ok(message) = serde_json::from_str::<Value>(text) else {
        return false;
    };
    message.get("list").and_then(Value::as_bool) != Some(true)
        && message.get("tool").and_then(Value::as_str).is_none()
        && message.get("answer").is_some()
}
