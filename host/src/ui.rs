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

/// A user on the terminal: questions are printed on stderr and answered on stdin.
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
        if !partial {
            tracing::info!(target: "toolhost::ui", "{kind}: {text}");
        }
    }

    fn ask(&self, kind: &str, text: &str) -> Option<AskReply> {
        let mut stderr = std::io::stderr().lock();
        let prompt = match kind {
            "followup" => "Your answer: ",
            "hook" => "[y/N]: ",
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
