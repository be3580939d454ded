//! `toolhost mcp-servers`: the MCP servers of the settings, their status and their tools.
//!
//! The MCP client lives in the plugin declaring the `mcp_servers` capability; the host asks its
//! first handler with the extension `mcp_servers` and prints the answer.

use serde_json::Value;

use crate::frontends::FrontendError;
use crate::Host;

use tool_api::model::{DynamicToolsQuery, MCP_SERVERS_CAPABILITY, MCP_SERVERS_METHOD};

/// The plugin's answer: `{"settings_file", "servers": [{name, key, transport, target, status, error?,
/// tools: [{name, native_name, description, auto_approve}]}]}`.
pub fn report(host: &Host) -> Result<Value, FrontendError> {
    let handler = host
        .registry()
        .plugin_with(MCP_SERVERS_CAPABILITY)
        .ok_or(FrontendError::NoMcpClient)?;
    let query = DynamicToolsQuery {
        name: None,
        settings: host.settings().document().clone(),
        egress: host.listing_route(),
    };
    let payload = serde_json::to_value(query).unwrap_or_default();
    handler
        .request(MCP_SERVERS_METHOD, &payload)
        .map_err(FrontendError::McpServers)
}

/// The report as text: one line per server, then one per tool.
pub fn render_text(report: &Value) -> String {
    let mut out = format!(
        "settings: {}\n",
        report["settings_file"].as_str().unwrap_or("?")
    );
    let servers = report["servers"].as_array().map_or(&[][..], Vec::as_slice);
    if servers.is_empty() {
        out.push_str("no MCP servers configured\n");
    }
    for server in servers {
        out.push_str(&format!(
            "{} [{}] {} ({})\n",
            text(&server["name"]),
            text(&server["status"]),
            text(&server["target"]),
            text(&server["transport"]),
        ));
        if let Some(error) = server["error"].as_str() {
            for line in error.lines() {
                out.push_str(&format!("    ! {line}\n"));
            }
        }
        for tool in server["tools"].as_array().map_or(&[][..], Vec::as_slice) {
            let native = tool["native_name"].as_str().unwrap_or("(no native name)");
            let approve = if tool["auto_approve"].as_bool() == Some(true) {
                " [auto-approved]"
            } else {
                ""
            };
            out.push_str(&format!(
                "    {:<24} {native}{approve}\n",
                text(&tool["name"])
            ));
        }
    }
    out
}

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or("")
}
