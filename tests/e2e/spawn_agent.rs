//! spawn_agent (Cline's SDK tool set) through `toolhost --tools cline-sdk call`, against a
//! scripted OpenAI-compatible model endpoint on 127.0.0.1 (tiny_http).
//!
//! The endpoint answers by the task it was given: it asks for one tool call, then answers
//! with a text quoting what the tool returned, which ends the run. The tools are the real SDK
//! plugins, called through the host as a subagent's calls: what they may and may not do is
//! the host's to decide, and what the sub-agent is refused never reaches the model.

use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use serde_json::{json, Value};
use toolhost_tests::{run, Home, Run};

const LIBRARIES: &[&str] = &[
    "spawn_agent",
    "read_files",
    "editor",
    "run_commands",
    "ask_question",
    "read_file",
];

/// The texts of the file outside the workspace and of the `.clineignore`d one.
const OUTSIDE_TEXT: &str = "outside-text-4f1c";
const IGNORED_TEXT: &str = "ignored-text-9b2e";

/// The scripted model: serves `/v1/chat/completions`, keeps every request it was sent.
struct Model {
    base: String,
    seen: Arc<Mutex<Vec<Value>>>,
    server: Arc<tiny_http::Server>,
    thread: Option<JoinHandle<()>>,
}

impl Model {
    /// `outside`: the absolute path the "read outside" task asks for.
    fn start(outside: String) -> Self {
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
                    let reply = script(&body, &outside).to_string();
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

    fn seen(&self) -> Vec<Value> {
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The model's next answer: the task's tool call first, then a text with the tool's result.
fn script(body: &Value, outside: &str) -> Value {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let task = messages
        .iter()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default();
    let results: Vec<&str> = messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["content"].as_str())
        .collect();
    let call = match task {
        "read the notes" => ("read_files", json!({"files": [{"path": "notes.txt"}]})),
        "read outside" => (
            "read_files",
            json!({"files": [{"path": outside}, {"path": "secret.txt"}]}),
        ),
        "write a file" => ("editor", json!({"path": "made.txt", "new_text": "made\n"})),
        "run a writing command" => (
            "run_commands",
            json!({"commands": ["echo made > made.txt"]}),
        ),
        "use a legacy tool" => ("read_file", json!({"path": "notes.txt"})),
        "spawn another" => (
            "spawn_agent",
            json!({"systemPrompt": "p", "task": "read the notes"}),
        ),
        "ask the user" => (
            "ask_question",
            json!({"question": "Which one?", "options": ["first", "second"]}),
        ),
        "never stop" => ("read_files", json!({"files": [{"path": "notes.txt"}]})),
        other => return text(&format!("no script for {other:?}")),
    };
    if results.is_empty() || task == "never stop" {
        let (name, arguments) = call;
        let id = format!("call_{}", results.len());
        return json!({
            "choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
                {"id": id, "type": "function", "function": {"name": name, "arguments": arguments.to_string()}}
            ]}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 10}
        });
    }
    text(&format!("The tool said: {}", results.join(" | ")))
}

fn text(text: &str) -> Value {
    json!({
        "choices": [{"message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 10}
    })
}

/// A user with a workspace (`notes.txt`, a `.clineignore`d `secret.txt`), a file outside it,
/// the scripted model, and `extra` settings.
fn user(extra: &str) -> (Home, Model) {
    // The settings name the model's address, which exists once it runs.
    let home = Home::new("", LIBRARIES);
    let model = Model::start(home.base.join("outside.txt").display().to_string());
    let settings = format!(
        "[llm]\nbase_url = \"{}\"\nmodel = \"scripted\"\nprotocol = \"openai\"\nproxy = \"none\"\n\
         retry_attempts = 1\n\n[subagents]\nenabled = true\nmax_turns = 3\n\n{extra}",
        model.base
    );
    std::fs::write(&home.settings, settings).unwrap();
    std::fs::write(home.ws.join("notes.txt"), "inside\n").unwrap();
    std::fs::write(home.ws.join(".clineignore"), "secret.txt\n").unwrap();
    std::fs::write(home.ws.join("secret.txt"), IGNORED_TEXT).unwrap();
    std::fs::write(home.base.join("outside.txt"), OUTSIDE_TEXT).unwrap();
    (home, model)
}

fn spawn(home: &Home, set: &str, task: &str, extra_args: &[&str]) -> Run {
    let params = json!({"systemPrompt": "  You check notes.  ", "task": task}).to_string();
    let cwd = home.ws.display().to_string();
    let mut args = vec![
        "--tools",
        set,
        "call",
        "spawn_agent",
        &params,
        "--cwd",
        &cwd,
    ];
    args.extend(extra_args);
    run(home.toolhost().args(&args))
}

/// The sub-agent's output, as the model that spawned it reads it.
fn output(run: &Run) -> Value {
    assert_eq!(run.code, 0, "{run:?}");
    serde_json::from_str(run.stdout.trim()).unwrap_or_else(|e| panic!("{e}: {run:?}"))
}

#[test]
fn a_sub_agent_works_with_the_served_tools_and_answers_with_cline_s_output() {
    let (home, model) = user("");
    let answer = output(&spawn(&home, "cline-sdk", "read the notes", &[]));
    assert_eq!(answer["finishReason"], "completed", "{answer}");
    assert_eq!(answer["iterations"], 2);
    assert_eq!(
        answer["usage"],
        json!({"inputTokens": 200, "outputTokens": 20})
    );
    let said = answer["text"].as_str().unwrap();
    assert!(
        said.starts_with("The tool said: ") && said.contains("inside"),
        "{said}"
    );
    let first = &model.seen()[0];
    // The system prompt is the model's, trimmed; the tools are the ones the host serves.
    assert_eq!(
        first["messages"][0],
        json!({"role": "system", "content": "You check notes."})
    );
    assert_eq!(first["model"], "scripted");
    let offered: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert_eq!(
        offered,
        ["ask_question", "editor", "read_files", "run_commands"],
        "the act preset's tools, not the legacy read_file beside them, nor spawn_agent"
    );
    // Within what the OpenAI API takes (Cline's run_commands says more).
    for tool in first["tools"].as_array().unwrap() {
        let description = tool["function"]["description"].as_str().unwrap();
        assert!(description.chars().count() <= 1024, "{tool}");
    }
}

#[test]
fn a_sub_agent_starts_no_sub_agent_and_asks_the_user_nothing() {
    let (home, model) = user("");
    let answer = output(&spawn(&home, "cline-sdk", "spawn another", &["--yes"]));
    let said = answer["text"].as_str().unwrap();
    assert!(
        said.contains("Tool 'spawn_agent' is not available."),
        "{said}"
    );
    assert_eq!(model.seen().len(), 2, "no request of a nested sub-agent");

    // Even with --yes, and a question that would otherwise get its first option.
    let answer = output(&spawn(&home, "cline-sdk", "ask the user", &["--yes"]));
    let said = answer["text"].as_str().unwrap();
    assert!(said.contains("subagents do not ask the user"), "{said}");
    assert!(!said.ends_with("first"), "{said}");
}

#[test]
fn a_tool_of_the_other_generation_is_not_available_to_the_sub_agent() {
    let (home, _model) = user("");
    let answer = output(&spawn(&home, "cline-sdk", "use a legacy tool", &[]));
    let said = answer["text"].as_str().unwrap();
    assert!(
        said.contains("Tool 'read_file' is not available."),
        "{said}"
    );
    assert!(!said.contains("inside"), "{said}");
}

#[test]
fn a_sub_agent_reads_nothing_outside_the_workspace_or_clineignored() {
    let (home, model) = user("");
    let answer = output(&spawn(&home, "cline-sdk", "read outside", &[]));
    assert_eq!(answer["finishReason"], "completed", "{answer}");
    // Neither file's text reached the model, whatever it was told instead.
    for request in model.seen() {
        let text = request.to_string();
        assert!(
            !text.contains(OUTSIDE_TEXT),
            "outside the workspace: {text}"
        );
        assert!(!text.contains(IGNORED_TEXT), ".clineignore: {text}");
    }
    let said = answer["text"].as_str().unwrap();
    assert!(said.contains("subagents do not ask the user"), "{said}");
    assert!(
        said.contains("secret.txt is blocked by the .clineignore"),
        "{said}"
    );

    // With --yes the user approved reads outside the workspace; .clineignore still holds.
    let (home, model) = user("");
    output(&spawn(&home, "cline-sdk", "read outside", &["--yes"]));
    let told = model.seen().last().unwrap().to_string();
    assert!(told.contains(OUTSIDE_TEXT), "{told}");
    assert!(!told.contains(IGNORED_TEXT), "{told}");
}

#[test]
fn a_sub_agent_never_asks_the_user_so_an_edit_needs_auto_approval() {
    let (home, _model) = user("");
    let answer = output(&spawn(&home, "cline-sdk", "write a file", &[]));
    let said = answer["text"].as_str().unwrap();
    assert!(said.contains("subagents do not ask the user"), "{said}");
    assert!(
        said.contains("edit_files = true"),
        "the setting that allows it: {said}"
    );
    assert!(
        !home.ws.join("made.txt").exists(),
        "a refused edit writes nothing"
    );

    let (home, _model) = user("[auto_approve]\nedit_files = true\n");
    let answer = output(&spawn(&home, "cline-sdk", "write a file", &[]));
    assert_eq!(answer["finishReason"], "completed", "{answer}");
    assert_eq!(
        std::fs::read_to_string(home.ws.join("made.txt")).unwrap(),
        "made\n"
    );
}

#[test]
fn the_plan_preset_holds_for_the_sub_agent_s_commands() {
    let (home, _model) = user("");
    let answer = output(&spawn(
        &home,
        "cline-sdk:plan",
        "run a writing command",
        &["--yes"],
    ));
    assert_eq!(answer["finishReason"], "completed", "{answer}");
    assert!(!home.ws.join("made.txt").exists(), "{answer}");
}

#[test]
fn the_turn_limit_ends_the_run_as_max_iterations() {
    let (home, model) = user("");
    let answer = output(&spawn(&home, "cline-sdk", "never stop", &[]));
    assert_eq!(answer["finishReason"], "max_iterations", "{answer}");
    assert_eq!(answer["iterations"], 3);
    assert_eq!(model.seen().len(), 3);
}

#[test]
fn off_or_without_an_endpoint_the_tool_says_what_to_set_and_yolo_has_no_spawn_agent() {
    let home = Home::new("", LIBRARIES);
    let cwd = home.ws.display().to_string();
    // What `toolhost call spawn_agent PARAMS` prints, both streams.
    let said = |params: &str| {
        let ran = run(home.toolhost().args([
            "--tools",
            "cline-sdk",
            "call",
            "spawn_agent",
            params,
            "--cwd",
            &cwd,
        ]));
        assert_ne!(ran.code, 0, "{ran:?}");
        format!("{}{}", ran.stdout, ran.stderr)
    };
    let params = json!({"systemPrompt": "p", "task": "t"}).to_string();
    let disabled = said(&params);
    assert!(
        disabled.contains("Set subagents.enabled = true"),
        "sub-agents are off unless enabled: {disabled}"
    );
    std::fs::write(&home.settings, "[subagents]\nenabled = true\n").unwrap();
    let refused = said(&params);
    assert!(
        refused
            .contains("spawn_agent has no LLM endpoint to run subagents against. Set llm.base_url"),
        "{refused}"
    );
    let missing = said(r#"{"task": "t"}"#);
    assert!(
        missing
            .contains("✖ Invalid input: expected string, received undefined\n  → at systemPrompt"),
        "{missing}"
    );
    let yolo = run(home.toolhost().args(["--tools", "cline-sdk:yolo", "tools"]));
    assert_eq!(yolo.code, 0, "{yolo:?}");
    assert!(!yolo.stdout.contains("spawn_agent"), "{yolo:?}");
    let act = run(home.toolhost().args(["--tools", "cline-sdk", "tools"]));
    assert!(act.stdout.contains("spawn_agent"), "{act:?}");
}
