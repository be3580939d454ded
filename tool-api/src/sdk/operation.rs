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

#[cfg(test)]
mod tests {
    use super::*;

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
