//! A scripted OpenAI-compatible model endpoint on 127.0.0.1 (tiny_http), for the tools that run
//! agents of their own (spawn_agent, the team's teammates): every chat completions request is
//! answered with what the script makes of it, and kept.

use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use serde_json::{json, Value};

/// The endpoint: `base` is its `/v1` URL.
pub struct ScriptedModel {
    pub base: String,
    seen: Arc<Mutex<Vec<Value>>>,
    server: Arc<tiny_http::Server>,
    thread: Option<JoinHandle<()>>,
}

impl ScriptedModel {
    /// Serves each request's body to `script` and answers with what it returns.
    pub fn start(script: impl Fn(&Value) -> Value + Send + 'static) -> Self {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let port = server.server_addr().to_ip().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let thread = {
            let (server, seen) = (server.clone(), seen.clone());
            std::thread::spawn(move || {
                for mut request in server.incoming_requests() {
                    let mut body = String::new();
                    let _ = request.as_reader().read_to_string(&mut body);
                    let body: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
                    seen.lock().unwrap().push(body.clone());
                    let reply = script(&body).to_string();
                    let header = "Content-Type: application/json"
                        .parse::<tiny_http::Header>()
                        .unwrap();
                    let _ = request
                        .respond(tiny_http::Response::from_string(reply).with_header(header));
                }
            })
        };
        Self {
            base: format!("http://127.0.0.1:{port}/v1"),
            seen,
            server,
            thread: Some(thread),
        }
    }

    /// Every request so far.
    pub fn seen(&self) -> Vec<Value> {
        self.seen.lock().unwrap().clone()
    }

    /// The `[llm]` and `[subagents]` settings that send agents here.
    pub fn settings(&self) -> String {
        format!(
            "[llm]\nbase_url = \"{}\"\nmodel = \"scripted\"\nprotocol = \"openai\"\nproxy = \"none\"\n\
             retry_attempts = 1\n\n[subagents]\nenabled = true\nmax_turns = 3\n",
            self.base
        )
    }
}

impl Drop for ScriptedModel {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The texts of a request's messages of `role` (`user`, `tool`), in order.
pub fn texts_of(body: &Value, role: &str) -> Vec<String> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == role)
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .collect()
}

/// The names of the tools a request offers.
pub fn offered_tools(body: &Value) -> Vec<&str> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect()
}

/// An answer with `text` and no tool call, which ends a run.
pub fn text_reply(text: &str) -> Value {
    json!({
        "choices": [{"message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 10}
    })
}

/// An answer that calls tool `name` with `arguments`, as call `id`.
pub fn tool_call_reply(id: &str, name: &str, arguments: &Value) -> Value {
    json!({
        "choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
            {"id": id, "type": "function", "function": {"name": name, "arguments": arguments.to_string()}}
        ]}}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 10}
    })
}
