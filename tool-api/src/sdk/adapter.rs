//! Adapts a plain-Rust [`Tool`] to the ABI's `ToolHandler`, catching every panic.

use abi_stable::{
    sabi_trait::TD_Opaque,
    std_types::{RResult, RStr, RString},
};

use crate::abi::{
    HostRef, ToolCall, ToolError, ToolErrorKind, ToolHandler, ToolHandlerBox, ToolHandler_TO,
    ToolOutput,
};
use crate::model::TaskContext;

use super::{guard, Call, Ctx, Params, Tool};

/// A [`Tool`] behind the ABI. Its specs are serialized once, when the handler is built.
pub struct ToolAdapter<T: Tool> {
    tool: T,
    specs_json: String,
}

/// Boxes a tool as an ABI handler.
pub fn handler_box<T: Tool>(tool: T) -> ToolHandlerBox {
    let specs_json = serde_json::to_string(&tool.specs()).unwrap_or_else(|_| "[]".to_string());
    ToolHandler_TO::from_value(ToolAdapter { tool, specs_json }, TD_Opaque)
}

fn decode_call(call: &ToolCall<'_>) -> Result<Call, ToolError> {
    let params = Params::from_json(call.params_json.as_str())?;
    let task: TaskContext = serde_json::from_str(call.context_json.as_str()).map_err(|e| {
        ToolError::new(
            ToolErrorKind::INTERNAL,
            format!("invalid task context from the host: {e}"),
        )
    })?;
    Ok(Call {
        name: call.tool_name.as_str().to_string(),
        call_id: call.call_id.as_str().to_string(),
        params,
        task,
    })
}

impl<T: Tool> ToolHandler for ToolAdapter<T> {
    fn specs_json(&self) -> RString {
        RString::from(self.specs_json.as_str())
    }

    fn describe(&self, call: ToolCall<'_>) -> RString {
        let text = guard(|| Ok(self.tool.describe(&decode_call(&call)?)))
            .unwrap_or_else(|_| format!("[{}]", call.tool_name));
        RString::from(text)
    }

    fn execute(&self, call: ToolCall<'_>, host: HostRef<'_>) -> RResult<ToolOutput, ToolError> {
        RResult::from(guard(|| {
            let decoded = decode_call(&call)?;
            let ctx = Ctx::new(host, &decoded.task);
            let content = self.tool.execute(&decoded, &ctx)?;
            let content_json = serde_json::to_string(&content).map_err(|e| {
                ToolError::new(
                    ToolErrorKind::INTERNAL,
                    format!("cannot encode the result: {e}"),
                )
            })?;
            Ok(ToolOutput {
                content_json: RString::from(content_json),
            })
        }))
    }

    fn handle_partial(&self, call: ToolCall<'_>, host: HostRef<'_>) -> RResult<(), ToolError> {
        RResult::from(guard(|| {
            let decoded = decode_call(&call)?;
            let ctx = Ctx::new(host, &decoded.task);
            self.tool.handle_partial(&decoded, &ctx)
        }))
    }

    fn call_extension(
        &self,
        method: RStr<'_>,
        payload_json: RStr<'_>,
    ) -> RResult<RString, ToolError> {
        RResult::from(guard(|| {
            let payload: serde_json::Value =
                serde_json::from_str(payload_json.as_str()).unwrap_or_default();
            let answer = if method.as_str() == crate::model::DYNAMIC_TOOLS_METHOD {
                let query = serde_json::from_value(payload).unwrap_or_default();
                serde_json::json!({ "tools": self.tool.dynamic_tools(&query)? })
            } else {
                self.tool.extension(method.as_str(), &payload)?
            };
            Ok(RString::from(answer.to_string()))
        }))
    }
}
