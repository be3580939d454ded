//! The user at the other end: UI events and questions.

use std::io::{BufRead, IsTerminal, Write};

use serde_json::Value;
use tool_api::model::{AskReply, AskResponse};

/// Where UI events go and who answers questions.
pub trait Ui: Send + Sync {
    /// A UI event (Cline's `say`).
    fn say(&self, kind: &str, text: &str, partial: bool);

    /// A question (Cline's `ask`). `None` when nobody can answer.
    fn ask(&self, kind: &str, text: &str) -> Option<AskReply>;

    /// A form of the tool's own for the user, as an MCP server elicits one (`{"message",
    /// "requestedSchema"}`, or `{"mode": "url", "message", "url", "elicitationId"}`): the
    /// answer (`{"action", "content"}`). `None` when nobody can answer.
    fn elicit(&self, _request: &Value) -> Option<Value> {
        None
    }

    /// A message the user's model writes for the tool, as an MCP server samples one (the
    /// params of `sampling/createMessage`): the result. `None` when nobody can write it.
    fn sample(&self, _request: &Value) -> Option<Value> {
        None
    }

    /// Whether the UI's client answers several requests together ([`Ui::input`]); otherwise
    /// the host asks them one by one ([`Ui::elicit`], [`Ui::sample`]).
    fn answers_together(&self) -> bool {
        false
    }

    /// Several requests a tool needs answered (a result that needs input: MCP's requests to a
    /// client, `{"method", "params"}` by key), asked together: the answers by key, `None`
    /// when they were not all answered.
    fn input(
        &self,
        _requests: &serde_json::Map<String, Value>,
    ) -> Option<serde_json::Map<String, Value>> {
        None
    }

    /// How far the call is: `progress` of `total` (when known), and what it is doing.
    fn progress(&self, progress: f64, total: Option<f64>, message: &str) {
        let of = total
            .map(|total| format!(" of {total}"))
            .unwrap_or_default();
        self.say("progress", &format!("{progress}{of}: {message}"), false);
    }

    /// A log message of the tool for the user, as an MCP server logs one: `level` (MCP's:
    /// `debug` to `emergency`), who logs it, and any JSON.
    fn log(&self, level: &str, logger: &str, data: &Value) {
        tracing::info!(target: "toolhost::ui", "{logger} [{level}]: {data}");
    }
}

/// The UI event that tells the user something went wrong (Cline's `say("error")`): a hook's
/// cancellation, a missing parameter.
pub const ERROR_EVENT: &str = "error";

/// The UI event that asks for the user's attention (Cline's system notifications): a command
/// still running after a while, say.
pub const NOTIFICATION_EVENT: &str = "notification";

/// Whether a frontend that shows no other event shows this one to its user.
pub fn is_shown(kind: &str) -> bool {
    kind == ERROR_EVENT || kind == NOTIFICATION_EVENT
}

/// Shows an event on stderr as one line (`toolhost: notification: ...`); other events are
/// logged.
fn show_on_stderr(kind: &str, text: &str, partial: bool) {
    if partial {
        return;
    }
    if is_shown(kind) {
        let mut stderr = std::io::stderr().lock();
        let _ = writeln!(stderr, "toolhost: {kind}: {}", text.replace('\n', " "));
        let _ = stderr.flush();
    } else {
        tracing::info!(target: "toolhost::ui", "{kind}: {text}");
    }
}

/// No user: events are logged, questions go unanswered.
#[derive(Debug, Default)]
pub struct HeadlessUi;

impl Ui for HeadlessUi {
    fn say(&self, kind: &str, text: &str, partial: bool) {
        if !partial {
            tracing::info!(target: "toolhost::ui", "{kind}: {text}");
        }
    }

    fn ask(&self, _kind: &str, _text: &str) -> Option<AskReply> {
        None
    }
}

/// A user who reads stderr but cannot be asked (`call` without a terminal, `serve`): errors
/// and notifications are shown there as lines, other events logged; questions go unanswered.
#[derive(Debug, Default)]
pub struct StderrUi;

impl Ui for StderrUi {
    fn say(&self, kind: &str, text: &str, partial: bool) {
        show_on_stderr(kind, text, partial);
    }

    fn ask(&self, _kind: &str, _text: &str) -> Option<AskReply> {
        None
    }
}

/// A user on the terminal: errors and notifications are shown on stderr, questions are
/// printed on stderr and answered on stdin.
#[derive(Debug, Default)]
pub struct TerminalUi;

impl TerminalUi {
    /// A terminal UI when stdin and stderr are terminals.
    pub fn detect() -> Option<Self> {
        (std::io::stdin().is_terminal() && std::io::stderr().is_terminal()).then_some(Self)
    }
}

impl Ui for TerminalUi {
    fn say(&self, kind: &str, text: &str, partial: bool) {
        show_on_stderr(kind, text, partial);
    }

    fn ask(&self, kind: &str, text: &str) -> Option<AskReply> {
        let mut stderr = std::io::stderr().lock();
        let prompt = match kind {
            "followup" => "Your answer: ",
            "hook" => "[y/N]: ",
            "egress" => "[y = for this task, always, N]: ",
            _ => "Approve? [y/N, or type feedback to deny with it]: ",
        };
        let _ = write!(stderr, "\n[{kind}] {text}\n{prompt}");
        let _ = stderr.flush();
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line).ok()?;
        let answer = line.trim();
        let reply = match (kind, answer.to_ascii_lowercase().as_str()) {
            ("followup", _) => AskReply {
                response: AskResponse::Message,
                text: Some(answer.to_string()),
            },
            (_, "y" | "yes") => AskReply {
                response: AskResponse::Yes,
                text: None,
            },
            (_, "" | "n" | "no") => AskReply {
                response: AskResponse::No,
                text: None,
            },
            _ => AskReply {
                response: AskResponse::Message,
                text: Some(answer.to_string()),
            },
        };
        Some(reply)
    }
}
