//! The MCP client tools: `use_mcp_tool` (call a tool of a configured MCP server),
//! `access_mcp_resource` (read one of its resources) and `load_mcp_documentation` (the guide to
//! writing a server). One handler serves the three names, branching on the name it was called by.
//!
//! The servers come from Cline's `cline_mcp_settings.json`, read unchanged ([`settings`]):
//! setting `mcp.settings_file`, else the first that exists of toolhost's own, the Cline CLI's
//! and the VS Code extension's ([`locations`]). The
//! [`hub`] starts each server on first use with rmcp's client (a stdio child, or a streamable
//! HTTP or SSE connection), starts again one that exited or closed on the next call, and stops
//! them all in the plugin's shutdown. Results are formatted as Cline does ([`format`]) and capped
//! at 400 KiB. Every tool of every enabled server is also offered under a name of its own
//! ([`native`]), through the host's run-time tools; `toolhost mcp-servers` shows each server's
//! status and tools ([`status`]).
//!
//! ```no_run
//! # use tool_api::sdk::prelude::*;
//! # fn demo(call: &Call, ctx: &Ctx<'_>) -> ToolResult {
//! // {"server_name": "weather", "tool_name": "get_forecast", "arguments": "{\"city\":\"Oslo\"}"}
//! use_mcp_tool::McpTools.execute(call, ctx)
//! # }
//! ```
//!
//! Deliberate differences from Cline: servers start (or connect) on first use rather than when
//! the settings load, so `load_mcp_documentation` names only the servers started so far; a
//! remote connection that closed is reopened on the next call instead of by a background
//! reconnect loop, and OAuth is not supported (a 401 is a start error); a legacy
//! `transportType: "http"` entry is streamable HTTP (Cline's schema order makes it SSE);
//! `arguments` must be a JSON object; a server that cannot start, and `access_mcp_resource` on
//! a server without resources, get messages of their own; native names use a stable server key
//! rather than a random one.

mod call;
pub mod format;
pub mod hub;
pub mod locations;
pub mod native;
pub mod notices;
mod remote;
pub mod settings;
mod sign_in;
mod sse;
pub mod status;
pub mod texts;
mod upstream;

use tool_api::model::{
    MCP_SERVERS_METHOD, MCP_SIGN_IN_METHOD, MCP_SIGN_IN_WAIT_METHOD, MCP_SIGN_OUT_METHOD,
};
use tool_api::sdk::prelude::*;

/// The tool serving `use_mcp_tool`, `access_mcp_resource` and `load_mcp_documentation`.
#[derive(Debug, Default)]
pub struct McpTools;

impl Tool for McpTools {
    fn specs(&self) -> Vec<ToolSpec> {
        let use_tool = ToolSpec::simple(
            "use_mcp_tool",
            texts::USE_MCP_TOOL_DESCRIPTION,
            &[
                ("server_name", texts::SERVER_NAME_PARAM, true),
                ("tool_name", texts::TOOL_NAME_PARAM, true),
                // Cline's handler treats it as optional (absent: `{}` is sent).
                ("arguments", texts::ARGUMENTS_PARAM, false),
            ],
        )
        .title("Use MCP tool")
        .open_world();
        let resource = ToolSpec::simple(
            "access_mcp_resource",
            texts::ACCESS_MCP_RESOURCE_DESCRIPTION,
            &[
                ("server_name", texts::SERVER_NAME_PARAM, true),
                ("uri", texts::URI_PARAM, true),
            ],
        )
        .read_only()
        .title("Read MCP resource")
        .idempotent()
        .open_world();
        let docs = ToolSpec::simple(
            "load_mcp_documentation",
            texts::LOAD_MCP_DOCUMENTATION_DESCRIPTION,
            &[],
        )
        .read_only()
        .title("MCP server guide")
        .idempotent()
        .without_pre_tool_use_hooks();
        // No declared approval category: use_mcp_tool asks itself, because a tool listed in
        // the server's `autoApprove` skips the question.
        vec![use_tool, resource, docs]
    }

    fn describe(&self, call: &Call) -> String {
        if let Some((key, _)) = native::split(&call.name) {
            // Cline turns a native MCP call into a use_mcp_tool block, described as such.
            return format!("[use_mcp_tool for '{key}']");
        }
        match call.name.as_str() {
            "load_mcp_documentation" => "[load_mcp_documentation]".to_string(),
            name => format!(
                "[{name} for '{}']",
                call.params.string_or_empty("server_name")
            ),
        }
    }

    fn execute(&self, call: &Call, ctx: &Ctx<'_>) -> ToolResult {
        match call.name.as_str() {
            "use_mcp_tool" => call::use_mcp_tool(call, ctx),
            "access_mcp_resource" => call::access_mcp_resource(call, ctx),
            "load_mcp_documentation" => call::load_mcp_documentation(ctx),
            other => match native::split(other) {
                Some((key, tool)) => call::native_tool(call, ctx, key, tool),
                None => Err(ToolError::new(
                    ToolErrorKind::INTERNAL,
                    format!("the use_mcp_tool handler does not serve '{other}'"),
                )),
            },
        }
    }

    /// Every tool of every enabled server, each under its own name ([`native`]).
    fn dynamic_tools(&self, query: &DynamicToolsQuery) -> Result<Vec<ToolSpec>, ToolError> {
        let file = settings_file(query)?;
        tool_api::sdk::runtime::block_on(native::specs(&file, query))
            .map_err(|e| ToolError::new(ToolErrorKind::INTERNAL, e.to_string()))
    }

    /// `mcp_servers` (`{"settings": ...}`): every configured server with its status and tools,
    /// for `toolhost mcp-servers`; `mcp_sign_in`, `mcp_sign_in_wait` and `mcp_sign_out` (the
    /// query naming the server): signing in to it and out ([`sign_in`]).
    fn extension(
        &self,
        method: &str,
        payload: &serde_json::Value,
    ) -> Result<serde_json::Value, ToolError> {
        let query: DynamicToolsQuery = serde_json::from_value(payload.clone()).unwrap_or_default();
        let file = settings_file(&query)?;
        let failed = |e: String| ToolError::new(ToolErrorKind::FAILED, e);
        let server = || {
            let name = query.name.clone().unwrap_or_default();
            let config = settings::load(&file)
                .map_err(failed)?
                .remove(&name)
                .ok_or_else(|| failed(texts::no_connection(&name)))?;
            Ok::<_, ToolError>((name, config))
        };
        let answer = match method {
            MCP_SERVERS_METHOD => {
                let egress = hub::ListingEgress(query.egress.clone());
                let servers = block_on(status::servers(&file, &egress))?.map_err(failed)?;
                return Ok(serde_json::json!({"settings_file": file, "servers": servers}));
            }
            MCP_SIGN_IN_METHOD => {
                let (name, config) = server()?;
                block_on(sign_in::begin(&name, &config))?
            }
            MCP_SIGN_IN_WAIT_METHOD => {
                let (name, config) = server()?;
                block_on(sign_in::finish(&name, &config))?
            }
            MCP_SIGN_OUT_METHOD => {
                let (name, config) = server()?;
                sign_in::sign_out(&name, &config)
            }
            _ => {
                return Err(ToolError::new(
                    ToolErrorKind::UNAVAILABLE,
                    format!("unknown handler extension '{method}'"),
                ))
            }
        };
        answer.map_err(failed)
    }
}

/// `future` run on the plugin's runtime.
fn block_on<F: std::future::Future>(future: F) -> Result<F::Output, ToolError> {
    tool_api::sdk::runtime::block_on(future)
        .map_err(|e| ToolError::new(ToolErrorKind::INTERNAL, e.to_string()))
}

/// The MCP settings file of a query's settings ([`locations`]).
fn settings_file(query: &DynamicToolsQuery) -> Result<std::path::PathBuf, ToolError> {
    locations::settings_file(query.setting(locations::KEY))
        .map_err(|message| ToolError::new(ToolErrorKind::UNAVAILABLE, message))
}

tool_api::submit_tool!(McpTools);
tool_api::export_plugin!(
    capabilities: [
        tool_api::model::DYNAMIC_TOOLS_CAPABILITY,
        tool_api::model::MCP_SERVERS_CAPABILITY,
        tool_api::model::access::FS_FULL,
        tool_api::model::access::SPAWN,
        tool_api::model::access::NETWORK_ANY,
    ],
    shutdown: hub::shutdown
);

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, json: &str) -> Call {
        tool_api::sdk::testing::TestHost::call_of(name, json)
    }

    #[test]
    fn three_names_and_their_required_parameters() {
        let specs = McpTools.specs();
        let names: Vec<(&str, Vec<&str>)> = specs
            .iter()
            .map(|s| (s.name.as_str(), s.required_params()))
            .collect();
        assert_eq!(
            names,
            vec![
                ("use_mcp_tool", vec!["server_name", "tool_name"]),
                ("access_mcp_resource", vec!["server_name", "uri"]),
                ("load_mcp_documentation", vec![]),
            ]
        );
        assert!(specs.iter().all(|s| s.approval.is_none()));
    }

    #[test]
    fn descriptions_name_the_server() {
        assert_eq!(
            McpTools.describe(&call("use_mcp_tool", r#"{"server_name":"weather"}"#)),
            "[use_mcp_tool for 'weather']"
        );
        assert_eq!(
            McpTools.describe(&call("load_mcp_documentation", "{}")),
            "[load_mcp_documentation]"
        );
    }
}
