//! The handlers of a library loaded into this process, behind [`HandlerApi`].

use std::sync::Arc;
use std::time::Duration;

use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::{RErr, ROk, RStr};
use serde_json::Value;
use tool_api::abi::{HostServices_TO, ToolCall, ToolHandlerBox, ToolPluginV1Ref};
use tool_api::model::ToolSpec;

use super::services::AbiServices;
use crate::error::{CallError, ErrorKind};
use crate::plugins::handler::{CallServices, HandlerApi, InvalidSpecs, OpenedPlugin};
use crate::plugins::handler_call::{HandlerCall, Ran, Watch};

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

/// The ABI form of a call: its parameters and context as JSON, each written once for every
/// use of the call.
fn abi_call<'a>(call: &HandlerCall<'a>) -> ToolCall<'a> {
    ToolCall {
        tool_name: RStr::from(call.tool_name),
        call_id: RStr::from(""),
        params_json: RStr::from(call.params.text()),
        context_json: RStr::from(call.context.text()),
    }
}

fn malformed(what: &str, e: &serde_json::Error) -> CallError {
    CallError::new(
        ErrorKind::Internal,
        format!("the tool returned malformed {what}: {e}"),
    )
}

impl HandlerApi for InProcessHandler {
    fn specs(&self) -> Result<Vec<ToolSpec>, InvalidSpecs> {
        serde_json::from_str(self.0.specs_json().as_str()).map_err(|e| InvalidSpecs {
            reason: e.to_string(),
        })
    }

    fn describe(&self, call: &HandlerCall<'_>) -> String {
        self.0.describe(abi_call(call)).into_string()
    }

    /// Describes first, so that a caller giving the call up has the description without the
    /// plugin; the call's JSON is written for both once.
    fn run(
        &self,
        call: &HandlerCall<'_>,
        services: &dyn CallServices,
        _timeout: Duration,
        watch: &dyn Watch,
    ) -> Ran {
        let description = self.describe(call);
        watch.started(&description);
        let adapter = AbiServices::new(services);
        let host = HostServices_TO::from_ptr(&adapter, TD_Opaque);
        let result = match self.0.execute(abi_call(call), host) {
            ROk(output) => serde_json::from_str(output.content_json.as_str())
                .map_err(|e| malformed("content", &e)),
            RErr(e) => Err(e.into()),
        };
        if !watch.returned() {
            return Ran::GivenUp;
        }
        Ran::Ended(result, Some(description))
    }

    fn partial(
        &self,
        call: &HandlerCall<'_>,
        services: &dyn CallServices,
    ) -> Result<(), CallError> {
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
