//! Adapts a plain-Rust [`Tool`] to the ABI's `ToolHandler`, catching every panic.

use std::cell::RefCell;
use std::mem::ManuallyDrop;

use abi_stable::{
    sabi_trait::TD_Opaque,
    std_types::{RResult, RStr, RString},
};

use crate::abi::{
    HostRef, ToolCall, ToolError, ToolErrorKind, ToolHandler, ToolHandlerBox, ToolHandler_TO,
    ToolOutput,
};
use crate::model::TaskContext;

use super::{contain, guard, Call, Ctx, Params, Tool};

/// A [`Tool`] behind the ABI. Its specs are serialized once, when the handler is built.
pub struct ToolAdapter<T: Tool> {
    /// Dropped by hand, inside a guard (see the `Drop` impl).
    tool: ManuallyDrop<T>,
    specs_json: String,
}

/// Boxes a tool as an ABI handler.
pub fn handler_box<T: Tool>(tool: T) -> ToolHandlerBox {
    let specs_json = serde_json::to_string(&tool.specs()).unwrap_or_else(|_| "[]".to_string());
    let tool = ManuallyDrop::new(tool);
    ToolHandler_TO::from_value(ToolAdapter { tool, specs_json }, TD_Opaque)
}

impl<T: Tool> Drop for ToolAdapter<T> {
    /// The host drops a handler through the ABI (when a replaced generation retires): a panic
    /// in the tool's destructor is contained there like any other.
    fn drop(&mut self) {
        // SAFETY: `tool` is dropped here and nowhere else, once, and never used after.
        let _ = contain(|| unsafe { ManuallyDrop::drop(&mut self.tool) });
    }
}

fn decode_call(call: &ToolCall<'_>) -> Result<Call, ToolError> {
    let params = Params::from_json(call.params_json.as_str())?;
    let task = decode_context(call.context_json.as_str())?;
    Ok(Call {
        name: call.tool_name.as_str().to_string(),
        call_id: call.call_id.as_str().to_string(),
        params,
        task,
    })
}

thread_local! {
    /// The last task context decoded on this thread, with its JSON. A host sends the same
    /// context for every call of a task, so most calls copy it instead of parsing it again.
    static LAST_CONTEXT: RefCell<Option<(String, TaskContext)>> = const { RefCell::new(None) };
}

fn decode_context(json: &str) -> Result<TaskContext, ToolError> {
    let cached = LAST_CONTEXT.with_borrow(|last| {
        last.as_ref()
            .filter(|(text, _)| text == json)
            .map(|(_, task)| task.clone())
    });
    if let Some(task) = cached {
        return Ok(task);
    }
    let task: TaskContext = serde_json::from_str(json).map_err(|e| {
        ToolError::new(
            ToolErrorKind::INTERNAL,
            format!("invalid task context from the host: {e}"),
        )
    })?;
    LAST_CONTEXT.set(Some((json.to_string(), task.clone())));
    Ok(task)
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// A tool whose destructor panics.
    struct PanicsOnDrop;

    impl Tool for PanicsOnDrop {
        fn specs(&self) -> Vec<crate::model::ToolSpec> {
            Vec::new()
        }
        fn execute(&self, _call: &Call, _ctx: &Ctx<'_>) -> super::super::ToolResult {
            Err(ToolError::new(ToolErrorKind::INTERNAL, "unused"))
        }
    }

    impl Drop for PanicsOnDrop {
        fn drop(&mut self) {
            panic!("the tool's destructor panicked");
        }
    }

    #[test]
    fn a_panic_in_a_tools_destructor_stays_inside_the_handler() {
        let handler = handler_box(PanicsOnDrop);
        let dropped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(handler)));
        assert!(
            dropped.is_ok(),
            "the panic escaped the handler's destructor"
        );
    }

    #[test]
    fn each_context_is_decoded_from_its_own_json() {
        let first = r#"{"task_id":"a","cwd":"/one"}"#;
        let second = r#"{"task_id":"b","cwd":"/two"}"#;
        for json in [first, first, second, first] {
            let expected: TaskContext = serde_json::from_str(json).unwrap();
            assert_eq!(decode_context(json).unwrap(), expected);
        }
        assert!(decode_context("{not json").is_err());
    }
}
