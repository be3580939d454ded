//! The user at the other end: UI events and questions.

use std::io::{BufRead, IsTerminal, Write};

use tool_api::model::{AskReply, AskResponse};

/// Where UI events go and who answers questions.
pub trait Ui: Send + Sync {
    /// A UI event (Cline's `say`).
    fn say(&self, kind: &str, text: &str, partial: bool);

    /// A question (Cline's `ask`). `None` when nobody can answer.
    fn ask(&self, kind: &str, text: &str) -> Option<AskReply>;
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
