//! `toolhost replay`: a recorded assistant message fed through the parser chunk by chunk, as
//! it would stream from a model, with every UI event, approval and result printed in order.

use std::io::Write;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;
use tool_api::model::AskReply;

use crate::agent::session::{Conversation, SessionEvent};
use crate::ui::Ui;
use crate::Host;

/// The printed transcript of a replay, shared by the UI and the session's event sink.
#[derive(Debug, Clone)]
pub struct Transcript {
    /// Serializes the lines of the UI and of the session's events.
    out: Arc<Mutex<()>>,
}

impl Transcript {
    /// A transcript printed to stdout as it happens.
    pub fn printing() -> Self {
        Self {
            out: Arc::default(),
        }
    }

    /// Prints a line.
    pub fn line(&self, text: String) {
        let _guard = self.out.lock().unwrap_or_else(PoisonError::into_inner);
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{text}");
        let _ = stdout.flush();
    }
}

/// A UI that writes tool events into the transcript and can delegate questions.
pub struct ReplayUi {
    transcript: Transcript,
    asker: Option<Box<dyn Ui>>,
}

impl ReplayUi {
    /// Writes events into `transcript`; questions go to `asker` (or stay unanswered).
    pub fn new(transcript: Transcript, asker: Option<Box<dyn Ui>>) -> Self {
        Self { transcript, asker }
    }
}

impl Ui for ReplayUi {
    fn say(&self, kind: &str, text: &str, partial: bool) {
        let marker = if partial { " (partial)" } else { "" };
        self.transcript
            .line(format!("  [{kind}{marker}] {}", one_line(text)));
    }

    fn ask(&self, kind: &str, text: &str) -> Option<AskReply> {
        self.transcript
            .line(format!("  [ask {kind}] {}", one_line(text)));
        self.asker.as_ref().and_then(|ui| ui.ask(kind, text))
    }
}

/// Long texts shortened to one readable line.
fn one_line(text: &str) -> String {
    let flat = text.replace('\n', "\\n");
    if flat.chars().count() > 160 {
        format!("{}…", flat.chars().take(160).collect::<String>())
    } else {
        flat
    }
}

/// Feeds `message` in chunks of `chunk_chars` characters and writes what happens.
pub fn replay(host: Arc<Host>, message: &str, chunk_chars: usize, transcript: &Transcript) {
    let mut conversation = Conversation::new(host);
    let mut run = conversation.message();
    let mut sink = |event: SessionEvent| transcript.line(describe_event(&event));
    let chars: Vec<char> = message.chars().collect();
    for chunk in chars.chunks(chunk_chars.max(1)) {
        let chunk: String = chunk.iter().collect();
        run.push(&chunk, &mut sink);
    }
    let content = run.finish(&mut sink);
    match conversation.cancelled() {
        Some(cancelled) => transcript.line(format!("-- task cancelled: {}", cancelled.note())),
        None => transcript.line(format!("-- next user message: {} block(s)", content.len())),
    }
}

fn describe_event(event: &SessionEvent) -> String {
    match event {
        SessionEvent::Text { content, partial } => {
            let marker = if *partial { " (streaming)" } else { "" };
            format!("text{marker}: {}", one_line(content))
        }
        SessionEvent::ToolStreaming { name, params } => {
            format!(
                "tool {name} (streaming): {}",
                one_line(&Value::Object(params.clone()).to_string())
            )
        }
        SessionEvent::ToolResult { text, is_error, .. } => {
            let marker = if *is_error {
                "result (error)"
            } else {
                "result"
            };
            format!("{marker}:\n{}", indent(text))
        }
        SessionEvent::Notice(text) => format!("notice: {}", one_line(text)),
        SessionEvent::TaskCancelled(cancelled) => {
            format!(
                "task cancelled by the {} hook: {}",
                cancelled.hook,
                one_line(&cancelled.message)
            )
        }
    }
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}
