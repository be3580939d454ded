//! `toolhost schema`: every loaded tool's definition in the format an agent or provider wants,
//! from the specs the handlers declare (adding a tool needs nothing but its plugin).
//!
//! - `mcp`: `tools/list` entries with the title and the four hints of each spec.
//! - `openai`: chat-completions `tools`; with `strict`, each schema made valid for strict mode
//!   ([`strict`]) and `"strict": true`.
//! - `openai-responses`: the Responses API's flat function tools (`"strict"` always said, since
//!   that API turns strict mode on when it is left out).
//! - Descriptions longer than a format documents ([`SchemaFormat::description_limit`]) are cut
//!   at the last sentence that fits, with a warning naming the tool ([`fit_description`]).

mod strict;

use serde_json::{json, Value};
use tool_api::model::ToolSpec;

pub use strict::strict;

/// The output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SchemaFormat {
    /// MCP `tools/list` entries (`inputSchema`, title, annotations).
    Mcp,
    /// OpenAI chat-completions `tools` (`{"type":"function","function":{…}}`).
    Openai,
    /// OpenAI Responses API `tools` (`{"type":"function","name",…,"strict"}`).
    OpenaiResponses,
    /// Anthropic messages `tools` (`input_schema`).
    Anthropic,
    /// The tools section of a system prompt in Cline's XML style.
    XmlPrompt,
}

impl SchemaFormat {
    /// The longest tool description the format's API accepts, in characters (OpenAI refuses a
    /// function description over 1,024: `string_above_max_length`); `None`: no documented limit.
    pub fn description_limit(self) -> Option<usize> {
        match self {
            Self::Openai | Self::OpenaiResponses => Some(1024),
            Self::Mcp | Self::Anthropic | Self::XmlPrompt => None,
        }
    }

    /// Whether the format has a strict mode (`--strict`).
    pub fn has_strict_mode(self) -> bool {
        matches!(self, Self::Openai | Self::OpenaiResponses)
    }
}

/// Renders `specs` in `format` (JSON text for the JSON formats, prompt text for `xml-prompt`).
pub fn render(specs: &[&ToolSpec], format: SchemaFormat) -> String {
    render_with(specs, format, false)
}

/// [`render`], with the schemas made valid for the format's strict mode when `strict` (only
/// the OpenAI formats have one; the others ignore it).
pub fn render_with(specs: &[&ToolSpec], format: SchemaFormat, strict: bool) -> String {
    let strict = strict && format.has_strict_mode();
    let parameters = |s: &ToolSpec| {
        if strict {
            self::strict(&s.input_schema)
        } else {
            s.input_schema.clone()
        }
    };
    let description = |s: &ToolSpec| fit_description(s, format.description_limit());
    match format {
        SchemaFormat::Mcp => json_array(specs.iter().map(|s| mcp_entry(s))),
        SchemaFormat::Openai => json_array(specs.iter().map(|s| {
            let mut function = json!({"name": s.name, "description": description(s), "parameters": parameters(s)});
            if strict {
                function["strict"] = json!(true);
            }
            json!({"type": "function", "function": function})
        })),
        SchemaFormat::OpenaiResponses => json_array(specs.iter().map(|s| {
            json!({"type": "function", "name": s.name, "description": description(s), "parameters": parameters(s), "strict": strict})
        })),
        SchemaFormat::Anthropic => json_array(
            specs
                .iter()
                .map(|s| json!({"name": s.name, "description": s.description, "input_schema": s.input_schema})),
        ),
        SchemaFormat::XmlPrompt => xml_prompt(specs),
    }
}

/// One MCP `tools/list` entry: the title twice (the tool's and the annotations', as the
/// specification has both) and all four hints.
fn mcp_entry(spec: &ToolSpec) -> Value {
    let title = spec.title_or_name();
    let mut entry = json!({
        "name": spec.name,
        "title": title,
        "description": spec.description,
        "inputSchema": spec.input_schema,
        "annotations": {
            "title": title,
            "readOnlyHint": spec.read_only,
            "destructiveHint": spec.destructive,
            "idempotentHint": spec.idempotent,
            "openWorldHint": spec.open_world,
        },
    });
    if let Some(output) = &spec.output_schema {
        entry["outputSchema"] = output.clone();
    }
    entry
}

/// The spec's description within `limit` characters: as it is when it fits, else cut after
/// the last sentence that fits (else the last word, with `…`), with a warning. A description
/// shortened like that loses its end: the legacy tools keep theirs within every limit, and
/// of Cline's SDK set, whose descriptions are Cline's own, `run_commands` and `apply_patch`
/// are cut for OpenAI's APIs.
pub fn fit_description(spec: &ToolSpec, limit: Option<usize>) -> String {
    let text = spec.description.as_str();
    let Some(limit) = limit else {
        return text.to_string();
    };
    let fitted = spec.description_within(limit);
    if fitted == text {
        return fitted;
    }
    tracing::warn!(
        target: "toolhost::schema",
        "the description of {} has {} characters, over the format's limit of {limit}: it was cut to {}",
        spec.name,
        text.chars().count(),
        fitted.chars().count()
    );
    fitted
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
