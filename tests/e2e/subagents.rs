//! use_subagents through its real plugin, against a scripted model endpoint on 127.0.0.1 that
//! speaks the OpenAI chat-completions or the Anthropic messages protocol (a minimal HTTP server
//! of its own, see [`Endpoint`]).
//!
//! The endpoint answers according to a script keyed by the subagent's prompt: it asks for tool
//! calls, checks the results it gets back (a wrong result makes the subagent "complete" with a
//! `CHECK FAILED` text that the whole-value assertions then show) and finally completes with
//! attempt_completion. The tools are the real read_file and list_files plugins, run by the host
//! against a temporary workspace.
//!
//! Named subagents (agent config files in `$TOOLHOST_AGENTS_DIR`) are tested through a `toolhost`
//! child process: the plugin reads that process-wide variable when it is loaded, and these tests
//! load plugins in-process in parallel.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{json, Value};
use tool_api::texts::tool_error;
use toolhost::ErrorKind;
use toolhost::Settings;
use toolhost_tests::{toolhost, workdir, PluginDir};

use crate::in_process::{self, RecordingUi};

/// Requests the endpoint holds back until five have arrived (the parallelism check).
const PARALLEL: usize = 5;

/// How long a held request waits for the others before the endpoint gives up on it (a safety
/// net so that a serial implementation fails instead of hanging; never reached when parallel).
const GATHER_LIMIT: Duration = Duration::from_secs(60);

// The model-visible texts, written out here (the tests crate does not link the plugin's rlib).

const NO_COMPLETION: &str = "Subagent did not call attempt_completion.";

const DISABLED: &str =
    "Subagents are disabled. Enable them in Settings > Features to use this tool.";

const NO_ENDPOINT: &str = "use_subagents has no LLM endpoint to run subagents against. Set \
llm.base_url (the API's base URL), llm.model (the model id), llm.protocol (\"openai\" for \
OpenAI-compatible chat completions or \"anthropic\" for Anthropic messages) and llm.api_key_env \
(the environment variable holding the API key; leave it out for an endpoint without a key) in the \
[llm] section of the settings file.";

fn not_available(name: &str) -> String {
    tool_error(&format!(
        "Tool '{name}' is not available inside subagent runs."
    ))
}

fn turn_limit(max_turns: u64) -> String {
    format!("Subagent reached the limit of {max_turns} model requests (subagents.max_turns) without calling attempt_completion.")
}

/// The execution-mode rules that follow a named agent's prompt and profile.
const AGENT_RULES: &str = "# Subagent Execution Mode

- Research only: read files, list directories, search and run commands that only read. Never \
change, create or delete anything.
- Call one tool at a time and use its result before the next call.
- When you know enough, call attempt_completion. Its `result` is handed to the main agent as it \
is, so make it concise and complete.
- End the result with a section headed \"Relevant file paths\" that lists the paths that matter, \
one per line, and nothing else.";

fn agent_system(body: &str, name: &str, description: &str) -> String {
    format!("{body}\n\n# Agent Profile\nName: {name}\nDescription: {description}\n\n{AGENT_RULES}")
}

/// The model id and system prompt a named agent's requests must carry, by prompt.
fn agent_expectation(prompt: &str) -> Option<(&'static str, String)> {
    match prompt {
        "agent list" => Some((
            "agent-model",
            agent_system(
                "You map databases. Report table names.",
                "DB Explorer",
                "Maps database schema and migrations",
            ),
        )),
        "agent fallback" => Some((
            "scripted-model",
            agent_system("You double-check.", "db.explorer", "Second opinion"),
        )),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// The scripted endpoint
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wire {
    OpenAi,
    Anthropic,
}

/// What the model does next.
enum Action {
    Call(&'static str, Value),
    Text(String),
}

fn complete(result: String) -> Action {
    Action::Call("attempt_completion", json!({ "result": result }))
}

/// Checks a tool result; a mismatch ends the subagent with a text naming both sides.
fn expect(seen: Option<&str>, expected: &str, then: Action) -> Action {
    match seen {
        Some(seen) if seen == expected => then,
        other => complete(format!(
            "CHECK FAILED: expected {expected:?}, got {other:?}"
        )),
    }
}

/// The script: the next action for `prompt` after `step` earlier answers, given the text of the
/// latest tool result.
fn script(prompt: &str, step: usize, last: Option<&str>, outside: &str) -> Action {
    if let Some(n) = prompt.strip_prefix("read note ") {
        return match step {
            0 => Action::Call("read_file", json!({ "path": format!("notes/{n}.txt") })),
            _ => expect(
                last,
                &format!("1 | note number {n}\n\n(File has 1 lines total.)"),
                complete(format!(
                    "Note {n} reads \"note number {n}\".\nRelevant file paths\nnotes/{n}.txt"
                )),
            ),
        };
    }
    match (prompt, step) {
        ("write something", 0) => Action::Call(
            "write_to_file",
            json!({"path": "created.txt", "content": "should not exist"}),
        ),
        ("write something", 1) => expect(
            last,
            &not_available("write_to_file"),
            Action::Call("list_files", json!({"path": "notes"})),
        ),
        ("write something", _) => expect(
            last,
            "1.txt\n2.txt\n3.txt\n4.txt\n5.txt",
            complete("Writing is refused; listed notes instead.".to_string()),
        ),
        ("read outside", 0) => Action::Call("read_file", json!({ "path": outside })),
        ("read outside", _) => expect(
            last,
            &toolhost_tests::refused_by(
                "read_file",
                "subagents do not ask the user",
                &["read_files", "read_files_externally"],
            ),
            complete("The host denied the read.".to_string()),
        ),
        ("bad arguments", 0) => Action::Call("read_file", json!("{path: notes/1.txt")),
        ("bad arguments", _) => expect(
            last,
            &tool_error("The tool call's arguments are not valid JSON (key must be a string at line 1 column 2). Send the arguments again as one JSON object."),
            complete("Told about the bad arguments.".to_string()),
        ),
        ("agent list", 0) => Action::Call("list_files", json!({"path": "notes"})),
        ("agent list", 1) => expect(
            last,
            &not_available("list_files"),
            Action::Call("read_file", json!({"path": "notes/1.txt"})),
        ),
        ("agent list", _) => expect(
            last,
            "1 | note number 1\n\n(File has 1 lines total.)",
            complete("list_files was refused; note 1 was read.".to_string()),
        ),
        // A subagent calls tools natively: the missing-parameter error has no XML reminder.
        ("leave out the path", 0) => Action::Call("read_file", json!({})),
        ("leave out the path", _) => expect(
            last,
            &tool_error(&tool_api::texts::missing_param_error_native("path")),
            complete("Told about the missing path.".to_string()),
        ),
        ("agent fallback", _) => complete("Checked.".to_string()),
        ("never finish", _) | ("slow", _) => Action::Call("list_files", json!({"path": "."})),
        ("only talk", _) => Action::Text("I think I am done.".to_string()),
        _ => complete(format!("CHECK FAILED: no script for {prompt:?}")),
    }
}

/// The parts of a request the script needs: prompt, assistant turns so far, latest tool result.
fn read_request(wire: Wire, body: &Value) -> (String, usize, Option<String>) {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let assistants = messages.iter().filter(|m| m["role"] == "assistant").count();
    let (first, last) = match wire {
        Wire::OpenAi => {
            let first = messages
                .iter()
                .find(|m| m["role"] == "user")
                .and_then(|m| m["content"].as_str())
                .unwrap_or_default()
                .to_string();
            let last = messages
                .iter()
                .rev()
                .find(|m| m["role"] == "tool")
                .and_then(|m| m["content"].as_str())
                .map(str::to_string);
            (first, last)
        }
        Wire::Anthropic => {
            let first = messages[0]["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let last = messages
                .iter()
                .rev()
                .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
                .find(|block| block["type"] == "tool_result")
                .and_then(|block| block["content"].as_str().map(str::to_string));
            (first, last)
        }
    };
    let prompt = first
        .split("\n\n<environment_details>")
        .next()
        .unwrap_or_default()
        .to_string();
    (prompt, assistants, last)
}

fn answer(wire: Wire, action: Action, step: usize) -> Value {
    let id = format!("call_{step}");
    match (wire, action) {
        (Wire::OpenAi, Action::Call(name, args)) => {
            let arguments = match args {
                Value::String(raw) => raw,
                other => other.to_string(),
            };
            json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
                {"id": id, "type": "function", "function": {"name": name, "arguments": arguments}}]}}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 10}})
        }
        (Wire::OpenAi, Action::Text(text)) => {
            json!({"choices": [{"message": {"role": "assistant", "content": text}}],
                   "usage": {"prompt_tokens": 100, "completion_tokens": 10}})
        }
        (Wire::Anthropic, Action::Call(name, input)) => {
            json!({"content": [{"type": "tool_use", "id": id, "name": name, "input": input}],
                   "usage": {"input_tokens": 200, "output_tokens": 20}})
        }
        (Wire::Anthropic, Action::Text(text)) => {
            json!({"content": [{"type": "text", "text": text}],
                   "usage": {"input_tokens": 200, "output_tokens": 20}})
        }
    }
}

/// A request as received.
#[derive(Debug, Clone)]
struct Seen {
    path: String,
    headers: Vec<(String, String)>,
    body: Value,
}

/// Counts first requests of the parallel prompts and releases them together.
#[derive(Default)]
struct Gate {
    arrived: Mutex<usize>,
    all_here: Condvar,
}

impl Gate {
    /// Waits until [`PARALLEL`] callers are here; false when they never came.
    fn gather(&self) -> bool {
        let mut arrived = self.arrived.lock().unwrap();
        *arrived += 1;
        self.all_here.notify_all();
        let (arrived, result) = self
            .all_here
            .wait_timeout_while(arrived, GATHER_LIMIT, |n| *n < PARALLEL)
            .unwrap();
        drop(arrived);
        !result.timed_out()
    }
}

/// The scripted endpoint: a minimal HTTP/1.1 server over std's `TcpListener`, one thread per
/// connection, one request per connection (`Connection: close`).
///
/// Written by hand rather than with tiny_http (used elsewhere in these tests) because the
/// parallelism check holds five requests open at once, and tiny_http's worker pool can leave a
/// fifth connection queued behind four busy workers until one of them is released, which would
/// make the check fail for the server's sake.
struct Endpoint {
    base: String,
    seen: Arc<Mutex<Vec<Seen>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Endpoint {
    /// Serves `/openai/chat/completions`, `/anthropic/v1/messages` and a failing
    /// `/broken/chat/completions`; `outside` is the path the "read outside" script asks for.
    fn start(outside: &str) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let gate = Arc::new(Gate::default());
        let outside = outside.to_string();
        let thread = {
            let (seen, stop) = (seen.clone(), stop.clone());
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let (seen, gate, outside) = (seen.clone(), gate.clone(), outside.clone());
                    std::thread::spawn(move || serve(stream, &seen, &gate, &outside));
                }
            })
        };
        Self {
            base: format!("http://127.0.0.1:{port}"),
            seen,
            stop,
            thread: Some(thread),
        }
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop so that it sees the flag.
        let _ = TcpStream::connect(self.base.trim_start_matches("http://"));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Reads one request (request line, headers, a Content-Length body) and answers it.
fn serve(stream: TcpStream, seen: &Mutex<Vec<Seen>>, gate: &Gate, outside: &str) {
    let mut reader = BufReader::new(stream);
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or_default()
        .to_string();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
        }
    }
    let length = headers
        .iter()
        .find(|(name, _)| name == "content-length")
        .and_then(|(_, value)| value.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    seen.lock().unwrap().push(Seen {
        path: path.clone(),
        headers,
        body: body.clone(),
    });
    let (status, reply) = respond(&path, &body, gate, outside);
    let mut stream = reader.into_inner();
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{reply}",
        reply.len()
    );
    let _ = stream.flush();
}

/// The status line's code and reason, and the body.
fn respond(path: &str, body: &Value, gate: &Gate, outside: &str) -> (&'static str, String) {
    let wire = match path {
        "/openai/chat/completions" => Wire::OpenAi,
        "/anthropic/v1/messages" => Wire::Anthropic,
        _ => return ("500 Internal Server Error", "upstream exploded".to_string()),
    };
    let (prompt, step, last) = read_request(wire, body);
    if let Some((model, system)) = agent_expectation(&prompt) {
        let seen = (&body["model"], &body["messages"][0]);
        let expected = (&json!(model), &json!({"role": "system", "content": system}));
        if seen != expected {
            let check = format!("CHECK FAILED: expected {expected:?}, got {seen:?}");
            return ("200 OK", answer(wire, complete(check), step).to_string());
        }
    }
    if prompt == "slow" && step == 0 {
        // Long enough for the host's call timeout (1 s in the test) to cancel the run first.
        std::thread::sleep(std::time::Duration::from_secs(3));
    }
    let action = if prompt.starts_with("read note ") && step == 0 && !gate.gather() {
        complete("CHECK FAILED: the subagents did not run in parallel".to_string())
    } else {
        script(&prompt, step, last.as_deref(), outside)
    };
    ("200 OK", answer(wire, action, step).to_string())
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

struct Fixture {
    workspace: tempfile::TempDir,
    outside: tempfile::TempDir,
    plugins: PluginDir,
    endpoint: Endpoint,
}

fn fixture() -> Fixture {
    let workspace = workdir();
    std::fs::create_dir(workspace.path().join("notes")).unwrap();
    for n in 1..=5 {
        std::fs::write(
            workspace.path().join(format!("notes/{n}.txt")),
            format!("note number {n}\n"),
        )
        .unwrap();
    }
    let outside = workdir();
    std::fs::write(outside.path().join("secret.txt"), "secret\n").unwrap();
    let plugins = PluginDir::empty();
    plugins
        .add_library("use_subagents")
        .add_library("read_file")
        .add_library("list_files");
    let endpoint = Endpoint::start(&outside.path().join("secret.txt").to_string_lossy());
    Fixture {
        workspace,
        outside,
        plugins,
        endpoint,
    }
}

fn settings_text(fixture: &Fixture, protocol: &str, extra: &str) -> String {
    format!(
        "[subagents]\nenabled = true\nmax_turns = 4\n\n[llm]\nbase_url = \"{}/{protocol}\"\n\
         model = \"scripted-model\"\nprotocol = \"{protocol}\"\nproxy = \"none\"\n\
         retry_attempts = 2\nretry_delay_ms = 1\ncontext_window = 100000\n{extra}",
        fixture.endpoint.base
    )
}

fn settings(fixture: &Fixture, protocol: &str, extra: &str) -> Settings {
    let text = settings_text(fixture, protocol, extra);
    Settings::from_toml(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn run(fixture: &Fixture, settings: Settings, params: Value) -> (String, RecordingUi) {
    let (host, ui) =
        in_process::host_with(fixture.plugins.path(), fixture.workspace.path(), settings);
    let outcome = host.call("use_subagents", &params.to_string());
    (outcome.model_text(), ui)
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

#[test]
fn five_subagents_run_in_parallel_and_all_complete() {
    let fixture = fixture();
    let params = json!({
        "prompt_1": "read note 1", "prompt_2": "read note 2", "prompt_3": "read note 3",
        "prompt_4": "read note 4", "prompt_5": "read note 5",
    });
    let (text, ui) = run(&fixture, settings(&fixture, "openai", ""), params);
    let mut expected = "Subagent results:\nTotal: 5\nSucceeded: 5\nFailed: 0\nTool calls: 10\n\
                        Peak context usage: 110 / 100,000 (0.1%)\n"
        .to_string();
    for n in 1..=5 {
        expected.push_str(&format!(
            "\n[{n}] COMPLETED - read note {n}\nNote {n} reads \"note number {n}\".\nRelevant file paths\nnotes/{n}.txt"
        ));
    }
    assert_eq!(text, expected);

    assert_eq!(
        ui.of_kind("subagent_usage"),
        vec![
            json!({"source": "subagents", "tokensIn": 1000, "tokensOut": 100,
                    "cacheWrites": 0, "cacheReads": 0, "cost": 0})
            .to_string()
        ]
    );
    let finals = ui.of_kind("subagent");
    assert_eq!(finals.len(), 1);
    let last: Value = serde_json::from_str(&finals[0]).unwrap();
    assert_eq!(
        (
            &last["status"],
            &last["total"],
            &last["successes"],
            &last["failures"],
            &last["toolCalls"]
        ),
        (
            &json!("completed"),
            &json!(5),
            &json!(5),
            &json!(0),
            &json!(10)
        )
    );
    assert_eq!(
        last["items"][2]["latestToolCall"],
        json!("attempt_completion(result=Note 3 reads \"note number 3\". Relevant file path...)")
    );
    let partials = ui
        .said
        .lock()
        .unwrap()
        .iter()
        .filter(|s| s.kind == "subagent" && s.partial)
        .count();
    assert!(partials >= 5 * 4, "progress events: {partials}");

    // What the model was sent: the seven tools, the model id, no key.
    let first = fixture.endpoint.seen()[0].clone();
    let tools: Vec<&str> = first.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        tools,
        [
            "read_file",
            "list_files",
            "search_files",
            "list_code_definition_names",
            "execute_command",
            "use_skill",
            "attempt_completion"
        ]
    );
    assert_eq!(first.body["model"], "scripted-model");
    assert!(!first
        .headers
        .iter()
        .any(|(name, _)| name == "authorization"));
}

#[test]
fn a_forbidden_tool_is_refused_and_the_loop_goes_on() {
    let fixture = fixture();
    let (text, _ui) = run(
        &fixture,
        settings(&fixture, "openai", ""),
        json!({"prompt_1": "write something"}),
    );
    assert_eq!(
        text,
        "Subagent results:\nTotal: 1\nSucceeded: 1\nFailed: 0\nTool calls: 3\n\
         Peak context usage: 110 / 100,000 (0.1%)\n\n\
         [1] COMPLETED - write something\nWriting is refused; listed notes instead."
    );
    assert!(!fixture.workspace.path().join("created.txt").exists());
}

#[test]
fn a_path_outside_the_workspace_is_denied_by_the_host_and_the_model_sees_it() {
    let fixture = fixture();
    let (text, ui) = run(
        &fixture,
        settings(&fixture, "openai", ""),
        json!({"prompt_1": "read outside"}),
    );
    assert_eq!(
        text,
        "Subagent results:\nTotal: 1\nSucceeded: 1\nFailed: 0\nTool calls: 2\n\
         Peak context usage: 110 / 100,000 (0.1%)\n\n\
         [1] COMPLETED - read outside\nThe host denied the read."
    );
    let approvals = ui.of_kind("approval");
    assert_eq!(approvals.len(), 2, "{approvals:?}");
    assert!(
        approvals[1].ends_with("? denied (not auto-approved, and subagents do not ask the user)"),
        "{approvals:?}"
    );
    assert!(fixture.outside.path().join("secret.txt").exists());
}

#[test]
fn a_cancelled_call_stops_its_subagents() {
    let fixture = fixture();
    let settings = settings(&fixture, "openai", "\n[limits]\ncall_timeout_secs = 1\n");
    let (host, _ui) =
        in_process::host_with(fixture.plugins.path(), fixture.workspace.path(), settings);
    let outcome = host.call("use_subagents", &json!({"prompt_1": "slow"}).to_string());
    assert_eq!(
        outcome.result.as_ref().map_err(|e| e.kind).unwrap_err(),
        ErrorKind::Timeout
    );
    // The slow answer (a tool call) arrives after the cancellation: a loop that went on would
    // run the tool and ask the model again.
    std::thread::sleep(std::time::Duration::from_secs(4));
    let slow_requests = fixture
        .endpoint
        .seen()
        .iter()
        .filter(|seen| read_request(Wire::OpenAi, &seen.body).0 == "slow")
        .count();
    assert_eq!(
        slow_requests, 1,
        "the cancelled subagent kept asking the model"
    );
}

#[test]
fn a_missing_parameter_is_reported_without_the_xml_reminder() {
    let fixture = fixture();
    let (text, _ui) = run(
        &fixture,
        settings(&fixture, "openai", ""),
        json!({"prompt_1": "leave out the path"}),
    );
    assert!(
        text.ends_with("[1] COMPLETED - leave out the path\nTold about the missing path."),
        "{text}"
    );
}

#[test]
fn malformed_arguments_are_reported_to_the_model() {
    let fixture = fixture();
    let (text, _ui) = run(
        &fixture,
        settings(&fixture, "openai", ""),
        json!({"prompt_1": "bad arguments"}),
    );
    assert_eq!(
        text,
        "Subagent results:\nTotal: 1\nSucceeded: 1\nFailed: 0\nTool calls: 1\n\
         Peak context usage: 110 / 100,000 (0.1%)\n\n\
         [1] COMPLETED - bad arguments\nTold about the bad arguments."
    );
}

#[test]
fn the_turn_limit_and_silent_answers_end_one_subagent_and_the_others_go_on() {
    let fixture = fixture();
    let (text, _ui) = run(
        &fixture,
        settings(&fixture, "openai", ""),
        json!({"prompt_1": "never finish", "prompt_2": "only talk", "prompt_3": "write something"}),
    );
    assert_eq!(
        text,
        format!(
            "Subagent results:\nTotal: 3\nSucceeded: 1\nFailed: 2\nTool calls: 7\n\
             Peak context usage: 110 / 100,000 (0.1%)\n\n\
             [1] FAILED - never finish\n{}\n\
             [2] FAILED - only talk\n{NO_COMPLETION}\n\
             [3] COMPLETED - write something\nWriting is refused; listed notes instead.",
            turn_limit(4)
        )
    );
    // "only talk" was nudged three times, then failed on its fourth silent answer.
    let talk = fixture
        .endpoint
        .seen()
        .into_iter()
        .filter(|s| {
            s.body["messages"][1]["content"]
                .as_str()
                .unwrap_or_default()
                .starts_with("only talk")
        })
        .count();
    assert_eq!(talk, 4);
}

#[test]
fn the_anthropic_protocol_runs_the_same_loop() {
    let fixture = fixture();
    // A variable every environment has stands in for the key: the in-process tests share this
    // process's environment, so none is set here.
    let settings = settings(&fixture, "anthropic", "api_key_env = \"PATH\"\n");
    let (text, ui) = run(
        &fixture,
        settings,
        json!({"prompt_1": "write something", "prompt_2": "read outside"}),
    );
    assert_eq!(
        text,
        "Subagent results:\nTotal: 2\nSucceeded: 2\nFailed: 0\nTool calls: 5\n\
         Peak context usage: 220 / 100,000 (0.2%)\n\n\
         [1] COMPLETED - write something\nWriting is refused; listed notes instead.\n\
         [2] COMPLETED - read outside\nThe host denied the read."
    );
    assert_eq!(
        ui.of_kind("subagent_usage"),
        vec![
            json!({"source": "subagents", "tokensIn": 1000, "tokensOut": 100,
                    "cacheWrites": 0, "cacheReads": 0, "cost": 0})
            .to_string()
        ]
    );
    let seen = fixture.endpoint.seen();
    let header = |name: &str| {
        seen[0]
            .headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(header("x-api-key"), std::env::var("PATH").ok());
    assert_eq!(header("anthropic-version").as_deref(), Some("2023-06-01"));
    assert_eq!(seen[0].body["max_tokens"], 8192);
}

#[test]
fn an_endpoint_that_fails_ends_the_subagent_after_the_retries() {
    let fixture = fixture();
    let text = format!(
        "[subagents]\nenabled = true\n\n[llm]\nbase_url = \"{}/broken\"\nmodel = \"m\"\n\
         proxy = \"none\"\nretry_attempts = 2\nretry_delay_ms = 1\n",
        fixture.endpoint.base
    );
    let (text, _ui) = run(
        &fixture,
        Settings::from_toml(&text).unwrap(),
        json!({"prompt_1": "anything"}),
    );
    assert_eq!(
        text,
        "Subagent results:\nTotal: 1\nSucceeded: 0\nFailed: 1\nTool calls: 0\n\n\
         [1] FAILED - anything\n\
         The model request failed: Request failed with status code 500: upstream exploded"
    );
    let paths: Vec<String> = fixture
        .endpoint
        .seen()
        .into_iter()
        .map(|s| s.path)
        .collect();
    assert_eq!(
        paths,
        ["/broken/chat/completions", "/broken/chat/completions"]
    );
}

#[test]
fn an_endpoint_nobody_listens_on_is_a_failure_too() {
    let fixture = fixture();
    // A port that was just free: bind, note the port, close.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let text = format!(
        "[subagents]\nenabled = true\n\n[llm]\nbase_url = \"http://127.0.0.1:{port}\"\n\
         model = \"m\"\nproxy = \"none\"\nretry_attempts = 1\n"
    );
    let (text, _ui) = run(
        &fixture,
        Settings::from_toml(&text).unwrap(),
        json!({"prompt_1": "anything"}),
    );
    let expected_start = format!(
        "Subagent results:\nTotal: 1\nSucceeded: 0\nFailed: 1\nTool calls: 0\n\n\
         [1] FAILED - anything\nThe model request failed: Request failed with status code 502: \
         egress: 127.0.0.1:{port} cannot be reached: "
    );
    assert!(text.starts_with(&expected_start), "{text}");
}

#[test]
fn without_an_endpoint_the_tool_is_unavailable_and_names_the_keys() {
    let fixture = fixture();
    let (host, _ui) = in_process::host_with(
        fixture.plugins.path(),
        fixture.workspace.path(),
        Settings::from_toml("[subagents]\nenabled = true\n").unwrap(),
    );
    let outcome = host.call("use_subagents", &json!({"prompt_1": "x"}).to_string());
    let error = outcome.result.as_ref().unwrap_err();
    assert_eq!(error.kind, ErrorKind::Unavailable);
    assert_eq!(outcome.model_text(), tool_error(NO_ENDPOINT));
    assert!(fixture.endpoint.seen().is_empty());
}

#[test]
fn subagents_are_disabled_by_default() {
    let fixture = fixture();
    let (host, _ui) = in_process::host(fixture.plugins.path(), fixture.workspace.path());
    let outcome = host.call("use_subagents", &json!({"prompt_1": "x"}).to_string());
    assert_eq!(outcome.model_text(), tool_error(DISABLED));
}

// ---------------------------------------------------------------------------------------------
// Named subagents (agent config files), through a toolhost child process
// ---------------------------------------------------------------------------------------------

const LONG_NAME: &str =
    "The Extremely Thorough Repository Archaeologist Who Reads Every Single File";

/// An agent directory: three valid agents (two of them sanitising to the same name, one with a
/// name too long for a tool name) and files that must be skipped.
fn agent_dir() -> tempfile::TempDir {
    let dir = workdir();
    let long = format!("---\nname: {LONG_NAME}\ndescription: Digs deep\n---\nDig.\n");
    let files = [
        (
            "a-db.yaml",
            "---\nname: \"  DB Explorer  \"\ndescription: Maps database schema and migrations\n\
             modelId: agent-model\ntools: read_file, search_files, write_to_file\n---\n\n\
             You map databases. Report table names.\n\n",
        ),
        (
            "b.yml",
            "---\nname: db.explorer\ndescription: Second opinion\n---\nYou double-check.\n",
        ),
        ("Long.YAML", long.as_str()),
        // Skipped: no description; an unknown tool id; no front matter; not a YAML file.
        ("c-bad.yaml", "---\nname: No Description\n---\nBody.\n"),
        (
            "d-unknown.yaml",
            "---\nname: Teleporter\ndescription: Moves\ntools: teleport\n---\nBody.\n",
        ),
        (
            "e-plain.yaml",
            "name: Plain\ndescription: No front matter\n",
        ),
        (
            "f.txt",
            "---\nname: Text File\ndescription: Wrong extension\n---\nBody.\n",
        ),
    ];
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

/// `(name, description)` of every tool the use_subagents plugin registers, in the host's order.
fn registered(plugins: &PluginDir, agents: &std::path::Path) -> Vec<(String, String)> {
    let run = toolhost_tests::run(
        toolhost()
            .env("TOOLHOST_AGENTS_DIR", agents)
            .arg("--plugins")
            .arg(plugins.path())
            .args(["tools", "--json"]),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.json()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["plugin"] == "use_subagents")
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_string(),
                t["description"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// `toolhost call` of a named subagent tool against the scripted endpoint.
fn call_agent(fixture: &Fixture, agents: &std::path::Path, tool: &str, params: Value) -> Value {
    let settings_dir = workdir();
    let settings_file = settings_dir.path().join("settings.toml");
    std::fs::write(&settings_file, settings_text(fixture, "openai", "")).unwrap();
    let run = toolhost_tests::run(
        toolhost()
            .env("TOOLHOST_AGENTS_DIR", agents)
            .arg("--plugins")
            .arg(fixture.plugins.path())
            .arg("--settings")
            .arg(&settings_file)
            .args(["call", tool, &params.to_string(), "--json", "--cwd"])
            .arg(fixture.workspace.path()),
    );
    run.json()
}

#[test]
fn agent_files_become_named_tools_and_replace_the_generic_one() {
    let plugins = PluginDir::empty();
    plugins.add_library("use_subagents");
    let agents = agent_dir();
    let long_tool = "use_subagent_the_extremely_thorough_repository_archaeolog_td2ft0";
    assert_eq!(long_tool.len(), 64);
    let mut expected = vec![
        (
            "use_subagent_db_explorer".to_string(),
            "Use the \"DB Explorer\" subagent: Maps database schema and migrations".to_string(),
        ),
        (
            "use_subagent_db_explorer_2".to_string(),
            "Use the \"db.explorer\" subagent: Second opinion".to_string(),
        ),
        (
            long_tool.to_string(),
            format!("Use the \"{LONG_NAME}\" subagent: Digs deep"),
        ),
    ];
    let mut seen = registered(&plugins, agents.path());
    seen.sort();
    expected.sort();
    assert_eq!(seen, expected);

    // Without agents only the generic tool is offered.
    let empty = workdir();
    let generic: Vec<String> = registered(&plugins, empty.path())
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    assert_eq!(generic, ["use_subagents"]);
}

#[test]
fn a_named_agent_runs_with_its_prompt_model_and_tools() {
    let fixture = fixture();
    let agents = agent_dir();
    let json = call_agent(
        &fixture,
        agents.path(),
        "use_subagent_db_explorer",
        json!({"prompt": "  agent list  "}),
    );
    assert_eq!(
        json,
        json!({"is_error": false, "images": [], "text":
            "Subagent results:\nTotal: 1\nSucceeded: 1\nFailed: 0\nTool calls: 3\n\
             Peak context usage: 110 / 100,000 (0.1%)\n\n\
             [1] COMPLETED - agent list\nlist_files was refused; note 1 was read."})
    );
    // The default set cut to the agent's list (write_to_file is not a subagent tool at all).
    let requests = fixture.endpoint.seen();
    assert_eq!(requests.len(), 3);
    let tools: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["read_file", "search_files", "attempt_completion"]);
}

#[test]
fn a_named_agent_accepts_prompt_1_and_defaults_to_the_configured_model() {
    let fixture = fixture();
    let agents = agent_dir();
    let json = call_agent(
        &fixture,
        agents.path(),
        "use_subagent_db_explorer_2",
        json!({"prompt_1": "agent fallback"}),
    );
    assert_eq!(
        json,
        json!({"is_error": false, "images": [], "text":
            "Subagent results:\nTotal: 1\nSucceeded: 1\nFailed: 0\nTool calls: 1\n\
             Peak context usage: 110 / 100,000 (0.1%)\n\n\
             [1] COMPLETED - agent fallback\nChecked."})
    );
    let requests = fixture.endpoint.seen();
    let tools = requests[0].body["tools"].as_array().unwrap().len();
    assert_eq!(tools, 7);
}

#[test]
fn a_named_agent_without_a_prompt_is_a_missing_parameter() {
    let fixture = fixture();
    let agents = agent_dir();
    let json = call_agent(
        &fixture,
        agents.path(),
        "use_subagent_db_explorer",
        json!({"prompt": " "}),
    );
    assert_eq!(
        json,
        json!({"is_error": true, "images": [], "error_kind": "invalid_params",
               "text": tool_error(&tool_api::texts::missing_param_error("prompt"))})
    );
    assert!(fixture.endpoint.seen().is_empty());
}
