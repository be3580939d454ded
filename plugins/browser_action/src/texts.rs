//! The texts the model reads. They are Cline's, byte for byte: models are tuned to them.

/// The text of a launch, click, type or scroll result, around the captured console logs.
pub fn action_result(logs: &str) -> String {
    let logs = if logs.is_empty() { NO_NEW_LOGS } else { logs };
    format!(
        "The browser action has been executed. The console logs and screenshot have been captured for your analysis.\n\nConsole logs:\n{logs}\n\n(REMEMBER: if you need to proceed to using non-`browser_action` tools or launch a new browser, you MUST first close this browser. For example, if after analyzing the logs and screenshot you need to edit a file, you must first close the browser before you can use the write_to_file tool.)"
    )
}

/// What stands for the logs when the action logged nothing.
pub const NO_NEW_LOGS: &str = "(No new logs)";

/// The result of `close`.
pub const CLOSED: &str = "The browser has been closed. You may now proceed to using other tools.";

/// The failure of an action that needs a page when there is none.
pub const NOT_LAUNCHED: &str = "Browser is not launched. This may occur if the browser was automatically closed by a non-`browser_action` tool.";

/// The failure of a screenshot that came back empty twice.
pub const SCREENSHOT_FAILED: &str = "Failed to take screenshot.";

/// The failure to reach a remote browser (then a local one is launched instead).
pub const REMOTE_UNREACHABLE: &str = "Failed to connect to remote browser. Make sure Chrome is running with remote debugging enabled (--remote-debugging-port=9222).";

/// How the host's executor wraps an exception thrown by the handler (Cline's
/// `Error executing {tool}: {message}`); the host adds the `toolError` wrapper around it.
pub fn execution_error(message: &str) -> String {
    format!("Error executing browser_action: {message}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_result_text_shows_the_logs_or_says_there_were_none() {
        let with = action_result("[warn] careful\nhello");
        assert!(with.contains("\n\nConsole logs:\n[warn] careful\nhello\n\n(REMEMBER: "));
        let without = action_result("");
        assert!(without.contains("\n\nConsole logs:\n(No new logs)\n\n(REMEMBER: "));
        assert!(without.starts_with("The browser action has been executed."));
        assert!(without.ends_with("before you can use the write_to_file tool.)"));
    }
}
