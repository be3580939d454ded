//! `toolhost plugin show NAME`: a loaded plugin, and what its worker may reach.

use std::process::ExitCode;

use serde_json::{json, Value};
use tool_api::model::access::Access;

use crate::frontends::FrontendError;
use crate::Host;

/// Prints the plugin `name` of `host` (text, or JSON with `json`).
pub fn run(host: &Host, name: &str, json: bool) -> Result<ExitCode, FrontendError> {
    let registry = host.registry();
    let Some(plugin) = registry.plugins().iter().find(|p| p.name == name) else {
        return Err(FrontendError::NoSuchPlugin(name.to_string()));
    };
    let tools: Vec<String> = host
        .tools()
        .iter()
        .filter(|(_, tool)| tool.handler.plugin.name == name)
        .map(|(tool, _)| tool.clone())
        .collect();
    let declared = Access::declared(&plugin.capabilities).ok().flatten();
    let report = plugin.access();
    if json {
        let text = |access: &Access| Value::String(access.to_string());
        let shown = json!({
            "name": plugin.name,
            "version": plugin.version.to_string(),
            "abi_version": plugin.abi_version.to_string(),
            "library": plugin.path,
            "isolation": plugin.isolation().as_str(),
            "tools": tools,
            "declares": declared.as_ref().map(text),
            "granted": report.map(|r| text(&r.granted)),
            "gets": report.map(|r| text(&r.effective)),
            "missing": report.map(|r| r.missing(name)).unwrap_or_default(),
        });
        super::super::report::print_line(&shown.to_string());
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = format!(
        "plugin {} {} (tool-api {})\n  library:  {}\n  tools:    {}\n",
        plugin.name,
        plugin.version,
        plugin.abi_version,
        plugin.path.display(),
        tools.join(", ")
    );
    let declares = match &declared {
        Some(access) => access.to_string(),
        None => "nothing (an older plugin: its grant decides)".to_string(),
    };
    out.push_str(&format!("  declares: {declares}\n"));
    match report {
        Some(report) => {
            out.push_str("  runs:     isolated, in a worker process\n");
            out.push_str(&format!("  granted:  {}\n", report.granted));
            out.push_str(&format!("  gets:     {}\n", report.effective));
            for missing in report.missing(name) {
                out.push_str(&format!("  missing:  {missing}\n"));
            }
        }
        None => out.push_str("  runs:     in the host's process (not confined)\n"),
    }
    print!("{out}");
    Ok(ExitCode::SUCCESS)
}
