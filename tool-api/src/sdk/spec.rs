//! Builders for [`ToolSpec`].

use serde_json::{json, Map, Value};

use crate::model::{ApprovalCategory, ToolSpec};

impl ToolSpec {
    /// The description within `limit` characters: as it is when it fits, else cut after the
    /// last sentence that fits (else the last word, with `…`). What `toolhost schema` sends an
    /// API with a limit, and the host's `tools.list` a plugin that asks for one.
    pub fn description_within(&self, limit: usize) -> String {
        let text = self.description.as_str();
        if text.chars().count() <= limit {
            return text.to_string();
        }
        let head: String = text.chars().take(limit).collect();
        let sentence_end = head
            .match_indices(". ")
            .map(|(at, _)| at + 1)
            .chain(head.ends_with('.').then_some(head.len()))
            .last();
        match sentence_end {
            Some(end) => head[..end].to_string(),
            None => {
                let words: String = head.chars().take(limit.saturating_sub(1)).collect();
                let cut = words.rfind(char::is_whitespace).unwrap_or(words.len());
                format!("{}…", words[..cut].trim_end())
            }
        }
    }

    /// A spec whose parameters are all strings: `(name, description, required)` each.
    pub fn simple(name: &str, description: &str, params: &[(&str, &str, bool)]) -> Self {
        let mut properties = Map::new();
        let mut required = Vec::new();
        for (param, about, is_required) in params {
            properties.insert(
                (*param).to_string(),
                json!({"type": "string", "description": about}),
            );
            if *is_required {
                required.push(Value::String((*param).to_string()));
            }
        }
        Self {
            name: name.to_string(),
            description: description.to_string(),
            input_schema: json!({"type": "object", "properties": properties, "required": required}),
            partial: false,
            approval: None,
            path_params: Vec::new(),
            read_only: false,
            destructive: false,
            title: None,
            idempotent: false,
            open_world: false,
            handling: crate::model::Handling::default(),
            output_schema: None,
        }
    }

    /// Declares the JSON Schema of the `structuredContent` its results carry.
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// Declares that the host approves calls in `category` before running them.
    pub fn approval(mut self, category: ApprovalCategory) -> Self {
        self.approval = Some(category);
        self
    }

    /// Declares parameters that hold paths (checked by the host against the workspace policy).
    pub fn path_params(mut self, params: &[&str]) -> Self {
        self.path_params = params.iter().map(|p| (*p).to_string()).collect();
        self
    }

    /// Declares that the handler implements `handle_partial`.
    pub fn with_partial(mut self) -> Self {
        self.partial = true;
        self
    }

    /// Marks the tool read-only.
    pub fn read_only(mut self) -> Self {
        self.read_only = true;
        self
    }

    /// Marks the tool destructive.
    pub fn destructive(mut self) -> Self {
        self.destructive = true;
        self
    }

    /// Gives the tool a title for people (MCP's `title`).
    pub fn title(mut self, title: &str) -> Self {
        self.title = Some(title.to_string());
        self
    }

    /// Marks the tool idempotent: a repeated call with the same arguments changes nothing more.
    pub fn idempotent(mut self) -> Self {
        self.idempotent = true;
        self
    }

    /// Marks the tool open-world: it reaches the web, a browser or another MCP server.
    pub fn open_world(mut self) -> Self {
        self.open_world = true;
        self
    }

    /// The title, else one made from the name (`read_file` → `Read file`).
    pub fn title_or_name(&self) -> String {
        if let Some(title) = self.title.as_deref().filter(|t| !t.trim().is_empty()) {
            return title.to_string();
        }
        let spaced = self.name.replace('_', " ");
        let mut chars = spaced.chars();
        match chars.next() {
            Some(first) => first.to_uppercase().chain(chars).collect(),
            None => spaced,
        }
    }

    /// PreToolUse hooks do not run for this tool.
    pub fn without_pre_tool_use_hooks(mut self) -> Self {
        self.handling.skips_pre_tool_use = true;
        self
    }

    /// PostToolUse hooks do not run after this tool.
    pub fn without_post_tool_use_hooks(mut self) -> Self {
        self.handling.skips_post_tool_use = true;
        self
    }

    /// Accepts `alias` for the parameter `param` when `param` itself is absent.
    pub fn param_alias(mut self, alias: &str, param: &str) -> Self {
        self.handling
            .param_aliases
            .insert(alias.to_string(), param.to_string());
        self
    }

    /// In an XML tool call, `param` is everything between its first opening and its last
    /// closing tag.
    pub fn raw_xml_param(mut self, param: &str) -> Self {
        self.handling.raw_xml_params.push(param.to_string());
        self
    }

    /// The handler keeps a session that the host closes before any other tool runs.
    pub fn closed_by_other_tools(mut self) -> Self {
        self.handling.closed_by_other_tools = true;
        self
    }

    /// The tools this one calls through `invoke_tool` run as a subagent's calls.
    pub fn calls_as_subagent(mut self) -> Self {
        self.handling.calls_as_subagent = true;
        self
    }

    /// Its calls may run long ([`crate::model::Handling::runs_long`]).
    pub fn runs_long(mut self) -> Self {
        self.handling.runs_long = true;
        self
    }

    /// Its calls need the MCP client capability `capability`
    /// ([`crate::model::Handling::client_needs`]).
    pub fn needs_client(mut self, capability: &str) -> Self {
        self.handling.client_needs.push(capability.to_string());
        self
    }

    /// It checks its own parameters, accepting more shapes than its schema shows
    /// ([`crate::model::Handling::checks_own_params`]).
    pub fn checks_own_params(mut self) -> Self {
        self.handling.checks_own_params = true;
        self
    }

    /// The names in the schema's `required` list.
    pub fn required_params(&self) -> Vec<&str> {
        self.input_schema
            .get("required")
            .and_then(Value::as_array)
            .map(|list| list.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }
}
