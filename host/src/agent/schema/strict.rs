//! Input schemas made valid for OpenAI's strict mode (Structured Outputs for function calls):
//! every object lists all its properties in `required` and sets `additionalProperties: false`,
//! the optional ones may be `null` instead, and keywords strict mode refuses are moved into the
//! property's description so that no constraint is lost to the model.
//!
//! A call made under strict mode sends `null` for each optional parameter the model leaves out;
//! the host reads a `null` parameter as an absent one.

use serde_json::{json, Map, Value};

/// Keywords strict mode does not accept (OpenAI's list of unsupported keywords for strings,
/// objects and arrays, and the composition keywords besides `anyOf`).
const UNSUPPORTED: [&str; 15] = [
    "minLength",
    "maxLength",
    "patternProperties",
    "unevaluatedProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "unevaluatedItems",
    "contains",
    "minContains",
    "maxContains",
    "uniqueItems",
    "allOf",
    "not",
    "default",
];

/// `schema` (a tool's input schema) as strict mode accepts it.
pub fn strict(schema: &Value) -> Value {
    let mut schema = schema.clone();
    make_strict(&mut schema);
    schema
}

fn make_strict(schema: &mut Value) {
    let Some(map) = schema.as_object_mut() else {
        return;
    };
    move_unsupported_to_description(map);
    if let Some(one_of) = map.remove("oneOf") {
        // Strict mode knows `anyOf` only; for a tool's arguments the difference (exactly one
        // branch matching) is not something the model can rely on anyway.
        map.insert("anyOf".to_string(), one_of);
    }
    for key in ["anyOf", "prefixItems"] {
        if let Some(Value::Array(branches)) = map.get_mut(key) {
            branches.iter_mut().for_each(make_strict);
        }
    }
    for key in ["items", "additionalItems"] {
        if let Some(items) = map.get_mut(key) {
            make_strict(items);
        }
    }
    for key in ["$defs", "definitions"] {
        if let Some(Value::Object(defs)) = map.get_mut(key) {
            defs.values_mut().for_each(make_strict);
        }
    }
    if is_object_schema(map) {
        close_object(map);
    }
}

/// Whether the schema describes an object (its type says so, or it has properties).
fn is_object_schema(map: &Map<String, Value>) -> bool {
    map.contains_key("properties")
        || match map.get("type") {
            Some(Value::String(t)) => t == "object",
            Some(Value::Array(types)) => types.iter().any(|t| t == "object"),
            _ => false,
        }
}

/// Every property required (the optional ones nullable), nothing else allowed.
fn close_object(map: &mut Map<String, Value>) {
    let required: Vec<String> = map
        .get("required")
        .and_then(Value::as_array)
        .map(|names| {
            names
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let properties = map
        .entry("properties")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .map(std::mem::take)
        .unwrap_or_default();
    let mut names = Vec::with_capacity(properties.len());
    let mut strict_properties = Map::with_capacity(properties.len());
    for (name, mut property) in properties {
        make_strict(&mut property);
        if !required.contains(&name) {
            property = nullable(property);
        }
        names.push(Value::String(name.clone()));
        strict_properties.insert(name, property);
    }
    map.insert("properties".to_string(), Value::Object(strict_properties));
    map.insert("required".to_string(), Value::Array(names));
    map.insert("additionalProperties".to_string(), Value::Bool(false));
}

/// The property, or `null`.
fn nullable(mut property: Value) -> Value {
    let Some(map) = property.as_object_mut() else {
        return property;
    };
    let typed = match map.get_mut("type") {
        Some(Value::String(t)) => {
            let single = std::mem::take(t);
            map.insert("type".to_string(), json!([single, "null"]));
            true
        }
        Some(Value::Array(types)) => {
            if !types.iter().any(|t| t == "null") {
                types.push(json!("null"));
            }
            true
        }
        _ => false,
    };
    if typed {
        if let Some(Value::Array(values)) = map.get_mut("enum") {
            if !values.iter().any(Value::is_null) {
                values.push(Value::Null);
            }
        }
        return property;
    }
    if let Some(Value::Array(branches)) = map.get_mut("anyOf") {
        if !branches
            .iter()
            .any(|b| b.get("type") == Some(&json!("null")))
        {
            branches.push(json!({"type": "null"}));
        }
        return property;
    }
    // No type to widen (an `enum` alone, a `$ref`): one more branch.
    let description = map.remove("description");
    let mut wrapped = json!({"anyOf": [property, {"type": "null"}]});
    if let Some(description) = description {
        wrapped["description"] = description;
    }
    wrapped
}

/// Removes the keywords strict mode refuses and says what they required in the description.
fn move_unsupported_to_description(map: &mut Map<String, Value>) {
    let mut notes = Vec::new();
    for key in UNSUPPORTED {
        let Some(value) = map.remove(key) else {
            continue;
        };
        // `minLength: 0` (an empty string is allowed) says nothing once the keyword is gone.
        if key == "minLength" && value == json!(0) {
            continue;
        }
        notes.push(format!("{key}: {value}"));
    }
    if notes.is_empty() {
        return;
    }
    let note = format!("({})", notes.join(", "));
    let description = match map.get("description").and_then(Value::as_str) {
        Some(text) if !text.is_empty() => format!("{text} {note}"),
        _ => note,
    };
    map.insert("description".to_string(), Value::String(description));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optional_properties_become_required_and_nullable() {
        let schema = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "p"},
                "limit": {"type": "integer"},
                "mode": {"type": "string", "enum": ["a", "b"]},
                "kind": {"enum": ["x", "y"], "description": "k"},
                "content": {"type": "string", "minLength": 0, "maxLength": 9},
            },
            "required": ["path"],
        });
        assert_eq!(
            strict(&schema),
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "p"},
                    "limit": {"type": ["integer", "null"]},
                    "mode": {"type": ["string", "null"], "enum": ["a", "b", null]},
                    "kind": {"anyOf": [{"enum": ["x", "y"]}, {"type": "null"}], "description": "k"},
                    "content": {"type": ["string", "null"], "description": "(maxLength: 9)"},
                },
                "required": ["path", "limit", "mode", "kind", "content"],
                "additionalProperties": false,
            })
        );
    }

    #[test]
    fn nested_objects_are_closed_too() {
        let schema = json!({
            "type": "object",
            "properties": {
                "edits": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"old": {"type": "string"}, "new": {"type": "string"}},
                    "required": ["old"],
                }},
                "options": {"oneOf": [{"type": "object", "properties": {"x": {"type": "number"}}}, {"type": "string"}]},
            },
            "required": ["edits", "options"],
        });
        let strict = strict(&schema);
        let item = &strict["properties"]["edits"]["items"];
        assert_eq!(item["required"], json!(["old", "new"]));
        assert_eq!(item["additionalProperties"], json!(false));
        assert_eq!(item["properties"]["new"]["type"], json!(["string", "null"]));
        let branch = &strict["properties"]["options"]["anyOf"][0];
        assert_eq!(branch["additionalProperties"], json!(false));
        assert_eq!(branch["required"], json!(["x"]));
        assert!(strict["properties"]["options"].get("oneOf").is_none());
    }
}
