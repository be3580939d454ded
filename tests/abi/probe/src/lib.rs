//! A tool built against tool-api 1.0.0.

use tool_api::sdk::prelude::*;

/// Answers with the tool-api version it was built against and echoes `text`.
pub struct Probe;

impl Tool for Probe {
    fn specs(&self) -> Vec<ToolSpec> {
        vec![ToolSpec::simple("abi_probe", "Echoes `text`.", &[("text", "The text.", true)])]
    }

    fn execute(&self, call: &Call, _ctx: &Ctx<'_>) -> ToolResult {
        let text = call.params.required("text")?;
        Ok(ToolContent::text(format!("built against tool-api {}: {text}", tool_api::ABI_VERSION)))
    }
}

tool_api::submit_tool!(Probe);
tool_api::export_plugin!();
