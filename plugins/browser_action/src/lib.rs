//! The `browser_action` tool: a headless Chromium, driven over the DevTools protocol with
//! chromiumoxide, that the model opens at a URL, clicks, types into, scrolls and closes.
//!
//! Every action but `close` answers with Cline's result text (the console output logged during
//! the action) and a screenshot of the viewport. The browser lives from `launch` to `close` in a
//! [`BrowserSession`] kept per task by the plugin ([`registry`]); any failure closes it, and so
//! do a cancelled call, a timeout and a panic. Chromium is Debian's `/usr/bin/chromium` with a
//! fresh profile per session, or a running browser reached through `browser.remote_endpoint`
//! (see [`settings`]).
//!
//! ```no_run
//! # use tool_api::sdk::prelude::*;
//! # use tool_api::sdk::Tool as _;
//! # fn demo(call: &Call, ctx: &Ctx<'_>) -> ToolResult {
//! // {"action": "launch", "url": "http://localhost:3000"} → text + screenshot
//! browser_action::BrowserAction.execute(call, ctx)
//! # }
//! ```

pub mod action;
mod call;
pub mod console;
mod keeper;
pub mod launch;
pub mod registry;
pub mod session;
pub mod settings;
pub mod texts;

pub use action::{Action, BadInput, ACTION_NAMES};
pub use session::{BrowserSession, Capture};
pub use settings::BrowserSettings;

use serde_json::{json, Value};
use tool_api::sdk::js::strip_partial_closing_tag;
use tool_api::sdk::prelude::*;

const DESCRIPTION: &str = "Drive a headless Chromium browser to look at web pages and interact \
with them, for example to check a web app you are building once its server runs. Each action \
except `close` answers with a screenshot of the viewport (900x600 pixels unless configured \
otherwise) and the console output the page logged during the action. A session starts with \
`launch` at a URL and ends with `close`: while the browser is open use no other tool, and close \
it before you do; a second `launch` replaces the open browser. Clicks take pixel coordinates read \
from the latest screenshot; aim at the middle of the element. Type only after clicking into the \
field that should receive the text.";

/// The browser_action tool.
#[derive(Debug, Default)]
pub struct BrowserAction;

impl Tool for BrowserAction {
    /// `close_session` (another tool of the task is about to run, as Cline closes the browser
    /// then) and `task_ended` both close the task's browser.
    fn extension(
        &self,
        method: &str,
        payload: &serde_json::Value,
    ) -> Result<serde_json::Value, ToolError> {
        match method {
            "close_session" | "task_ended" => {
                let task_id = payload["task_id"].as_str().unwrap_or_default();
                if registry::has_session(task_id) {
                    tool_api::sdk::runtime::block_on(registry::close_session(task_id))
                        .map_err(|e| ToolError::new(ToolErrorKind::INTERNAL, e.to_string()))?;
                }
                Ok(serde_json::Value::Null)
            }
            other => Err(ToolError::new(
                ToolErrorKind::UNAVAILABLE,
                format!("unknown handler extension '{other}'"),
            )),
        }
    }

    fn specs(&self) -> Vec<ToolSpec> {
        let mut spec = ToolSpec::simple(
            "browser_action",
            DESCRIPTION,
            &[
                (
                    "action",
                    "What to do: launch (open `url` in a new browser), click (at `coordinate`), \
                     type (`text` into the focused element), scroll_down or scroll_up (by 600 \
                     pixels), close (end the session). Required.",
                    false,
                ),
                (
                    "url",
                    "For launch: the URL to open, with its scheme (http://localhost:3000, \
                     file:///path/to/page.html).",
                    false,
                ),
                (
                    "coordinate",
                    "For click: the point as \"x,y\" in viewport pixels, e.g. 450,300.",
                    false,
                ),
                (
                    "text",
                    "For type: the text to type; a line break presses Enter.",
                    false,
                ),
            ],
        )
        .with_partial()
        .title("Browser action")
        .open_world()
        .runs_long()
        // Cline closes the task's browser whenever another tool runs.
        .closed_by_other_tools();
        // `action` is not in `required`: the host would refuse a call without it before the
        // plugin runs, and Cline closes the browser on that mistake too.
        spec.input_schema["properties"]["action"]["enum"] =
            Value::Array(ACTION_NAMES.iter().map(|name| json!(name)).collect());
        vec![spec]
    }

    fn describe(&self, call: &Call) -> String {
        format!(
            "[browser_action for '{}']",
            call.params.string_or_empty("action")
        )
    }

    fn execute(&self, call: &Call, ctx: &Ctx<'_>) -> ToolResult {
        call::execute(call, ctx)
    }

    /// Streaming calls only update the UI; they never touch the browser.
    fn handle_partial(&self, call: &Call, ctx: &Ctx<'_>) -> Result<(), ToolError> {
        let value = |name: &str| {
            call.params
                .string(name)
                .map(|v| strip_partial_closing_tag(&v, name).to_string())
        };
        match call.params.string("action").as_deref() {
            Some("launch") => {
                let url = value("url").unwrap_or_default();
                if ctx
                    .setting::<bool>("auto_approve.use_browser")
                    .unwrap_or(false)
                {
                    ctx.say_partial("browser_action_launch", &url);
                } else {
                    ctx.ask_partial("browser_action_launch", &url);
                }
            }
            Some(action) if ACTION_NAMES.contains(&action) => {
                let mut payload = json!({"action": action});
                for name in ["coordinate", "text"] {
                    if let Some(v) = value(name) {
                        payload[name] = Value::String(v);
                    }
                }
                ctx.say_partial("browser_action", &payload.to_string());
            }
            // An action still being written: wait for more.
            _ => {}
        }
        Ok(())
    }
}

tool_api::submit_tool!(BrowserAction);
tool_api::export_plugin!(
    capabilities: [
        tool_api::model::access::FS_FULL,
        tool_api::model::access::SPAWN,
        tool_api::model::access::NETWORK_ANY,
        "toolset:cline-legacy",
    ],
    shutdown: registry::shutdown
);

#[cfg(test)]
mod tests {
    use super::*;

    fn call(json: &str) -> Call {
        tool_api::sdk::testing::TestHost::call_of("browser_action", json)
    }

    #[test]
    fn the_spec_lists_the_actions_and_requires_nothing_the_host_would_check() {
        let specs = BrowserAction.specs();
        assert_eq!(specs.len(), 1);
        let spec = &specs[0];
        assert_eq!(spec.name, "browser_action");
        assert!(spec.partial);
        assert_eq!(spec.approval, None);
        assert!(spec.required_params().is_empty());
        assert_eq!(
            spec.input_schema["properties"]["action"]["enum"],
            json!([
                "launch",
                "click",
                "type",
                "scroll_down",
                "scroll_up",
                "close"
            ])
        );
    }

    #[test]
    fn the_description_names_the_action() {
        assert_eq!(
            BrowserAction.describe(&call(r#"{"action":"click","coordinate":"1,2"}"#)),
            "[browser_action for 'click']"
        );
    }
}
