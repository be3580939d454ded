//! The table of Cline's tool names (its `ClineDefaultTool` enum, 27 values), and of the ask
//! types whose questions a frontend words for a person.
//!
//! Plugins may register these and any other name; this table only tells which names belong to
//! the Cline tool set, for listings and schemas.

/// Cline's 27 tool names, in the enum's order.
pub const CLINE_TOOL_NAMES: [&str; 27] = [
    "ask_followup_question",
    "attempt_completion",
    "execute_command",
    "replace_in_file",
    "read_file",
    "write_to_file",
    "search_files",
    "list_files",
    "list_code_definition_names",
    "browser_action",
    "use_mcp_tool",
    "access_mcp_resource",
    "load_mcp_documentation",
    "new_task",
    "plan_mode_respond",
    "act_mode_respond",
    "focus_chain",
    "web_fetch",
    "web_search",
    "condense",
    "summarize_task",
    "report_bug",
    "new_rule",
    "apply_patch",
    "generate_explanation",
    "use_skill",
    "use_subagents",
];

/// Cline's command tool: `toolhost policy sandbox` shows the sandbox its settings section
/// (`[execute_command]`, which it sends with each command) makes, unless told another section.
pub const COMMAND_TOOL: &str = CLINE_TOOL_NAMES[2];

/// Whether `name` is one of Cline's tool names.
pub fn is_cline_tool(name: &str) -> bool {
    CLINE_TOOL_NAMES.contains(&name)
}

/// Cline's ask types that take a free-text reply (an empty one accepts), each with the
/// question it asks in words: a frontend that shows only a question (an MCP client's form)
/// shows it above what the tool sent. Some share their name with the tool that asks.
pub const FREE_TEXT_QUESTIONS: [(&str, &str); 5] = [
    (
        "completion_result",
        "The model says the task is complete. Leave the reply empty to accept the result, or \
         tell the model what to change.",
    ),
    (
        PLAN_ASK,
        "The model's plan (plan mode). Reply to it, or leave the reply empty to let the model \
         go ahead.",
    ),
    (
        "new_task",
        "The model proposes to start a new task with this context. Leave the reply empty to \
         accept, or tell the model what to change.",
    ),
    (
        "condense",
        "The model proposes to condense the conversation to this summary. Leave the reply \
         empty to accept, or tell the model what to change.",
    ),
    (
        "report_bug",
        "The model proposes to file this bug report. Leave the reply empty to accept, or tell \
         the model what to change.",
    ),
];

/// The ask type whose text is a plan, `{"response", "options"}` (plan_mode_respond's).
pub const PLAN_ASK: &str = CLINE_TOOL_NAMES[14];
