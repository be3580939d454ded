//! What `read_files` is asked for: the requests of one call, from the canonical
//! `{"files": [{"path", "start_line", "end_line"}]}` and the looser shapes Cline's SDK accepts on
//! purpose (a single request, strings for paths, `paths` or `file_paths` for `files`,
//! `file_path` or `filePath` for `path`, a JSON array sent as a string, and a range sent as an
//! element of its own after the path it belongs to).

use serde_json::{Map, Value};

/// One file to read, with an optional inclusive one-based line range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// The path as given.
    pub path: String,
    /// The first line (none: 1).
    pub start_line: Option<u64>,
    /// The last line (none: to the end, or the read cap).
    pub end_line: Option<u64>,
}

impl Request {
    /// `PATH`, or `PATH:START-END` when a bound is given (`EOF` for an open end).
    pub fn query(&self) -> String {
        if self.start_line.is_none() && self.end_line.is_none() {
            return self.path.clone();
        }
        let end = self
            .end_line
            .map_or_else(|| "EOF".to_string(), |end| end.to_string());
        format!("{}:{}-{end}", self.path, self.start_line.unwrap_or(1))
    }

    /// Why the range cannot be read, when it cannot.
    pub fn range_error(&self) -> Option<String> {
        match (self.start_line, self.end_line) {
            (Some(start), Some(end)) if start > end => Some(format!(
                "Invalid file range: start_line must be less than or equal to end_line \
                 (received start_line: {start}, end_line: {end})"
            )),
            _ => None,
        }
    }
}

/// The error of input that fits none of the shapes (zod's, for a union).
pub const INVALID_INPUT: &str = "✖ Invalid input";

/// The requests of a call's parameters, in order.
pub fn requests(params: &Map<String, Value>) -> Result<Vec<Request>, &'static str> {
    let field = |name: &str| params.get(name).map(json_like);
    if let Some(files) = field("files") {
        return list(&files);
    }
    if ["path", "file_path", "filePath"]
        .iter()
        .any(|key| params.contains_key(*key))
    {
        return Ok(vec![loose(params)?]);
    }
    if let Some(paths) = field("file_paths") {
        return match paths {
            Value::String(path) => Ok(vec![plain(path)]),
            Value::Array(items) => items
                .iter()
                .map(|item| {
                    item.as_str()
                        .map(|p| plain(p.to_string()))
                        .ok_or(INVALID_INPUT)
                })
                .collect(),
            _ => Err(INVALID_INPUT),
        };
    }
    if let Some(paths) = field("paths") {
        return list(&paths);
    }
    Err(INVALID_INPUT)
}

/// A string that holds a JSON array or object, parsed (Cline's runtime does this for every
/// parameter whose schema wants one); anything else as it is.
fn json_like(value: &Value) -> Value {
    if let Value::String(text) = value {
        let trimmed = text.trim_start();
        if trimmed.starts_with('[') || trimmed.starts_with('{') {
            if let Ok(parsed) = serde_json::from_str::<Value>(text) {
                if parsed.is_array() || parsed.is_object() {
                    return parsed;
                }
            }
        }
    }
    value.clone()
}

/// The requests of `files` or `paths`: a string, one request, or a list of either.
fn list(value: &Value) -> Result<Vec<Request>, &'static str> {
    match value {
        Value::String(path) => Ok(vec![plain(path.clone())]),
        Value::Object(request) => Ok(vec![loose(request)?]),
        Value::Array(items) => coalesce_ranges(items)
            .iter()
            .map(|item| match item {
                Value::String(path) => Ok(plain(path.clone())),
                Value::Object(request) => loose(request),
                _ => Err(INVALID_INPUT),
            })
            .collect(),
        _ => Err(INVALID_INPUT),
    }
}

/// A range sent as an element of its own (`{"start_line", "end_line"}` and nothing else) joins
/// the element before it when that is a path, or a request without a range.
fn coalesce_ranges(items: &[Value]) -> Vec<Value> {
    let is_range = |item: &Value| {
        item.as_object().is_some_and(|map| {
            !map.is_empty()
                && map
                    .keys()
                    .all(|key| key == "start_line" || key == "end_line")
        })
    };
    let mut out: Vec<Value> = Vec::new();
    for item in items {
        if is_range(item) {
            let range = item.as_object().cloned().unwrap_or_default();
            if let Some(last) = out.last_mut() {
                match last {
                    Value::String(path) => {
                        let mut joined = range;
                        joined.insert("path".to_string(), Value::String(std::mem::take(path)));
                        *last = Value::Object(joined);
                        continue;
                    }
                    Value::Object(previous)
                        if previous.contains_key("path")
                            && range.keys().all(|key| !previous.contains_key(key)) =>
                    {
                        previous.extend(range);
                        continue;
                    }
                    _ => {}
                }
            }
        }
        out.push(item.clone());
    }
    out
}

fn plain(path: String) -> Request {
    Request {
        path,
        start_line: None,
        end_line: None,
    }
}

/// One request object: `path` (or `file_path`, `filePath`), with optional bounds.
fn loose(request: &Map<String, Value>) -> Result<Request, &'static str> {
    let path = ["path", "file_path", "filePath"]
        .iter()
        .find_map(|key| request.get(*key))
        .and_then(Value::as_str)
        .ok_or(INVALID_INPUT)?;
    Ok(Request {
        path: path.to_string(),
        start_line: bound(request.get("start_line"))?,
        end_line: bound(request.get("end_line"))?,
    })
}

/// A line bound: absent or null is none; a positive integer, or a string holding one, is it;
/// anything else makes the call invalid (zod's `coerce.number().int().positive()`).
fn bound(value: Option<&Value>) -> Result<Option<u64>, &'static str> {
    let number = match value {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Number(n)) => n.as_f64(),
        Some(Value::String(text)) if text.trim().is_empty() => Some(0.0),
        Some(Value::String(text)) => text.trim().parse::<f64>().ok(),
        Some(Value::Bool(flag)) => Some(f64::from(u8::from(*flag))),
        Some(_) => None,
    };
    match number {
        Some(n) if n >= 1.0 && n.fract() == 0.0 && n <= 9_007_199_254_740_991.0 => {
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // checked above
            Ok(Some(n as u64))
        }
        _ => Err(INVALID_INPUT),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    fn asked(value: Value) -> Result<Vec<String>, &'static str> {
        requests(value.as_object().unwrap()).map(|r| r.iter().map(Request::query).collect())
    }

    #[test]
    fn the_loose_shapes_are_read_as_clines_sdk_reads_them() {
        assert_eq!(
            asked(json!({"files": [{"path": "/a", "start_line": 2, "end_line": "3"}]})),
            Ok(vec!["/a:2-3".to_string()])
        );
        assert_eq!(asked(json!({"files": "/a"})), Ok(vec!["/a".to_string()]));
        assert_eq!(
            asked(json!({"files": ["/a", {"start_line": 1, "end_line": 1}, "/b"]})),
            Ok(vec!["/a:1-1".to_string(), "/b".to_string()])
        );
        assert_eq!(
            asked(json!({"files": "[{\"path\":\"/a\"}]"})),
            Ok(vec!["/a".to_string()])
        );
        assert_eq!(
            asked(json!({"file_path": "/x", "start_line": 1})),
            Ok(vec!["/x:1-EOF".to_string()])
        );
        assert_eq!(
            asked(json!({"file_paths": ["/a", "/b"]})),
            Ok(vec!["/a".to_string(), "/b".to_string()])
        );
        assert_eq!(
            asked(json!({"paths": {"filePath": "/p"}})),
            Ok(vec!["/p".to_string()])
        );
        assert_eq!(asked(json!({"files": []})), Ok(vec![]));
        assert_eq!(asked(json!({})), Err(INVALID_INPUT));
        assert_eq!(
            asked(json!({"files": [{"path": "/a", "start_line": 0}]})),
            Err(INVALID_INPUT)
        );
        assert_eq!(
            asked(json!({"files": [{"path": "/a", "end_line": 1.5}]})),
            Err(INVALID_INPUT)
        );
    }

    #[test]
    fn an_upside_down_range_is_refused() {
        let request = Request {
            path: "/a".into(),
            start_line: Some(3),
            end_line: Some(2),
        };
        assert_eq!(
            request.range_error().unwrap(),
            "Invalid file range: start_line must be less than or equal to end_line (received start_line: 3, end_line: 2)"
        );
    }
}
