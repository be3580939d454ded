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

/// Cases where the port deliberately differs. Cline caps a file's text at 400 KB before it
/// slices the requested range, and then takes a notice in that text for its own; the port
/// numbers the range first and caps what one read returns, so text that only looks like the
/// notice is the file's content, numbered like any other line. `(id, output, range)`.
const DEVIATIONS: &[(&str, &str, (i64, i64))] = &[
    (
        "truncation-marker",
        "1 | line 1\n2 | line 2\n3 | line 3\n4 | line 4\n5 | \n6 | \n7 | ---\n8 | \n9 | [FILE TRUNCATED: This content is 512.0 KB but only the first 400.0 KB is shown (112.0 KB truncated). Use search_files to find specific patterns, or execute_command with grep/head/tail for targeted reading.]\n\n(File has 9 lines total.)",
        (1, 9),
    ),
    (
        "truncation-marker-with-range",
        "2 | line 2\n3 | line 3\n\n(Showing lines 2-3 of 9 total. Use start_line=4 to continue reading.)",
        (2, 3),
    ),
];

#[test]
fn conformance_cases() {
    let plugins = plugins();
    let all = cases("read_file");
    for (id, _, _) in DEVIATIONS {
        assert!(all.iter().any(|c| c.id == *id), "no case {id}");
    }
    for case in all {
        let deviation = DEVIATIONS.iter().find(|(id, _, _)| *id == case.id);
        let (output, displayed_range) = match deviation {
            Some((_, output, (start, end))) => {
                (output.to_string(), json!({"start": start, "end": end}))
            }
            None => (
                case.expect["output"].as_str().unwrap().to_string(),
                case.expect["displayed_range"].clone(),
            ),
        };
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
        assert_eq!(outcome.model_text(), output, "case {}", case.id);
        let events = ui.of_kind("tool");
        assert_eq!(events.len(), 1, "case {}: {events:?}", case.id);
        let event: Value = serde_json::from_str(&events[0]).unwrap();
        let range = match (&event["readLineStart"], &event["readLineEnd"]) {
            (Value::Null, Value::Null) => Value::Null,
            (start, end) => json!({"start": start, "end": end}),
        };
        assert_eq!(range, displayed_range, "case {}", case.id);
    }
}

/// A deliberate deviation (see [`DEVIATIONS`]): on a 5,000-line file of 200-byte lines (about
/// 1 MB), a range past the first 400 KB is shown, and a plain read keeps its hint.
#[test]
fn every_part_of_a_large_file_can_be_read() {
    let plugins = plugins();
    let ws = tempfile::tempdir().unwrap();
    let line = |n: usize| format!("{n:0>6}{}", "x".repeat(193));
    let content: String = (1..=5000).map(|n| line(n) + "\n").collect();
    std::fs::write(ws.path().join("big.txt"), &content).unwrap();
    let (host, ui) = in_process::host(plugins.path(), ws.path());
    let ranged = host.call(
        "read_file",
        r#"{"path":"big.txt","start_line":"2100","end_line":"2102"}"#,
    );
    assert_eq!(
        ranged.model_text(),
        format!(
            "2100 | {}\n2101 | {}\n2102 | {}\n\n(Showing lines 2100-2102 of 5000 total. Use start_line=2103 to continue reading.)",
            line(2100),
            line(2101),
            line(2102)
        )
    );
    let event: Value = serde_json::from_str(ui.of_kind("tool").last().unwrap()).unwrap();
    assert_eq!(
        (&event["readLineStart"], &event["readLineEnd"]),
        (&json!(2100), &json!(2102))
    );
    let plain = host.call("read_file", r#"{"path":"big.txt"}"#).model_text();
    assert!(
        !plain.contains("FILE TRUNCATED"),
        "{}",
        &plain[plain.len() - 300..]
    );
    assert!(plain.contains(&format!("\n1000 | {}\n", line(1000))));
    assert!(plain.ends_with(
        "\n\n(Showing lines 1-1000 of 5000 total. Use start_line=1001 to continue reading.)"
    ));
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
