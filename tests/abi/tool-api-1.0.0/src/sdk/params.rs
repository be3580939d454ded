//! Typed access to tool parameters.
//!
//! Cline sends every parameter as a string; native tool calls send JSON numbers and booleans.
//! [`Params`] accepts both, and applies Cline's rules for booleans, integers and missing values.

use serde_json::{Map, Value};

use crate::abi::{ToolError, ToolErrorKind};
use crate::texts::missing_param_error;

/// The parameters of one call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Params(Map<String, Value>);

impl Params {
    /// Parses a JSON object. A non-object is an `INVALID_PARAMS` error.
    pub fn from_json(json: &str) -> Result<Self, ToolError> {
        match serde_json::from_str::<Value>(json) {
            Ok(Value::Object(map)) => Ok(Self(map)),
            Ok(Value::Null) => Ok(Self::default()),
            Ok(_) => Err(ToolError::new(
                ToolErrorKind::INVALID_PARAMS,
                "The tool parameters must be a JSON object.",
            )),
            Err(e) => Err(ToolError::new(
                ToolErrorKind::INVALID_PARAMS,
                format!("The tool parameters are not valid JSON: {e}"),
            )),
        }
    }

    /// Wraps an existing JSON object.
    pub fn from_map(map: Map<String, Value>) -> Self {
        Self(map)
    }

    /// The underlying JSON object.
    pub fn as_map(&self) -> &Map<String, Value> {
        &self.0
    }

    /// The value as a string, the way Cline flattens native arguments: strings as they are,
    /// numbers and booleans as their JSON text, arrays and objects as JSON. `null` is absent.
    pub fn string(&self, name: &str) -> Option<String> {
        match self.0.get(name)? {
            Value::Null => None,
            Value::String(s) => Some(s.clone()),
            other => Some(other.to_string()),
        }
    }

    /// The string value, or `""` when absent (for descriptions and messages).
    pub fn string_or_empty(&self, name: &str) -> String {
        self.string(name).unwrap_or_default()
    }

    /// Whether the parameter was given at all (even empty).
    pub fn contains(&self, name: &str) -> bool {
        !matches!(self.0.get(name), None | Some(Value::Null))
    }

    /// Cline's boolean: true iff the value, lower-cased, is `"true"`.
    pub fn flag(&self, name: &str) -> bool {
        self.string(name)
            .is_some_and(|s| s.eq_ignore_ascii_case("true"))
    }

    /// Cline's integer: JavaScript `parseInt(value, 10)`; `None` where that gives `NaN`.
    pub fn int(&self, name: &str) -> Option<i64> {
        parse_int_like_js(&self.string(name)?)
    }

    /// A required value: absent, `null` and `""` are missing (JavaScript falsiness).
    pub fn required(&self, name: &str) -> Result<String, ToolError> {
        match self.string(name) {
            Some(s) if !s.is_empty() => Ok(s),
            _ => Err(missing(name)),
        }
    }

    /// A required value where whitespace-only also counts as missing (Cline's `assertRequiredParams`).
    pub fn required_nonblank(&self, name: &str) -> Result<String, ToolError> {
        match self.string(name) {
            Some(s) if !s.trim().is_empty() => Ok(s),
            _ => Err(missing(name)),
        }
    }
}

/// The error for a missing required parameter, with Cline's text.
pub fn missing(name: &str) -> ToolError {
    ToolError::new(ToolErrorKind::INVALID_PARAMS, missing_param_error(name))
}

/// JavaScript's `parseInt(s, 10)`: leading whitespace, an optional sign, then the longest run of
/// digits; anything after is ignored; no digits gives `None` (NaN).
pub fn parse_int_like_js(s: &str) -> Option<i64> {
    let t = s.trim_start();
    let (negative, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    if end == 0 {
        return None;
    }
    // Saturate instead of failing: parseInt of a huge number is a huge number, not NaN.
    let magnitude = digits[..end].parse::<i64>().unwrap_or(i64::MAX);
    Some(if negative { -magnitude } else { magnitude })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(json: &str) -> Params {
        Params::from_json(json).unwrap_or_default()
    }

    #[test]
    fn strings_numbers_and_booleans_are_all_accepted() {
        let p = params(r#"{"a":"x","n":12,"b":true,"arr":["a","b"],"z":null}"#);
        assert_eq!(p.string("a").as_deref(), Some("x"));
        assert_eq!(p.string("n").as_deref(), Some("12"));
        assert_eq!(p.string("b").as_deref(), Some("true"));
        assert_eq!(p.string("arr").as_deref(), Some(r#"["a","b"]"#));
        assert_eq!(p.string("z"), None);
        assert!(p.flag("b"));
        assert_eq!(p.int("n"), Some(12));
    }

    #[test]
    fn flags_follow_cline() {
        assert!(params(r#"{"r":"TRUE"}"#).flag("r"));
        assert!(!params(r#"{"r":"yes"}"#).flag("r"));
        assert!(!params(r#"{}"#).flag("r"));
    }

    #[test]
    fn integers_follow_parse_int() {
        assert_eq!(parse_int_like_js(" 4"), Some(4));
        assert_eq!(parse_int_like_js("2.9"), Some(2));
        assert_eq!(parse_int_like_js("-5"), Some(-5));
        assert_eq!(parse_int_like_js("abc"), None);
        assert_eq!(parse_int_like_js(""), None);
        assert_eq!(parse_int_like_js("12abc"), Some(12));
    }

    #[test]
    fn required_values_follow_js_falsiness() {
        let p = params(r#"{"empty":"","blank":"  ","x":"v"}"#);
        assert!(p.required("empty").is_err());
        assert!(p.required("missing").is_err());
        assert_eq!(p.required("blank").ok().as_deref(), Some("  "));
        assert!(p.required_nonblank("blank").is_err());
        assert_eq!(p.required("x").ok().as_deref(), Some("v"));
    }

    #[test]
    fn non_objects_are_rejected() {
        assert!(Params::from_json("[1]").is_err());
        assert!(Params::from_json("{nope").is_err());
        assert!(Params::from_json("null").is_ok());
    }
}
