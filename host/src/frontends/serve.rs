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
//! a denial, the answer to a question). A request sent instead of the answer is refused with an
//! error (requests run one at a time); the end of stdin answers nothing. A question whose call
//! ended without its answer (given up at `[limits] call_timeout_secs`), or unanswered for
//! `[limits] ask_timeout_secs`, is withdrawn: the host writes `{"withdrawn": N}` (before the
//! call's answer) and the next line is a request again. Without `--ask` nobody is asked and
//! what the settings do not auto-approve is denied.

use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tool_api::model::{AskReply, AskResponse};

use crate::ui::{StderrUi, Ui};
use crate::Host;

/// How often a question waiting for its answer looks whether it was withdrawn.
const QUESTION_POLL: Duration = Duration::from_millis(20);

/// The client's two streams, shared by the serving loop and the questions of a call, and the
/// question that waits for its answer.
struct Channel {
    lines: Mutex<Lines>,
    output: Mutex<Box<dyn Write + Send>>,
    /// The id of the question waiting for its answer.
    open: Mutex<Option<u64>>,
    /// How long a question waits (`[limits] ask_timeout_secs`), once the host is built.
    ask_timeout: OnceLock<Duration>,
}

/// The client's lines, read by a thread of their own (so that a question can stop waiting
/// for one), and a line taken by a question that had been withdrawn meanwhile, given back.
struct Lines {
    incoming: Receiver<std::io::Result<Vec<u8>>>,
    given_back: Option<Vec<u8>>,
}

/// What waiting for a line brought.
enum Next {
    /// A line, without its newline.
    Line(Vec<u8>),
    /// None within the wait.
    Waited,
    /// The end of the input.
    End,
    /// The input could not be read.
    Failed(std::io::Error),
}

/// Lines read ahead of the one being served: the client still meets backpressure.
const READ_AHEAD: usize = 16;

impl Lines {
    /// Reads `input` on a thread of its own, each line without its newline.
    fn read(mut input: Box<dyn BufRead + Send>) -> Self {
        let (sender, incoming) = mpsc::sync_channel(READ_AHEAD);
        let reading = move || loop {
            let mut line = Vec::new();
            let read = input.read_until(b'\n', &mut line);
            let ended = matches!(read, Ok(0));
            if line.last() == Some(&b'\n') {
                line.pop();
            }
            let failed = read.is_err();
            if ended || sender.send(read.map(|_| line)).is_err() || failed {
                break;
            }
        };
        // Without its thread nothing is read: the input is as good as ended.
        let _ = std::thread::Builder::new()
            .name("serve-input".to_string())
            .spawn(reading);
        Self {
            incoming,
            given_back: None,
        }
    }

    /// The next line, waiting at most `wait` (`None`: until one comes).
    fn next(&mut self, wait: Option<Duration>) -> Next {
        if let Some(line) = self.given_back.take() {
            return Next::Line(line);
        }
        let received = match wait {
            None => self
                .incoming
                .recv()
                .map_err(|_| RecvTimeoutError::Disconnected),
            Some(wait) => self.incoming.recv_timeout(wait),
        };
        match received {
            Ok(Ok(line)) => Next::Line(line),
            Ok(Err(e)) => Next::Failed(e),
            Err(RecvTimeoutError::Timeout) => Next::Waited,
            Err(RecvTimeoutError::Disconnected) => Next::End,
        }
    }
}

impl Channel {
    fn lines(&self) -> MutexGuard<'_, Lines> {
        self.lines.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn open(&self) -> MutexGuard<'_, Option<u64>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self, message: &Value) -> std::io::Result<()> {
        #[cfg(unix)]
        super::protocol_stdio::restore();
        let mut output = self.output.lock().unwrap_or_else(PoisonError::into_inner);
        writeln!(output, "{message}")?;
        output.flush()
    }

    /// Withdraws the question waiting for its answer, if any (`only`: if it is that one): the
    /// client is told `{"withdrawn": N}`, and the question stops waiting.
    fn withdraw(&self, only: Option<u64>) {
        let mut open = self.open();
        let Some(id) = *open else { return };
        if only.is_some_and(|only| only != id) {
            return;
        }
        *open = None;
        drop(open);
        let _ = self.write(&json!({"withdrawn": id}));
    }

    /// Asks the client question `id` and waits for its answer: `None` when the input ends,
    /// the question is withdrawn (its call ended without it), or its time passes.
    fn ask(&self, id: u64, kind: &str, text: &str) -> Option<AskReply> {
        *self.open() = Some(id);
        let still_open = || *self.open() == Some(id);
        if self
            .write(&json!({"ask": {"id": id, "kind": kind, "text": text}}))
            .is_err()
        {
            self.withdraw(Some(id));
            return None;
        }
        let wait = (self.ask_timeout.get().copied()).unwrap_or_else(|| {
            Duration::from_secs(crate::settings::Limits::default().ask_timeout_secs)
        });
        let deadline = Instant::now() + wait;
        let mut lines = self.lines();
        loop {
            if !still_open() {
                return None;
            }
            if Instant::now() >= deadline {
                self.withdraw(Some(id));
                return None;
            }
            let line = match lines.next(Some(QUESTION_POLL)) {
                Next::Line(line) => line,
                Next::Waited => continue,
                Next::End | Next::Failed(_) => {
                    self.withdraw(Some(id));
                    return None;
                }
            };
            if !still_open() {
                // For the serving loop: this question no longer waits.
                lines.given_back = Some(line);
                return None;
            }
            match parse_answer(&line, id) {
                Ok(reply) => {
                    *self.open() = None;
                    return Some(reply);
                }
                Err(refusal) => self.write(&refusal).ok()?,
            }
        }
    }
}

/// The UI of `serve`: events as [`StderrUi`] shows them; questions asked of the client when it
/// said it answers them (`--ask`).
struct ServeUi {
    channel: Arc<Channel>,
    asks: bool,
    next: AtomicU64,
}

impl Ui for ServeUi {
    fn say(&self, kind: &str, text: &str, partial: bool) {
        StderrUi.say(kind, text, partial);
    }

    fn ask(&self, kind: &str, text: &str) -> Option<AskReply> {
        if !self.asks {
            return None;
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        self.channel.ask(id, kind, text)
    }
}

/// The client's answer to question `id`, or the error that refuses the line.
fn parse_answer(line: &[u8], id: u64) -> Result<AskReply, Value> {
    let message: Value = serde_json::from_slice(line).map_err(|e| {
        json!({"id": null, "error": format!("not a JSON answer: {e}; question {id} is still waiting")})
    })?;
    if message.get("answer").and_then(Value::as_u64) != Some(id) {
        let other = message.get("id").cloned().unwrap_or(Value::Null);
        return Err(json!({"id": other, "error": format!(
            "question {id} is waiting for its answer ({{\"answer\": {id}, \"response\": \"yes\"|\"no\"|\"message\", \"text\": ...}}); requests run one at a time"
        )}));
    }
    let text = message
        .get("text")
        .and_then(Value::as_str)
        .map(str::to_string);
    let response = match message.get("response").and_then(Value::as_str) {
        Some("yes") => AskResponse::Yes,
        Some("no") => AskResponse::No,
        Some("message") => AskResponse::Message,
        other => {
            return Err(json!({"id": null, "error": format!(
                "the answer to question {id} needs \"response\": \"yes\", \"no\" or \"message\" (got {other:?})"
            )}))
        }
    };
    Ok(AskReply { response, text })
}

/// Serves requests on the client's stdin and stdout, taken over for the protocol before
/// `build_host` builds the host with the UI it gets (so that nothing a plugin prints while
/// loading reaches the stream), until stdin closes. `asks`: the client answers questions.
/// Returns the host, to be shut down.
pub fn run(
    asks: bool,
    build_host: impl FnOnce(Box<dyn Ui>) -> Result<Arc<Host>, String>,
) -> Result<Arc<Host>, String> {
    #[cfg(unix)]
    let (input, output) = super::protocol_stdio::take()
        .map_err(|e| format!("cannot take over stdin/stdout for the protocol: {e}"))?;
    #[cfg(not(unix))]
    let (input, output) = (std::io::stdin(), std::io::stdout());
    let channel = Arc::new(Channel {
        lines: Mutex::new(Lines::read(Box::new(std::io::BufReader::new(input)))),
        output: Mutex::new(Box::new(std::io::BufWriter::new(output))),
        open: Mutex::new(None),
        ask_timeout: OnceLock::new(),
    });
    let ui = ServeUi {
        channel: channel.clone(),
        asks,
        next: AtomicU64::new(0),
    };
    let host = build_host(Box::new(ui))?;
    let _ = channel
        .ask_timeout
        .set(Duration::from_secs(host.settings().limits.ask_timeout_secs));
    serve(&host, &channel).map_err(|e| format!("serve: {e}"))?;
    Ok(host)
}

/// Serves requests from the channel until its input closes.
fn serve(host: &Arc<Host>, channel: &Channel) -> std::io::Result<()> {
    loop {
        let next = channel.lines().next(None);
        let line = match next {
            Next::Line(line) => line,
            Next::Waited => continue,
            Next::End => return Ok(()),
            Next::Failed(e) => return Err(e),
        };
        if line.trim_ascii().is_empty() {
            continue;
        }
        let answer = answer(host, &line);
        // A question its call left waiting (the call was given up at its timeout) is void.
        channel.withdraw(None);
        channel.write(&answer)?;
    }
}

pub(crate) fn answer(host: &Arc<Host>, line: &[u8]) -> Value {
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
