//! The result of one operation of Cline's SDK tools (`ToolOperationResult`): what was asked
//! (`query`), what came of it (`result`), and, when it failed, why (`error`). A tool answers
//! one of these, or an array of them in the order asked, as compact JSON; a failed operation
//! is not a failed call.

use serde::Serialize;
use serde_json::Value;

/// One operation's outcome, serialized with Cline's key order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OperationResult {
    /// What was asked (a path, a range, a command).
    pub query: String,
    /// What came of it (text, or content blocks); empty when it failed before any.
    pub result: Value,
    /// Why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Whether it succeeded.
    pub success: bool,
}

impl OperationResult {
    /// A success with `result`.
    pub fn success(query: impl Into<String>, result: impl Into<Value>) -> Self {
        Self {
            query: query.into(),
            result: result.into(),
            error: None,
            success: true,
        }
    }

    /// A failure with `error` and an empty result.
    pub fn failure(query: impl Into<String>, error: impl Into<String>) -> Self {
        Self::failure_with(query, "", error)
    }

    /// A failure that still has a result (a command's output before it failed).
    pub fn failure_with(
        query: impl Into<String>,
        result: impl Into<Value>,
        error: impl Into<String>,
    ) -> Self {
        Self {
            query: query.into(),
            result: result.into(),
            error: Some(error.into()),
            success: false,
        }
    }

    /// Compact JSON of one result, or of several.
    pub fn to_json<T: Serialize + ?Sized>(results: &T) -> String {
        serde_json::to_string(results).unwrap_or_else(|_| "[]".to_string())
    }
}

/// A parameter Cline's SDK tools refuse, worded as their schema library words it: `✖ MESSAGE`,
/// then `→ at FIELD` (`✖ Too small: expected string to have >=1 characters\n  → at path`).
pub fn invalid_param(message: &str, field: &str) -> crate::abi::ToolError {
    crate::abi::ToolError::new(
        crate::abi::ToolErrorKind::INVALID_PARAMS,
        format!("✖ {message}\n  → at {field}"),
    )
}

/// A string parameter of `map` read as Cline's SDK tools read it: `None` when it is absent,
/// the schema library's refusal when it is not a string.
pub fn string_param(
    map: &serde_json::Map<String, Value>,
    field: &str,
) -> Result<Option<String>, crate::abi::ToolError> {
    match map.get(field) {
        Some(Value::String(text)) => Ok(Some(text.clone())),
        None => Ok(None),
        Some(other) => Err(invalid_param(
            &format!("Invalid input: expected string, received {}", kind(other)),
            field,
        )),
    }
}

/// [`string_param`] for a parameter that must be there.
pub fn required_string_param(
    map: &serde_json::Map<String, Value>,
    field: &str,
) -> Result<String, crate::abi::ToolError> {
    string_param(map, field)?
        .ok_or_else(|| invalid_param("Invalid input: expected string, received undefined", field))
}

/// A JSON value's kind, as Cline's schema library (zod) names it.
pub fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::unwrap_used)]
    fn string_params_are_refused_in_zod_s_words() {
        let map = serde_json::json!({"a": "x", "b": 1});
        let map = map.as_object().unwrap();
        assert_eq!(string_param(map, "a").unwrap(), Some("x".to_string()));
        assert_eq!(string_param(map, "c").unwrap(), None);
        let message = |e: crate::abi::ToolError| e.message.to_string();
        assert_eq!(
            message(string_param(map, "b").unwrap_err()),
            "✖ Invalid input: expected string, received number\n  → at b"
        );
        assert_eq!(
            message(required_string_param(map, "c").unwrap_err()),
            "✖ Invalid input: expected string, received undefined\n  → at c"
        );
    }

    #[test]
    fn keys_come_in_clines_order() {
        let ok = OperationResult::success("/a.txt:2-3", "2 | b");
        let failed = OperationResult::failure("edit:/a", "Editor operation failed: x");
        assert_eq!(
            OperationResult::to_json(&[ok, failed]),
            r#"[{"query":"/a.txt:2-3","result":"2 | b","success":true},{"query":"edit:/a","result":"","error":"Editor operation failed: x","success":false}]"#
        );
    }
}
