//! The assistant-message parser: every case of parse_assistant_message.jsonl, including every
//! streaming prefix.

use serde_json::Value;
use toolhost::{Block, XmlParser};

/// Cline's parser, with write_to_file's `content` read raw as the write_to_file plugin's spec
/// declares it (the host learns it from the loaded specs).
fn parse_assistant_message(text: &str) -> Vec<Block> {
    XmlParser::cline()
        .with_raw_params("write_to_file", ["content"])
        .parse(text)
}
use toolhost_tests::cases;

fn parsed(text: &str) -> Value {
    serde_json::to_value(parse_assistant_message(text)).unwrap()
}

#[test]
fn conformance_cases() {
    let mut prefixes = 0;
    for case in cases("parse_assistant_message") {
        let text = case.input["text"].as_str().unwrap();
        if let Some(expected) = case.expect.get("blocks") {
            assert_eq!(&parsed(text), expected, "case {}", case.id);
        }
        for prefix in case.expect["prefixes"].as_array().into_iter().flatten() {
            let length = prefix["length"].as_u64().unwrap() as usize;
            // The streaming texts are BMP-only: UTF-16 units and chars coincide.
            let cut: String = text.chars().take(length).collect();
            assert_eq!(
                parsed(&cut),
                prefix["blocks"],
                "case {} at length {length}",
                case.id
            );
            prefixes += 1;
        }
    }
    assert!(prefixes > 50, "only {prefixes} streaming prefixes checked");
}

#[test]
fn long_text_without_tags_parses_in_linear_time() {
    let text = "a > b ".repeat(200_000);
    let blocks = parse_assistant_message(&text);
    assert_eq!(blocks.len(), 1);
}
