//! The `[http_tools.<name>]` tables of the settings.

use std::time::Duration;

use reqwest::Url;
use serde_json::{json, Map, Value};
use tool_api::abi::{ToolError, ToolErrorKind};
use tool_api::model::{ApprovalCategory, ToolSpec};

/// The settings table holding the declarations.
pub const SETTINGS_KEY: &str = "http_tools";

/// The longest tool name the model APIs accept.
const MAX_NAME_LEN: usize = 64;

/// One declared tool, as written (checked when it is called).
#[derive(Debug, Clone, PartialEq)]
pub struct Declaration {
    /// The tool's name (the table's key).
    pub name: String,
    /// Its table.
    table: Map<String, Value>,
}

/// Where and how a call is sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The URL the arguments are POSTed to.
    pub url: Url,
    /// Extra headers, the bearer token's included.
    pub headers: Vec<(String, String)>,
    /// This tool's own timeout, overriding `web.timeout_ms`.
    pub timeout: Option<Duration>,
}

/// The declarations under `settings` (the `http_tools` table), in name order. Names the model
/// APIs would refuse are left out.
pub fn read(settings: Option<&Value>) -> Vec<Declaration> {
    let Some(Value::Object(tables)) = settings else {
        return Vec::new();
    };
    let mut declared: Vec<Declaration> = tables
        .iter()
        .filter(|(name, _)| usable_name(name))
        .map(|(name, table)| Declaration {
            name: name.clone(),
            table: table.as_object().cloned().unwrap_or_default(),
        })
        .collect();
    declared.sort_by(|a, b| a.name.cmp(&b.name));
    declared
}

fn usable_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

impl Declaration {
    /// The tool's spec: its description and parameter schema (an empty object schema when the
    /// declared one is missing or unusable), approved in the `web` category.
    pub fn spec(&self) -> ToolSpec {
        let description = match self.table.get("description").and_then(Value::as_str) {
            Some(text) if !text.trim().is_empty() => text.to_string(),
            _ => format!("POSTs its arguments to {}.", self.url_text()),
        };
        ToolSpec {
            name: self.name.clone(),
            description,
            input_schema: self
                .parameters()
                .unwrap_or_else(|_| json!({"type": "object", "properties": {}})),
            partial: false,
            approval: Some(ApprovalCategory::Web),
            path_params: Vec::new(),
            read_only: self.table.get("read_only").and_then(Value::as_bool) == Some(true),
            destructive: false,
            title: self
                .table
                .get("title")
                .and_then(Value::as_str)
                .map(str::to_string),
            idempotent: false,
            open_world: true,
            handling: Default::default(),
            output_schema: None,
        }
    }

    fn url_text(&self) -> &str {
        self.table.get("url").and_then(Value::as_str).unwrap_or("")
    }

    /// The parameter schema: a TOML table, or a string of JSON; absent means no parameters.
    fn parameters(&self) -> Result<Value, String> {
        let schema = match self.table.get("parameters") {
            None => return Ok(json!({"type": "object", "properties": {}})),
            Some(Value::String(text)) => serde_json::from_str(text)
                .map_err(|e| format!("it is a string but not JSON ({e})"))?,
            Some(other) => other.clone(),
        };
        match schema {
            Value::Object(mut map)
                if map.get("type").is_none_or(|t| t.as_str() == Some("object")) =>
            {
                map.insert("type".to_string(), json!("object"));
                map.entry("properties").or_insert_with(|| json!({}));
                Ok(Value::Object(map))
            }
            _ => Err("it is not an object schema".to_string()),
        }
    }

    /// The request's target, or what to fix in the declaration.
    pub fn target(&self) -> Result<Target, ToolError> {
        let key = format!("{SETTINGS_KEY}.{}", self.name);
        let unusable = |what: String| {
            ToolError::new(
                ToolErrorKind::UNAVAILABLE,
                format!("The HTTP tool {} cannot be used: {what}.", self.name),
            )
        };
        self.parameters().map_err(|why| {
            unusable(format!("the setting {key}.parameters is not usable: {why}"))
        })?;
        let url = match self.table.get("url").and_then(Value::as_str) {
            None | Some("") => return Err(unusable(format!("the setting {key}.url is missing"))),
            Some(text) => Url::parse(text)
                .ok()
                .filter(|u| matches!(u.scheme(), "http" | "https"))
                .ok_or_else(|| {
                    unusable(format!(
                        "the setting {key}.url ({text}) is not an http or https URL"
                    ))
                })?,
        };
        let mut headers = Vec::new();
        if let Some(table) = self.table.get("headers") {
            let Some(table) = table.as_object() else {
                return Err(unusable(format!(
                    "the setting {key}.headers is not a table"
                )));
            };
            for (name, value) in table {
                let Some(value) = value.as_str() else {
                    return Err(unusable(format!(
                        "the header {name} in {key}.headers is not a string"
                    )));
                };
                headers.push((name.clone(), value.to_string()));
            }
        }
        if let Some(variable) = self.table.get("bearer_token_env").and_then(Value::as_str) {
            match std::env::var(variable) {
                Ok(token) if !token.is_empty() => {
                    headers.push(("Authorization".to_string(), format!("Bearer {token}")));
                }
                _ => {
                    return Err(unusable(format!(
                        "the environment variable {variable} (setting {key}.bearer_token_env) is not set or empty"
                    )))
                }
            }
        }
        let timeout = match self.table.get("timeout_ms") {
            None => None,
            Some(value) => match value.as_u64().filter(|ms| *ms > 0) {
                Some(ms) => Some(Duration::from_millis(ms)),
                None => {
                    return Err(unusable(format!(
                        "the setting {key}.timeout_ms is not a positive number"
                    )))
                }
            },
        };
        Ok(Target {
            url,
            headers,
            timeout,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn one(table: Value) -> Declaration {
        read(Some(&json!({ "tool": table }))).remove(0)
    }

    #[test]
    fn names_the_apis_refuse_are_left_out() {
        let names: Vec<String> = read(Some(
            &json!({"ok_name": {}, "with space": {}, "a.b": {}, "b-2": {}}),
        ))
        .into_iter()
        .map(|d| d.name)
        .collect();
        assert_eq!(names, vec!["b-2", "ok_name"]);
    }

    #[test]
    fn the_schema_may_be_a_table_or_json_text() {
        let from_table = one(
            json!({"parameters": {"properties": {"id": {"type": "string"}}, "required": ["id"]}}),
        );
        let from_text = one(
            json!({"parameters": r#"{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}"#}),
        );
        let expected =
            json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]});
        assert_eq!(from_table.spec().input_schema, expected);
        assert_eq!(from_text.spec().input_schema, expected);
        assert_eq!(from_table.spec().approval, Some(ApprovalCategory::Web));
    }

    #[test]
    fn an_unusable_declaration_says_what_to_fix() {
        let no_url = one(json!({"description": "d"}));
        assert_eq!(
            no_url.target().unwrap_err().message.as_str(),
            "The HTTP tool tool cannot be used: the setting http_tools.tool.url is missing."
        );
        let bad_schema = one(json!({"url": "http://127.0.0.1:1/", "parameters": "[1]"}));
        assert_eq!(
            bad_schema.target().unwrap_err().message.as_str(),
            "The HTTP tool tool cannot be used: the setting http_tools.tool.parameters is not usable: it is not an object schema."
        );
        let ftp = one(json!({"url": "ftp://example.com/"}));
        assert_eq!(
            ftp.target().unwrap_err().message.as_str(),
            "The HTTP tool tool cannot be used: the setting http_tools.tool.url (ftp://example.com/) is not an http or https URL."
        );
    }

    #[test]
    fn headers_and_timeout_are_read() {
        let declared =
            one(json!({"url": "http://127.0.0.1:9/x", "headers": {"X-A": "1"}, "timeout_ms": 250}));
        assert_eq!(
            declared.target().unwrap(),
            Target {
                url: Url::parse("http://127.0.0.1:9/x").unwrap(),
                headers: vec![("X-A".to_string(), "1".to_string())],
                timeout: Some(Duration::from_millis(250)),
            }
        );
    }
}
