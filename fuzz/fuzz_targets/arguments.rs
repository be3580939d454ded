//! Lenient parameter parsing (strict JSON, JSON5, the pairs of a truncated object) and the
//! coercion to a tool's schema: never a panic; a strict JSON object is read exactly as it is;
//! coercion keeps the keys and their order, leaves a string-typed property a string (or
//! null), and a second coercion changes nothing.
//!
//! Input: the arguments text (lossy UTF-8).
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use toolhost::fuzzing::{coerce_to_schema, parse_arguments};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Some(mut arguments) = parse_arguments(&text) else {
        return;
    };
    if let Ok(Value::Object(strict)) = serde_json::from_str::<Value>(text.trim()) {
        assert_eq!(arguments, strict, "a strict JSON object is read as it is");
    }
    // Every type the coercion knows, under the keys models send most.
    let schema = json!({"properties": {
        "path": {"type": "string"}, "content": {"type": "string"},
        "recursive": {"type": "boolean"}, "start_line": {"type": "integer"},
        "timeout": {"type": "number"}, "paths": {"type": "array"}, "options": {"type": "object"},
        "a": {"type": "string"}, "b": {"type": "integer"}, "c": {"type": "boolean"},
        "d": {"type": "number"}, "e": {"type": "array"}, "f": {"type": "object"}
    }});
    let keys: Vec<String> = arguments.keys().cloned().collect();
    coerce_to_schema(&mut arguments, &schema);
    assert_eq!(keys, arguments.keys().cloned().collect::<Vec<_>>());
    for key in ["path", "content", "a"] {
        if let Some(value) = arguments.get(key) {
            assert!(value.is_string() || value.is_null(), "{key}: {value}");
        }
    }
    let once = arguments.clone();
    coerce_to_schema(&mut arguments, &schema);
    assert_eq!(once, arguments, "coercion is idempotent");
});
