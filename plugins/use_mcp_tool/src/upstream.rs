//! A server's requests to its client, answered for the call they came during: a form asked
//! of the call's user (`elicitation/create`, the defaults of the form's fields filled in where
//! the user left them out, as SEP-1034 asks of clients), a message the user's model writes
//! (`sampling/createMessage`), and the workspace's roots (`roots/list`). Whoever answers is the
//! host's frontend: the terminal, the MCP client in front of `toolhost mcp`, a `serve --ask`
//! client; with nobody to answer, a form is declined and a message refused.

use serde_json::{json, Map, Value};
use tool_api::sdk::prelude::*;

/// The answer to the server's request `method` with `params`; `None` when nobody answered.
pub fn answer(ctx: &Ctx<'_>, method: &str, params: &Value) -> Option<Value> {
    match method {
        "elicitation/create" => elicit(ctx, params),
        "sampling/createMessage" => ctx.sample(params).ok(),
        "roots/list" => Some(ctx.workspace().mcp_roots()),
        _ => None,
    }
}

/// The user's answer to a form (or to a URL to visit).
fn elicit(ctx: &Ctx<'_>, params: &Value) -> Option<Value> {
    let message = params["message"].as_str().unwrap_or_default();
    let answer = if params["mode"] == "url" {
        let url = params["url"].as_str().unwrap_or_default();
        let id = params["elicitationId"].as_str().unwrap_or_default();
        ctx.elicit_url(message, url, id)
    } else {
        ctx.elicit(message, &params["requestedSchema"])
    };
    let answer = answer.ok()?;
    if answer.action != "accept" {
        return Some(json!({"action": answer.action}));
    }
    let mut content = match answer.content {
        Value::Object(content) => content,
        _ => Map::new(),
    };
    fill_defaults(&mut content, &params["requestedSchema"]);
    Some(json!({"action": "accept", "content": content}))
}

/// Adds the schema's default of every field the answer left out.
fn fill_defaults(content: &mut Map<String, Value>, schema: &Value) {
    let Some(properties) = schema["properties"].as_object() else {
        return;
    };
    for (name, property) in properties {
        if let Some(default) = property.get("default") {
            content
                .entry(name.clone())
                .or_insert_with(|| default.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_fill_what_the_user_left_out() {
        let schema = json!({"properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "note": {"type": "string"}
        }});
        let mut content = Map::from_iter([("name".to_string(), json!("Ada"))]);
        fill_defaults(&mut content, &schema);
        assert_eq!(Value::Object(content), json!({"name": "Ada", "age": 30}));
    }
}
