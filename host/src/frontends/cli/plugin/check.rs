//! `toolhost plugin check LIB`: what a host does before and when loading a library, without
//! loading it into this process. The library is copied into a plugin directory of its own and
//! loaded by a host whose every plugin runs isolated, granted the workspace (a temporary one)
//! and nothing else; the host's own checks (the file, the ABI, the manifest, the access it
//! declares) decide whether it loads. Then each tool's spec is held to the limits of the model
//! APIs, and the first tool is called once with sample arguments in its worker.

use std::path::Path;
use std::process::ExitCode;

use serde_json::{json, Map, Value};
use tool_api::model::access::Access;
use tool_api::model::ToolSpec;

use super::super::host::{build_host_with_ui, PluginSource};
use super::super::report::print_line;
use crate::frontends::FrontendError;
use crate::permissions::ApprovalMode;
use crate::settings::Isolation;
use crate::ui::StderrUi;

/// The longest description OpenAI accepts (Anthropic documents none).
const DESCRIPTION_LIMIT: usize = 1024;

/// What the check found.
#[derive(Default)]
struct Findings {
    /// What would keep a host from loading it, or makes it fail.
    problems: Vec<String>,
    /// What a host accepts but a user or model may trip on.
    warnings: Vec<String>,
    /// What passed.
    passed: Vec<String>,
}

/// Checks `library` and prints what was found; exit 0 when a host would load it.
pub fn run(library: &Path, json: bool) -> Result<ExitCode, FrontendError> {
    let findings = check(library)?;
    if json {
        print_line(
            &json!({
                "library": library,
                "loads": findings.problems.is_empty(),
                "problems": findings.problems,
                "warnings": findings.warnings,
                "passed": findings.passed,
            })
            .to_string(),
        );
    } else {
        let mut out = format!("{}\n", library.display());
        let lines = [
            ("ok", &findings.passed),
            ("warning", &findings.warnings),
            ("problem", &findings.problems),
        ];
        for (label, list) in lines {
            for line in list {
                out.push_str(&format!("  {label:<8} {line}\n"));
            }
        }
        out.push_str(if findings.problems.is_empty() {
            "a host would load it\n"
        } else {
            "a host would not load it\n"
        });
        print!("{out}");
    }
    Ok(if findings.problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn check(library: &Path) -> Result<Findings, FrontendError> {
    let failed = |what: &str, e: std::io::Error| {
        FrontendError::PluginCheck(format!("{what} {}: {e}", library.display()))
    };
    let mut findings = Findings::default();
    let file_name = library
        .file_name()
        .ok_or_else(|| FrontendError::PluginCheck(format!("{} is no file", library.display())))?;
    let scratch = tempfile::tempdir().map_err(|e| failed("cannot check", e))?;
    let (plugins, ws) = (scratch.path().join("plugins"), scratch.path().join("ws"));
    std::fs::create_dir_all(&plugins).map_err(|e| failed("cannot check", e))?;
    std::fs::create_dir_all(&ws).map_err(|e| failed("cannot check", e))?;
    std::fs::copy(library, plugins.join(file_name)).map_err(|e| failed("cannot read", e))?;
    let settings = scratch.path().join("settings.toml");
    std::fs::write(&settings, "[plugins]\nfs = \"workspace-write\"\n")
        .map_err(|e| failed("cannot check", e))?;
    let source = PluginSource::new(&[plugins], None, None, Some(Isolation::Process))?
        .with_tool_set(Some(crate::settings::ToolSet::every()));
    let roots = [tool_api::workspace::RootSpec::unnamed(ws)];
    let host = build_host_with_ui(
        &source,
        Some(&settings),
        &roots,
        ApprovalMode::ApproveAll,
        Box::new(StderrUi),
    )?;
    let registry = host.registry();
    findings
        .problems
        .extend(registry.warnings().iter().map(|w| w.message.clone()));
    let Some(plugin) = registry.plugins().first().cloned() else {
        if findings.problems.is_empty() {
            findings
                .problems
                .push("no plugin was registered from it".to_string());
        }
        return Ok(findings);
    };
    findings.passed.push(format!(
        "loads in an isolated worker: plugin {} {} (tool-api {})",
        plugin.name, plugin.version, plugin.abi_version
    ));
    match Access::declared(&plugin.capabilities) {
        Ok(Some(access)) => findings
            .passed
            .push(format!("declares its access: {access}")),
        Ok(None) => findings.warnings.push(
            "declares no access (tool_api::model::access): isolated, it gets whatever it is \
             granted"
                .to_string(),
        ),
        Err(unknown) => findings.problems.push(unknown.to_string()),
    }
    let tools = host.tools();
    let serves: Vec<&str> = [
        tool_api::model::DYNAMIC_TOOLS_CAPABILITY,
        tool_api::model::RESOURCES_CAPABILITY,
        tool_api::model::PROMPTS_CAPABILITY,
    ]
    .into_iter()
    .filter(|capability| plugin.has_capability(capability))
    .collect();
    if tools.is_empty() && serves.is_empty() {
        findings
            .problems
            .push("it offers no tool, and no run-time tools, resources or prompts".to_string());
    } else if tools.is_empty() {
        findings.passed.push(format!(
            "offers no tool of its own; it serves: {}",
            serves.join(", ")
        ));
    }
    for (_, tool) in &tools {
        check_spec(&tool.spec, &mut findings);
    }
    if let Some(tool) = tools.first().and_then(|(name, _)| host.lookup(name)) {
        let name = &tool.spec.name;
        let arguments = sample_arguments(&tool.spec.input_schema);
        let outcome = host.call_tool(&tool, &arguments.to_string());
        let text = outcome.model_text();
        if text.contains("crashed") || text.contains("panicked") {
            findings.problems.push(format!(
                "a sample call of {name} ({arguments}) broke its worker: {}",
                first_line(&text)
            ));
        } else {
            let ended = if outcome.is_error() {
                "an error"
            } else {
                "a result"
            };
            findings.passed.push(format!(
                "a sample call of {name} ({arguments}) answered with {ended}: {}",
                first_line(&text)
            ));
        }
    }
    registry.shutdown();
    Ok(findings)
}

/// Holds one spec to the limits of the model APIs.
fn check_spec(spec: &ToolSpec, findings: &mut Findings) {
    let name = &spec.name;
    let valid_name = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !valid_name {
        findings.problems.push(format!(
            "tool name '{name}': the model APIs take 1 to 64 letters, digits, '_' and '-'"
        ));
    }
    if spec.description.trim().is_empty() {
        findings
            .problems
            .push(format!("tool {name}: no description (the model reads it)"));
    } else if spec.description.chars().count() > DESCRIPTION_LIMIT {
        findings.warnings.push(format!(
            "tool {name}: its description is over {DESCRIPTION_LIMIT} characters; OpenAI \
             refuses it, so toolhost cuts it there"
        ));
    }
    let schema = &spec.input_schema;
    let properties = schema.get("properties").and_then(Value::as_object);
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        findings.problems.push(format!(
            "tool {name}: the input schema is not `\"type\": \"object\"` (Anthropic and OpenAI \
             need one)"
        ));
    }
    for required in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let listed = required
            .as_str()
            .is_some_and(|r| properties.is_some_and(|p| p.contains_key(r)));
        if !listed {
            findings.problems.push(format!(
                "tool {name}: `required` names {required}, which is not among its properties"
            ));
        }
    }
    let strict = crate::agent::schema::strict(schema);
    if strict.get("type").and_then(Value::as_str) == Some("object") {
        findings.passed.push(format!(
            "tool {name}: name, description and schema fit OpenAI (strict mode too) and Anthropic"
        ));
    }
}

/// Arguments for a sample call: each required parameter with a plain value of its type.
fn sample_arguments(schema: &Value) -> Value {
    let properties = schema.get("properties").and_then(Value::as_object);
    let mut arguments = Map::new();
    for required in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        let kind = properties
            .and_then(|p| p.get(required))
            .and_then(|p| p.get("type"))
            .and_then(Value::as_str);
        let value = match kind {
            Some("integer" | "number") => json!(1),
            Some("boolean") => json!(false),
            Some("array") => json!([]),
            Some("object") => json!({}),
            _ => json!("sample"),
        };
        arguments.insert(required.to_string(), value);
    }
    Value::Object(arguments)
}

fn first_line(text: &str) -> &str {
    text.lines().find(|l| !l.trim().is_empty()).unwrap_or("")
}
