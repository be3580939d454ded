//! A real MCP client for the tests: the official Python SDK starts `toolhost mcp` over stdio
//! and makes a list of tool calls in one session, each answer as `{"isError", "text"}`.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use toolhost_tests::{toolhost_bin, workdir};

const CLIENT: &str = r#"
import asyncio, json, sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

config = json.loads(open(sys.argv[1]).read())


async def main():
    server = StdioServerParameters(
        command=config["toolhost"],
        args=["--isolation", "in-process", "--plugins", config["plugins"], "mcp", "--cwd", config["workspace"]] + config["extra"],
        env={"XDG_CONFIG_HOME": config["config_home"], "XDG_CACHE_HOME": config["config_home"]},
    )
    answers = []
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            for name, arguments in config["calls"]:
                result = await session.call_tool(name, arguments)
                text = "\n".join(c.text for c in result.content if getattr(c, "text", None) is not None)
                answers.append({"isError": result.is_error, "text": text})
    print(json.dumps(answers))


asyncio.run(main())
"#;

/// Makes `calls` (tool name, arguments) through one `toolhost mcp` session over `plugins` in
/// the workspace `cwd` (with `extra` arguments), and returns the answers in order.
pub fn call_tools(
    plugins: &Path,
    cwd: &Path,
    extra: &[&str],
    calls: &[(String, Value)],
) -> Vec<Value> {
    call_tools_in(plugins, cwd, extra, calls, None)
}

/// [`call_tools`] with `toolhost mcp`'s `XDG_CONFIG_HOME` at `config_home` (a scratch
/// directory of its own: `None`).
pub fn call_tools_in(
    plugins: &Path,
    cwd: &Path,
    extra: &[&str],
    calls: &[(String, Value)],
    config_home: Option<&Path>,
) -> Vec<Value> {
    let scratch = workdir();
    let script = scratch.path().join("client.py");
    std::fs::write(&script, CLIENT).unwrap();
    let config_path = scratch.path().join("config.json");
    let config = json!({
        "toolhost": toolhost_bin(),
        "plugins": plugins,
        "workspace": cwd,
        "extra": extra,
        "config_home": config_home.unwrap_or(scratch.path()),
        "calls": calls,
    });
    std::fs::write(&config_path, config.to_string()).unwrap();
    let stdout = scratch.path().join("stdout");
    let stderr = scratch.path().join("stderr");
    let mut child = Command::new("python3")
        .arg(&script)
        .arg(&config_path)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout).unwrap())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .expect("start python3");
    // A guard against a hung client, not a timing assertion.
    let deadline = Instant::now() + Duration::from_secs(300);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the MCP client did not finish");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = std::fs::read_to_string(&stdout).unwrap();
    assert!(
        status.success(),
        "the MCP client failed:\n{}",
        std::fs::read_to_string(&stderr).unwrap_or_default()
    );
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}
