//! Cline's XML-style tool-call parser (its `parseAssistantMessageV2`), as a pure function over
//! the text received so far: re-run it on the accumulated text after every chunk.
//!
//! `<tool_name>` opens a call only for a known tool name; inside a call `<param>` opens a value
//! only for a known parameter name; inside a value only that parameter's closing tag is
//! recognised. Values are trimmed. A parameter a tool's spec declares raw
//! (`Handling::raw_xml_params`: write_to_file's `content`) runs from its first opening tag to
//! the last closing tag of the call, so file content may contain the tags. Unknown tags are
//! text. A call or value still open at the end of the text is `partial`.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::{Block, ToolUse};

/// The parameter tags Cline's parser recognises.
pub const PARAM_NAMES: [&str; 45] = [
    "command",
    "requires_approval",
    "path",
    "absolutePath",
    "content",
    "diff",
    "regex",
    "file_pattern",
    "recursive",
    "action",
    "url",
    "coordinate",
    "text",
    "query",
    "allowed_domains",
    "blocked_domains",
    "prompt",
    "server_name",
    "tool_name",
    "arguments",
    "uri",
    "question",
    "options",
    "response",
    "result",
    "context",
    "title",
    "what_happened",
    "steps_to_reproduce",
    "api_request_output",
    "additional_context",
    "needs_more_exploration",
    "task_progress",
    "timeout",
    "input",
    "from_ref",
    "to_ref",
    "skill_name",
    "prompt_1",
    "prompt_2",
    "prompt_3",
    "prompt_4",
    "prompt_5",
    "start_line",
    "end_line",
];

/// A parser configured with the tool and parameter names it recognises.
#[derive(Debug, Clone)]
pub struct XmlParser {
    tools: BTreeSet<String>,
    params: BTreeSet<String>,
    /// Per tool, the parameters whose value runs to the last closing tag.
    raw: BTreeMap<String, Vec<String>>,
    /// The longest tag body; a `<` further back than this cannot start a recognised tag.
    longest_tag: usize,
}

impl XmlParser {
    /// A parser for these tool names and parameter names.
    pub fn new<'a>(
        tools: impl IntoIterator<Item = &'a str>,
        params: impl IntoIterator<Item = &'a str>,
    ) -> Self {
        let tools: BTreeSet<String> = tools.into_iter().map(str::to_string).collect();
        let params: BTreeSet<String> = params.into_iter().map(str::to_string).collect();
        let longest_tag = tools
            .iter()
            .chain(&params)
            .map(String::len)
            .max()
            .unwrap_or(0)
            + 1;
        Self {
            tools,
            params,
            raw: BTreeMap::new(),
            longest_tag,
        }
    }

    /// The same parser, reading `params` of `tool` raw (see the module's docs).
    pub fn with_raw_params<'a>(
        mut self,
        tool: &str,
        params: impl IntoIterator<Item = &'a str>,
    ) -> Self {
        self.raw
            .entry(tool.to_string())
            .or_default()
            .extend(params.into_iter().map(str::to_string));
        self
    }

    /// Cline's tool names and parameter names.
    pub fn cline() -> Self {
        Self::new(crate::known_tools::CLINE_TOOL_NAMES, PARAM_NAMES)
    }

    /// Parses the text received so far.
    pub fn parse(&self, text: &str) -> Vec<Block> {
        let mut blocks = Vec::new();
        let mut text_start = 0;
        let mut tool: Option<OpenTool> = None;
        for (i, ch) in text.char_indices() {
            if ch != '>' {
                continue;
            }
            let end = i + 1;
            // Only a `<` close enough can start a known tag; looking no further keeps the parse
            // linear on long text full of `>`.
            let mut window_start = i.saturating_sub(self.longest_tag + 1);
            while !text.is_char_boundary(window_start) {
                window_start -= 1;
            }
            let Some(tag_start) = text[window_start..i].rfind('<').map(|p| p + window_start) else {
                continue;
            };
            let tag = &text[tag_start + 1..i];
            match tool.as_mut() {
                None => {
                    if self.tools.contains(tag) {
                        push_text(&mut blocks, &text[text_start..tag_start], false);
                        tool = Some(OpenTool::new(tag, end));
                    }
                }
                Some(open) => match &open.param {
                    Some((param, value_start)) => {
                        if tag.strip_prefix('/') == Some(param.as_str()) {
                            let value = text[*value_start..tag_start].trim().to_string();
                            open.params.insert(param.clone(), Value::String(value));
                            open.param = None;
                        }
                    }
                    None => {
                        if self.params.contains(tag) {
                            open.param = Some((tag.to_string(), end));
                        } else if tag.strip_prefix('/') == Some(open.name.as_str()) {
                            if let Some(closed) = tool.take() {
                                let raw = self.raw.get(&closed.name).map_or(&[][..], Vec::as_slice);
                                blocks.push(Block::ToolUse(closed.finish(&text[..tag_start], raw)));
                            }
                            text_start = end;
                        }
                    }
                },
            }
        }
        match tool {
            Some(mut open) => {
                if let Some((param, value_start)) = open.param.take() {
                    open.params
                        .insert(param, Value::String(text[value_start..].trim().to_string()));
                }
                blocks.push(Block::ToolUse(open.into_partial()));
            }
            None => push_text(&mut blocks, &text[text_start..], true),
        }
        blocks
    }
}

fn push_text(blocks: &mut Vec<Block>, text: &str, partial: bool) {
    let content = text.trim();
    if !content.is_empty() {
        blocks.push(Block::Text {
            content: content.to_string(),
            partial,
        });
    }
}

/// A call whose closing tag has not been seen yet.
struct OpenTool {
    name: String,
    body_start: usize,
    params: Map<String, Value>,
    /// The parameter being read, and where its value starts.
    param: Option<(String, usize)>,
}

impl OpenTool {
    fn new(name: &str, body_start: usize) -> Self {
        Self {
            name: name.to_string(),
            body_start,
            params: Map::new(),
            param: None,
        }
    }

    /// The closed call; `text_to_close` ends where the closing tag starts. Each of `raw`
    /// runs from its first opening tag to its last closing tag.
    fn finish(mut self, text_to_close: &str, raw: &[String]) -> ToolUse {
        let body = &text_to_close[self.body_start.min(text_to_close.len())..];
        for param in raw {
            let (open_tag, close_tag) = (format!("<{param}>"), format!("</{param}>"));
            if let (Some(open), Some(close)) = (body.find(&open_tag), body.rfind(&close_tag)) {
                let start = open + open_tag.len();
                if start <= close {
                    self.params.insert(
                        param.clone(),
                        Value::String(body[start..close].trim().to_string()),
                    );
                }
            }
        }
        ToolUse {
            name: self.name,
            params: self.params,
            partial: false,
            is_native_tool_call: false,
            call_id: String::new(),
        }
    }

    fn into_partial(self) -> ToolUse {
        ToolUse {
            name: self.name,
            params: self.params,
            partial: true,
            is_native_tool_call: false,
            call_id: String::new(),
        }
    }
}
