//! `toolhost mcp` for clients of protocol 2026-07-28, which have no session: the official MCP
//! Python SDK's `Client` in its modern mode (`server/discover`, every request's `_meta`), over
//! stdio and streamable HTTP, asked by `InputRequiredResult`s and keeping one conversation's
//! state across calls; and the `requestState` attacked line by line: changed, moved to another
//! call, used twice, too old.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};

use serde_json::{json, Value};
use tool_api::texts;
use toolhost_tests::{toolhost_bin, workdir, PluginDir};

use crate::mcp_session::run_script;

/// The Python SDK's `Client`, modern mode: runs `steps` ([tool, arguments]) and prints what it
/// saw. Questions are answered from `answers` in turn: "accept the defaults" (what a form sends
/// when the user presses Accept), or an `ElicitResult`.
const MODERN_CLIENT: &str = r#"
import asyncio, json, sys

import httpx2
import mcp.types as types
from mcp import StdioServerParameters
from mcp.client.client import Client
from mcp.client.streamable_http import streamable_http_client

config = json.loads(open(sys.argv[1]).read())
seen = {"elicitations": [], "logs": []}


async def elicit(context, params):
    seen["elicitations"].append(params.message)
    answer = config["answers"].pop(0)
    if answer == "accept the defaults":
        defaults = {name: field["default"] for name, field in params.requested_schema["properties"].items()
                    if "default" in field}
        return types.ElicitResult(action="accept", content=defaults)
    return types.ElicitResult(**answer)


async def on_log(params):
    seen["logs"].append(params.level)


def text_of(result):
    return {"isError": result.is_error, "text": "\n".join(c.text for c in result.content if getattr(c, "text", None))}


async def main():
    if config["transport"] == "http":
        http = httpx2.AsyncClient(headers={"Authorization": "Bearer " + config["token"]})
        server = streamable_http_client(config["url"], http_client=http)
    else:
        server = StdioServerParameters(command=config["toolhost"],
                                       args=["--isolation", "in-process", "--plugins", config["plugins"], "mcp",
                                             "--cwd", config["workspace"]],
                                       env={"XDG_CONFIG_HOME": config["config_home"],
                                            "XDG_DATA_HOME": config["config_home"]})
    out = {"results": []}
    async with Client(server, mode="auto", elicitation_callback=elicit if config["elicit"] else None,
                      logging_callback=on_log, log_level=config.get("log_level")) as client:
        out["version"] = client.session.protocol_version
        for name, arguments in config["steps"]:
            out["results"].append(text_of(await client.call_tool(name, arguments)))
        listed = await client.list_tools()
        out["tools"] = [tool.name for tool in listed.tools]
    out.update(seen)
    print(json.dumps(out))


asyncio.run(main())
"#;

/// Runs the modern client over `transport` ("stdio" or "http": then `server`'s URL and token)
/// with `scenario`'s fields.
fn modern(
    plugins: &PluginDir,
    ws: &std::path::Path,
    server: Option<&HttpServer>,
    scenario: Value,
) -> Value {
    let home = workdir();
    let mut config = json!({
        "toolhost": toolhost_bin(),
        "plugins": plugins.path(),
        "workspace": ws,
        "config_home": home.path(),
        "transport": "stdio",
        "elicit": true,
        "answers": [],
    });
    if let Some(server) = server {
        config["transport"] = json!("http");
        config["url"] = json!(server.url);
        config["token"] = json!(server.token);
    }
    if let Value::Object(fields) = scenario {
        for (key, value) in fields {
            config[key] = value;
        }
    }
    run_script("python3", &[], MODERN_CLIENT, "modern.py", &config)
}

/// `toolhost mcp --http` on a free port, killed when dropped.
struct HttpServer {
    child: Child,
    url: String,
    token: String,
    _dir: tempfile::TempDir,
}

impl HttpServer {
    fn start(plugins: &PluginDir, ws: &std::path::Path) -> Self {
        Self::start_with(plugins, ws, &[])
    }

    /// [`HttpServer::start`] with `global` options before `mcp` (`--settings FILE`).
    fn start_with(plugins: &PluginDir, ws: &std::path::Path, global: &[&str]) -> Self {
        let dir = workdir();
        let token = "modern-test-token".to_string();
        std::fs::write(dir.path().join("token"), &token).unwrap();
        let mut child = Command::new(toolhost_bin())
            .args(["--isolation", "in-process", "--plugins"])
            .arg(plugins.path())
            .args(global)
            .args(["mcp", "--http", "127.0.0.1:0", "--token-file"])
            .arg(dir.path().join("token"))
            .arg("--cwd")
            .arg(ws)
            .env("XDG_CONFIG_HOME", dir.path())
            .env("XDG_DATA_HOME", dir.path())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        while !line.contains("http://") {
            line.clear();
            assert!(
                stderr.read_line(&mut line).unwrap() > 0,
                "the server did not start"
            );
        }
        let url = line[line.find("http://").unwrap()..].trim().to_string();
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        HttpServer {
            child,
            url,
            token,
            _dir: dir,
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Approved by accepting the form as it comes, a write lands; declined, the model reads
/// Cline's denial; a follow-up question is answered; the conversation's read cache and focus
/// chain hold from one call to the next.
fn asks_by_input_required_and_keeps_the_conversation(http: bool) {
    let plugins = PluginDir::real();
    let ws = workdir();
    let server = http.then(|| HttpServer::start(&plugins, ws.path()));
    let out = modern(
        &plugins,
        ws.path(),
        server.as_ref(),
        json!({
            "steps": [
                ["write_to_file", {"path": "a.txt", "content": "approved\n"}],
                ["write_to_file", {"path": "b.txt", "content": "declined\n"}],
                ["ask_followup_question", {"question": "Which colour?", "options": "[\"red\", \"green\"]"}],
                ["read_file", {"path": "a.txt"}],
                ["read_file", {"path": "a.txt"}],
                ["focus_chain", {"task_progress": "- [x] one\n- [ ] two"}],
                ["focus_chain", {"task_progress": "- [x] one\n- [x] two"}],
            ],
            "answers": [
                "accept the defaults",
                {"action": "decline"},
                {"action": "accept", "content": {"answer": "green"}},
            ],
        }),
    );
    assert_eq!(out["version"], "2026-07-28", "{out}");
    let results = out["results"].as_array().unwrap();
    assert_eq!(results[0]["isError"], false, "{out}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "approved\n"
    );
    assert_eq!(
        results[1],
        json!({"isError": true, "text": texts::TOOL_DENIED})
    );
    assert!(!ws.path().join("b.txt").exists());
    assert_eq!(
        results[2],
        json!({"isError": false, "text": "<answer>\ngreen\n</answer>"})
    );
    assert!(
        results[4]["text"]
            .as_str()
            .unwrap()
            .starts_with("[File already read]"),
        "the read cache holds across calls: {out}"
    );
    assert!(
        results[6]["text"]
            .as_str()
            .unwrap()
            .contains("2 of 2 items completed"),
        "{out}"
    );
    assert_eq!(
        out["elicitations"],
        json!([
            "Let write_to_file change a.txt?\n\ncontent: approved",
            "Let write_to_file change b.txt?\n\ncontent: declined",
            "Which colour?",
        ])
    );
    let tools: Vec<&str> = out["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    let mut sorted = tools.clone();
    sorted.sort_unstable();
    assert_eq!(tools, sorted, "the tool list comes in a stable order");
}

#[test]
fn stdio_asks_by_input_required_and_keeps_the_conversation() {
    asks_by_input_required_and_keeps_the_conversation(false);
}

#[test]
fn http_asks_by_input_required_and_keeps_the_conversation() {
    asks_by_input_required_and_keeps_the_conversation(true);
}

#[test]
fn without_elicitation_nobody_is_asked_and_the_model_is_told_so() {
    let plugins = PluginDir::real();
    let ws = workdir();
    let out = modern(
        &plugins,
        ws.path(),
        None,
        json!({"elicit": false, "steps": [["write_to_file", {"path": "x.txt", "content": "x"}]]}),
    );
    assert_eq!(
        out["results"][0],
        json!({"isError": true, "text": toolhost_tests::refused_by(
            "write_to_file",
            "nobody answered (the client cannot ask its user, or no answer came in time)",
            &["edit_files"],
        )})
    );
    assert!(!ws.path().join("x.txt").exists());
}

#[test]
fn log_messages_come_only_at_the_level_a_request_asks_for() {
    let plugins = PluginDir::real();
    let ws = workdir();
    // A missing parameter is an error event: a log message at level error.
    let step = json!([["read_file", {}]]);
    let quiet = modern(&plugins, ws.path(), None, json!({"steps": step}));
    assert_eq!(quiet["logs"], json!([]), "{quiet}");
    let asked = modern(
        &plugins,
        ws.path(),
        None,
        json!({"steps": step, "log_level": "warning"}),
    );
    assert_eq!(asked["logs"], json!(["error"]), "{asked}");
}

/// Speaks 2026-07-28 JSON-RPC line by line over stdio: each `send` is a request with complete
/// `_meta`; `answer` reads lines until the one answering it.
struct Wire {
    child: Child,
    lines: BufReader<std::process::ChildStdout>,
    next: u64,
}

impl Wire {
    fn start(plugins: &PluginDir, ws: &std::path::Path, settings: &str) -> Self {
        let settings_file = ws.join("settings.toml");
        std::fs::write(&settings_file, settings).unwrap();
        let mut child = Command::new(toolhost_bin())
            .args(["--isolation", "in-process", "--plugins"])
            .arg(plugins.path())
            .arg("--settings")
            .arg(&settings_file)
            .args(["mcp", "--cwd"])
            .arg(ws)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap());
        Wire {
            child,
            lines,
            next: 1,
        }
    }

    /// `tools/call` of `tool` with `arguments` and the extra `params` (a retry's state and
    /// responses); its answer.
    fn call(&mut self, tool: &str, arguments: Value, extra: Value) -> Value {
        let mut params = json!({"name": tool, "arguments": arguments});
        if let Value::Object(extra) = extra {
            for (key, value) in extra {
                params[key] = value;
            }
        }
        self.request("tools/call", params, json!({"elicitation": {}}))
    }

    /// A request of `method` with `params`, from a client of `capabilities`; its answer.
    fn request(&mut self, method: &str, mut params: Value, capabilities: Value) -> Value {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": capabilities,
            "io.modelcontextprotocol/clientInfo": {"name": "wire", "version": "1"},
        });
        let id = self.next;
        self.next += 1;
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{request}").unwrap();
        stdin.flush().unwrap();
        loop {
            let mut line = String::new();
            assert!(
                self.lines.read_line(&mut line).unwrap() > 0,
                "the server ended"
            );
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                return message;
            }
        }
    }

    /// `tasks/get` of `task` until its status is not `working`; its last answer.
    fn settled(&mut self, task: &str) -> Value {
        let tasks = json!({"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}});
        // A guard against a task that never settles, not a timing assertion.
        for _ in 0..600 {
            let got = self.request("tasks/get", json!({"taskId": task}), tasks.clone());
            if got["result"]["status"] != "working" {
                return got;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("task {task} stayed working");
    }
}

impl Drop for Wire {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn accept() -> Value {
    json!({"toolhost_question": {"action": "accept", "content": {"approve": true}}})
}

#[test]
fn a_request_state_answers_its_own_call_once_and_nothing_else() {
    let plugins = PluginDir::real();
    let ws = workdir();
    let mut wire = Wire::start(&plugins, ws.path(), "");
    let write = json!({"path": "a.txt", "content": "once\n"});
    let asked = wire.call("write_to_file", write.clone(), json!({}));
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    let state = asked["result"]["requestState"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        asked["result"]["inputRequests"]["toolhost_question"]["method"],
        "elicitation/create"
    );

    // Changed: refused, and nothing written.
    let tampered = wire.call(
        "write_to_file",
        write.clone(),
        json!({"requestState": format!("{state}x"), "inputResponses": accept()}),
    );
    assert_eq!(tampered["error"]["code"], -32602, "{tampered}");
    // Moved to another call (other arguments, another tool): refused.
    let moved = wire.call(
        "write_to_file",
        json!({"path": "../planted.txt", "content": "x"}),
        json!({"requestState": state, "inputResponses": accept()}),
    );
    assert_eq!(moved["error"]["code"], -32602, "{moved}");
    let other_tool = wire.call(
        "execute_command",
        json!({"command": "touch planted", "requires_approval": "true"}),
        json!({"requestState": state, "inputResponses": accept()}),
    );
    assert_eq!(other_tool["error"]["code"], -32602, "{other_tool}");
    assert!(!ws.path().join("a.txt").exists());
    assert!(!ws.path().join("planted").exists());

    // Its own call, answered: the write lands.
    let done = wire.call(
        "write_to_file",
        write.clone(),
        json!({"requestState": state, "inputResponses": accept()}),
    );
    assert_eq!(done["result"]["isError"], false, "{done}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "once\n"
    );
    // Used again: refused, and said why.
    let replayed = wire.call(
        "write_to_file",
        write,
        json!({"requestState": state, "inputResponses": accept()}),
    );
    assert_eq!(replayed["error"]["code"], -32602, "{replayed}");
    assert!(
        replayed["error"]["message"]
            .as_str()
            .unwrap()
            .contains("already used"),
        "{replayed}"
    );
}

#[test]
fn a_retry_without_the_answer_is_asked_again_and_an_old_state_is_refused() {
    let plugins = PluginDir::real();
    let ws = workdir();
    let mut wire = Wire::start(&plugins, ws.path(), "[limits]\nask_timeout_secs = 1\n");
    let write = json!({"path": "late.txt", "content": "late\n"});
    let asked = wire.call("write_to_file", write.clone(), json!({}));
    let state = asked["result"]["requestState"]
        .as_str()
        .unwrap()
        .to_string();
    let again = wire.call(
        "write_to_file",
        write.clone(),
        json!({"requestState": state, "inputResponses": {"another_key": {"action": "accept"}}}),
    );
    assert_eq!(again["result"]["resultType"], "input_required", "{again}");
    let fresh = again["result"]["requestState"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ne!(fresh, state);
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let stale = wire.call(
        "write_to_file",
        write,
        json!({"requestState": fresh, "inputResponses": accept()}),
    );
    assert_eq!(stale["error"]["code"], -32602, "{stale}");
    assert!(!ws.path().join("late.txt").exists());
}

/// The capabilities of a client that follows tasks and answers forms.
fn with_tasks() -> Value {
    json!({"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}})
}

#[test]
fn a_long_call_becomes_a_task_after_its_questions_and_ends_when_cancelled() {
    let plugins = PluginDir::real();
    let ws = workdir();
    let mut wire = Wire::start(
        &plugins,
        ws.path(),
        "[auto_approve]\nexecute_safe_commands = true\n",
    );
    // A quick command is answered at once, as any call.
    let quick = wire.request(
        "tools/call",
        json!({"name": "execute_command",
               "arguments": {"command": "echo quick", "requires_approval": "false"}}),
        with_tasks(),
    );
    assert_eq!(quick["result"]["resultType"], "complete", "{quick}");
    assert!(quick.to_string().contains("quick"), "{quick}");

    // One that runs on: a task, completed with the command's output.
    let started = wire.request(
        "tools/call",
        json!({"name": "execute_command",
               "arguments": {"command": "sleep 1; echo from-a-task", "requires_approval": "false"}}),
        with_tasks(),
    );
    assert_eq!(started["result"]["resultType"], "task", "{started}");
    let task = started["result"]["taskId"].as_str().unwrap().to_string();
    let done = wire.settled(&task);
    assert_eq!(done["result"]["status"], "completed", "{done}");
    assert!(
        done["result"]["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("from-a-task"),
        "{done}"
    );

    // A command that needs approval asks first, before any task; approved, it runs on as one.
    let command =
        json!({"command": "sleep 1; echo approved > approved.txt", "requires_approval": "true"});
    let asking = wire.request(
        "tools/call",
        json!({"name": "execute_command", "arguments": command}),
        with_tasks(),
    );
    assert_eq!(asking["result"]["resultType"], "input_required", "{asking}");
    assert!(asking["result"].get("taskId").is_none(), "{asking}");
    let state = asking["result"]["requestState"].as_str().unwrap();
    let (key, form) = asking["result"]["inputRequests"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .unwrap();
    assert!(
        form["params"]["message"]
            .as_str()
            .unwrap()
            .starts_with("sleep 1; echo approved > approved.txt"),
        "{form}"
    );
    let approved = wire.request(
        "tools/call",
        json!({"name": "execute_command", "arguments": command, "requestState": state,
               "inputResponses": {key.as_str(): {"action": "accept", "content": {"approve": true}}}}),
        with_tasks(),
    );
    assert_eq!(approved["result"]["resultType"], "task", "{approved}");
    assert!(
        approved["result"].get("requestState").is_none(),
        "{approved}"
    );
    let task = approved["result"]["taskId"].as_str().unwrap().to_string();
    let done = wire.settled(&task);
    assert_eq!(done["result"]["status"], "completed", "{done}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("approved.txt")).unwrap(),
        "approved\n"
    );

    // Cancelled: the command and what it started end, and nothing after them runs.
    let long = wire.request(
        "tools/call",
        json!({"name": "execute_command",
               "arguments": {"command": "(sleep 31.5; touch late-child) & sleep 31.5; touch late", "requires_approval": "false"}}),
        with_tasks(),
    );
    let task = long["result"]["taskId"].as_str().unwrap().to_string();
    let cancelled = wire.request("tasks/cancel", json!({"taskId": task}), with_tasks());
    assert!(cancelled.get("error").is_none(), "{cancelled}");
    let ended = wire.settled(&task);
    assert_eq!(ended["result"]["status"], "cancelled", "{ended}");
    std::thread::sleep(std::time::Duration::from_millis(300));
    let leftover = Command::new("pgrep")
        .args(["-f", "sleep 31[.]5"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&leftover.stdout).trim().is_empty(),
        "the command's processes outlived its task"
    );

    // A client that did not declare the extension gets the call's result, and no task.
    let plain = wire.request(
        "tools/call",
        json!({"name": "execute_command",
               "arguments": {"command": "echo plain", "requires_approval": "false"}}),
        json!({}),
    );
    assert_eq!(plain["result"]["resultType"], "complete", "{plain}");
    let refused = wire.request("tasks/get", json!({"taskId": task}), json!({}));
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
}

/// pydantic-ai (an agent framework; its MCP toolset is FastMCP 4's client, which speaks
/// 2026-07-28) with a scripted model: it calls `steps` in turn, answering questions with
/// `answers`, and prints what each call returned and what was asked.
const PYDANTIC_AI_AGENT: &str = r#"
import asyncio, json, sys

from fastmcp.client.elicitation import ElicitResult
from fastmcp.client.transports import StdioTransport
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset
from pydantic_ai.messages import ModelResponse, RetryPromptPart, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

config = json.loads(open(sys.argv[1]).read())
steps, answers = config["steps"], config["answers"]
returns, asked = [], []


def scripted(messages, info: AgentInfo):
    for part in getattr(messages[-1], "parts", []):
        if isinstance(part, (ToolReturnPart, RetryPromptPart)):
            returns.append(str(part.content))
    if len(returns) < len(steps):
        name, arguments = steps[len(returns)]
        return ModelResponse(parts=[ToolCallPart(name, arguments)])
    return ModelResponse(parts=[TextPart("done")])


async def elicit(message, response_type, params, context):
    asked.append(message)
    answer = answers.pop(0)
    if answer == "accept the defaults":
        schema = params.requested_schema
        defaults = {name: field["default"] for name, field in schema["properties"].items() if "default" in field}
        return ElicitResult(action="accept", content=defaults)
    return ElicitResult(**answer)


async def main():
    if config.get("url"):
        toolset = MCPToolset(config["url"], auth=config["token"], elicitation_handler=elicit,
                             tool_error_behavior="failed")
    else:
        transport = StdioTransport(command=config["toolhost"], args=config["args"], env=config["env"])
        toolset = MCPToolset(transport, elicitation_handler=elicit, tool_error_behavior="failed")
    result = await Agent(FunctionModel(scripted), toolsets=[toolset]).run("go")
    print(json.dumps({"output": result.output, "returns": returns, "asked": asked}))


asyncio.run(main())
"#;

/// The user is asked; an approval writes, a denial reaches the model as Cline's text; the
/// conversation's read cache and focus chain hold across the agent's calls.
fn pydantic_ai_agent_is_asked_and_keeps_its_conversation(http: bool) {
    let plugins = PluginDir::real();
    let ws = workdir();
    let home = workdir();
    let server = http.then(|| HttpServer::start(&plugins, ws.path()));
    let mut config = json!({
        "toolhost": toolhost_bin(),
        "args": ["--isolation", "in-process", "--plugins", plugins.path(), "mcp", "--cwd", ws.path()],
        "env": {"XDG_CONFIG_HOME": home.path(), "XDG_DATA_HOME": home.path()},
        "steps": [
            ["write_to_file", {"path": "a.txt", "content": "from the agent\n"}],
            ["write_to_file", {"path": "b.txt", "content": "refused\n"}],
            ["read_file", {"path": "a.txt"}],
            ["read_file", {"path": "a.txt"}],
            ["focus_chain", {"task_progress": "- [x] write\n- [ ] read"}],
            ["focus_chain", {"task_progress": "- [x] write\n- [x] read"}],
        ],
        "answers": ["accept the defaults", {"action": "decline"}],
    });
    if let Some(server) = &server {
        config["url"] = json!(server.url);
        config["token"] = json!(server.token);
    }
    let out = run_script("python3", &[], PYDANTIC_AI_AGENT, "agent.py", &config);
    assert_eq!(out["output"], "done", "{out}");
    let returns: Vec<&str> = out["returns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert!(
        returns[0].starts_with("The content was successfully saved to a.txt."),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "from the agent\n"
    );
    assert!(returns[1].contains(texts::TOOL_DENIED), "{out}");
    assert!(!ws.path().join("b.txt").exists());
    assert!(returns[3].starts_with("[File already read]"), "{out}");
    assert_eq!(
        returns[5],
        "Task progress list updated: 2 of 2 items completed."
    );
    assert_eq!(
        out["asked"],
        json!([
            "Let write_to_file change a.txt?\n\ncontent: from the agent",
            "Let write_to_file change b.txt?\n\ncontent: refused",
        ])
    );
}

#[test]
fn pydantic_ai_over_stdio_is_asked_and_keeps_its_conversation() {
    pydantic_ai_agent_is_asked_and_keeps_its_conversation(false);
}

#[test]
fn pydantic_ai_over_http_is_asked_and_keeps_its_conversation() {
    pydantic_ai_agent_is_asked_and_keeps_its_conversation(true);
}

/// A 2025-11-25 client that loses the stream of a call and comes back with `Last-Event-ID`:
/// it leaves after the first event, then resumes with a GET.
const RESUMING_CLIENT: &str = r#"
import json, sys, time
import httpx2

config = json.loads(open(sys.argv[1]).read())
url = config["url"]
headers = {"Authorization": "Bearer " + config["token"], "Content-Type": "application/json",
           "Accept": "application/json, text/event-stream"}
client = httpx2.Client(timeout=60)
opened = client.post(url, headers=headers, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "resuming", "version": "1"}}})
headers["mcp-session-id"] = opened.headers["mcp-session-id"]
headers["mcp-protocol-version"] = "2025-11-25"
client.post(url, headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "execute_command",
        "arguments": {"command": config["command"], "requires_approval": "false"}}}
last = None
with client.stream("POST", url, headers=headers, json=call) as stream:
    for line in stream.iter_lines():
        if line.startswith("id:"):
            last = line[3:].strip()
            break
resumed = dict(headers, **{"Last-Event-ID": last, "Accept": "text/event-stream"})
answer = None
with client.stream("GET", url, headers=resumed) as stream:
    for line in stream.iter_lines():
        if line.startswith("data:") and '"id":2' in line:
            answer = json.loads(line[5:])
            break
print(json.dumps({"last_event_id": last, "answer": answer}))
"#;

#[test]
fn a_2025_client_resumes_a_lost_stream_from_its_last_event_id() {
    let plugins = PluginDir::real();
    let ws = workdir();
    let settings = ws.path().join("settings.toml");
    std::fs::write(&settings, "[auto_approve]\nexecute_safe_commands = true\n").unwrap();
    let server = HttpServer::start_with(
        &plugins,
        ws.path(),
        &["--settings", settings.to_str().unwrap()],
    );
    let out = run_script(
        "python3",
        &[],
        RESUMING_CLIENT,
        "resume.py",
        &json!({"url": server.url, "token": server.token, "command": "sleep 1; echo after-the-break"}),
    );
    assert!(out["last_event_id"].is_string(), "{out}");
    assert!(
        out["answer"]["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("after-the-break"),
        "{out}"
    );
}
