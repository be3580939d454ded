//! A call's host services as the ABI's `HostServices`, for an in-process plugin.
//!
//! Every method catches panics: these functions are called from plugin code through the ABI,
//! and a panic unwinding out of them would end the process. The SDK's guard contains them, so
//! that a caught panic's payload is dropped inside a guard too.

use abi_stable::std_types::{RNone, ROption, RResult, RSome, RStr, RString};
use serde::Serialize;
use tool_api::abi::{HostServices, ToolError, ToolErrorKind, ToolOutput};
use tool_api::model::ApprovalRequest;

use crate::plugins::handler::CallServices;

/// The adapter: borrows the call's services for the length of one ABI call.
pub struct AbiServices<'a> {
    inner: &'a dyn CallServices,
}

impl<'a> AbiServices<'a> {
    /// Presents `inner` through the ABI.
    pub fn new(inner: &'a dyn CallServices) -> Self {
        Self { inner }
    }
}

fn contained<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    tool_api::sdk::contain(f).unwrap_or(fallback)
}

fn internal(message: &str) -> ToolError {
    ToolError::new(ToolErrorKind::INTERNAL, message)
}

fn encode<T: Serialize>(value: &T) -> Result<RString, ToolError> {
    serde_json::to_string(value)
        .map(RString::from)
        .map_err(|e| internal(&e.to_string()))
}

impl HostServices for AbiServices<'_> {
    fn say(&self, kind: RStr<'_>, text: RStr<'_>, partial: bool) {
        contained((), || self.inner.say(kind.as_str(), text.as_str(), partial))
    }

    fn ask(&self, kind: RStr<'_>, text: RStr<'_>, partial: bool) -> RResult<RString, ToolError> {
        contained(Err(internal("the host failed while asking")), || {
            encode(&self.inner.ask(kind.as_str(), text.as_str(), partial)?)
        })
        .into()
    }

    fn request_approval(&self, request_json: RStr<'_>) -> RResult<RString, ToolError> {
        contained(Err(internal("the host failed while approving")), || {
            let request: ApprovalRequest =
                serde_json::from_str(request_json.as_str()).map_err(|e| {
                    ToolError::new(
                        ToolErrorKind::INVALID_PARAMS,
                        format!("invalid approval request: {e}"),
                    )
                })?;
            encode(&self.inner.request_approval(&request)?)
        })
        .into()
    }

    fn check_path(&self, path: RStr<'_>) -> RString {
        contained(RString::new(), || {
            encode(&self.inner.check_path(path.as_str())).unwrap_or_default()
        })
    }

    fn record_file_read(&self, absolute_path: RStr<'_>, mtime_ms: u64) -> u32 {
        contained(1, || {
            self.inner
                .record_file_read(absolute_path.as_str(), mtime_ms)
        })
    }

    fn forget_file_reads(&self, absolute_path: RStr<'_>) {
        contained((), || self.inner.forget_file_reads(absolute_path.as_str()))
    }

    fn mistake_count(&self) -> u32 {
        contained(0, || self.inner.mistake_count())
    }

    fn setting(&self, key: RStr<'_>) -> ROption<RString> {
        contained(RNone, || match self.inner.setting(key.as_str()) {
            Some(value) => RSome(RString::from(value.to_string())),
            None => RNone,
        })
    }

    fn log(&self, level: u8, target: RStr<'_>, message: RStr<'_>) {
        contained((), || {
            self.inner.log(level, target.as_str(), message.as_str())
        })
    }

    fn is_cancelled(&self) -> bool {
        contained(true, || self.inner.is_cancelled())
    }

    fn wait_cancelled(&self, timeout_ms: u64) -> bool {
        contained(true, || self.inner.wait_cancelled(timeout_ms))
    }

    fn invoke_tool(&self, name: RStr<'_>, params_json: RStr<'_>) -> RResult<ToolOutput, ToolError> {
        contained(
            Err(internal("the host failed while invoking a tool")),
            || {
                let content = self
                    .inner
                    .invoke_tool(name.as_str(), params_json.as_str())?;
                Ok(ToolOutput {
                    content_json: encode(&content)?,
                })
            },
        )
        .into()
    }

    fn call_service(
        &self,
        service: RStr<'_>,
        method: RStr<'_>,
        payload_json: RStr<'_>,
    ) -> RResult<RString, ToolError> {
        contained(Err(internal("the host failed in a service")), || {
            let payload = serde_json::from_str(payload_json.as_str()).map_err(|e| {
                ToolError::new(
                    ToolErrorKind::INVALID_PARAMS,
                    format!("invalid {service}.{method} request: {e}"),
                )
            })?;
            encode(
                &self
                    .inner
                    .call_service(service.as_str(), method.as_str(), &payload)?,
            )
        })
        .into()
    }
}
