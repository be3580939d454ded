//! `toolhost mcp` with the user in the loop, driven by the official MCP Python SDK and
//! TypeScript SDK clients: elicitation for approvals and questions, cancellation, progress,
//! `tools/list_changed` after a hot swap; and the JSON-RPC errors, spoken line by line.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tool_api::texts;
use toolhost_tests::{install_script, toolhost_bin, workdir, PluginDir};

/// The Python client: one scenario per run, its observations printed as JSON.
const PYTHON_CLIENT: &str = r#"
import asyncio, json, os, shutil, sys, time

import anyio
import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

config = json.loads(open(sys.argv[1]).read())
seen = {"elicitations": [], "progress": [], "list_changed": 0, "logs": []}


async def elicit(context, params):
    seen["elicitations"].append({"message": params.message, "schema": params.requested_schema})
    answer = config["answers"].pop(0)
    if answer == "accept the defaults":
        # What a client's form sends when the user presses Accept without touching it.
        defaults = {name: field["default"] for name, field in params.requested_schema["properties"].items()
                    if "default" in field}
        return types.ElicitResult(action="accept", content=defaults)
    return types.ElicitResult(action=answer["action"], content=answer.get("content"))


async def on_message(message):
    if isinstance(message, types.ToolListChangedNotification):
        seen["list_changed"] += 1


async def on_log(params):
    seen["logs"].append({"level": params.level, "data": params.data})


async def on_progress(progress, total, message):
    seen["progress"].append(message)


roots = {"current": config.get("roots", [])}


async def list_roots(context):
    return types.ListRootsResult(roots=[types.Root(uri="file://" + path) for path in roots["current"]])


def text_of(result):
    return {"isError": result.is_error,
            "text": "\n".join(c.text for c in result.content if getattr(c, "text", None) is not None)}


async def main():
    workspace = [] if config.get("start_in") else ["--cwd", config["workspace"]]
    server = StdioServerParameters(
        command=config["toolhost"],
        args=["--isolation", config.get("isolation", "in-process"), "--plugins", config["plugins"], "mcp"] + workspace + config["extra"],
        env={"XDG_CONFIG_HOME": config["config_home"], "XDG_CACHE_HOME": config["config_home"]},
        cwd=config.get("start_in"),
    )
    out = {}
    errlog = open(config["stderr"], "w") if config.get("stderr") else sys.stderr
    async with stdio_client(server, errlog=errlog) as (read, write):
        async with ClientSession(read, write, elicitation_callback=elicit if config["elicit"] else None,
                                 list_roots_callback=list_roots if config.get("roots") else None,
                                 message_handler=on_message, logging_callback=on_log) as session:
            await session.initialize()
            scenario = config["scenario"]
            if scenario == "calls":
                out["results"] = [text_of(await session.call_tool(name, args)) for name, args in config["calls"]]
            elif scenario == "cancel":
                with anyio.move_on_after(config["cancel_after"]):
                    await session.call_tool(config.get("tool", "execute_command"), config["command"])
                out["cancelled"] = True
                # The session goes on: the next call is answered.
                out["after"] = text_of(await session.call_tool("list_files", {"path": "."}))
            elif scenario == "progress":
                out["result"] = text_of(await session.call_tool("execute_command", config["command"], progress_callback=on_progress))
            elif scenario == "roots":
                out["first"] = [text_of(await session.call_tool(name, args)) for name, args in config["calls"]]
                roots["current"] = config["new_roots"]
                await session.send_roots_list_changed()
                out["changed"] = [text_of(await session.call_tool(name, args)) for name, args in config["calls"]]
            elif scenario == "list_changed":
                out["before"] = [t.name for t in (await session.list_tools()).tools]
                staging = config["add_to"] + ".staging"
                shutil.copy(config["library"], staging)
                os.rename(staging, config["add_to"])
                deadline = time.time() + 30
                while seen["list_changed"] == 0 and time.time() < deadline:
                    await asyncio.sleep(0.05)
                out["after"] = [t.name for t in (await session.list_tools()).tools]
            elif scenario == "logs":
                staging = config["add_to"] + ".staging"
                shutil.copy(config["library"], staging)
                os.rename(staging, config["add_to"])
                deadline = time.time() + 30
                while not any("hot swap" in str(log["data"]) for log in seen["logs"]) and time.time() < deadline:
                    await asyncio.sleep(0.05)
                out["results"] = [text_of(await session.call_tool(name, args)) for name, args in config["calls"]]
    out.update(seen)
    print(json.dumps(out))


asyncio.run(main())
"#;

/// The TypeScript client (`@modelcontextprotocol/sdk`): approvals and a question by
/// elicitation, a cancelled command (AbortSignal) and progress messages.
const TS_CLIENT: &str = r#"
const fs = require("fs");
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { ElicitRequestSchema } = require("@modelcontextprotocol/sdk/types.js");

const config = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));

async function main() {
  const client = new Client({ name: "ts-test", version: "1" }, { capabilities: { elicitation: {} } });
  const seen = { elicitations: [], progress: [] };
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    seen.elicitations.push({ message: request.params.message, schema: request.params.requestedSchema });
    return config.answers.shift();
  });
  const transport = new StdioClientTransport({
    command: config.toolhost,
    args: ["--isolation", "in-process", "--plugins", config.plugins, "mcp", "--cwd", config.workspace],
    env: { XDG_CONFIG_HOME: config.config_home, XDG_CACHE_HOME: config.config_home, PATH: process.env.PATH },
  });
  await client.connect(transport);
  const text = (r) => ({ isError: !!r.isError, text: r.content.filter((c) => c.type === "text").map((c) => c.text).join("\n") });
  const out = { results: [] };
  for (const [name, args] of config.calls) {
    out.results.push(text(await client.callTool({ name, arguments: args })));
  }
  out.progress_result = text(await client.callTool({ name: "execute_command", arguments: config.progress_command },
    undefined, { onprogress: (p) => seen.progress.push(p.message) }));
  const abort = new AbortController();
  setTimeout(() => abort.abort(), config.cancel_after_ms);
  try {
    await client.callTool({ name: "execute_command", arguments: config.cancel_command }, undefined, { signal: abort.signal });
    out.cancel = "answered";
  } catch (e) {
    out.cancel = "aborted";
  }
  await client.close();
  Object.assign(out, seen);
  console.log(JSON.stringify(out));
}

main().catch((e) => { console.error(e); process.exit(1); });
"#;

/// A run of one client against `toolhost mcp`.
struct Client {
    plugins: PathBuf,
    workspace: PathBuf,
    config_home: tempfile::TempDir,
}

impl Client {
    fn new(plugins: &Path, workspace: &Path) -> Self {
        Self {
            plugins: plugins.to_path_buf(),
            workspace: workspace.to_path_buf(),
            config_home: workdir(),
        }
    }

    /// Runs the Python client with `scenario`'s fields added to its config.
    fn python(&self, scenario: Value) -> Value {
        let mut config = self.config();
        merge(&mut config, scenario);
        for key in ["extra", "answers"] {
            if config.get(key).is_none() {
                config[key] = json!([]);
            }
        }
        if config.get("elicit").is_none() {
            config["elicit"] = json!(true);
        }
        run_script("python3", &[], PYTHON_CLIENT, "client.py", &config)
    }

    /// Runs the TypeScript client with `scenario`'s fields added to its config.
    fn typescript(&self, scenario: Value) -> Value {
        self.typescript_script(TS_CLIENT, scenario)
    }

    /// Runs the TypeScript `script` with `scenario`'s fields added to its config.
    fn typescript_script(&self, script: &str, scenario: Value) -> Value {
        let mut config = self.config();
        merge(&mut config, scenario);
        let modules = node_modules();
        run_script(
            "node",
            &[("NODE_PATH", modules.as_os_str())],
            script,
            "client.js",
            &config,
        )
    }

    fn config(&self) -> Value {
        json!({
            "toolhost": toolhost_bin(),
            "plugins": self.plugins,
            "workspace": self.workspace,
            "config_home": self.config_home.path(),
        })
    }
}

fn merge(config: &mut Value, extra: Value) {
    if let Value::Object(extra) = extra {
        for (key, value) in extra {
            config[key] = value;
        }
    }
}

/// Where the TypeScript SDK is installed (`cargo xtask test` installs it under `target/node`).
fn node_modules() -> PathBuf {
    let modules = toolhost_tests::target_dir()
        .parent()
        .unwrap()
        .join("node/node_modules");
    assert!(
        modules.join("@modelcontextprotocol/sdk/package.json").is_file(),
        "the MCP TypeScript SDK is missing under {}: run `cargo xtask test` once, or `npm install --prefix target/node @modelcontextprotocol/sdk`",
        modules.display()
    );
    modules
}

/// Writes `script`, runs it with the config as its argument, and returns the JSON it prints.
pub(crate) fn run_script(
    program: &str,
    envs: &[(&str, &std::ffi::OsStr)],
    script: &str,
    file: &str,
    config: &Value,
) -> Value {
    let scratch = workdir();
    let script_path = scratch.path().join(file);
    std::fs::write(&script_path, script).unwrap();
    let config_path = scratch.path().join("config.json");
    std::fs::write(&config_path, config.to_string()).unwrap();
    let stdout = scratch.path().join("stdout");
    let stderr = scratch.path().join("stderr");
    let mut command = Command::new(program);
    command
        .arg(&script_path)
        .arg(&config_path)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout).unwrap())
        .stderr(std::fs::File::create(&stderr).unwrap());
    for (key, value) in envs {
        command.env(key, value);
    }
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("start {program}: {e}"));
    // A guard against a hung client, not a timing assertion.
    let deadline = Instant::now() + Duration::from_secs(180);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "the MCP client did not finish:\n{}",
                std::fs::read_to_string(&stderr).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = std::fs::read_to_string(&stdout).unwrap();
    assert!(
        status.success(),
        "the MCP client failed ({status}):\n{}",
        std::fs::read_to_string(&stderr).unwrap_or_default()
    );
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

fn approve() -> Value {
    json!({"action": "accept", "content": {"approve": true}})
}

fn deny_with(feedback: &str) -> Value {
    json!({"action": "accept", "content": {"approve": false, "feedback": feedback}})
}

/// A command that writes `started` beside `marker` at once, and `marker` after 3 seconds.
fn slow_command(marker: &Path) -> String {
    let started = marker.with_file_name("started");
    format!(
        "touch {}; sleep 3; touch {}",
        started.display(),
        marker.display()
    )
}

/// Checks that the slow command started, then waits a little beyond when it would have written
/// its marker had it not been stopped.
fn assert_never_appears(marker: &Path, wait: Duration) {
    assert!(
        marker.with_file_name("started").exists(),
        "the command never started"
    );
    assert_stays_absent(marker, wait, "the cancelled command ran on");
}

/// Checks for `wait` that `path` does not appear.
fn assert_stays_absent(path: &Path, wait: Duration, failure: &str) {
    let until = Instant::now() + wait;
    while Instant::now() < until {
        assert!(!path.exists(), "{failure}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn python_elicitation_approves_denies_with_feedback_and_answers_with_a_choice() {
    let plugins = PluginDir::real();
    let ws = workdir();
    let client = Client::new(plugins.path(), ws.path());
    let out = client.python(json!({
        "scenario": "calls",
        "calls": [
            ["write_to_file", {"path": "yes.txt", "content": "approved\n"}],
            ["write_to_file", {"path": "no.txt", "content": "denied\n"}],
            ["ask_followup_question", {"question": "Which colour?", "options": "[\"red\", \"green\"]"}],
        ],
        "answers": [
            approve(),
            deny_with("write it to other.txt instead"),
            {"action": "accept", "content": {"answer": "green"}},
        ],
    }));
    let results = out["results"].as_array().unwrap();
    assert_eq!(results[0]["isError"], false, "{out}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("yes.txt")).unwrap(),
        "approved\n"
    );
    assert_eq!(results[1]["isError"], true);
    assert_eq!(
        results[1]["text"],
        texts::denied_with_feedback(texts::TOOL_DENIED, Some("write it to other.txt instead"))
    );
    assert!(!ws.path().join("no.txt").exists());
    assert_eq!(
        results[2],
        json!({"isError": false, "text": "<answer>\ngreen\n</answer>"})
    );
    let elicitations = out["elicitations"].as_array().unwrap();
    assert_eq!(elicitations.len(), 3, "{out}");
    assert!(elicitations[0]["message"]
        .as_str()
        .unwrap()
        .contains("yes.txt"));
    assert_eq!(
        elicitations[0]["schema"]["properties"]["approve"]["type"],
        "boolean"
    );
    assert_eq!(elicitations[2]["message"], "Which colour?");
    assert_eq!(
        elicitations[2]["schema"]["properties"]["answer"]["enum"],
        json!(["red", "green"])
    );
}

#[test]
fn python_accepting_the_forms_defaults_approves_and_the_questions_say_what_is_approved() {
    let plugins = PluginDir::real();
    let ws = workdir();
    let client = Client::new(plugins.path(), ws.path());
    let out = client.python(json!({
        "scenario": "calls",
        "calls": [
            ["write_to_file", {"path": "a.txt", "content": "accepted\n"}],
            ["execute_command", {"command": "echo ran > ran.txt", "requires_approval": "true"}],
            ["apply_patch", {"input": "*** Begin Patch\n*** Update File: a.txt\n@@\n-accepted\n+patched\n*** Add File: b.txt\n+new\n*** End Patch"}],
            ["attempt_completion", {"result": "Both files are written."}],
        ],
        "answers": ["accept the defaults", "accept the defaults", "accept the defaults", "accept the defaults"],
    }));
    let results = out["results"].as_array().unwrap();
    assert!(results.iter().all(|r| r["isError"] == false), "{out}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "patched\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("ran.txt")).unwrap(),
        "ran\n"
    );
    let messages: Vec<&str> = out["elicitations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["message"].as_str().unwrap())
        .collect();
    let cwd = ws.path().canonicalize().unwrap();
    assert_eq!(messages.len(), 4, "{out}");
    assert_eq!(
        messages[0],
        "Let write_to_file change a.txt?\n\ncontent: accepted"
    );
    assert!(
        messages[1].starts_with(&format!(
            "echo ran > ran.txt\n\n(in {}; sandbox ",
            cwd.display()
        )),
        "{}",
        messages[1]
    );
    assert_eq!(
        messages[2],
        "Apply this patch? It changes 2 files:\n  edit a.txt (+1 −1)\n  create b.txt (+1 −0)"
    );
    assert_eq!(
        messages[3],
        "The model says the task is complete. Leave the reply empty to accept the result, or \
         tell the model what to change.\n\nBoth files are written."
    );
}

#[test]
fn python_without_elicitation_nothing_unapproved_runs() {
    let plugins = PluginDir::real();
    let ws = workdir();
    let out = Client::new(plugins.path(), ws.path()).python(json!({
        "scenario": "calls",
        "elicit": false,
        "calls": [["write_to_file", {"path": "x.txt", "content": "x"}]],
    }));
    assert_eq!(
        out["results"][0],
        json!({"isError": true, "text": toolhost_tests::refused_by(
            "write_to_file",
            "nobody answered (the client cannot ask its user, or no answer came in time)",
            &["edit_files"]
        )})
    );
    assert!(!ws.path().join("x.txt").exists());
}

#[test]
fn python_cancelling_a_running_command_stops_it() {
    let plugins = PluginDir::real();
    let ws = workdir();
    let marker = ws.path().join("marker");
    let out = Client::new(plugins.path(), ws.path()).python(json!({
        "scenario": "cancel",
        "cancel_after": 1.5,
        "command": {"command": slow_command(&marker), "requires_approval": "false"},
        "answers": [approve()],
    }));
    assert_eq!(out["cancelled"], true);
    assert_eq!(out["after"]["isError"], false, "{out}");
    assert_never_appears(&marker, Duration::from_secs(4));
}

#[test]
fn python_a_call_cancelled_during_its_hooks_never_runs_its_tool() {
    // write_to_file looks at no cancellation of its own: only the host can stop it.
    let plugins = PluginDir::real();
    let ws = workdir();
    let marker = ws.path().join("marker");
    let client = Client::new(plugins.path(), ws.path());
    // A PreToolUse hook of the user's (trusted) that takes two seconds.
    let hooks = client.config_home.path().join("hooks");
    let hook_ran = ws.path().join("hook-ran");
    install_script(
        &hooks,
        "PreToolUse",
        &format!(
            "#!/bin/sh\ncat > /dev/null\ntouch '{}'\nsleep 2\n",
            hook_ran.display()
        ),
    );
    let settings = client.config_home.path().join("toolhost");
    std::fs::create_dir_all(&settings).unwrap();
    std::fs::write(
        settings.join("settings.toml"),
        format!("[hooks]\ndir = {:?}\n", hooks.to_str().unwrap()),
    )
    .unwrap();
    let out = client.python(json!({
        "scenario": "cancel",
        "cancel_after": 0.5,
        "tool": "write_to_file",
        "command": {"path": "marker", "content": "written\n"},
        "answers": [approve()],
    }));
    assert_eq!(out["cancelled"], true);
    assert_eq!(out["after"]["isError"], false, "{out}");
    assert!(hook_ran.exists(), "the hook did not run: {out}");
    // The hook ends 1.5 s after the cancel; a write started then would be done at once.
    assert_stays_absent(
        &marker,
        Duration::from_secs(4),
        "the cancelled call wrote its file",
    );
}

#[test]
fn closing_stdin_stops_a_running_command() {
    let plugins = PluginDir::real();
    let ws = workdir();
    let marker = ws.path().join("marker");
    let mut child = toolhost_tests::toolhost()
        .arg("--plugins")
        .arg(plugins.path())
        .args(["mcp", "--yes", "--cwd"])
        .arg(ws.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let mut output = BufReader::new(child.stdout.take().unwrap());
    for line in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "execute_command", "arguments": {"command": slow_command(&marker), "requires_approval": "false"}}}),
    ] {
        writeln!(input, "{line}").unwrap();
    }
    let mut first = String::new();
    output.read_line(&mut first).unwrap();
    assert!(first.contains("\"id\":1"), "not initialized: {first}");
    let started = marker.with_file_name("started");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !started.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(input);
    assert_never_appears(&marker, Duration::from_secs(4));
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn python_progress_messages_during_a_long_command() {
    let plugins = PluginDir::real();
    let ws = workdir();
    let out = Client::new(plugins.path(), ws.path()).python(json!({
        "scenario": "progress",
        "command": {"command": "for i in 1 2 3; do echo line$i; sleep 0.3; done", "requires_approval": "false"},
        "answers": [approve()],
    }));
    assert_eq!(out["result"]["isError"], false, "{out}");
    let progress: Vec<String> = out["progress"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap_or_default().to_string())
        .collect();
    let joined = progress.join("");
    for line in ["line1", "line2", "line3"] {
        assert!(
            joined.contains(line),
            "{line} not in the progress messages: {progress:?}"
        );
    }
}

#[test]
fn python_hears_tools_list_changed_after_a_hot_swap() {
    let plugins = workdir();
    let ws = workdir();
    std::fs::copy(
        toolhost_tests::library("read_file"),
        plugins.path().join("libread_file.so"),
    )
    .unwrap();
    let out = Client::new(plugins.path(), ws.path()).python(json!({
        "scenario": "list_changed",
        "extra": ["--watch"],
        "library": toolhost_tests::library("list_files"),
        "add_to": plugins.path().join("liblist_files.so"),
    }));
    assert_eq!(out["before"], json!(["read_file"]));
    assert!(out["list_changed"].as_u64().unwrap() >= 1, "{out}");
    assert_eq!(out["after"], json!(["list_files", "read_file"]));
}

/// Under `mcp`, the host's warnings reach the client as `notifications/message` (one logged at
/// start-up, before the session, one from a hot swap while it runs, one on a call's thread),
/// and stderr stays empty.
#[test]
fn python_hears_the_host_warnings_and_stderr_stays_quiet() {
    let plugins = PluginDir::empty();
    plugins.add_library("read_file");
    plugins.add_library("fixture_faults");
    let ws = workdir();
    std::fs::write(ws.path().join("a.txt"), "one\n").unwrap();
    let client = Client::new(plugins.path(), ws.path());
    let settings = client.config_home.path().join("toolhost");
    std::fs::create_dir_all(&settings).unwrap();
    std::fs::write(settings.join("settings.toml"), "[agent]\nbogus_key = 1\n").unwrap();
    let stderr = workdir();
    let stderr = stderr.path().join("server.stderr");
    let out = client.python(json!({
        "scenario": "logs",
        "extra": ["--watch"],
        "library": toolhost_tests::library("fixture_wrong_abi_version"),
        "add_to": plugins.path().join("libfixture_wrong_abi_version.so"),
        "calls": [["fault_panic", {}], ["read_file", {"path": "a.txt"}]],
        "stderr": stderr,
    }));
    let logs = out["logs"].as_array().unwrap();
    let find = |needle: &str| {
        logs.iter()
            .find(|log| log["data"].as_str().unwrap_or("").contains(needle))
            .unwrap_or_else(|| panic!("no log message with {needle:?}: {out}"))
    };
    assert_eq!(find("bogus_key")["level"], "warning");
    assert_eq!(find("libfixture_wrong_abi_version.so")["level"], "warning");
    // Logged on the call's thread: sent to its session, before its result.
    assert_eq!(find("panicked in fault_panic")["level"], "error");
    assert_eq!(out["results"][0]["isError"], true, "{out}");
    assert_eq!(out["results"][1]["isError"], false, "{out}");
    let printed = std::fs::read_to_string(&stderr).unwrap();
    assert!(printed.is_empty(), "stderr: {printed}");
}

#[test]
fn typescript_client_elicitation_progress_and_cancellation() {
    let plugins = PluginDir::real();
    let ws = workdir();
    let marker = ws.path().join("marker");
    let out = Client::new(plugins.path(), ws.path()).typescript(json!({
        "calls": [
            ["write_to_file", {"path": "yes.txt", "content": "approved\n"}],
            ["write_to_file", {"path": "no.txt", "content": "denied\n"}],
            ["ask_followup_question", {"question": "Which colour?", "options": "[\"red\", \"green\"]"}],
        ],
        "answers": [
            approve(),
            deny_with("not this file"),
            {"action": "accept", "content": {"answer": "red"}},
            approve(),
            approve(),
        ],
        "progress_command": {"command": "echo tick1; sleep 0.3; echo tick2", "requires_approval": "false"},
        "cancel_command": {"command": slow_command(&marker), "requires_approval": "false"},
        "cancel_after_ms": 1500,
    }));
    let results = out["results"].as_array().unwrap();
    assert_eq!(results[0]["isError"], false, "{out}");
    assert!(ws.path().join("yes.txt").exists());
    assert_eq!(
        results[1]["text"],
        texts::denied_with_feedback(texts::TOOL_DENIED, Some("not this file"))
    );
    assert!(!ws.path().join("no.txt").exists());
    assert_eq!(results[2]["text"], "<answer>\nred\n</answer>");
    let progress = out["progress"].to_string();
    assert!(
        progress.contains("tick1") && progress.contains("tick2"),
        "{out}"
    );
    assert_eq!(out["cancel"], "aborted");
    assert_never_appears(&marker, Duration::from_secs(4));
}

/// Speaks JSON-RPC to `toolhost mcp` line by line.
struct Raw {
    child: std::process::Child,
    input: std::process::ChildStdin,
    output: BufReader<std::process::ChildStdout>,
}

impl Raw {
    fn start(plugins: &Path, ws: &Path, settings: &Path) -> Self {
        let mut child = toolhost_tests::toolhost()
            .arg("--plugins")
            .arg(plugins)
            .arg("--settings")
            .arg(settings)
            .args(["mcp", "--cwd"])
            .arg(ws)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap());
        Self {
            child,
            input,
            output,
        }
    }

    fn send(&mut self, line: &str) -> Value {
        writeln!(self.input, "{line}").unwrap();
        let mut answer = String::new();
        self.output.read_line(&mut answer).unwrap();
        serde_json::from_str(&answer).unwrap_or_else(|e| panic!("{e}: {answer}"))
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn json_rpc_errors_name_the_problem() {
    let plugins = PluginDir::real();
    let ws = workdir();
    let settings = ws.path().join("settings.toml");
    std::fs::write(&settings, "[limits]\nmax_request_bytes = 2000\n").unwrap();
    let mut raw = Raw::start(plugins.path(), ws.path(), &settings);
    let init = raw.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}).to_string());
    assert_eq!(
        init["result"]["capabilities"]["tools"]["listChanged"], true,
        "{init}"
    );

    let not_json = raw.send("this is not json");
    assert_eq!(not_json["error"]["code"], -32700, "{not_json}");
    assert_eq!(not_json["id"], Value::Null);

    let bad_params = raw.send(
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": 5}})
            .to_string(),
    );
    assert_eq!(bad_params["id"], 2);
    assert_eq!(bad_params["error"]["code"], -32602, "{bad_params}");
    assert!(
        bad_params["error"]["message"]
            .as_str()
            .unwrap()
            .contains("name"),
        "{bad_params}"
    );

    let huge = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "read_file", "arguments": {"path": "x".repeat(5000)}}});
    let over = raw.send(&huge.to_string());
    assert_eq!(over["id"], 3, "{over}");
    assert_eq!(over["error"]["code"], -32600);
    assert!(
        over["error"]["message"].as_str().unwrap().contains("2000"),
        "{over}"
    );

    // The session goes on after each.
    let listed = raw.send(&json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}).to_string());
    assert_eq!(listed["id"], 4);
    assert!(listed["result"]["tools"]
        .as_array()
        .is_some_and(|t| !t.is_empty()));
}

/// `serve --ask`: an approval and a question come to the client as `ask` lines it answers.
#[test]
fn serve_asks_the_client_and_a_denial_carries_its_feedback() {
    let plugins = PluginDir::real();
    let ws = workdir();
    let mut child = toolhost_tests::toolhost()
        .arg("--plugins")
        .arg(plugins.path())
        .args(["serve", "--ask", "--cwd"])
        .arg(ws.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let mut output = BufReader::new(child.stdout.take().unwrap());
    let mut read = || -> Value {
        let mut line = String::new();
        output.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    };
    let write = |input: &mut std::process::ChildStdin, value: Value| {
        writeln!(input, "{value}").unwrap();
    };

    write(
        &mut input,
        json!({"id": 1, "tool": "write_to_file", "params": {"path": "a.txt", "content": "a"}}),
    );
    let ask = read();
    assert_eq!(ask["ask"]["kind"], "tool", "{ask}");
    assert!(ask["ask"]["text"].as_str().unwrap().contains("a.txt"));
    // A request while the question waits is refused; the question still waits.
    write(
        &mut input,
        json!({"id": 9, "tool": "list_files", "params": {"path": "."}}),
    );
    let refused = read();
    assert_eq!(refused["id"], 9);
    assert!(
        refused["error"].as_str().unwrap().contains("waiting"),
        "{refused}"
    );
    write(
        &mut input,
        json!({"answer": ask["ask"]["id"], "response": "yes"}),
    );
    let done = read();
    assert_eq!(
        (done["id"].clone(), done["is_error"].clone()),
        (json!(1), json!(false)),
        "{done}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "a"
    );

    write(
        &mut input,
        json!({"id": 2, "tool": "write_to_file", "params": {"path": "b.txt", "content": "b"}}),
    );
    let ask = read();
    write(
        &mut input,
        json!({"answer": ask["ask"]["id"], "response": "message", "text": "not b"}),
    );
    let denied = read();
    assert_eq!(denied["is_error"], true);
    assert_eq!(
        denied["text"],
        texts::denied_with_feedback(texts::TOOL_DENIED, Some("not b"))
    );
    assert!(!ws.path().join("b.txt").exists());

    write(
        &mut input,
        json!({"id": 3, "tool": "ask_followup_question", "params": {"question": "Which?", "options": "[\"x\", \"y\"]"}}),
    );
    let ask = read();
    assert_eq!(ask["ask"]["kind"], "followup");
    let asked: Value = serde_json::from_str(ask["ask"]["text"].as_str().unwrap()).unwrap();
    assert_eq!(asked, json!({"question": "Which?", "options": ["x", "y"]}));
    write(
        &mut input,
        json!({"answer": ask["ask"]["id"], "response": "message", "text": "y"}),
    );
    assert_eq!(read()["text"], "<answer>\ny\n</answer>");
    drop(input);
    let _ = child.wait();
}

#[test]
fn python_roots_from_the_client_are_the_workspace_and_follow_list_changed() {
    roots_follow_the_client(&PluginDir::real(), "in-process");
}

/// An isolated plugin's worker is granted the roots of the task it serves: the client's
/// roots, not those the host started with (its sandbox would refuse their files).
#[test]
fn python_roots_from_the_client_reach_an_isolated_plugin() {
    let plugins = PluginDir::empty();
    plugins.add_library("read_file");
    roots_follow_the_client(&plugins, "process");
}

fn roots_follow_the_client(plugins: &PluginDir, isolation: &str) {
    let (one, two, three, elsewhere) = (workdir(), workdir(), workdir(), workdir());
    std::fs::write(one.path().join("a.txt"), "one\n").unwrap();
    std::fs::write(two.path().join("b.txt"), "two\n").unwrap();
    std::fs::write(three.path().join("a.txt"), "three\n").unwrap();
    let two_name = two.path().file_name().unwrap().to_str().unwrap();
    let out = Client::new(plugins.path(), elsewhere.path()).python(json!({
        "scenario": "roots",
        "isolation": isolation,
        "start_in": elsewhere.path(),
        "roots": [one.path(), two.path()],
        "new_roots": [three.path()],
        "calls": [
            ["read_file", {"path": "a.txt"}],
            ["read_file", {"path": format!("@{two_name}:b.txt")}],
        ],
    }));
    assert_eq!(
        out["first"][0]["text"], "1 | one\n\n(File has 1 lines total.)",
        "{out}"
    );
    assert_eq!(
        out["first"][1]["text"], "1 | two\n\n(File has 1 lines total.)",
        "{out}"
    );
    assert_eq!(
        out["changed"][0]["text"], "1 | three\n\n(File has 1 lines total.)",
        "{out}"
    );
    assert_eq!(out["changed"][1]["isError"], true, "{out}");
}

#[test]
fn python_slash_is_never_an_implicit_workspace() {
    let plugins = PluginDir::real();
    let out = Client::new(plugins.path(), Path::new("/")).python(json!({
        "scenario": "calls",
        "start_in": "/",
        "calls": [["list_files", {"path": "."}]],
    }));
    assert_eq!(out["results"][0]["isError"], true);
    let text = out["results"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("The workspace would be /") && text.contains("--cwd"),
        "{text}"
    );
}

#[test]
fn python_a_client_root_of_slash_is_refused() {
    let plugins = PluginDir::real();
    let elsewhere = workdir();
    let out = Client::new(plugins.path(), elsewhere.path()).python(json!({
        "scenario": "calls",
        "start_in": elsewhere.path(),
        "roots": ["/"],
        "calls": [["list_files", {"path": "."}]],
    }));
    assert_eq!(out["results"][0]["isError"], true, "{out}");
    assert!(
        out["results"][0]["text"]
            .as_str()
            .unwrap()
            .contains("The workspace would be /"),
        "{out}"
    );
}

/// The TypeScript client calls a command that prints nothing for a while, with a request
/// timeout shorter than the command and reset on progress.
const TS_KEEP_ALIVE: &str = r#"
const fs = require("fs");
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");

const config = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));

async function main() {
  const client = new Client({ name: "ts-keep-alive", version: "1" });
  const transport = new StdioClientTransport({
    command: config.toolhost,
    args: ["--isolation", "in-process", "--plugins", config.plugins, "--settings", config.settings,
           "mcp", "--cwd", config.workspace],
    env: { XDG_CONFIG_HOME: config.config_home, PATH: process.env.PATH },
  });
  await client.connect(transport);
  const progress = [];
  const out = {};
  try {
    const result = await client.callTool({ name: "execute_command", arguments: config.command }, undefined,
      { timeout: config.timeout_ms, resetTimeoutOnProgress: config.reset, onprogress: (p) => progress.push(p.message) });
    out.result = result.content.map((c) => c.text).join("\n");
  } catch (e) {
    out.error = String(e);
  }
  out.progress = progress;
  await client.close();
  console.log(JSON.stringify(out));
}

main().catch((e) => { console.error(e); process.exit(1); });
"#;

/// A command silent for longer than the client's request timeout: the progress messages
/// that say it is still running keep a client that resets its timeout on progress waiting,
/// and it gets the result; a client that does not reset it times out (what the messages
/// prevent).
#[test]
fn typescript_a_silent_long_call_keeps_a_client_that_resets_on_progress_waiting() {
    let plugins = PluginDir::real();
    let ws = workdir();
    let settings = ws.path().join("settings.toml");
    std::fs::write(&settings, "[auto_approve]\nexecute_safe_commands = true\n").unwrap();
    let client = Client::new(plugins.path(), ws.path());
    let run = |reset: bool| {
        client.typescript_script(
            TS_KEEP_ALIVE,
            json!({
                "settings": settings,
                "command": {"command": "sleep 3.5; echo slow-done", "requires_approval": "false"},
                "timeout_ms": 1500,
                "reset": reset,
            }),
        )
    };
    let kept = run(true);
    assert!(
        kept["result"]
            .as_str()
            .unwrap_or_default()
            .contains("slow-done"),
        "{kept}"
    );
    assert!(
        kept["progress"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m.as_str().unwrap().starts_with("still running")),
        "{kept}"
    );
    let dropped = run(false);
    assert!(
        dropped["error"]
            .as_str()
            .unwrap_or_default()
            .contains("timed out"),
        "{dropped}"
    );
}
