//! The isolation part of `bench dispatch`: what running a plugin in a worker process costs,
//! beside the usual way to isolate a tool (an MCP stdio server process).
//!
//! - an isolated no-op call against the in-process one (`Host::call`, `dispatch_bench`'s
//!   `isolated` and `host` figures): target at most [`ADDED_TARGET_US`] added;
//! - the same no-op through `toolhost mcp` (a stdio server process with the plugin in it), one
//!   `tools/call` round trip at a time, as an MCP client isolates a tool;
//! - a worker's cold start to its first answer (a new host and its first call, isolated minus
//!   in-process): target at most [`COLD_START_TARGET_MS`];
//! - a crash to the plugin's next call answered by a fresh worker: target at most
//!   [`CRASH_TARGET_MS`].

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use serde_json::{json, Value};

use super::mcp_client::Session;
use crate::util::library_file_name;

/// Target for what an isolated no-op call adds over the in-process one.
const ADDED_TARGET_US: f64 = 25.0;

/// Target for a worker's cold start to its first answer.
const COLD_START_TARGET_MS: f64 = 15.0;

/// Target for a crash to the next call answered.
const CRASH_TARGET_MS: f64 = 50.0;

/// Untimed and timed calls through the MCP server.
const MCP_WARMUP: usize = 200;
const MCP_CALLS: usize = 2000;

/// Prints the isolation figures from `dispatch_bench`'s `figures` and the MCP comparison.
pub fn report(
    figures: &Value,
    dist: &Path,
    release: &Path,
    workspace: &Path,
) -> Result<Value, String> {
    let us = |name: &str| figures[name]["median_us"].as_f64().unwrap_or(f64::NAN);
    let added = us("isolated") - us("host");
    let mcp = mcp_noop_us(dist, release, workspace)?;
    let cold = figures["cold_start_ms"]["worker"]
        .as_f64()
        .unwrap_or(f64::NAN);
    let crash = figures["crash_to_answer_ms"].as_f64().unwrap_or(f64::NAN);
    let verdict = |met: bool| if met { "met" } else { "NOT met" };
    println!("isolation: the no-op plugin in a worker process (release)");
    println!(
        "  {:<58} {:>8.3} µs/call",
        "Host::call, in-process",
        us("host")
    );
    println!(
        "  {:<58} {:>8.3} µs/call",
        "Host::call, isolated",
        us("isolated")
    );
    println!(
        "  {:<58} {:>8.3} µs/call  (target <= {ADDED_TARGET_US}: {})",
        "added by isolation",
        added,
        verdict(added <= ADDED_TARGET_US)
    );
    println!(
        "  {:<58} {mcp:>8.3} µs/call",
        "the same no-op through an MCP stdio server (toolhost mcp)"
    );
    println!(
        "  {:<58} {cold:>8.3} ms      (target <= {COLD_START_TARGET_MS}: {})",
        "worker cold start to first answer",
        verdict(cold <= COLD_START_TARGET_MS)
    );
    println!(
        "  {:<58} {crash:>8.3} ms      (target <= {CRASH_TARGET_MS}: {})",
        "crash to the next call answered",
        verdict(crash <= CRASH_TARGET_MS)
    );
    Ok(json!({
        "added_us": added,
        "added_target_us": ADDED_TARGET_US,
        "mcp_stdio_noop_us": mcp,
        "cold_start_ms": figures["cold_start_ms"],
        "cold_start_target_ms": COLD_START_TARGET_MS,
        "crash_to_answer_ms": crash,
        "crash_target_ms": CRASH_TARGET_MS,
    }))
}

/// The median round trip of the no-op tool through `toolhost mcp` serving it in-process.
fn mcp_noop_us(dist: &Path, release: &Path, workspace: &Path) -> Result<f64, String> {
    let plugins = workspace.join("noop-plugins");
    std::fs::create_dir_all(&plugins).map_err(|e| e.to_string())?;
    let file = library_file_name("fixture_noop_tool");
    std::fs::copy(release.join(&file), plugins.join(&file)).map_err(|e| e.to_string())?;
    let mut command = Command::new(dist.join("bin/toolhost"));
    command
        .arg("--plugins")
        .arg(&plugins)
        .args(["--isolation", "in-process", "mcp", "--cwd"])
        .arg(workspace)
        .env("XDG_CONFIG_HOME", workspace)
        .env_remove("TOOLHOST_SETTINGS")
        .env_remove("TOOLHOST_PLUGIN_PATH");
    let mut session = Session::spawn(command, "toolhost mcp (no-op)")?;
    session.initialize()?;
    session.notify("notifications/initialized")?;
    for _ in 0..MCP_WARMUP {
        session.call_tool("noop", &json!({}))?;
    }
    let mut times = Vec::with_capacity(MCP_CALLS);
    for _ in 0..MCP_CALLS {
        let start = Instant::now();
        session.call_tool("noop", &json!({}))?;
        times.push(start.elapsed().as_secs_f64() * 1e6);
    }
    session.close()?;
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}
