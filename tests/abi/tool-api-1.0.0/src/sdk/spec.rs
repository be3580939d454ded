//! Builders for [`ToolSpec`].

use serde_json::{json, Map, Value};

use crate::model::{ApprovalCategory, ToolSpec};

impl ToolSpec {
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
        }
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

    /// The names in the schema's `required` list.
    pub fn required_params(&self) -> Vec<&str> {
        self.input_schema
            .get("required")
            .and_then(Value::as_array)
            .map(|list| list.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }
}
