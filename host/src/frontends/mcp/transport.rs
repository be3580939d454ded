//! The stdio transport of `toolhost mcp`: newline-delimited JSON-RPC, as rmcp's own stdio
//! transport reads it, plus the answers the protocol owes to what cannot be served.
//!
//! Written here rather than taken from rmcp because rmcp's line codec drops what it cannot
//! decode without answering (a client waits forever), and reads a line of any length. Here:
//!
//! - a line that is not JSON is answered `-32700` (parse error, `id: null`);
//! - a line over the size limit (`[limits] max_request_bytes`) is skipped without being held
//!   in memory and answered `-32600` with the size and the limit, under the request's id when
//!   it can be read from the line's start;
//! - a `tools/call` whose params are not `{"name": string, "arguments"?: object}` is answered
//!   `-32602` with what is wrong (rmcp would answer "method not found");
//! - any other message rmcp cannot decode is answered `-32600` with the decoder's reason.
//!
//! When the input ends, `closed` is cancelled at once: the session's calls are cancelled
//! without waiting for rmcp's drain of in-flight answers.

use std::io;
use std::sync::Arc;

use regex::bytes::Regex;
use rmcp::model::{CallToolRequestParams, ClientRequest, JsonRpcMessage};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::RoleServer;
use serde_json::{json, Value};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

use crate::plugins::handler::Cancellation;

/// JSON-RPC's "parse error".
const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's "invalid request".
const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC's "invalid params".
const INVALID_PARAMS: i64 = -32602;

/// How much of an over-size line is kept to find its id.
const KEPT_PREFIX: usize = 4096;

/// Newline-delimited JSON-RPC over a reader and a writer.
///
/// rmcp may drop a `receive` future between two reads (it waits on several things at once),
/// so what has been read of a line lives here, not in the future: no byte is lost.
pub struct LineTransport<R, W> {
    reader: BufReader<R>,
    writer: Arc<Mutex<W>>,
    limit: usize,
    closed: Arc<Cancellation>,
    partial: PartialLine,
}

/// What has been read of the current line.
#[derive(Default)]
struct PartialLine {
    /// Its bytes so far (at most the limit, or [`KEPT_PREFIX`] once over it).
    kept: Vec<u8>,
    /// Its length so far.
    length: usize,
}

impl<R: AsyncRead + Unpin, W> LineTransport<R, W> {
    /// A transport reading requests from `input` (at most `limit` bytes each) and writing to
    /// `output`; `closed` is cancelled when the input ends.
    pub fn new(input: R, output: W, limit: usize, closed: Arc<Cancellation>) -> Self {
        Self {
            reader: BufReader::new(input),
            writer: Arc::new(Mutex::new(output)),
            limit,
            closed,
            partial: PartialLine::default(),
        }
    }
}

/// One line of input.
enum Line {
    /// A line within the limit, without its newline.
    Text(Vec<u8>),
    /// A line over the limit: its start and its length.
    TooLong { prefix: Vec<u8>, length: usize },
}

/// Reads one line of at most `limit` bytes; a longer one is consumed but only its start kept.
/// `None` at the end of the input. Cancel-safe: the only await is `fill_buf`, and what was
/// read before it is in `partial`.
async fn read_line(
    reader: &mut (impl AsyncBufRead + Unpin),
    partial: &mut PartialLine,
    limit: usize,
) -> io::Result<Option<Line>> {
    loop {
        let buffer = reader.fill_buf().await?;
        if buffer.is_empty() {
            if partial.length == 0 {
                return Ok(None);
            }
            break;
        }
        let (chunk, ended) = match buffer.iter().position(|&b| b == b'\n') {
            Some(at) => (&buffer[..at], Some(at + 1)),
            None => (buffer, None),
        };
        partial.length += chunk.len();
        let keep = if partial.length > limit {
            KEPT_PREFIX
        } else {
            limit
        };
        let room = keep.saturating_sub(partial.kept.len()).min(chunk.len());
        partial.kept.extend_from_slice(&chunk[..room]);
        let used = ended.unwrap_or(buffer.len());
        reader.consume(used);
        if ended.is_some() {
            break;
        }
    }
    let PartialLine { mut kept, length } = std::mem::take(partial);
    if length > limit {
        kept.truncate(KEPT_PREFIX);
        return Ok(Some(Line::TooLong {
            prefix: kept,
            length,
        }));
    }
    Ok(Some(Line::Text(kept)))
}

/// What to do with one line: serve the message, or answer with an error.
fn classify(line: &[u8]) -> Result<RxJsonRpcMessage<RoleServer>, Option<Value>> {
    // A valid message is read once; only what fails (or reads as a `tools/call` that rmcp
    // would take for a custom request, its params being wrong) is looked at again for its error.
    if let Ok(message) = serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(line) {
        if !is_misread_tools_call(&message) {
            return Ok(message);
        }
    }
    let value: Value = serde_json::from_slice(line).map_err(|e| {
        Some(error(
            Value::Null,
            PARSE_ERROR,
            format!("Parse error: the message is not JSON ({e})"),
        ))
    })?;
    let id = value.get("id").cloned();
    if let (Some(id), Some("tools/call")) = (&id, value.get("method").and_then(Value::as_str)) {
        let params = value.get("params").cloned().unwrap_or(Value::Null);
        if let Err(e) = serde_json::from_value::<CallToolRequestParams>(params) {
            return Err(Some(error(
                id.clone(),
                INVALID_PARAMS,
                format!(
                    "Invalid params for tools/call: {e} (expected {{\"name\": string, \"arguments\": object}})"
                ),
            )));
        }
    }
    serde_json::from_value(value).map_err(|e| {
        // A notification gets no answer, even an error one.
        let id = id?;
        Some(error(id, INVALID_REQUEST, format!("Invalid request: {e}")))
    })
}

/// Whether rmcp read a `tools/call` as a custom request (its params did not fit).
fn is_misread_tools_call(message: &RxJsonRpcMessage<RoleServer>) -> bool {
    matches!(
        message,
        JsonRpcMessage::Request(request)
            if matches!(&request.request, ClientRequest::CustomRequest(custom) if custom.method == "tools/call")
    )
}

/// The answer to an over-size line, under the id found at its start if any. Looking for the
/// id with a pattern is a best effort (the line is never parsed whole); the error is sent
/// either way.
fn too_long(prefix: &[u8], length: usize, limit: usize) -> Value {
    static ID: std::sync::OnceLock<Option<Regex>> = std::sync::OnceLock::new();
    let pattern = ID.get_or_init(|| {
        Regex::new(r#"^\s*\{(?:\s*"(?:jsonrpc|method)"\s*:\s*"[^"]*"\s*,)*\s*"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")"#)
            .ok()
    });
    let id = pattern
        .as_ref()
        .and_then(|pattern| pattern.captures(prefix))
        .and_then(|c| serde_json::from_slice(&c[1]).ok())
        .unwrap_or(Value::Null);
    error(
        id,
        INVALID_REQUEST,
        format!(
            "Invalid request: the message is {length} bytes, over the limit of {limit} bytes (the setting [limits] max_request_bytes)"
        ),
    )
}

/// A JSON-RPC error answer.
fn error(id: Value, code: i64, message: String) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

async fn write_line<W: AsyncWrite + Unpin>(writer: &Mutex<W>, line: Vec<u8>) -> io::Result<()> {
    let mut writer = writer.lock().await;
    writer.write_all(&line).await?;
    writer.flush().await
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = self.writer.clone();
        async move {
            let mut line = serde_json::to_vec(&item).map_err(io::Error::other)?;
            line.push(b'\n');
            write_line(&writer, line).await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            let answer = match read_line(&mut self.reader, &mut self.partial, self.limit).await {
                Ok(Some(Line::Text(line))) if line.trim_ascii().is_empty() => continue,
                Ok(Some(Line::Text(line))) => match classify(&line) {
                    Ok(message) => return Some(message),
                    Err(answer) => answer,
                },
                Ok(Some(Line::TooLong { prefix, length })) => {
                    Some(too_long(&prefix, length, self.limit))
                }
                Ok(None) | Err(_) => {
                    self.closed.cancel();
                    return None;
                }
            };
            if let Some(answer) = answer {
                let mut line = answer.to_string().into_bytes();
                line.push(b'\n');
                // Written by a task of its own: this future may be dropped at any await, and a
                // line half written would corrupt the stream.
                let (writer, closed) = (self.writer.clone(), self.closed.clone());
                tokio::spawn(async move {
                    if write_line(&writer, line).await.is_err() {
                        closed.cancel();
                    }
                });
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[tokio::test]
    async fn a_long_line_is_measured_but_not_kept() {
        let input = format!("{}\n{{}}\n", "x".repeat(10_000));
        let mut reader = BufReader::with_capacity(64, input.as_bytes());
        let mut partial = PartialLine::default();
        let Some(Line::TooLong { prefix, length }) =
            read_line(&mut reader, &mut partial, 100).await.unwrap()
        else {
            panic!("not too long");
        };
        assert_eq!((prefix.len(), length), (KEPT_PREFIX, 10_000));
        let Some(Line::Text(next)) = read_line(&mut reader, &mut partial, 100).await.unwrap()
        else {
            panic!("the next line is lost");
        };
        assert_eq!(next, b"{}");
        assert!(read_line(&mut reader, &mut partial, 100)
            .await
            .unwrap()
            .is_none());
    }

    #[tokio::test]
    async fn a_read_dropped_in_the_middle_of_a_line_loses_nothing() {
        let (mut client, server) = tokio::io::duplex(1024);
        let mut reader = BufReader::new(server);
        let mut partial = PartialLine::default();
        client.write_all(br#"{"jsonrpc":"2.0","#).await.unwrap();
        let dropped = tokio::time::timeout(
            std::time::Duration::from_millis(50),
            read_line(&mut reader, &mut partial, 100),
        )
        .await;
        assert!(dropped.is_err(), "the line is not complete yet");
        client.write_all(b"\"id\":1}\n").await.unwrap();
        let Some(Line::Text(line)) = read_line(&mut reader, &mut partial, 100).await.unwrap()
        else {
            panic!("no line");
        };
        assert_eq!(line, br#"{"jsonrpc":"2.0","id":1}"#);
    }

    #[test]
    fn the_id_of_an_over_size_request_is_found_at_its_start() {
        let line = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"#;
        assert_eq!(too_long(line, 99, 10)["id"], 7);
        let nested = br#"{"method":"x","params":{"id":3}"#;
        assert_eq!(too_long(nested, 99, 10)["id"], Value::Null);
    }

    #[test]
    fn bad_input_is_answered_with_its_code() {
        assert_eq!(
            classify(b"nope").unwrap_err().unwrap()["error"]["code"],
            PARSE_ERROR
        );
        let bad_call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}"#;
        let answer = classify(bad_call).unwrap_err().unwrap();
        assert_eq!(answer["error"]["code"], INVALID_PARAMS);
        assert_eq!(answer["id"], 1);
    }
}
