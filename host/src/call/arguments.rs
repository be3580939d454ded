//! Native tool-call arguments: parsed leniently and coerced to the tool's schema.
//!
//! Models sometimes send arguments that are not quite JSON (single quotes, trailing commas,
//! unquoted keys, a truncated object). Like Continue, toolhost falls back to a tolerant parse
//! (JSON5, then salvaging `"key": "value"` pairs from a truncated object), then coerces each
//! value to the type the tool's schema declares, before the host checks required parameters.

use std::sync::Arc;

use serde_json::{Map, Value};

/// A call's arguments as its frontend has them: text as a model wrote it (read leniently), or
/// an object a protocol already parsed (taken as it is, never written out and read again).
#[derive(Debug, Clone)]
pub enum Arguments {
    /// The arguments as a model wrote them, not quite JSON perhaps ([`parse_arguments`]).
    Text(Arc<str>),
    /// The arguments as a JSON object.
    Object(Map<String, Value>),
}

impl Arguments {
    /// The arguments as an object; `None` when the text holds nothing usable.
    pub fn into_object(self) -> Option<Map<String, Value>> {
        match self {
            Self::Text(text) => parse_arguments(&text),
            Self::Object(map) => Some(map),
        }
    }
}

impl From<&str> for Arguments {
    fn from(text: &str) -> Self {
        Self::Text(text.into())
    }
}

impl From<&String> for Arguments {
    fn from(text: &String) -> Self {
        Self::Text(text.as_str().into())
    }
}

impl From<Map<String, Value>> for Arguments {
    fn from(map: Map<String, Value>) -> Self {
        Self::Object(map)
    }
}

/// A JSON value as arguments: an object as it is, anything else as its text (which is not an
/// object, and so is refused as one would be).
impl From<Value> for Arguments {
    fn from(value: Value) -> Self {
        match value {
            Value::Object(map) => Self::Object(map),
            other => Self::Text(other.to_string().into()),
        }
    }
}

/// Parses tool-call arguments: strict JSON, else JSON5, else the `"key": "value"` pairs that can
/// be salvaged from a truncated object. `None` when nothing usable is there.
pub fn parse_arguments(text: &str) -> Option<Map<String, Value>> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Some(Map::new());
    }
    if let Ok(Value::Object(map)) = serde_json::from_str::<Value>(trimmed) {
        return Some(map);
    }
    if let Ok(Value::Object(map)) = json5::from_str::<Value>(trimmed) {
        return Some(map);
    }
    let salvaged = salvage_pairs(trimmed);
    (!salvaged.is_empty()).then_some(salvaged)
}

/// The complete or truncated `"key": "value"` string pairs of a broken object, with JSON's
/// escapes decoded (Cline's fallback for a stream cut mid-object).
fn salvage_pairs(text: &str) -> Map<String, Value> {
    let mut map = Map::new();
    let mut rest = text;
    while let Some((key, after_key)) = next_string(rest) {
        let after_colon = after_key.trim_start();
        let Some(after_colon) = after_colon.strip_prefix(':') else {
            rest = after_key;
            continue;
        };
        match next_string(after_colon) {
            Some((value, after_value)) if after_colon.trim_start().starts_with('"') => {
                map.insert(key, Value::String(value));
                rest = after_value;
            }
            _ => {
                // A truncated string value: everything after the opening quote.
                if let Some(open) = after_colon.trim_start().strip_prefix('"') {
                    map.insert(key, Value::String(unescape(open)));
                }
                break;
            }
        }
    }
    map
}

/// The next complete double-quoted string in `text` and the text after it.
fn next_string(text: &str) -> Option<(String, &str)> {
    let open = text.find('"')?;
    let body = &text[open + 1..];
    let mut escaped = false;
    for (i, ch) in body.char_indices() {
        match ch {
            '\\' if !escaped => escaped = true,
            '"' if !escaped => return Some((unescape(&body[..i]), &body[i + 1..])),
            _ => escaped = false,
        }
    }
    None
}

fn unescape(raw: &str) -> String {
    serde_json::from_str::<String>(&format!("\"{raw}\"")).unwrap_or_else(|_| {
        raw.replace("\\n", "\n")
            .replace("\\t", "\t")
            .replace("\\r", "\r")
            .replace("\\\"", "\"")
            .replace("\\\\", "\\")
    })
}

/// Coerces each argument to the type its property declares in `schema`: strings that spell a
/// number or a boolean become one where the schema wants it, and values become strings where
/// the schema wants a string (Cline's `JSON.stringify` of non-string values). Properties the
/// schema does not describe are left as they are.
pub fn coerce_to_schema(arguments: &mut Map<String, Value>, schema: &Value) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, value) in arguments.iter_mut() {
        let Some(wanted) = properties
            .get(name)
            .and_then(|p| p.get("type"))
            .and_then(Value::as_str)
        else {
            continue;
        };
        let coerced = match (wanted, &*value) {
            ("string", Value::String(_)) | (_, Value::Null) => None,
            ("string", other) => Some(Value::String(other.to_string())),
            ("integer", Value::String(s)) => s.trim().parse::<i64>().ok().map(Value::from),
            ("number", Value::String(s)) => s
                .trim()
                .parse::<f64>()
                .ok()
                .and_then(|n| serde_json::Number::from_f64(n).map(Value::Number)),
            ("boolean", Value::String(s)) => match s.trim().to_ascii_lowercase().as_str() {
                "true" => Some(Value::Bool(true)),
                "false" => Some(Value::Bool(false)),
                _ => None,
            },
            ("array" | "object", Value::String(s)) => {
                serde_json::from_str::<Value>(s).ok().filter(|v| {
                    (wanted == "array" && v.is_array()) || (wanted == "object" && v.is_object())
                })
            }
            _ => None,
        };
        if let Some(coerced) = coerced {
            *value = coerced;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strict_json5_and_truncated_arguments() {
        assert_eq!(
            parse_arguments(r#"{"path":"a"}"#),
            Some(json!({"path":"a"}).as_object().cloned().unwrap_or_default())
        );
        assert_eq!(
            parse_arguments("{path: 'a', recursive: true,}"),
            json!({"path":"a","recursive":true}).as_object().cloned()
        );
        assert_eq!(
            parse_arguments(r#"{"path": "src/lib.rs", "content": "line1\nline"#),
            json!({"path":"src/lib.rs","content":"line1\nline"})
                .as_object()
                .cloned()
        );
        assert_eq!(parse_arguments("not json at all"), None);
        assert_eq!(parse_arguments(""), Some(Map::new()));
    }

    #[test]
    fn values_follow_the_schema() {
        let schema = json!({"properties": {
            "path": {"type": "string"}, "n": {"type": "integer"}, "flag": {"type": "boolean"},
            "list": {"type": "array"}, "recursive": {"type": "string"}
        }});
        let mut args = json!({"path": 12, "n": "42", "flag": "TRUE", "list": "[1,2]", "recursive": true, "other": 1})
            .as_object()
            .cloned()
            .unwrap_or_default();
        coerce_to_schema(&mut args, &schema);
        assert_eq!(
            Value::Object(args),
            json!({"path": "12", "n": 42, "flag": true, "list": [1, 2], "recursive": "true", "other": 1})
        );
    }
}
