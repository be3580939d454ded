//! Cline's XML-style tool-call parser (its `parseAssistantMessageV2`): a pure function of the
//! text received so far. Cline re-runs it on the accumulated text after every chunk; here the
//! state of the single pass ([`Scan`]) is kept between chunks instead (see `stream.rs`), which
//! gives the same blocks for every prefix at a cost that grows with the text, not its square.
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

    /// Parses the text received so far (the same blocks a [`super::StreamParser`] gives after
    /// being fed this text in any chunks).
    pub fn parse(&self, text: &str) -> Vec<Block> {
        let mut scan = Scan::default();
        scan.advance(self, text);
        scan.into_blocks(text)
    }
}

/// The parser's state after a prefix of the text: the blocks closed so far and what is open.
///
/// The parse is a single pass that acts only at each `>`, on the text up to it, so the state
/// after a prefix does not depend on how the prefix arrived: feeding the text in chunks and
/// [`Scan::advance`] after each one leaves the same state as one call on the whole text.
#[derive(Debug, Default, Clone)]
pub(super) struct Scan {
    /// Bytes of the text looked at: every `>` before this offset has been acted on.
    scanned: usize,
    /// The blocks closed so far (texts before a tool, and closed tools), in order.
    closed: Vec<Block>,
    /// Where the text after the last closed tool starts.
    text_start: usize,
    tool: Option<OpenTool>,
}

impl Scan {
    /// Acts on the tags that end in the part of `text` not looked at yet. `text` must be the
    /// text of the earlier calls with more appended.
    pub(super) fn advance(&mut self, parser: &XmlParser, text: &str) {
        let from = self.scanned.min(text.len());
        for (offset, _) in text[from..].match_indices('>') {
            self.tag_end(parser, text, from + offset);
        }
        self.scanned = text.len();
    }

    /// The `>` at `i`: a tag ends here if a `<` close enough before it starts a known one.
    fn tag_end(&mut self, parser: &XmlParser, text: &str, i: usize) {
        let end = i + 1;
        // Only a `<` close enough can start a known tag; looking no further keeps the parse
        // linear on long text full of `>`.
        let mut window_start = i.saturating_sub(parser.longest_tag + 1);
        while !text.is_char_boundary(window_start) {
            window_start -= 1;
        }
        let Some(tag_start) = text[window_start..i].rfind('<').map(|p| p + window_start) else {
            return;
        };
        let tag = &text[tag_start + 1..i];
        match self.tool.as_mut() {
            None => {
                if parser.tools.contains(tag) {
                    push_text(&mut self.closed, &text[self.text_start..tag_start], false);
                    self.tool = Some(OpenTool::new(tag, tag_start, end));
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
                    if parser.params.contains(tag) {
                        open.param = Some((tag.to_string(), end));
                    } else if tag.strip_prefix('/') == Some(open.name.as_str()) {
                        if let Some(closed) = self.tool.take() {
                            let raw = parser.raw.get(&closed.name).map_or(&[][..], Vec::as_slice);
                            self.closed
                                .push(Block::ToolUse(closed.finish(&text[..tag_start], raw)));
                        }
                        self.text_start = end;
                    }
                }
            },
        }
    }

    /// The blocks closed so far: every block of the parse but the last, still-open one.
    pub(super) fn closed(&self) -> &[Block] {
        &self.closed
    }

    /// Where the text of the open block starts (a tool's opening tag, or the text after the
    /// last closed block): everything from here on may still change.
    pub(super) fn open_start(&self) -> usize {
        self.tool
            .as_ref()
            .map_or(self.text_start, |tool| tool.tag_start)
    }

    /// The still-open last block of the parse of `text`, if there is one: a tool call or text
    /// (trimmed; none when only whitespace is left). Costs the length of the open part.
    pub(super) fn open_block(&self, text: &str) -> Option<Block> {
        match &self.tool {
            Some(open) => {
                let mut params = open.params.clone();
                if let Some((param, value_start)) = &open.param {
                    let value = text[*value_start..].trim().to_string();
                    params.insert(param.clone(), Value::String(value));
                }
                Some(Block::ToolUse(ToolUse {
                    name: open.name.clone(),
                    params,
                    partial: true,
                    is_native_tool_call: false,
                    call_id: String::new(),
                }))
            }
            None => {
                let content = text[self.text_start..].trim();
                (!content.is_empty()).then(|| Block::Text {
                    content: content.to_string(),
                    partial: true,
                })
            }
        }
    }

    /// Every block of the parse of `text`.
    pub(super) fn into_blocks(self, text: &str) -> Vec<Block> {
        let open = self.open_block(text);
        let mut blocks = self.closed;
        blocks.extend(open);
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
#[derive(Debug, Clone)]
struct OpenTool {
    name: String,
    /// Where its opening tag starts.
    tag_start: usize,
    body_start: usize,
    params: Map<String, Value>,
    /// The parameter being read, and where its value starts.
    param: Option<(String, usize)>,
}

impl OpenTool {
    fn new(name: &str, tag_start: usize, body_start: usize) -> Self {
        Self {
            name: name.to_string(),
            tag_start,
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
}
