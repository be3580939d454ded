//! The private channel between the host and a plugin worker: a Unix stream socket carrying
//! frames of a 4-byte little-endian length followed by one JSON message. The messages carry
//! the JSON documents that cross the ABI in process (`tool_api::model`), so a worker serves
//! exactly what an in-process library would.

use std::io::{self, Read, Write};

use crate::error::CallError;
use crate::plugins::abi::error::{abi_kind, host_kind};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tool_api::abi::ToolErrorKind;
use tool_api::model::{ApprovalRequest, ToolSpec};

use crate::plugins::abi::library::Manifest;
use crate::plugins::error::LoadError;
use crate::plugins::handler::InvalidSpecs;
use crate::plugins::handler_call::{Context, HandlerCall, Params};

/// The largest frame either side accepts (a result of a few hundred megabytes is a fault).
pub const MAX_FRAME_BYTES: usize = 512 << 20;

/// What the host sends a worker.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
pub enum ToWorker {
    /// Runs `op` of handler `handler` for `call`; answered by [`FromWorker::Done`] with `id`.
    Call {
        /// The request's id.
        id: u64,
        /// The handler's index.
        handler: usize,
        /// What to do.
        op: Op,
        /// The call.
        call: WireCall,
    },
    /// A handler extension; answered by [`FromWorker::Done`] with `id`.
    Extension {
        /// The request's id.
        id: u64,
        /// The handler's index.
        handler: usize,
        /// The extension method.
        method: String,
        /// Its payload.
        payload: Value,
    },
    /// The answer to the service request `id` of [`FromWorker::Service`].
    Reply {
        /// The service request's id.
        id: u64,
        /// Its answer.
        answer: Value,
    },
    /// The call `id` was cancelled.
    Cancel {
        /// The call's request id.
        id: u64,
    },
    /// Stop the plugin and exit.
    Shutdown,
}

/// What a call request asks of a handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// `HandlerApi::execute`; answered with `{"content": ToolContent, "description": text}`.
    Execute,
    /// `HandlerApi::partial`; answered with `null`.
    Partial,
    /// `HandlerApi::describe`; answered with the description text.
    Describe,
}

/// A call on the channel: its parameters and context as the JSON the library reads, written
/// by the host once.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WireCall {
    /// The name the tool was called by.
    pub tool_name: String,
    /// The parameters, a JSON object.
    pub params_json: String,
    /// The task context, a JSON `TaskContext`.
    pub context_json: String,
}

impl WireCall {
    /// The channel's form of `call`.
    pub fn of(call: &HandlerCall<'_>) -> Self {
        Self {
            tool_name: call.tool_name.to_string(),
            params_json: call.params.text().to_string(),
            context_json: call.context.text().to_string(),
        }
    }

    /// The call as the worker passes it on to its library: its parameters and context as
    /// they came, text the library parses.
    pub fn received(self) -> Received {
        Received {
            tool_name: self.tool_name,
            params: Params::from_text(self.params_json),
            context: Context::from_text(self.context_json),
        }
    }
}

/// A call a worker received ([`WireCall::received`]).
pub struct Received {
    tool_name: String,
    params: Params,
    context: Context,
}

impl Received {
    /// The call, as its handler reads it.
    pub fn call(&self) -> HandlerCall<'_> {
        HandlerCall {
            tool_name: &self.tool_name,
            params: &self.params,
            context: &self.context,
        }
    }
}

/// What a worker sends the host.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
pub enum FromWorker {
    /// The library loaded and its handlers are built; the first message of a worker.
    Ready {
        /// The plugin's manifest.
        manifest: Manifest,
        /// Each handler's specs, or why they do not parse.
        specs: Vec<Result<Vec<ToolSpec>, InvalidSpecs>>,
    },
    /// The library could not be loaded; the worker exits after this.
    Refused {
        /// Why.
        error: LoadError,
    },
    /// The answer to request `id`.
    Done {
        /// The request's id.
        id: u64,
        /// The `ToolContent`, the description, `null`, or the extension's answer.
        result: Result<Value, WireError>,
    },
    /// A host service the plugin calls during call `call`. `id` 0 expects no answer.
    Service {
        /// The service request's id (0: no answer is expected).
        id: u64,
        /// The call's request id.
        call: u64,
        /// The service and its arguments.
        request: ServiceRequest,
    },
}

/// A host service call, one variant per method of `CallServices` that needs the host.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum ServiceRequest {
    /// `say` (no answer).
    Say {
        /// The say type.
        kind: String,
        /// The text.
        text: String,
        /// A partial update.
        partial: bool,
    },
    /// `ask`: answered with `Result<AskReply, WireError>`.
    Ask {
        /// The ask type.
        kind: String,
        /// The text.
        text: String,
        /// A preview whose answer is ignored.
        partial: bool,
    },
    /// `request_approval`: answered with `Result<ApprovalDecision, WireError>`.
    Approval {
        /// The request.
        request: ApprovalRequest,
    },
    /// `check_path`: answered with the `PathVerdict`.
    CheckPath {
        /// The path.
        path: String,
    },
    /// `record_file_read`: answered with the count.
    RecordFileRead {
        /// The file.
        absolute_path: String,
        /// Its modification time.
        mtime_ms: u64,
    },
    /// `forget_file_reads` (no answer).
    ForgetFileReads {
        /// The file, or empty for all.
        absolute_path: String,
    },
    /// `mistake_count`: answered with the count.
    MistakeCount,
    /// `setting`: answered with the value or `null`.
    Setting {
        /// The dotted key.
        key: String,
    },
    /// `log` (no answer).
    Log {
        /// 1 error .. 5 trace.
        level: u8,
        /// The target.
        target: String,
        /// The message.
        message: String,
    },
    /// `invoke_tool`: answered with `Result<ToolContent, WireError>`.
    InvokeTool {
        /// The tool.
        name: String,
        /// Its parameters, a JSON object.
        params_json: String,
    },
    /// `call_service`: answered with `Result<Value, WireError>`.
    CallService {
        /// The service.
        service: String,
        /// The method.
        method: String,
        /// The payload.
        payload: Value,
    },
}

impl ServiceRequest {
    /// Whether the plugin waits for an answer.
    pub fn expects_answer(&self) -> bool {
        !matches!(
            self,
            Self::Say { .. } | Self::ForgetFileReads { .. } | Self::Log { .. }
        )
    }
}

/// The host's answer to [`ServiceRequest::Setting`]. In an object, so that an absent setting
/// (`{"value": null}`) differs from no answer (`null`: the call is over): a worker remembers
/// the first, not the second.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SettingAnswer {
    /// The setting's value; `None`: absent.
    pub value: Option<Value>,
}

/// A [`CallError`] on the channel, its kind as the ABI numbers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireError {
    /// The error kind's number.
    pub kind: u16,
    /// The message.
    pub message: String,
}

impl From<&CallError> for WireError {
    fn from(error: &CallError) -> Self {
        Self {
            kind: abi_kind(error.kind).0,
            message: error.message.to_string(),
        }
    }
}

impl From<WireError> for CallError {
    fn from(error: WireError) -> Self {
        CallError::new(host_kind(ToolErrorKind(error.kind)), error.message)
    }
}

/// Writes one frame. The caller serializes writers (one frame is one `write_all`).
pub fn write_frame(out: &mut impl Write, message: &impl Serialize) -> io::Result<()> {
    let mut frame = vec![0u8; 4];
    serde_json::to_writer(&mut frame, message).map_err(io::Error::other)?;
    let length = u32::try_from(frame.len() - 4)
        .ok()
        .filter(|&n| n as usize <= MAX_FRAME_BYTES)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "frame too large"))?;
    frame[..4].copy_from_slice(&length.to_le_bytes());
    out.write_all(&frame)
}

/// Reads one frame; `Ok(None)` at the end of the stream.
pub fn read_frame<T: for<'de> Deserialize<'de>>(input: &mut impl Read) -> io::Result<Option<T>> {
    let mut length = [0u8; 4];
    match input.read_exact(&mut length) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let length = u32::from_le_bytes(length) as usize;
    if length > MAX_FRAME_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a frame of {length} bytes is over the limit"),
        ));
    }
    // What arrived, not what the length claims: a worker announcing a large frame and sending
    // nothing costs no memory.
    let mut body = Vec::new();
    (&mut *input).take(length as u64).read_to_end(&mut body)?;
    if body.len() < length {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("a frame of {length} bytes ended after {}", body.len()),
        ));
    }
    serde_json::from_slice(&body)
        .map(Some)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_end_cleanly() -> io::Result<()> {
        let mut buffer = Vec::new();
        write_frame(&mut buffer, &ToWorker::Cancel { id: 7 })?;
        write_frame(&mut buffer, &ToWorker::Shutdown)?;
        let mut input = buffer.as_slice();
        assert!(matches!(
            read_frame::<ToWorker>(&mut input)?,
            Some(ToWorker::Cancel { id: 7 })
        ));
        assert!(matches!(
            read_frame::<ToWorker>(&mut input)?,
            Some(ToWorker::Shutdown)
        ));
        assert!(read_frame::<ToWorker>(&mut input)?.is_none());
        Ok(())
    }

    /// Found by the `worker_frames` fuzz target: `99E91` was read as 9.900000000000001e92,
    /// written so, and read back as 9.9e92: a result's number changed on its way to the host.
    #[test]
    fn numbers_cross_the_channel_unchanged() -> io::Result<()> {
        let body =
            br#"{"t":"done","id":1,"result":{"Ok":{"n":[49959999,99E91,99E9,9.199,0.1,1e-300]}}}"#;
        let mut frame = (body.len() as u32).to_le_bytes().to_vec();
        frame.extend_from_slice(body);
        let first: FromWorker =
            read_frame(&mut frame.as_slice())?.ok_or(io::ErrorKind::UnexpectedEof)?;
        let mut again = Vec::new();
        write_frame(&mut again, &first)?;
        let second: FromWorker =
            read_frame(&mut again.as_slice())?.ok_or(io::ErrorKind::UnexpectedEof)?;
        let value = |m: &FromWorker| serde_json::to_value(m).map_err(io::Error::other);
        assert_eq!(value(&first)?, value(&second)?);
        assert_eq!(
            value(&first)?["result"]["Ok"]["n"][1],
            serde_json::json!(9.9e92)
        );
        Ok(())
    }

    #[test]
    fn an_oversized_or_cut_frame_is_an_error() {
        let mut huge = (u32::MAX).to_le_bytes().to_vec();
        huge.extend_from_slice(b"{}");
        assert!(read_frame::<ToWorker>(&mut huge.as_slice()).is_err());
        let mut cut = 10u32.to_le_bytes().to_vec();
        cut.extend_from_slice(b"{\"t\"");
        assert!(read_frame::<ToWorker>(&mut cut.as_slice()).is_err());
    }
}
