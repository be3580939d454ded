//! The handlers of a library loaded into this process, behind [`HandlerApi`].

use std::sync::Arc;

use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::{RErr, ROk, RStr};
use serde_json::Value;
use tool_api::abi::{HostServices_TO, ToolCall, ToolHandlerBox, ToolPluginV1Ref};
use tool_api::model::{ToolContent, ToolSpec};

use super::services::AbiServices;
use crate::error::{CallError, ErrorKind};
use crate::plugins::handler::{CallData, CallServices, HandlerApi, OpenedPlugin};

/// An opened library: its root module and its handlers.
pub struct InProcessPlugin {
    module: ToolPluginV1Ref,
    handlers: Vec<Arc<dyn HandlerApi>>,
}

impl InProcessPlugin {
    /// The plugin of `module`, whose handlers are `handlers`.
    pub fn new(module: ToolPluginV1Ref, handlers: Vec<ToolHandlerBox>) -> Self {
        Self {
            module,
            handlers: handlers
                .into_iter()
                .map(|handler| Arc::new(InProcessHandler(handler)) as Arc<dyn HandlerApi>)
                .collect(),
        }
    }
}

impl OpenedPlugin for InProcessPlugin {
    fn handlers(&self) -> &[Arc<dyn HandlerApi>] {
        &self.handlers
    }

    fn shutdown(&self) {
        (self.module.shutdown())();
    }
}

/// One handler of an in-process library.
struct InProcessHandler(ToolHandlerBox);

/// The ABI form of a call; the strings stay borrowed.
fn abi_call<'a>(call: &CallData<'a>) -> ToolCall<'a> {
    ToolCall {
        tool_name: RStr::from(call.tool_name),
        call_id: RStr::from(call.call_id),
        params_json: RStr::from(call.params_json),
        context_json: RStr::from(call.context_json),
    }
}

fn malformed(what: &str, e: &serde_json::Error) -> CallError {
    CallError::new(
        ErrorKind::Internal,
        format!("the tool returned malformed {what}: {e}"),
    )
}

impl HandlerApi for InProcessHandler {
    fn specs(&self) -> Result<Vec<ToolSpec>, String> {
        serde_json::from_str(self.0.specs_json().as_str()).map_err(|e| e.to_string())
    }

    fn describe(&self, call: &CallData<'_>) -> String {
        self.0.describe(abi_call(call)).into_string()
    }

    fn execute(
        &self,
        call: &CallData<'_>,
        services: &dyn CallServices,
    ) -> Result<ToolContent, CallError> {
        let adapter = AbiServices::new(services);
        let host = HostServices_TO::from_ptr(&adapter, TD_Opaque);
        match self.0.execute(abi_call(call), host) {
            ROk(output) => serde_json::from_str(output.content_json.as_str())
                .map_err(|e| malformed("content", &e)),
            RErr(e) => Err(e.into()),
        }
    }

    fn partial(&self, call: &CallData<'_>, services: &dyn CallServices) -> Result<(), CallError> {
        let adapter = AbiServices::new(services);
        let host = HostServices_TO::from_ptr(&adapter, TD_Opaque);
        self.0
            .handle_partial(abi_call(call), host)
            .into_result()
            .map_err(CallError::from)
    }

    fn extension(&self, method: &str, payload: &Value) -> Result<Value, CallError> {
        let payload = payload.to_string();
        match self
            .0
            .call_extension(RStr::from(method), RStr::from(payload.as_str()))
        {
            ROk(answer) => serde_json::from_str(answer.as_str()).map_err(|e| {
                CallError::new(
                    ErrorKind::Internal,
                    format!("the answer to '{method}' is not JSON: {e}"),
                )
            }),
            RErr(e) => Err(e.into()),
        }
    }
}
