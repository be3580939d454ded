//! An assistant message run as Cline's agent loop runs it: the streamed text is parsed as it
//! arrives, still-streaming tool blocks go to their partial handlers (UI only), complete blocks
//! execute in order, and the results form the next user message.
//!
//! The executor rules live here: results prefixed with the call's description, later tools
//! skipped after a denial, one tool per message when parallel calls are off, repeated identical
//! calls detected, a turn without a tool counted as a mistake, and the mistake limit reported.
//! A hook's cancel ends the task: nothing after that call runs, and there is no next user
//! message.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::ErrorKind;
use serde_json::{Map, Value};
use tool_api::model::ContentBlock;

use super::parser::{Block, StreamParser, ToolUse, XmlParser, PARAM_NAMES};
use crate::call::outcome::TaskCancelled;
use crate::known_tools::CLINE_TOOL_NAMES;
use crate::plugins::Registry;
use crate::Host;

/// What the run shows, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionEvent {
    /// Assistant text (partial while it streams).
    Text {
        /// The text.
        content: String,
        /// Whether more may come.
        partial: bool,
    },
    /// A tool block still streaming, with the parameters so far.
    ToolStreaming {
        /// The tool.
        name: String,
        /// The parameters so far.
        params: Map<String, Value>,
    },
    /// A tool block's result, as the model will read it.
    ToolResult {
        /// The tool.
        name: String,
        /// The text pushed into the next user message.
        text: String,
        /// Whether the call failed.
        is_error: bool,
    },
    /// Something the loop itself says (skipped tools, loop warnings, the mistake limit).
    Notice(String),
    /// A hook cancelled the task: nothing more of it runs (Cline's `cancelTask`).
    TaskCancelled(TaskCancelled),
}

/// A conversation over one host: loop-detection state carries from message to message.
pub struct Conversation {
    host: Arc<Host>,
    parser: Arc<XmlParser>,
    last_call: Option<(String, String)>,
    identical_calls: u32,
    cancelled: Option<TaskCancelled>,
}

impl Conversation {
    /// A conversation whose parser knows Cline's tool names and every loaded tool and parameter.
    pub fn new(host: Arc<Host>) -> Self {
        let parser = Arc::new(parser_for(&host.registry()));
        Self {
            host,
            parser,
            last_call: None,
            identical_calls: 0,
            cancelled: None,
        }
    }

    /// Whether a hook cancelled the task, and why: no message of it runs anything any more.
    pub fn cancelled(&self) -> Option<&TaskCancelled> {
        self.cancelled.as_ref()
    }

    /// Starts processing one assistant message.
    pub fn message(&mut self) -> MessageRun<'_> {
        MessageRun {
            stream: StreamParser::new(self.parser.clone()),
            conversation: self,
            next_block: 0,
            last_partial: None,
            partial_built: None,
            did_reject_tool: false,
            did_use_tool: false,
            used_any_tool: false,
            user_content: Vec::new(),
        }
    }
}

/// A parser that knows Cline's tool names and every loaded tool, parameter and raw parameter.
pub fn parser_for(registry: &Registry) -> XmlParser {
    let mut tools: Vec<String> = CLINE_TOOL_NAMES.iter().map(|s| s.to_string()).collect();
    let mut params: Vec<String> = PARAM_NAMES.iter().map(|s| s.to_string()).collect();
    for (name, tool) in registry.tools() {
        tools.push(name.to_string());
        if let Some(properties) = tool.spec.input_schema["properties"].as_object() {
            params.extend(properties.keys().cloned());
        }
    }
    let mut parser = XmlParser::new(
        tools.iter().map(String::as_str),
        params.iter().map(String::as_str),
    );
    for (name, tool) in registry.tools() {
        let raw = &tool.spec.handling.raw_xml_params;
        if !raw.is_empty() {
            parser = parser.with_raw_params(name, raw.iter().map(String::as_str));
        }
    }
    parser
}

/// The open block is built and shown after every chunk while it spans at most this many
/// bytes.
pub const PARTIAL_EVERY_CHUNK_BYTES: usize = 16 * 1024;

/// Beyond [`PARTIAL_EVERY_CHUNK_BYTES`], the open block is built again once the text has grown
/// by this fraction of it (an eighth)...
const PARTIAL_GROWTH_DIVISOR: usize = 8;

/// ... or once this long has passed since it was last shown, and at least ten times as long
/// as building and showing it took.
const PARTIAL_INTERVAL: Duration = Duration::from_millis(250);

/// When the open block was last built.
struct PartialBuilt {
    /// Where the open block started (a different start is another block).
    open_start: usize,
    /// The length of the text then.
    text_len: usize,
    /// When building and showing it ended, and how long they took.
    done: Instant,
    took: Duration,
}

/// One assistant message being streamed in.
pub struct MessageRun<'c> {
    conversation: &'c mut Conversation,
    stream: StreamParser,
    /// The first block not yet completed.
    next_block: usize,
    /// The last partial block shown, to show each change once.
    last_partial: Option<Block>,
    partial_built: Option<PartialBuilt>,
    did_reject_tool: bool,
    did_use_tool: bool,
    used_any_tool: bool,
    user_content: Vec<ContentBlock>,
}

impl MessageRun<'_> {
    /// Adds streamed text and presents whatever became ready: blocks that closed run in order,
    /// then the block still open is shown as a partial update when it changed.
    ///
    /// The text is parsed incrementally; a closed block is presented once. The open block costs
    /// its length to build (and its partial handler as much to read), so an open block beyond
    /// [`PARTIAL_EVERY_CHUNK_BYTES`] is built again only once the text has grown by an eighth of
    /// it, or a quarter of a second has passed (and ten times what showing it took): the work
    /// of a message grows linearly with its length, where showing every chunk would grow with
    /// its square.
    pub fn push(&mut self, chunk: &str, sink: &mut dyn FnMut(SessionEvent)) {
        self.stream.push(chunk);
        self.present_closed(sink);
        if self.conversation.cancelled.is_none() && self.partial_due() {
            let started = Instant::now();
            let open = self.stream.open_block();
            if let Some(block) = open {
                if self.last_partial.as_ref() != Some(&block) {
                    self.show_partial(&block, sink);
                    self.last_partial = Some(block);
                }
            }
            let text_len = self.stream.text().len();
            self.partial_built = Some(PartialBuilt {
                open_start: text_len - self.stream.open_len(),
                text_len,
                done: Instant::now(),
                took: started.elapsed(),
            });
        }
    }

    /// Ends the stream: blocks still open are taken as complete and presented. Returns the
    /// content of the next user message (none when a hook cancelled the task).
    pub fn finish(mut self, sink: &mut dyn FnMut(SessionEvent)) -> Vec<ContentBlock> {
        self.present_closed(sink);
        if self.conversation.cancelled.is_some() {
            return Vec::new();
        }
        if let Some(block) = self.stream.open_block() {
            self.last_partial = None;
            self.next_block += 1;
            self.present_complete(complete(block), sink);
        }
        if self.conversation.cancelled.is_some() {
            return Vec::new();
        }
        let host = &self.conversation.host;
        if !self.used_any_tool {
            host.task().add_mistake();
            let text = no_tools_used();
            sink(SessionEvent::Notice(text.clone()));
            self.user_content.push(ContentBlock::Text { text });
        }
        let limit = host.settings().limits.max_consecutive_mistakes;
        if host.task().mistakes() >= limit {
            sink(SessionEvent::Notice(format!(
                "mistake_limit_reached: {} consecutive mistakes (limit {limit}); an agent would ask the user for guidance now.",
                host.task().mistakes()
            )));
        }
        self.user_content
    }

    /// Whether the open block should be built now (see [`Self::push`]).
    fn partial_due(&self) -> bool {
        let open_len = self.stream.open_len();
        if open_len <= PARTIAL_EVERY_CHUNK_BYTES {
            return true;
        }
        let text_len = self.stream.text().len();
        let Some(last) = &self.partial_built else {
            return true;
        };
        if last.open_start != text_len - open_len {
            return true;
        }
        let grown = text_len - last.text_len;
        grown * PARTIAL_GROWTH_DIVISOR >= open_len
            || last.done.elapsed() >= PARTIAL_INTERVAL.max(last.took * 10)
    }

    /// Presents the blocks that closed since the last chunk, in order; none once a hook
    /// cancelled the task.
    fn present_closed(&mut self, sink: &mut dyn FnMut(SessionEvent)) {
        while self.conversation.cancelled.is_none() {
            let Some(block) = self.stream.closed_blocks().get(self.next_block).cloned() else {
                return;
            };
            self.last_partial = None;
            self.partial_built = None;
            self.next_block += 1;
            self.present_complete(block, sink);
        }
    }

    fn present_complete(&mut self, block: Block, sink: &mut dyn FnMut(SessionEvent)) {
        match block {
            Block::Text { content, .. } => sink(SessionEvent::Text {
                content,
                partial: false,
            }),
            Block::ToolUse(call) => self.execute(call, sink),
        }
    }

    fn show_partial(&self, block: &Block, sink: &mut dyn FnMut(SessionEvent)) {
        match block {
            Block::Text { content, .. } => sink(SessionEvent::Text {
                content: content.clone(),
                partial: true,
            }),
            Block::ToolUse(call) => {
                sink(SessionEvent::ToolStreaming {
                    name: call.name.clone(),
                    params: call.params.clone(),
                });
                if !self.did_reject_tool {
                    self.conversation
                        .host
                        .call_partial(&call.name, &call.params);
                }
            }
        }
    }

    fn execute(&mut self, call: ToolUse, sink: &mut dyn FnMut(SessionEvent)) {
        let host = self.conversation.host.clone();
        if host.registry().get(&call.name).is_none() {
            sink(SessionEvent::Notice(format!(
                "no tool named '{}' is loaded; the block is ignored",
                call.name
            )));
            return;
        }
        self.used_any_tool = true;
        let parallel = host
            .settings()
            .lookup("agent.parallel_tool_calling")
            .and_then(Value::as_bool)
            .unwrap_or(true);
        if self.did_reject_tool {
            let text = format!(
                "Skipping tool due to user rejecting a previous tool. {}",
                host.describe(&call.name, &call.params)
            );
            return self.push_result(&call.name, text, true, sink);
        }
        if !parallel && self.did_use_tool {
            return self.push_result(&call.name, tool_already_used(&call.name), true, sink);
        }
        let outcome = host.call(&call.name, call.params.clone());
        self.did_use_tool = true;

        if matches!(&outcome.result, Err(e) if e.kind == ErrorKind::Denied) {
            self.did_reject_tool = true;
        }
        let mut text = outcome.model_text();
        if text.is_empty() {
            text = "(tool did not return anything)".to_string();
        }
        let is_error = outcome.is_error();
        self.push_result(
            &call.name,
            format!("{} Result:\n{text}", outcome.description),
            is_error,
            sink,
        );
        if let Some(cancelled) = outcome.task_cancelled {
            sink(SessionEvent::TaskCancelled(cancelled.clone()));
            self.conversation.cancelled = Some(cancelled);
            return;
        }
        for image in outcome.images() {
            self.user_content.push(ContentBlock::Image {
                media_type: image.media_type,
                data: image.data,
            });
        }
        self.detect_loop(&call, sink);
    }

    fn push_result(
        &mut self,
        name: &str,
        text: String,
        is_error: bool,
        sink: &mut dyn FnMut(SessionEvent),
    ) {
        sink(SessionEvent::ToolResult {
            name: name.to_string(),
            text: text.clone(),
            is_error,
        });
        self.user_content.push(ContentBlock::Text { text });
    }

    /// The same tool with the same parameters (`task_progress` aside) three times running gets
    /// a warning; five times raises the mistake count to the limit.
    fn detect_loop(&mut self, call: &ToolUse, sink: &mut dyn FnMut(SessionEvent)) {
        let mut params: Vec<(&String, &Value)> = call
            .params
            .iter()
            .filter(|(k, _)| k.as_str() != "task_progress")
            .collect();
        params.sort_by(|a, b| a.0.cmp(b.0));
        let signature = serde_json::to_string(&params).unwrap_or_default();
        let conversation = &mut *self.conversation;
        let same = conversation
            .last_call
            .as_ref()
            .is_some_and(|(name, sig)| *name == call.name && *sig == signature);
        conversation.identical_calls = if same {
            conversation.identical_calls + 1
        } else {
            1
        };
        conversation.last_call = Some((call.name.clone(), signature));
        match conversation.identical_calls {
            3 => {
                let text = repeated_tool_call(&call.name, 3);
                sink(SessionEvent::Notice(text.clone()));
                self.user_content.push(ContentBlock::Text { text });
            }
            5 => {
                let host = &conversation.host;
                host.task()
                    .set_mistakes(host.settings().limits.max_consecutive_mistakes);
            }
            _ => {}
        }
    }
}

/// A block as the end of the stream leaves it: complete.
fn complete(block: Block) -> Block {
    match block {
        Block::Text { content, .. } => Block::Text {
            content,
            partial: false,
        },
        Block::ToolUse(call) => Block::ToolUse(ToolUse {
            partial: false,
            ..call
        }),
    }
}

/// Pushed when an assistant message used no tool.
pub fn no_tools_used() -> String {
    format!(
        "[ERROR] You did not use a tool in your previous response! Please retry with a tool use.\n\n{}\n\n# Next Steps\n\nIf the task is done, use attempt_completion. If you need information only the user has, use ask_followup_question. Otherwise go on with the next step of the task, using a tool.\n(This is an automated message, so do not respond to it conversationally.)",
        tool_api::texts::TOOL_USE_REMINDER
    )
}

/// The result for a tool skipped because another already ran in this message.
pub fn tool_already_used(name: &str) -> String {
    format!(
        "Tool [{name}] was not executed because a tool has already been used in this message. Only one tool may be used per message. You must assess the first tool's result before proceeding to use the next tool."
    )
}

/// The warning after the same call repeated `count` times.
pub fn repeated_tool_call(name: &str, count: u32) -> String {
    format!(
        "Tool [{name}] has been called {count} times consecutively with identical arguments. This is not making progress. Please use a different tool or different arguments instead of repeating the same call."
    )
}
