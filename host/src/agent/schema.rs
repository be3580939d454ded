//! `toolhost schema`: every loaded tool's definition in the format an agent or provider wants,
//! from the specs the handlers declare (adding a tool needs nothing but its plugin).

use serde_json::{json, Value};
use tool_api::model::ToolSpec;

/// The output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SchemaFormat {
    /// MCP `tools/list` entries (`inputSchema`, annotations).
    Mcp,
    /// OpenAI chat-completions `tools` (`{"type":"function","function":{…}}`).
    Openai,
    /// Anthropic messages `tools` (`input_schema`).
    Anthropic,
    /// The tools section of a system prompt in Cline's XML style.
    XmlPrompt,
}

/// Renders `specs` in `format` (JSON text for the JSON formats, prompt text for `xml-prompt`).
pub fn render(specs: &[&ToolSpec], format: SchemaFormat) -> String {
    match format {
        SchemaFormat::Mcp => json_array(specs.iter().map(|s| {
            json!({
                "name": s.name,
                "description": s.description,
                "inputSchema": s.input_schema,
                "annotations": {"readOnlyHint": s.read_only, "destructiveHint": s.destructive},
            })
        })),
        SchemaFormat::Openai => json_array(specs.iter().map(|s| {
            json!({"type": "function", "function": {"name": s.name, "description": s.description, "parameters": s.input_schema}})
        })),
        SchemaFormat::Anthropic => json_array(
            specs
                .iter()
                .map(|s| json!({"name": s.name, "description": s.description, "input_schema": s.input_schema})),
        ),
        SchemaFormat::XmlPrompt => xml_prompt(specs),
    }
}

fn json_array(items: impl Iterator<Item = Value>) -> String {
    serde_json::to_string_pretty(&Value::Array(items.collect())).unwrap_or_default()
}

/// Cline's tools section: per tool its description, parameters and a usage example.
fn xml_prompt(specs: &[&ToolSpec]) -> String {
    let mut out = String::from("# Tools\n");
    for spec in specs {
        out.push_str(&format!(
            "\n## {}\nDescription: {}\n",
            spec.name, spec.description
        ));
        let required = spec.required_params();
        let properties = spec.input_schema["properties"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        if !properties.is_empty() {
            out.push_str("Parameters:\n");
        }
        for (name, property) in &properties {
            let need = if required.contains(&name.as_str()) {
                "required"
            } else {
                "optional"
            };
            let about = property["description"].as_str().unwrap_or("");
            out.push_str(&format!("- {name}: ({need}) {about}\n"));
        }
        out.push_str(&format!("Usage:\n<{}>\n", spec.name));
        for name in properties.keys() {
            out.push_str(&format!("<{name}>{name} here</{name}>\n"));
        }
        out.push_str(&format!("</{}>\n", spec.name));
    }
    out
}
