//! A question to the client's user ends with its call. `toolhost mcp` (`elicitation/create`):
//! when the call is cancelled, given up at its timeout, or nobody answers in time, the client is
//! told with `notifications/cancelled` for the question, so that it stops showing it.
//! `toolhost serve --ask` (`ask` lines): a question its call left, or unanswered in time, is
//! withdrawn with `{"withdrawn": N}`, and the next line is a request again. The egress
//! proxy's question is a form of three choices.
//!
//! Spoken line by line by clients that never answer, so that what is checked is what crosses
//! the wire (the Python SDK closes a question by itself once the call that asked it has ended;
//! other clients may not).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use toolhost_tests::{isolated_command, toolhost_bin, workdir, PluginDir};

/// A guard against a hung host, not a timing assertion.
const PATIENCE: Duration = Duration::from_secs(30);

/// The id of the client's `tools/call`.
const CALL_ID: u64 = 2;

/// `toolhost mcp` or `toolhost serve --ask` with the real plugins in process, under
/// `settings`, and its client.
struct Client {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Value>,
    _plugins: PluginDir,
    _dirs: [tempfile::TempDir; 2],
}

impl Client {
    /// `toolhost mcp`, initialized by a client that declares elicitation.
    fn mcp(settings: &str) -> Self {
        let mut client = Self::start(&["mcp"], settings);
        client.send(json!({"id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "tests", "version": "1"}}}));
        client.next("the answer to initialize", |m| m["id"] == 1);
        client.send(json!({"method": "notifications/initialized"}));
        client
    }

    /// `toolhost serve --ask`.
    fn serve(settings: &str) -> Self {
        Self::start(&["serve", "--ask"], settings)
    }

    fn start(frontend: &[&str], settings: &str) -> Self {
        let plugins = PluginDir::real();
        let (workspace, config) = (workdir(), workdir());
        let settings_file = config.path().join("settings.toml");
        std::fs::write(&settings_file, settings).unwrap();
        let mut child = isolated_command(&toolhost_bin(), config.path())
            .args(["--isolation", "in-process", "--plugins"])
            .arg(plugins.path())
            .arg("--settings")
            .arg(&settings_file)
            .args(frontend)
            .arg("--cwd")
            .arg(workspace.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start toolhost mcp");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let Ok(line) = line else { break };
                let message = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("not a protocol line ({e}): {line:.300}"));
                if sender.send(message).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            stdin,
            lines,
            _plugins: plugins,
            _dirs: [workspace, config],
        }
    }

    /// Sends an MCP message (`jsonrpc` added).
    fn send(&mut self, mut message: Value) {
        message["jsonrpc"] = json!("2.0");
        self.send_line(&message);
    }

    fn send_line(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next message that is `what`, the others skipped; a panic after [`PATIENCE`].
    fn next(&self, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(message) if wanted(&message) => return message,
                Ok(_) => continue,
                Err(_) => panic!("no {what} within {} s", PATIENCE.as_secs()),
            }
        }
    }

    /// Calls ask_followup_question and returns the id of the question the client is asked.
    fn ask(&mut self) -> Value {
        self.send(json!({"id": CALL_ID, "method": "tools/call", "params": {
            "name": "ask_followup_question", "arguments": {"question": "Which colour?"}}}));
        let question = self.next("elicitation/create", |m| {
            m["method"] == "elicitation/create"
        });
        assert_eq!(question["params"]["message"], "Which colour?", "{question}");
        question["id"].clone()
    }

    /// Waits for the host to withdraw the question `id`.
    fn withdrawn(&self, id: &Value) -> Value {
        self.next("notifications/cancelled for the question", |m| {
            is_withdrawal(m, id)
        })
    }

    /// The next message that is `first` and the next that is `second`, in either order.
    fn both(&self, first: impl Fn(&Value) -> bool, second: impl Fn(&Value) -> bool) -> [Value; 2] {
        let mut found = [None, None];
        while found.iter().any(Option::is_none) {
            let message = self.next("the two messages", |m| {
                (found[0].is_none() && first(m)) || (found[1].is_none() && second(m))
            });
            let slot = usize::from(!(found[0].is_none() && first(&message)));
            found[slot] = Some(message);
        }
        found.map(Option::unwrap)
    }
}

/// Whether `message` withdraws the question `id` (MCP's `notifications/cancelled`).
fn is_withdrawal(message: &Value, id: &Value) -> bool {
    message["method"] == "notifications/cancelled" && message["params"]["requestId"] == *id
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_question_is_withdrawn_when_the_client_cancels_its_call() {
    let mut client = Client::mcp("");
    let question = client.ask();
    client.send(json!({"method": "notifications/cancelled",
        "params": {"requestId": CALL_ID, "reason": "the user pressed stop"}}));
    client.withdrawn(&question);
}

#[test]
fn a_question_is_withdrawn_when_its_call_is_given_up_at_its_timeout() {
    let mut client = Client::mcp("[limits]\ncall_timeout_secs = 1\n");
    let question = client.ask();
    let [answer, _] = client.both(|m| m["id"] == CALL_ID, |m| is_withdrawal(m, &question));
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("did not finish within 1 seconds"), "{answer}");
}

#[test]
fn a_question_is_withdrawn_when_nobody_answers_in_time() {
    let mut client = Client::mcp("[limits]\nask_timeout_secs = 1\n");
    let question = client.ask();
    // The call goes on without an answer, as with nobody to ask.
    let [answer, _] = client.both(|m| m["id"] == CALL_ID, |m| is_withdrawal(m, &question));
    assert!(answer["result"].is_object(), "{answer}");
}

/// The serve request that asks a question.
fn serve_question() -> Value {
    json!({"id": 1, "tool": "ask_followup_question", "params": {"question": "Which colour?"}})
}

#[test]
fn serve_withdraws_a_question_whose_call_was_given_up() {
    let mut client = Client::serve("[limits]\ncall_timeout_secs = 1\n");
    client.send_line(&serve_question());
    let asked = client.next("the ask line", |m| m.get("ask").is_some());
    let id = asked["ask"]["id"].clone();
    let withdrawn = client.next("a line", |_| true);
    assert_eq!(withdrawn, json!({"withdrawn": id}));
    let answer = client.next("the answer to the call", |m| m["id"] == 1);
    assert_eq!(answer["is_error"], true, "{answer}");
    assert!(
        answer["text"]
            .as_str()
            .unwrap()
            .contains("did not finish within 1 seconds"),
        "{answer}"
    );
    // The next line is a request again, not taken for the question's answer.
    client.send_line(&json!({"id": 2, "tool": "list_files", "params": {"path": "."}}));
    let listed = client.next("the answer to list_files", |m| m["id"] == 2);
    assert_eq!(listed["is_error"], false, "{listed}");
    // A late answer to the question answers nothing: the next line out is request 4's.
    client.send_line(&json!({"answer": id, "response": "message", "text": "blue"}));
    client.send_line(&json!({"id": 4, "tool": "list_files", "params": {"path": "."}}));
    let next = client.next("a line", |_| true);
    assert_eq!(next["id"], 4, "{next}");
}

#[test]
fn serve_withdraws_a_question_nobody_answers_in_time() {
    let mut client = Client::serve("[limits]\nask_timeout_secs = 1\n");
    client.send_line(&serve_question());
    let asked = client.next("the ask line", |m| m.get("ask").is_some());
    let withdrawn = client.next("a line", |_| true);
    assert_eq!(withdrawn, json!({"withdrawn": asked["ask"]["id"]}));
    // The tool goes on without an answer, as with nobody to ask.
    let answer = client.next("the answer to the call", |m| m["id"] == 1);
    assert!(answer["text"].is_string(), "{answer}");
}

/// The egress proxy's question over MCP: an elicitation with three choices. "for this task"
/// holds for the rest of the session's task (not asked again); "no" refuses, saying so.
#[test]
fn the_egress_question_is_an_elicitation_with_its_three_choices() {
    let mut client = Client::mcp("[auto_approve]\nexecute_safe_commands = true\n");
    let fetch = |client: &mut Client, id: u64, host: &str| {
        client.send(json!({"id": id, "method": "tools/call", "params": {
            "name": "execute_command",
            "arguments": {"command": format!("curl -sS http://{host}/"), "requires_approval": "false"}}}));
    };
    let text_of = |result: &Value| {
        result["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    fetch(&mut client, 10, "asked.invalid");
    let question = client.next("elicitation/create", |m| {
        m["method"] == "elicitation/create"
    });
    let message = question["params"]["message"].as_str().unwrap();
    assert!(
        message.contains("wants to connect to asked.invalid:80"),
        "{question}"
    );
    let choices = &question["params"]["requestedSchema"]["properties"]["allow"]["enum"];
    assert_eq!(
        *choices,
        json!(["for this task", "always", "no"]),
        "{question}"
    );
    client.send(json!({"id": question["id"], "result": {
        "action": "accept", "content": {"allow": "for this task"}}}));
    let result = client.next("the call's result", |m| m["id"] == 10);
    assert!(
        text_of(&result).contains("asked.invalid:80 cannot be resolved"),
        "{result}"
    );
    // Not asked again in this task: the next message is the result.
    fetch(&mut client, 11, "asked.invalid");
    let next = client.next("the next message", |m| {
        m["id"] == 11 || m["method"] == "elicitation/create"
    });
    assert_eq!(next["id"], 11, "asked again: {next}");
    // Refused.
    fetch(&mut client, 12, "refused.invalid");
    let question = client.next("elicitation/create", |m| {
        m["method"] == "elicitation/create"
    });
    client.send(json!({"id": question["id"], "result": {
        "action": "accept", "content": {"allow": "no"}}}));
    let result = client.next("the call's result", |m| m["id"] == 12);
    let text = text_of(&result);
    assert!(text.contains("refused by the user"), "{result}");
    assert!(!text.contains("cannot be resolved"), "{result}");
}
