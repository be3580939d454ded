//! A team tool's input checked as Cline's SDK checks it (with zod), against the tool's schema:
//! the same issues, in the same words and order. `null` stands for a missing optional field,
//! a field with a default may be missing, unknown fields are dropped (refused by the two strict
//! tools), and `team_task` requires each action's own fields.
//!
//! Written here rather than with a JSON Schema crate because the point is the wording: zod's
//! issue texts, which the model has learned to read.

use serde_json::{Map, Value};
use tool_api::sdk::operation::kind;

/// The tools whose schema refuses unknown fields (zod's `.strict()`).
const STRICT: &[&str] = &["team_spawn_teammate", "team_await_runs"];

/// The fields each `team_task` action requires.
const TASK_FIELDS: &[(&str, &[&str])] = &[
    ("create", &["title", "description"]),
    ("list", &[]),
    ("claim", &["taskId"]),
    ("complete", &["taskId", "summary"]),
    ("block", &["taskId", "reason"]),
];

/// `params` of `tool` with schema `schema`, checked: the fields the schema knows, without
/// nulls, or zod's issues as one message.
pub fn check(tool: &str, schema: &Value, params: &Value) -> Result<Map<String, Value>, String> {
    let Some(object) = params.as_object() else {
        return Err(issues(&[(
            format!("Invalid input: expected object, received {}", kind(params)),
            None,
        )]));
    };
    let properties = schema["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let required: Vec<&str> = schema["required"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut found = Vec::new();
    let mut kept = Map::new();
    for (field, property) in &properties {
        match object.get(field).filter(|v| !v.is_null()) {
            Some(value) => match check_value(property, value, field) {
                Ok(()) => {
                    kept.insert(field.clone(), value.clone());
                }
                Err(issue) => found.push(issue),
            },
            None if required.contains(&field.as_str()) && property.get("default").is_none() => {
                found.push(missing(property, object.get(field), field));
            }
            None => {}
        }
    }
    if STRICT.contains(&tool) {
        let unknown: Vec<String> = object
            .keys()
            .filter(|k| !properties.contains_key(*k))
            .map(|k| format!("\"{k}\""))
            .collect();
        match unknown.len() {
            0 => {}
            1 => found.push((format!("Unrecognized key: {}", unknown[0]), None)),
            _ => found.push((format!("Unrecognized keys: {}", unknown.join(", ")), None)),
        }
    }
    if !found.is_empty() {
        return Err(issues(&found));
    }
    if tool == "team_task" {
        task_fields(&kept)?;
    }
    Ok(kept)
}

type Issue = (String, Option<String>);

/// zod's prettified issues: `✖ MESSAGE`, then `→ at PATH` when there is one.
fn issues(found: &[Issue]) -> String {
    found
        .iter()
        .map(|(message, path)| match path {
            Some(path) => format!("✖ {message}\n  → at {path}"),
            None => format!("✖ {message}"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The issue of a required field that is missing (`None`) or null.
fn missing(property: &Value, value: Option<&Value>, field: &str) -> Issue {
    if let Some(options) = property.get("enum") {
        return (invalid_option(options), Some(field.to_string()));
    }
    let received = value.map_or("undefined", kind);
    let expected = property["type"].as_str().unwrap_or("value");
    (
        format!("Invalid input: expected {expected}, received {received}"),
        Some(field.to_string()),
    )
}

/// One value against its property's schema.
fn check_value(property: &Value, value: &Value, path: &str) -> Result<(), Issue> {
    if let Some(options) = property.get("enum").and_then(Value::as_array) {
        return if options.contains(value) {
            Ok(())
        } else {
            Err((
                invalid_option(&Value::Array(options.clone())),
                Some(path.into()),
            ))
        };
    }
    let expected = property["type"].as_str().unwrap_or_default();
    let fits = match expected {
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "number" => value.is_number(),
        _ => true,
    };
    if !fits {
        return Err((
            format!(
                "Invalid input: expected {expected}, received {}",
                kind(value)
            ),
            Some(path.into()),
        ));
    }
    if let (Some(text), Some(min)) = (value.as_str(), property["minLength"].as_u64()) {
        if (text.chars().count() as u64) < min {
            return Err((
                format!("Too small: expected string to have >={min} characters"),
                Some(path.into()),
            ));
        }
    }
    if let Some(items) = value.as_array() {
        for (index, item) in items.iter().enumerate() {
            check_value(&property["items"], item, &format!("{path}[{index}]"))?;
        }
    }
    Ok(())
}

/// zod's words for a value outside an enum.
fn invalid_option(options: &Value) -> String {
    let listed: Vec<String> = options
        .as_array()
        .into_iter()
        .flatten()
        .map(Value::to_string)
        .collect();
    format!("Invalid option: expected one of {}", listed.join("|"))
}

/// `team_task`'s rule: the action's own fields are there.
fn task_fields(kept: &Map<String, Value>) -> Result<(), String> {
    let action = kept["action"].as_str().unwrap_or_default();
    let fields = TASK_FIELDS
        .iter()
        .find(|(name, _)| *name == action)
        .map_or(&[][..], |(_, fields)| *fields);
    let absent: Vec<Issue> = fields
        .iter()
        .filter(|field| !kept.contains_key(**field))
        .map(|field| {
            (
                format!("Field \"{field}\" is required when action={action}"),
                Some((*field).to_string()),
            )
        })
        .collect();
    if absent.is_empty() {
        Ok(())
    } else {
        Err(issues(&absent))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "properties": {
            "kind": {"type": "string", "enum": ["a", "b"]},
            "summary": {"type": "string", "minLength": 1},
            "evidence": {"type": "array", "items": {"type": "string", "minLength": 1}}
        }, "required": ["kind", "summary"]})
    }

    #[test]
    fn issues_are_worded_as_zod_words_them() {
        assert_eq!(
            check("t", &schema(), &json!([])).unwrap_err(),
            "✖ Invalid input: expected object, received array"
        );
        assert_eq!(
            check("t", &schema(), &json!({"kind": "c", "summary": ""})).unwrap_err(),
            "✖ Invalid option: expected one of \"a\"|\"b\"\n  → at kind\n✖ Too small: expected string to have >=1 characters\n  → at summary"
        );
        assert_eq!(
            check("t", &schema(), &json!({"kind": "a"})).unwrap_err(),
            "✖ Invalid input: expected string, received undefined\n  → at summary"
        );
        assert_eq!(
            check(
                "t",
                &schema(),
                &json!({"kind": "a", "summary": "s", "evidence": [""]})
            )
            .unwrap_err(),
            "✖ Too small: expected string to have >=1 characters\n  → at evidence[0]"
        );
    }

    #[test]
    fn nulls_are_missing_and_unknown_fields_go() {
        let kept = check(
            "t",
            &schema(),
            &json!({"kind": "a", "summary": "s", "evidence": null, "other": 1}),
        )
        .unwrap();
        assert_eq!(Value::Object(kept), json!({"kind": "a", "summary": "s"}));
    }
}
