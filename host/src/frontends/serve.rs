//! `toolhost serve`: tool calls as JSON lines on stdin, results as JSON lines on stdout.
//!
//! A request is `{"id": <any>, "tool": "read_file", "params": {...}}`; the answer is
//! `{"id": <same>, "is_error": bool, "text": "...", "images": [...]}`. `{"id": …, "list": true}`
//! answers with the registered tool names. Requests run one at a time, in order. For agents
//! that want a long-running host without MCP, and for hot swap (`--watch`).
//!
//! The protocol owns the client's stdin and stdout ([`super::protocol_stdio`], as for `mcp`):
//! what a plugin prints goes to stderr, and a plugin closing fd 0 or 1 does not silence it.
//!
//! Nobody behind the host reads its UI events, so a hook's cancel of the task is passed on in
//! the answer's text and as `task_cancelled` ([`crate::CallOutcome::unattended_text`]); errors
//! and notifications also go to stderr as lines.
//!
//! A line that is not a request (not UTF-8, not JSON, no `tool`) is answered with
//! `{"id", "error"}` (the id when it can be read, else `null`) and serving goes on.

use std::io::{BufRead, Write};
use std::sync::Arc;

use serde_json::{json, Value};

use crate::Host;

/// Serves requests on the client's stdin and stdout, taken over for the protocol before
/// `build_host` builds the host (so that nothing a plugin prints while loading reaches the
/// stream), until stdin closes. Returns the host, to be shut down.
pub fn run(build_host: impl FnOnce() -> Result<Arc<Host>, String>) -> Result<Arc<Host>, String> {
    #[cfg(unix)]
    let (input, output) = super::protocol_stdio::take()
        .map_err(|e| format!("cannot take over stdin/stdout for the protocol: {e}"))?;
    #[cfg(not(unix))]
    let (input, output) = (std::io::stdin(), std::io::stdout());
    let host = build_host()?;
    serve(
        &host,
        std::io::BufReader::new(input),
        std::io::BufWriter::new(output),
    )
    .map_err(|e| format!("serve: {e}"))?;
    Ok(host)
}

/// Serves requests from `input` until it closes, writing answers to `output`.
pub fn serve(host: &Arc<Host>, input: impl BufRead, mut output: impl Write) -> std::io::Result<()> {
    for line in input.split(b'\n') {
        let line = line?;
        if line.trim_ascii().is_empty() {
            continue;
        }
        let answer = answer(host, &line);
        #[cfg(unix)]
        super::protocol_stdio::restore();
        writeln!(output, "{answer}")?;
        output.flush()?;
    }
    Ok(())
}

fn answer(host: &Arc<Host>, line: &[u8]) -> Value {
    let line = match std::str::from_utf8(line) {
        Ok(line) => line,
        Err(e) => return not_utf8(line, &e),
    };
    let request: Value = match serde_json::from_str(line) {
        Ok(request) => request,
        Err(e) => return json!({"id": null, "error": format!("not a JSON request: {e}")}),
    };
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    if request.get("list").and_then(Value::as_bool) == Some(true) {
        let names: Vec<String> = host.tools().into_iter().map(|(name, _)| name).collect();
        return json!({"id": id, "tools": names});
    }
    let Some(tool) = request.get("tool").and_then(Value::as_str) else {
        return json!({"id": id, "error": "a request needs \"tool\" (or \"list\": true)"});
    };
    let params = request.get("params").cloned().unwrap_or_else(|| json!({}));
    let outcome = host.call(tool, &params.to_string());
    let mut answer = serde_json::to_value(outcome.to_unattended_json()).unwrap_or_default();
    answer["id"] = id;
    answer
}

/// The answer to a line that is not UTF-8: an error, with the request's id when the rest of
/// the line can be read. The request does not run (its text is not what the client sent).
fn not_utf8(line: &[u8], error: &std::str::Utf8Error) -> Value {
    let id = serde_json::from_str::<Value>(&String::from_utf8_lossy(line))
        .ok()
        .and_then(|request| request.get("id").cloned())
        .unwrap_or(Value::Null);
    json!({"id": id, "error": format!(
        "not a JSON request: the line is not UTF-8 (invalid byte at offset {})",
        error.valid_up_to()
    )})
}
