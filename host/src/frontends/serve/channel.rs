//! The client of `toolhost serve`: its lines, read ahead by a thread of their own, its output,
//! and the one question (`--ask`) that may wait for its answer.
//!
//! A question is asked only while a request runs, one at a time; it waits for the line that
//! answers it, refusing the others. It is withdrawn (`{"withdrawn": N}`) when the request ends
//! without its answer (the call was given up at its timeout) or when nobody answers within
//! `[limits] ask_timeout_secs`; a line it took after that is given back to the serving loop.
//! The state of the question and the lines written about it change under one lock, so the
//! client never sees a question after its withdrawal.

use std::io::{BufRead, Write};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tool_api::model::{AskReply, AskResponse};

/// How often a waiting question looks whether it was withdrawn: it waits on the lines, which
/// have one reader at a time, rather than on a signal of its own.
const QUESTION_POLL: Duration = Duration::from_millis(20);

/// Lines read ahead of the one being served: a client sending faster still meets backpressure.
const READ_AHEAD: usize = 16;

/// One line of input, without its newline, or the error that ended the input.
type Line = std::io::Result<Vec<u8>>;

/// The client's streams and its question.
pub(super) struct Channel {
    lines: Mutex<Lines>,
    output: Mutex<Box<dyn Write + Send>>,
    question: Mutex<Question>,
    /// How long a question waits, once the host is built (`[limits] ask_timeout_secs`).
    ask_timeout: OnceLock<Duration>,
}

/// The lines to come, and one a withdrawn question took, given back.
struct Lines {
    incoming: Receiver<Line>,
    given_back: Option<Line>,
}

/// Where questions stand.
#[derive(Default)]
struct Question {
    /// Whether a request runs (questions come only then).
    running: bool,
    /// The id of the question waiting for its answer.
    open: Option<u64>,
    /// The id of the last question asked (ids count from 1).
    last: u64,
}

/// What waiting a while for a line brought.
enum Waited {
    Line(Line),
    Nothing,
    End,
}

impl Channel {
    /// The client's `input`, read on a thread of its own, and its `output`.
    pub(super) fn new(mut input: Box<dyn BufRead + Send>, output: Box<dyn Write + Send>) -> Self {
        let (sender, incoming) = mpsc::sync_channel(READ_AHEAD);
        let reading = move || loop {
            let mut line = Vec::new();
            let read = input.read_until(b'\n', &mut line);
            if matches!(read, Ok(0)) {
                break;
            }
            if line.last() == Some(&b'\n') {
                line.pop();
            }
            let failed = read.is_err();
            if sender.send(read.map(|_| line)).is_err() || failed {
                break;
            }
        };
        // Without its thread nothing is read: the input is as good as ended.
        let _ = std::thread::Builder::new()
            .name("serve-input".to_string())
            .spawn(reading);
        Self {
            lines: Mutex::new(Lines {
                incoming,
                given_back: None,
            }),
            output: Mutex::new(output),
            question: Mutex::default(),
            ask_timeout: OnceLock::new(),
        }
    }

    /// Sets how long a question waits for its answer.
    pub(super) fn set_ask_timeout(&self, timeout: Duration) {
        let _ = self.ask_timeout.set(timeout);
    }

    /// The next line; `None` at the end of the input.
    pub(super) fn next_line(&self) -> Option<Line> {
        let mut lines = self.lines();
        if let Some(line) = lines.given_back.take() {
            return Some(line);
        }
        lines.incoming.recv().ok()
    }

    /// Writes one message as a line.
    pub(super) fn write(&self, message: &Value) -> std::io::Result<()> {
        #[cfg(unix)]
        crate::frontends::protocol_stdio::restore();
        let mut output = self.output.lock().unwrap_or_else(PoisonError::into_inner);
        writeln!(output, "{message}")?;
        output.flush()
    }

    /// A request starts running: its calls may ask.
    pub(super) fn request_starts(&self) {
        self.question().running = true;
    }

    /// The request ended: a question it left waiting (its call was given up) is withdrawn.
    pub(super) fn request_ended(&self) {
        let mut question = self.question();
        question.running = false;
        if let Some(id) = question.open.take() {
            let _ = self.write(&json!({"withdrawn": id}));
        }
    }

    /// Asks the client a question and waits for its answer: `None` when no request runs
    /// (a call given up asks after its answer), another question waits, the input ends, the
    /// question is withdrawn, or its time passes.
    pub(super) fn ask(&self, kind: &str, text: &str) -> Option<AskReply> {
        self.put(json!({"kind": kind, "text": text}), parse_answer)
    }

    /// Asks the client to fill in a form of the tool's own (MCP's elicitation params, as
    /// `form`) and waits for `{"answer": ID, "action", "content"}`: the answer as
    /// `{"action", "content"}`; `None` as for [`Channel::ask`].
    pub(super) fn form(&self, request: &Value) -> Option<Value> {
        self.put(json!({"kind": "form", "form": request}), parse_form)
    }

    /// Writes the question `body` (its id added) and waits for an answer `parse` accepts.
    fn put<T>(&self, body: Value, parse: fn(&[u8], u64) -> Result<T, Value>) -> Option<T> {
        let id = {
            let mut question = self.question();
            if !question.running || question.open.is_some() {
                tracing::debug!(target: "toolhost::serve", "a question not asked: no request runs, or another question waits");
                return None;
            }
            let id = question.last + 1;
            let mut body = body;
            body["id"] = json!(id);
            self.write(&json!({ "ask": body })).ok()?;
            question.last = id;
            question.open = Some(id);
            id
        };
        let wait = (self.ask_timeout.get().copied())
            .unwrap_or_else(|| crate::settings::Limits::default().ask_timeout());
        let deadline = Instant::now().checked_add(wait);
        let mut lines = self.lines();
        loop {
            if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                self.withdraw(id);
                return None;
            }
            let line = match lines.wait(QUESTION_POLL) {
                Waited::Line(line) => line,
                Waited::Nothing if self.is_open(id) => continue,
                Waited::Nothing => return None,
                Waited::End => {
                    // The end of the input answers nothing.
                    self.close(id);
                    return None;
                }
            };
            let mut question = self.question();
            if question.open != Some(id) {
                // Withdrawn meanwhile: the line is the serving loop's.
                lines.given_back = Some(line);
                return None;
            }
            let line = match line {
                Ok(line) => line,
                Err(e) => {
                    // The input failed: the serving loop reports it.
                    question.open = None;
                    lines.given_back = Some(Err(e));
                    return None;
                }
            };
            match parse(&line, id) {
                Ok(reply) => {
                    question.open = None;
                    return Some(reply);
                }
                Err(refusal) => {
                    drop(question);
                    self.write(&refusal).ok()?;
                }
            }
        }
    }

    fn lines(&self) -> MutexGuard<'_, Lines> {
        self.lines.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn question(&self) -> MutexGuard<'_, Question> {
        self.question.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn is_open(&self, id: u64) -> bool {
        self.question().open == Some(id)
    }

    /// Question `id` no longer waits, and the client is told.
    fn withdraw(&self, id: u64) {
        let mut question = self.question();
        if question.open == Some(id) {
            question.open = None;
            let _ = self.write(&json!({"withdrawn": id}));
        }
    }

    /// Question `id` no longer waits.
    fn close(&self, id: u64) {
        let mut question = self.question();
        if question.open == Some(id) {
            question.open = None;
        }
    }
}

impl Lines {
    /// The next line, waiting at most `wait`.
    fn wait(&mut self, wait: Duration) -> Waited {
        if let Some(line) = self.given_back.take() {
            return Waited::Line(line);
        }
        match self.incoming.recv_timeout(wait) {
            Ok(line) => Waited::Line(line),
            Err(RecvTimeoutError::Timeout) => Waited::Nothing,
            Err(RecvTimeoutError::Disconnected) => Waited::End,
        }
    }
}

/// The client's answer to form `id` (`{"answer": ID, "action": "accept"|"decline"|"cancel",
/// "content": {...}}`) as `{"action", "content"}`, or the error that refuses the line.
fn parse_form(line: &[u8], id: u64) -> Result<Value, Value> {
    let message: Value = serde_json::from_slice(line).map_err(|e| {
        json!({"id": null, "error": format!("not a JSON answer: {e}; form {id} is still waiting")})
    })?;
    let usage = format!(
        "form {id} is waiting for its answer ({{\"answer\": {id}, \"action\": \"accept\"|\"decline\"|\"cancel\", \"content\": {{...}}}}); requests run one at a time"
    );
    if message.get("answer").and_then(Value::as_u64) != Some(id) {
        let other = message.get("id").cloned().unwrap_or(Value::Null);
        return Err(json!({"id": other, "error": usage}));
    }
    match message.get("action").and_then(Value::as_str) {
        Some(action @ ("accept" | "decline" | "cancel")) => {
            let content = message.get("content").cloned().unwrap_or_else(|| json!({}));
            Ok(json!({"action": action, "content": content}))
        }
        _ => Err(json!({"id": null, "error": usage})),
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
