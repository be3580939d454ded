//! Model-visible texts shared by the host and the plugins (Cline's `formatResponse`).
//!
//! Models are tuned to these exact formats; change them only together with the conformance data.

/// A message (an error's, say) as a clause inside a longer sentence: without its final
/// period, so that `"Could not write x: {clause}. No file was changed."` reads once.
pub fn clause(message: &impl std::fmt::Display) -> String {
    message
        .to_string()
        .trim_end()
        .trim_end_matches('.')
        .to_string()
}

/// Wraps an error message the way the model expects tool failures.
pub fn tool_error(message: &str) -> String {
    format!("The tool execution failed with the following error:\n<error>\n{message}\n</error>")
}

/// The result of an operation the user (or the approval policy) denied.
pub const TOOL_DENIED: &str = "The user denied this operation.";

/// A denial (`denial`, usually [`TOOL_DENIED`]) with the feedback the user typed, in Cline's
/// feedback block; the denial alone when there is none.
pub fn denied_with_feedback(denial: &str, feedback: Option<&str>) -> String {
    match feedback {
        Some(text) if !text.is_empty() => format!(
            "{denial}\n\nThe user provided the following feedback:\n<feedback>\n{text}\n</feedback>"
        ),
        _ => denial.to_string(),
    }
}

/// The error for a path that `.clineignore` blocks.
pub fn clineignore_error(path: &str) -> String {
    format!(
        "Access to {path} is blocked by the .clineignore file settings. You must try to continue \
         in the task without using this file, or ask the user to update the .clineignore file."
    )
}

/// The error for a required parameter the model left out, followed by the tool-use reminder.
pub fn missing_param_error(param: &str) -> String {
    format!(
        "Missing value for required parameter '{param}'. Please retry with complete response.\n\n{TOOL_USE_REMINDER}"
    )
}

/// [`missing_param_error`] for a model that calls tools natively (JSON arguments): without the
/// reminder of the XML format, which would tell it to write tags.
pub fn missing_param_error_native(param: &str) -> String {
    format!("Missing value for required parameter '{param}'. Please retry with complete response.")
}

/// `text` without the [`TOOL_USE_REMINDER`] block at its end (and the blank line before it),
/// for a model that calls tools natively; other text comes back as it is.
pub fn without_tool_use_reminder(text: &str) -> &str {
    text.strip_suffix(TOOL_USE_REMINDER)
        .and_then(|rest| rest.strip_suffix("\n\n"))
        .unwrap_or(text)
}

/// The reminder of the XML tool-call format, appended to formatting errors.
pub const TOOL_USE_REMINDER: &str = "# Reminder: Instructions for Tool Use

Write every tool use as XML-style tags: the tool's name is the outer tag, and each parameter is a \
tag of its own inside it:

<tool_name>
<parameter1_name>value1</parameter1_name>
<parameter2_name>value2</parameter2_name>
</tool_name>

For example, to finish a task:

<attempt_completion>
<result>
The task is complete.
</result>
</attempt_completion>

Use exactly this format for every tool use so that it can be parsed and run.";

/// The text shown in the UI when a required parameter is missing (Cline's `say("error")`).
pub fn missing_param_notice(tool: &str, param: &str, rel_path: Option<&str>) -> String {
    match rel_path {
        Some(path) => format!(
            "Cline tried to use {tool} for '{path}' without value for required parameter '{param}'. Retrying..."
        ),
        None => format!(
            "Cline tried to use {tool} without value for required parameter '{param}'. Retrying..."
        ),
    }
}

/// Text cut to `max_units` UTF-16 code units (JavaScript's string length) with Cline's
/// `[FILE TRUNCATED: …]` notice appended; text that fits comes back as it is.
pub fn truncate_with_notice(text: String, max_units: usize) -> String {
    let Some((cut, total)) = crate::js::utf16_cut(&text, max_units) else {
        return text;
    };
    let size = |n: usize| format_size(u64::try_from(n).unwrap_or(u64::MAX));
    let notice = format!(
        "\n\n---\n\n[FILE TRUNCATED: This content is {} but only the first {} is shown ({} truncated). Use search_files to find specific patterns, or execute_command with grep/head/tail for targeted reading.]",
        size(total),
        size(max_units),
        size(total - max_units),
    );
    let mut capped = text;
    capped.truncate(cut);
    capped.push_str(&notice);
    capped
}

/// Formats a byte count as Cline does: `N B`, `N.N KB`, `N.N MB` (1024-based).
pub fn format_size(bytes: u64) -> String {
    const KB: f64 = 1024.0;
    let b = bytes as f64;
    if b < KB {
        format!("{bytes} B")
    } else if b < KB * KB {
        format!("{:.1} KB", b / KB)
    } else {
        format!("{:.1} MB", b / (KB * KB))
    }
}

// What a model reads of an MCP result's structures (`sdk::mcp_result`).

/// The result of a call that returned nothing.
pub const NO_RESPONSE: &str = "(No response)";

/// The message of an MCP tool's error result that has no text.
pub const ERROR_WITHOUT_TEXT: &str = "The MCP tool reported an error without a message.";

/// The line standing for an audio item of a result.
pub fn audio_not_shown(mime_type: &str) -> String {
    format!("[The tool returned audio ({mime_type}), which cannot be shown as text.]")
}

/// An item's text followed by its annotations (audience, priority, last change), as JSON.
pub fn with_annotations(text: &str, annotations: &str) -> String {
    if text.is_empty() {
        format!("(annotations: {annotations})")
    } else {
        format!("{text}\n(annotations: {annotations})")
    }
}

/// A result's `structuredContent`, as pretty JSON.
pub fn structured_content(json: &str) -> String {
    format!("Structured content:\n{json}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clause_has_no_final_period() {
        assert_eq!(clause(&"it was not accessed."), "it was not accessed");
        assert_eq!(
            clause(&"Permission denied (os error 13)"),
            "Permission denied (os error 13)"
        );
    }

    #[test]
    fn sizes_are_formatted_like_cline() {
        assert_eq!(format_size(512), "512 B");
        assert_eq!(format_size(400 * 1024), "400.0 KB");
        assert_eq!(format_size(3 * 1024 * 1024 / 2), "1.5 MB");
    }

    #[test]
    fn the_reminder_comes_off_only_at_the_end() {
        assert_eq!(
            without_tool_use_reminder(&missing_param_error("path")),
            missing_param_error_native("path")
        );
        let inside = format!("{TOOL_USE_REMINDER}\n\nmore");
        assert_eq!(without_tool_use_reminder(&inside), inside);
        assert_eq!(without_tool_use_reminder("plain"), "plain");
    }

    #[test]
    fn tool_error_wraps_the_message() {
        assert_eq!(
            tool_error("boom"),
            "The tool execution failed with the following error:\n<error>\nboom\n</error>"
        );
    }
}
