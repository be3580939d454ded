//! read_file through the real plugin: every conformance case, the read cache, images, refusals.

use base64::Engine;
use serde_json::{json, Value};
use tool_api::model::ContentBlock;
use toolhost_tests::{cases, PluginDir};

use crate::in_process;

fn plugins() -> PluginDir {
    let dir = PluginDir::empty();
    dir.add_library("read_file");
    dir
}

#[test]
fn conformance_cases() {
    let plugins = plugins();
    for case in cases("read_file") {
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(
            ws.path().join("file.txt"),
            case.input["content"].as_str().unwrap(),
        )
        .unwrap();
        let mut params = json!({"path": "file.txt"});
        for key in ["start_line", "end_line"] {
            if let Some(value) = case.input.get(key) {
                params[key] = value.clone();
            }
        }
        let (host, ui) = in_process::host(plugins.path(), ws.path());
        let outcome = host.call("read_file", &params.to_string());
        assert_eq!(
            outcome.model_text(),
            case.expect["output"].as_str().unwrap(),
            "case {}",
            case.id
        );
        let events = ui.of_kind("tool");
        assert_eq!(events.len(), 1, "case {}: {events:?}", case.id);
        let event: Value = serde_json::from_str(&events[0]).unwrap();
        let range = match (&event["readLineStart"], &event["readLineEnd"]) {
            (Value::Null, Value::Null) => Value::Null,
            (start, end) => json!({"start": start, "end": end}),
        };
        assert_eq!(range, case.expect["displayed_range"], "case {}", case.id);
    }
}

#[test]
fn repeated_reads_of_an_unchanged_file_are_marked() {
    let plugins = plugins();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "one\n").unwrap();
    let (host, _ui) = in_process::host(plugins.path(), ws.path());
    let body = "1 | one\n\n(File has 1 lines total.)";
    assert_eq!(
        host.call("read_file", r#"{"path":"a.txt"}"#).model_text(),
        body
    );
    assert_eq!(
        host.call("read_file", r#"{"path":"a.txt","start_line":"1"}"#).model_text(),
        format!("[File already read] The file 'a.txt' was already read earlier in this conversation. Returning content:\n{body}")
    );
    assert_eq!(
        host.call("read_file", r#"{"path":"./a.txt"}"#).model_text().lines().next().unwrap(),
        "[DUPLICATE READ] You have already read 'a.txt' 3 times in this conversation. The content has not changed since your last read. Please use the information you already have and proceed with your task."
    );
}

#[test]
fn binary_and_missing_files_are_refused() {
    let plugins = plugins();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("blob.bin"), [0u8, 159, 146, 150, 0, 1, 2, 3]).unwrap();
    let (host, _ui) = in_process::host(plugins.path(), ws.path());
    assert_eq!(
        host.call("read_file", r#"{"path":"blob.bin"}"#).model_text(),
        "The tool execution failed with the following error:\n<error>\nError reading file: Cannot read text for file type: .bin\n</error>"
    );
    let before = host.task().mistakes();
    let missing = host.call("read_file", r#"{"path":"gone.txt"}"#);
    assert!(missing
        .model_text()
        .contains("Error reading file: File not found: "));
    assert_eq!(
        host.task().mistakes(),
        before + 1,
        "a failed read counts as a mistake"
    );
    assert!(!host
        .call("read_file", r#"{"path":"."}"#)
        .model_text()
        .is_empty());
}

/// A 2×1 PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAYAAAD0In+KAAAAEUlEQVR4nGP4z8DwHwQZYAwAkNcJ9+lmnmwAAAAASUVORK5CYII=";

#[test]
fn images_come_back_as_image_blocks() {
    let plugins = plugins();
    let ws = tempfile::tempdir().unwrap();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(PNG)
        .unwrap();
    std::fs::write(ws.path().join("dot.png"), &bytes).unwrap();
    let (host, _ui) = in_process::host(plugins.path(), ws.path());
    let outcome = host.call("read_file", r#"{"path":"dot.png"}"#);
    let content = outcome.result.unwrap();
    assert_eq!(
        content.content,
        vec![
            ContentBlock::Text {
                text: "Successfully read image".to_string()
            },
            ContentBlock::Image {
                media_type: "image/png".to_string(),
                data: PNG.to_string()
            },
        ]
    );
}
