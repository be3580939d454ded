//! The table of Cline's tool names (its `ClineDefaultTool` enum, 27 values).
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
