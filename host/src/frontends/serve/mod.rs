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
//!
//! With `--ask` the client answers the questions a call asks (approvals, ask_followup_question,
//! an untrusted hook): while the call runs, the host writes
//! `{"ask": {"id": N, "kind": "tool"|"followup"|"hook"|..., "text": "..."}}` and waits for
//! `{"answer": N, "response": "yes"|"no"|"message", "text": "..."}` (`text`: the feedback of
//! a denial, the answer to a question). A tool's own form (an MCP server's elicitation, a
//! plugin's `ui.elicit`) comes as `{"ask": {"id": N, "kind": "form", "form": {"message",
//! "requestedSchema"}}}` and waits for `{"answer": N, "action": "accept"|"decline"|"cancel",
//! "content": {...}}`. A request sent instead of the answer is refused with an
//! error (requests run one at a time); the end of stdin answers nothing. A question whose call
//! ended without its answer (given up at `[limits] call_timeout_secs`), or unanswered for
//! `[limits] ask_timeout_secs`, is withdrawn: the host writes `{"withdrawn": N}` (before the
//! call's answer) and the next line is a request again; an answer that comes after that (or
//! with no question asked) answers nothing. Without `--ask` nobody is asked and what the
//! settings do not auto-approve is denied. The lines and the question: [`channel`].

mod channel;

use std::sync::Arc;

use serde_json::{json, Value};
use tool_api::model::AskReply;

use super::FrontendError;
use crate::ui::{StderrUi, Ui};
use crate::Host;
use channel::Channel;

/// The UI of `serve`: events as [`StderrUi`] shows them; questions asked of the client when it
/// said it answers them (`--ask`).
struct ServeUi {
    channel: Arc<Channel>,
    asks: bool,
}

impl Ui for ServeUi {
    fn say(&self, kind: &str, text: &str, partial: bool) {
        StderrUi.say(kind, text, partial);
    }

    fn ask(&self, kind: &str, text: &str) -> Option<AskReply> {
        if !self.asks {
            return None;
        }
        self.channel.ask(kind, text)
    }

    fn elicit(&self, request: &Value) -> Option<Value> {
        if !self.asks {
            return None;
        }
        self.channel.form(request)
    }
}

/// Serves requests on the client's stdin and stdout, taken over for the protocol before
/// `build_host` builds the host with the UI it gets (so that nothing a plugin prints while
/// loading reaches the stream), until stdin closes. `asks`: the client answers questions.
/// Returns the host, to be shut down.
pub fn run(
    asks: bool,
    build_host: impl FnOnce(Box<dyn Ui>) -> Result<Arc<Host>, FrontendError>,
) -> Result<Arc<Host>, FrontendError> {
    #[cfg(unix)]
    let (input, output) = super::protocol_stdio::take().map_err(FrontendError::TakeStdio)?;
    #[cfg(not(unix))]
    let (input, output) = (std::io::stdin(), std::io::stdout());
    let channel = Arc::new(Channel::new(
        Box::new(std::io::BufReader::new(input)),
        Box::new(std::io::BufWriter::new(output)),
    ));
    let ui = ServeUi {
        channel: channel.clone(),
        asks,
    };
    let host = build_host(Box::new(ui))?;
    channel.set_ask_timeout(host.settings().limits.ask_timeout());
    serve(&host, &channel).map_err(FrontendError::Serve)?;
    Ok(host)
}

/// Serves requests from the channel until its input closes.
fn serve(host: &Arc<Host>, channel: &Channel) -> std::io::Result<()> {
    while let Some(line) = channel.next_line() {
        let line = line?;
        if line.trim_ascii().is_empty() {
            continue;
        }
        channel.request_starts();
        let answer = answer(host, &line);
        channel.request_ended();
        if let Some(answer) = answer {
            channel.write(&answer)?;
        }
    }
    Ok(())
}

/// The answer to one line; `None` for an answer to a question that no longer waits (it came
/// after the question was withdrawn), which answers nothing.
pub(crate) fn answer(host: &Arc<Host>, line: &[u8]) -> Option<Value> {
    let line = match std::str::from_utf8(line) {
        Ok(line) => line,
        Err(e) => return Some(not_utf8(line, &e)),
    };
    let request: Value = match serde_json::from_str(line) {
        Ok(request) => request,
        Err(e) => return Some(json!({"id": null, "error": format!("not a JSON request: {e}")})),
    };
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    if request.get("list").and_then(Value::as_bool) == Some(true) {
        let names: Vec<String> = host.tools().into_iter().map(|(name, _)| name).collect();
        return Some(json!({"id": id, "tools": names}));
    }
    let Some(tool) = request.get("tool").and_then(Value::as_str) else {
        if request.get("answer").is_some() {
            tracing::debug!(target: "toolhost::serve", "an answer to a question that no longer waits: {line:.200}");
            return None;
        }
        return Some(json!({"id": id, "error": "a request needs \"tool\" (or \"list\": true)"}));
    };
    let params = request.get("params").cloned().unwrap_or_else(|| json!({}));
    let outcome = host.call(tool, &params.to_string());
    let mut answer = serde_json::to_value(outcome.to_unattended_json()).unwrap_or_default();
    answer["id"] = id;
    Some(answer)
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
