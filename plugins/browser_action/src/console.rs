//! The page's console output and uncaught errors, captured for the action results.
//!
//! Cline v3.89.2 registers its console listener under a wrong event name and so never sees
//! console output; this port listens to the real DevTools events (`Runtime.consoleAPICalled`,
//! `Runtime.exceptionThrown`), which is what Cline intends.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use chromiumoxide::cdp::js_protocol::runtime::{
    ConsoleApiCalledType, EventConsoleApiCalled, EventExceptionThrown, RemoteObject,
    RemoteObjectType,
};
use chromiumoxide::Page;
use futures_util::StreamExt;
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// How long the page must stay quiet before the screenshot (Cline: 500 ms).
pub const QUIET_FOR: Duration = Duration::from_millis(500);
/// How often quietness is checked (Cline: 100 ms).
pub const QUIET_POLL: Duration = Duration::from_millis(100);
/// The longest wait for quiet (Cline: 3 s).
pub const QUIET_GIVE_UP: Duration = Duration::from_secs(3);

#[derive(Debug, Default)]
struct Lines {
    /// `(when, line)`, `when` in milliseconds since the epoch.
    lines: Vec<(f64, String)>,
    last_event: Option<Instant>,
}

/// The console lines of the current action, shared with the listener tasks.
#[derive(Debug, Clone, Default)]
pub struct ConsoleLog {
    state: Arc<Mutex<Lines>>,
}

impl ConsoleLog {
    /// Starts listening to `page`; the returned tasks end when the page's connection does, and
    /// are aborted when the session closes.
    pub async fn attach(page: &Page) -> chromiumoxide::Result<(Self, Vec<JoinHandle<()>>)> {
        let log = Self::default();
        let mut console = page.event_listener::<EventConsoleApiCalled>().await?;
        let mut errors = page.event_listener::<EventExceptionThrown>().await?;
        let console_log = log.clone();
        let console_task = tokio::spawn(async move {
            while let Some(event) = console.next().await {
                console_log.push_at(*event.timestamp.inner(), console_line(&event));
            }
        });
        let error_log = log.clone();
        let error_task = tokio::spawn(async move {
            while let Some(event) = errors.next().await {
                error_log.push_at(*event.timestamp.inner(), page_error_line(&event));
            }
        });
        Ok((log, vec![console_task, error_task]))
    }

    /// Adds a line of the action itself (its error), stamped now.
    pub fn push(&self, line: String) {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64() * 1000.0);
        self.push_at(now, line);
    }

    /// Adds a line stamped by the browser (milliseconds since the epoch).
    fn push_at(&self, when: f64, line: String) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.lines.push((when, line));
        state.last_event = Some(Instant::now());
    }

    /// Starts a new action: what was logged between actions is not "new" for it.
    pub fn begin(&self) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.lines.clear();
        state.last_event = None;
    }

    /// The lines logged since [`Self::begin`], one per line, in the order the page logged
    /// them: console messages and page errors arrive on separate streams, so their arrival
    /// order is not the page's (the sort is stable for equal stamps).
    pub fn take(&self) -> String {
        let mut lines = {
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            std::mem::take(&mut state.lines)
        };
        lines.sort_by(|a, b| a.0.total_cmp(&b.0));
        lines
            .into_iter()
            .map(|(_, line)| line)
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Waits until nothing was logged for [`QUIET_FOR`] (counting from `since`, the start of
    /// the action), checking every [`QUIET_POLL`], for at most [`QUIET_GIVE_UP`].
    pub async fn wait_quiet(&self, since: Instant) {
        let give_up = Instant::now() + QUIET_GIVE_UP;
        loop {
            let last = self
                .state
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .last_event
                .map_or(since, |last| last.max(since));
            if last.elapsed() >= QUIET_FOR || Instant::now() >= give_up {
                return;
            }
            tokio::time::sleep(QUIET_POLL).await;
        }
    }
}

/// A console message as puppeteer shows it: the arguments joined by spaces; `log` messages
/// plain, others prefixed with their type (`[warn] …`, `[error] …`).
pub fn console_line(event: &EventConsoleApiCalled) -> String {
    let text = event
        .args
        .iter()
        .map(argument_text)
        .collect::<Vec<_>>()
        .join(" ");
    match &event.r#type {
        ConsoleApiCalledType::Log => text,
        // Puppeteer names DevTools' `warning` type `warn`.
        ConsoleApiCalledType::Warning => format!("[warn] {text}"),
        other => format!("[{}] {text}", other.as_ref()),
    }
}

/// An uncaught exception as Cline shows a page error: `[Page Error] Error: message`.
pub fn page_error_line(event: &EventExceptionThrown) -> String {
    let details = &event.exception_details;
    let from_exception = details.exception.as_ref().and_then(|exception| {
        exception
            .description
            .as_deref()
            // The description carries the stack after the first line; the model needs the
            // message, as JavaScript's `String(error)` gives it.
            .and_then(|d| d.lines().next())
            .map(str::to_string)
            .or_else(|| exception.value.as_ref().map(value_text))
    });
    format!(
        "[Page Error] {}",
        from_exception.unwrap_or_else(|| details.text.clone())
    )
}

/// One console argument: primitives as JavaScript's `String()` prints them, objects by their
/// DevTools description (`Array(3)`, `Error: boom …`).
fn argument_text(arg: &RemoteObject) -> String {
    if let Some(value) = &arg.value {
        return value_text(value);
    }
    if let Some(description) = &arg.description {
        return description.clone();
    }
    if let Some(unserializable) = &arg.unserializable_value {
        return unserializable.as_ref().to_string();
    }
    match arg.r#type {
        RemoteObjectType::Undefined => "undefined".to_string(),
        ref other => format!("JSHandle@{}", other.as_ref()),
    }
}

fn value_text(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    fn console(kind: &str, args: serde_json::Value) -> EventConsoleApiCalled {
        serde_json::from_value(json!({
            "type": kind,
            "args": args,
            "executionContextId": 1,
            "timestamp": 0.0,
        }))
        .unwrap()
    }

    #[test]
    fn console_messages_read_like_puppeteer_text() {
        let args = json!([
            {"type": "string", "value": "clicked"},
            {"type": "number", "value": 42},
            {"type": "boolean", "value": true},
            {"type": "undefined"},
            {"type": "object", "subtype": "array", "className": "Array", "description": "Array(2)", "objectId": "1"},
            {"type": "number", "unserializableValue": "NaN", "description": "NaN"},
        ]);
        assert_eq!(
            console_line(&console("log", args)),
            "clicked 42 true undefined Array(2) NaN"
        );
        let one = json!([{"type": "string", "value": "careful"}]);
        assert_eq!(
            console_line(&console("warning", one.clone())),
            "[warn] careful"
        );
        assert_eq!(
            console_line(&console("error", one.clone())),
            "[error] careful"
        );
        assert_eq!(console_line(&console("info", one)), "[info] careful");
    }

    #[test]
    fn page_errors_show_the_message_without_the_stack() {
        let event: EventExceptionThrown = serde_json::from_value(json!({
            "timestamp": 0.0,
            "exceptionDetails": {
                "exceptionId": 1, "text": "Uncaught", "lineNumber": 0, "columnNumber": 6,
                "exception": {"type": "object", "subtype": "error", "className": "Error",
                              "description": "Error: boom\n    at page.html:1:7", "objectId": "2"}
            }
        }))
        .unwrap();
        assert_eq!(page_error_line(&event), "[Page Error] Error: boom");
        let thrown_string: EventExceptionThrown = serde_json::from_value(json!({
            "timestamp": 0.0,
            "exceptionDetails": {
                "exceptionId": 2, "text": "Uncaught", "lineNumber": 0, "columnNumber": 0,
                "exception": {"type": "string", "value": "plain"}
            }
        }))
        .unwrap();
        assert_eq!(page_error_line(&thrown_string), "[Page Error] plain");
    }
}
