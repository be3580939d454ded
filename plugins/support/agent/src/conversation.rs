//! An agent's conversation in a protocol-neutral form, and its encoding for the OpenAI chat
//! completions and Anthropic messages APIs (native tool calling, no streaming).

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::llm::{LlmSettings, Protocol, DEFAULT_MAX_TOKENS};

/// A tool definition as the model sees it: name, description, JSON Schema of its arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDef {
    /// The tool's name.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// The JSON Schema of its arguments object.
    pub schema: Value,
}

/// One tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolRequest {
    /// The id the answer must carry.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments as the protocol sent them: a JSON string (OpenAI) or an object (Anthropic).
    pub raw_arguments: Value,
}

/// The answer to one [`ToolRequest`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolAnswer {
    /// The request's id.
    pub id: String,
    /// What the model reads.
    pub text: String,
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Message {
    /// The user's text blocks.
    User(Vec<String>),
    /// The model's text and tool calls.
    Assistant {
        /// Its text (may be empty when it only called tools).
        text: String,
        /// Its tool calls, in order.
        calls: Vec<ToolRequest>,
    },
    /// The answers to the previous assistant message's calls.
    Results(Vec<ToolAnswer>),
}

/// Tokens one request used, as far as the endpoint reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// Input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Tokens written to the prompt cache (Anthropic).
    pub cache_write: u64,
    /// Tokens read from the prompt cache.
    pub cache_read: u64,
}

impl Usage {
    /// Everything the request had in its context.
    pub fn total(&self) -> u64 {
        self.input + self.output + self.cache_write + self.cache_read
    }
}

/// The model's answer to one request.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// Its text.
    pub text: String,
    /// Its tool calls.
    pub calls: Vec<ToolRequest>,
    /// Its usage (zeros when not reported).
    pub usage: Usage,
}

/// The URL path appended to `llm.base_url`.
pub fn endpoint_path(protocol: Protocol) -> &'static str {
    match protocol {
        Protocol::OpenAi => "/chat/completions",
        Protocol::Anthropic => "/v1/messages",
    }
}

/// The request body for the whole conversation.
pub fn request_body(
    llm: &LlmSettings,
    system: &str,
    tools: &[ToolDef],
    messages: &[Message],
) -> Value {
    match llm.protocol {
        Protocol::OpenAi => openai_body(llm, system, tools, messages),
        Protocol::Anthropic => anthropic_body(llm, system, tools, messages),
    }
}

fn openai_body(llm: &LlmSettings, system: &str, tools: &[ToolDef], messages: &[Message]) -> Value {
    let mut wire = vec![json!({"role": "system", "content": system})];
    for message in messages {
        match message {
            Message::User(blocks) => {
                wire.push(json!({"role": "user", "content": blocks.join("\n\n")}));
            }
            Message::Assistant { text, calls } => {
                let mut entry = json!({"role": "assistant", "content": text});
                if !calls.is_empty() {
                    let calls: Vec<Value> = calls
                        .iter()
                        .map(|c| {
                            let arguments = match &c.raw_arguments {
                                Value::String(s) => s.clone(),
                                other => other.to_string(),
                            };
                            json!({"id": c.id, "type": "function",
                                   "function": {"name": c.name, "arguments": arguments}})
                        })
                        .collect();
                    entry["tool_calls"] = Value::Array(calls);
                }
                wire.push(entry);
            }
            Message::Results(answers) => {
                for answer in answers {
                    wire.push(
                        json!({"role": "tool", "tool_call_id": answer.id, "content": answer.text}),
                    );
                }
            }
        }
    }
    let tools: Vec<Value> = tools
        .iter()
        .map(|t| {
            json!({"type": "function", "function":
                   {"name": t.name, "description": t.description, "parameters": t.schema}})
        })
        .collect();
    let mut body = json!({"model": llm.model, "messages": wire, "tools": tools, "stream": false});
    if let Some(max) = llm.max_tokens {
        body["max_tokens"] = json!(max);
    }
    body
}

fn anthropic_body(
    llm: &LlmSettings,
    system: &str,
    tools: &[ToolDef],
    messages: &[Message],
) -> Value {
    let wire: Vec<Value> = messages
        .iter()
        .map(|message| match message {
            Message::User(blocks) => {
                let content: Vec<Value> = blocks
                    .iter()
                    .map(|text| json!({"type": "text", "text": text}))
                    .collect();
                json!({"role": "user", "content": content})
            }
            Message::Assistant { text, calls } => {
                let mut content = Vec::new();
                if !text.is_empty() {
                    content.push(json!({"type": "text", "text": text}));
                }
                for call in calls {
                    let input = match &call.raw_arguments {
                        Value::Object(_) => call.raw_arguments.clone(),
                        _ => json!({}),
                    };
                    content.push(
                        json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}),
                    );
                }
                json!({"role": "assistant", "content": content})
            }
            Message::Results(answers) => {
                let content: Vec<Value> = answers
                    .iter()
                    .map(|a| json!({"type": "tool_result", "tool_use_id": a.id, "content": a.text}))
                    .collect();
                json!({"role": "user", "content": content})
            }
        })
        .collect();
    let tools: Vec<Value> = tools
        .iter()
        .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.schema}))
        .collect();
    json!({
        "model": llm.model,
        "max_tokens": llm.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
        "system": system,
        "messages": wire,
        "tools": tools,
    })
}

/// Reads a successful answer; the error says what is missing.
pub fn parse_reply(protocol: Protocol, body: &Value) -> Result<Reply, String> {
    match protocol {
        Protocol::OpenAi => parse_openai(body),
        Protocol::Anthropic => parse_anthropic(body),
    }
}

fn count(value: &Value) -> u64 {
    value.as_u64().unwrap_or(0)
}

fn parse_openai(body: &Value) -> Result<Reply, String> {
    let message = body
        .pointer("/choices/0/message")
        .ok_or("the answer has no choices[0].message")?;
    let text = message["content"].as_str().unwrap_or_default().to_string();
    let mut calls = Vec::new();
    for call in message["tool_calls"].as_array().into_iter().flatten() {
        let name = call
            .pointer("/function/name")
            .and_then(Value::as_str)
            .ok_or("a tool call in the answer has no function name")?;
        calls.push(ToolRequest {
            id: call["id"].as_str().unwrap_or_default().to_string(),
            name: name.to_string(),
            raw_arguments: call
                .pointer("/function/arguments")
                .cloned()
                .unwrap_or(Value::Null),
        });
    }
    let usage = &body["usage"];
    Ok(Reply {
        text,
        calls,
        usage: Usage {
            input: count(&usage["prompt_tokens"]),
            output: count(&usage["completion_tokens"]),
            cache_write: 0,
            cache_read: 0,
        },
    })
}

fn parse_anthropic(body: &Value) -> Result<Reply, String> {
    let content = body["content"]
        .as_array()
        .ok_or("the answer has no content array")?;
    let mut text = Vec::new();
    let mut calls = Vec::new();
    for block in content {
        match block["type"].as_str() {
            Some("text") => text.push(block["text"].as_str().unwrap_or_default()),
            Some("tool_use") => calls.push(ToolRequest {
                id: block["id"].as_str().unwrap_or_default().to_string(),
                name: block["name"].as_str().unwrap_or_default().to_string(),
                raw_arguments: block.get("input").cloned().unwrap_or(Value::Null),
            }),
            _ => {}
        }
    }
    let usage = &body["usage"];
    Ok(Reply {
        text: text.join("\n"),
        calls,
        usage: Usage {
            input: count(&usage["input_tokens"]),
            output: count(&usage["output_tokens"]),
            cache_write: count(&usage["cache_creation_input_tokens"]),
            cache_read: count(&usage["cache_read_input_tokens"]),
        },
    })
}

/// The arguments as an object: a JSON object, or a string holding one (OpenAI sends a string).
///
/// Only strict JSON is accepted; the model is told what was wrong and can send the call again.
/// (The host's lenient JSON5 fallback lives in the host crate, which a plugin must not link.)
pub fn parse_arguments(raw: &Value) -> Result<Map<String, Value>, String> {
    let parsed = match raw {
        Value::Null => return Ok(Map::new()),
        Value::String(text) if text.trim().is_empty() => return Ok(Map::new()),
        Value::String(text) => serde_json::from_str::<Value>(text).map_err(|e| {
            format!("The tool call's arguments are not valid JSON ({e}). Send the arguments again as one JSON object.")
        })?,
        other => other.clone(),
    };
    match parsed {
        Value::Object(map) => Ok(map),
        other => Err(format!(
            "The tool call's arguments must be a JSON object, not {other}. Send the arguments again as one JSON object."
        )),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn llm(protocol: &str) -> LlmSettings {
        LlmSettings::read(
            &json!({"llm": {"base_url": "http://h", "model": "m", "protocol": protocol}}),
            "a_tool",
        )
        .unwrap()
    }

    fn conversation() -> Vec<Message> {
        vec![
            Message::User(vec!["find it".to_string(), "<env/>".to_string()]),
            Message::Assistant {
                text: String::new(),
                calls: vec![ToolRequest {
                    id: "c1".to_string(),
                    name: "read_file".to_string(),
                    raw_arguments: json!("{\"path\":\"a\"}"),
                }],
            },
            Message::Results(vec![ToolAnswer {
                id: "c1".to_string(),
                text: "1 | x".to_string(),
            }]),
        ]
    }

    #[test]
    fn openai_messages_carry_tool_calls_and_answers() {
        let body = request_body(&llm("openai"), "sys", &[], &conversation());
        assert_eq!(
            body,
            json!({"model": "m", "messages": [
                {"role": "system", "content": "sys"},
                {"role": "user", "content": "find it\n\n<env/>"},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"a\"}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "1 | x"},
            ], "tools": [], "stream": false})
        );
    }

    #[test]
    fn anthropic_messages_carry_tool_use_and_results() {
        let mut messages = conversation();
        if let Message::Assistant { calls, .. } = &mut messages[1] {
            calls[0].raw_arguments = json!({"path": "a"});
        }
        let body = request_body(&llm("anthropic"), "sys", &[], &messages);
        assert_eq!(
            body,
            json!({"model": "m", "max_tokens": 8192, "system": "sys", "messages": [
                {"role": "user", "content": [{"type": "text", "text": "find it"}, {"type": "text", "text": "<env/>"}]},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "read_file", "input": {"path": "a"}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "1 | x"}]},
            ], "tools": []})
        );
    }

    #[test]
    fn replies_are_read_with_their_usage() {
        let openai = json!({"choices": [{"message": {"content": null, "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "list_files", "arguments": "{}"}}]}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2}});
        assert_eq!(
            parse_reply(Protocol::OpenAi, &openai),
            Ok(Reply {
                text: String::new(),
                calls: vec![ToolRequest {
                    id: "a".to_string(),
                    name: "list_files".to_string(),
                    raw_arguments: json!("{}"),
                }],
                usage: Usage {
                    input: 10,
                    output: 2,
                    cache_write: 0,
                    cache_read: 0
                },
            })
        );
        let anthropic = json!({"content": [{"type": "text", "text": "done"}],
            "usage": {"input_tokens": 5, "output_tokens": 1, "cache_read_input_tokens": 3}});
        assert_eq!(
            parse_reply(Protocol::Anthropic, &anthropic),
            Ok(Reply {
                text: "done".to_string(),
                calls: Vec::new(),
                usage: Usage {
                    input: 5,
                    output: 1,
                    cache_write: 0,
                    cache_read: 3
                },
            })
        );
        assert_eq!(
            parse_reply(Protocol::OpenAi, &json!({"error": "x"})),
            Err("the answer has no choices[0].message".to_string())
        );
    }

    #[test]
    fn arguments_are_an_object_or_a_string_holding_one() {
        let Value::Object(expected) = json!({"path": "a"}) else {
            unreachable!()
        };
        assert_eq!(
            parse_arguments(&json!("{\"path\":\"a\"}")),
            Ok(expected.clone())
        );
        assert_eq!(parse_arguments(&json!({"path": "a"})), Ok(expected));
        assert_eq!(parse_arguments(&json!("")), Ok(Map::new()));
        assert_eq!(
            parse_arguments(&json!("[1]")),
            Err("The tool call's arguments must be a JSON object, not [1]. Send the arguments again as one JSON object.".to_string())
        );
        assert_eq!(
            parse_arguments(&json!("{path: 'a'}")),
            Err("The tool call's arguments are not valid JSON (key must be a string at line 1 column 2). Send the arguments again as one JSON object.".to_string())
        );
    }
}
