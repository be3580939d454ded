//! The `ui` services of a call: what a tool says to and asks of its user beyond Cline's say
//! and ask, as an MCP server's tool can ([`crate::ui::Ui`]): a form of its own
//! (`ui.elicit`), a message the user's model writes (`ui.sample`), progress with a total
//! (`ui.progress`) and log messages by level (`ui.log`).

use serde_json::Value;

use super::host::Host;
use super::options::CallOptions;
use crate::error::{CallError, ErrorKind};

/// MCP's log levels, least severe first.
const LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// Answers `ui.METHOD` with `payload` for a call of `options`, made by a subagent or not
/// (a subagent asks nobody).
pub(super) fn ui_service(
    host: &Host,
    options: &CallOptions,
    subagent: bool,
    method: &str,
    payload: &Value,
) -> Result<Value, CallError> {
    let ui = host.ui_for(options);
    let cancelled = options
        .cancellation
        .as_ref()
        .is_some_and(|c| c.is_cancelled());
    let nobody = |why: &str| CallError::new(ErrorKind::Unavailable, why.to_string());
    match method {
        "elicit" | "sample" if subagent => Err(nobody("Subagents do not ask the user.")),
        "elicit" | "sample" if cancelled => Err(nobody("The call was cancelled.")),
        "elicit" => ui
            .elicit(payload)
            .ok_or_else(|| nobody("No user is available to answer.")),
        "sample" => ui
            .sample(payload)
            .ok_or_else(|| nobody("No client model is available to write a message.")),
        "progress" => {
            let progress = payload["progress"].as_f64().ok_or_else(|| {
                CallError::new(
                    ErrorKind::InvalidParams,
                    "ui.progress needs a number `progress`",
                )
            })?;
            let message = payload["message"].as_str().unwrap_or_default();
            ui.progress(progress, payload["total"].as_f64(), message);
            Ok(Value::Null)
        }
        "log" => {
            let level = payload["level"].as_str().unwrap_or("info");
            if !LEVELS.contains(&level) {
                return Err(CallError::new(
                    ErrorKind::InvalidParams,
                    format!("ui.log: `{level}` is not a level ({})", LEVELS.join(", ")),
                ));
            }
            let logger = payload["logger"].as_str().unwrap_or_default();
            ui.log(level, logger, &payload["data"]);
            Ok(Value::Null)
        }
        other => Err(CallError::new(
            ErrorKind::Unavailable,
            format!("this host offers no service 'ui.{other}'"),
        )),
    }
}
