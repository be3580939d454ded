//! HTTP tools declared in the settings: each `[http_tools.<name>]` table becomes a tool of that
//! name, listed and called like any plugin tool. Calling one POSTs its arguments as a JSON
//! object to the tool's URL and returns the response's text, under the web tools' rules: the
//! `[web]` timeout, proxy and CA settings, the `web.fetch.max_bytes` download cap and the
//! `web.fetch.max_chars` text cap.
//!
//! ```toml
//! [http_tools.lookup_ticket]
//! description = "Looks up a ticket of the issue tracker by its id."
//! url = "https://tickets.example.com/api/lookup"
//! parameters = { type = "object", properties = { id = { type = "string" } }, required = ["id"] }
//! headers = { "X-Team" = "tools" }
//! bearer_token_env = "TICKETS_TOKEN"   # sends `Authorization: Bearer $TICKETS_TOKEN`
//! timeout_ms = 5000                    # else web.timeout_ms
//! ```
//!
//! The calls are approved in the `web` category. A declaration that cannot be used (no URL, a
//! parameter schema that is not an object) still lists its tool, and calling it says what to fix.

pub mod declared;
mod request;

use tool_api::sdk::prelude::*;
use web_support::{block_on_cancellable, NetSettings};

use crate::declared::{Declaration, SETTINGS_KEY};

/// The handler of every declared HTTP tool.
#[derive(Debug, Default)]
pub struct HttpTools;

impl Tool for HttpTools {
    /// No fixed names: every tool comes from the settings ([`Tool::dynamic_tools`]).
    fn specs(&self) -> Vec<ToolSpec> {
        Vec::new()
    }

    fn dynamic_tools(&self, query: &DynamicToolsQuery) -> Result<Vec<ToolSpec>, ToolError> {
        let declared = declared::read(query.setting(SETTINGS_KEY));
        Ok(declared
            .iter()
            .filter(|d| query.wants(&d.name))
            .map(Declaration::spec)
            .collect())
    }

    fn execute(&self, call: &Call, ctx: &Ctx<'_>) -> ToolResult {
        let settings = ctx.setting::<serde_json::Value>(SETTINGS_KEY);
        let declared = declared::read(settings.as_ref());
        let Some(declaration) = declared.into_iter().find(|d| d.name == call.name) else {
            return Err(ToolError::new(
                ToolErrorKind::UNAVAILABLE,
                format!(
                    "No HTTP tool named '{}' is declared (settings [{SETTINGS_KEY}.{}]).",
                    call.name, call.name
                ),
            ));
        };
        let target = declaration.target()?;
        let mut net = NetSettings::read(ctx)?;
        if let Some(timeout) = target.timeout {
            net.timeout = timeout;
        }
        let limits = web_support::limits::SizeLimits::read(ctx)?;
        let route = net.route(ctx, &[target.url.as_str()])?;
        let client = web_support::build_client(&net, Some(request::USER_AGENT))?;
        let body = serde_json::Value::Object(call.params.as_map().clone());
        let answer = block_on_cancellable(
            ctx,
            request::post(&client, &target, &body, limits.max_bytes, net.timeout),
        )?
        .map_err(|message| web_support::egress::explained_message(route.as_ref(), ctx, message));
        match answer {
            Ok(text) => Ok(ToolContent::text(request::render(text, limits))),
            Err(message) => Err(ToolError::new(
                ToolErrorKind::FAILED,
                format!("The HTTP tool {} failed: {message}", call.name),
            )),
        }
    }
}

tool_api::submit_tool!(HttpTools);
tool_api::export_plugin!(
    capabilities: [
        tool_api::model::DYNAMIC_TOOLS_CAPABILITY,
        tool_api::model::access::FS_NONE,
        tool_api::model::access::NETWORK_ANY,
    ]
);
