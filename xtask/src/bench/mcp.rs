//! `bench mcp`: `toolhost mcp` against `@modelcontextprotocol/server-filesystem` (npm), both
//! driven over stdio by the same small JSON-RPC client ([`super::mcp_client`]).
//!
//! Two figures, each with the reference server beside it:
//! - startup: process spawn to the `initialize` response received (toolhost with every release
//!   plugin loaded; node with its server module loaded), runs interleaved, median;
//! - read latency: one `tools/call` round trip reading the same 10 KB file (toolhost's
//!   `read_file`, the reference's `read_text_file`), calls alternating between the two open
//!   sessions after a warm-up, median and p95; then the same with read_file isolated in a
//!   worker process (`--isolation process`) against the reference again; the first round also
//!   times the floor, an rmcp server whose tool only reads the file (`xtask/mcp-floor`), so
//!   that what the protocol library costs shows beside what toolhost adds;
//! - over streamable HTTP ([`super::mcp_http`]): read latency beside stdio, and many sessions
//!   at once.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::mcp_client::{
    check_read, median, p95, reference_server, ten_kb_text, Server, Session, CALLS, FILE_BYTES,
    NPM_PACKAGE, WARMUP,
};
use crate::bench::startup::{ms, tempfile_dir, warm_plugin_index};
use crate::build;
use crate::util::{plugin_crates, target_dir};

/// Startup runs per server; the median is reported.
const STARTUP_RUNS: usize = 20;

/// toolhost's time over the reference's that each figure should stay under.
const STARTUP_TARGET: f64 = 0.1;
const READ_TARGET: f64 = 0.2;

/// The same with read_file isolated in a worker process.
const ISOLATED_READ_TARGET: f64 = 0.5;

/// Runs the benchmark and prints the table.
pub fn mcp() -> Result<Value, String> {
    let dist = build::dist()?;
    let (reference_entry, reference_version) = reference_server()?;
    let workspace = tempfile_dir("toolhost-bench-mcp")?
        .canonicalize()
        .map_err(|e| e.to_string())?;
    let file = workspace.join("ten_kb.txt");
    std::fs::write(&file, ten_kb_text()).map_err(|e| e.to_string())?;
    // As a user runs it: with the plugin index, made by an earlier run.
    let index = workspace.join("plugin-index.json");
    warm_plugin_index(&dist.join("bin/toolhost"), &dist.join("plugins"), &index)?;

    let toolhost = Server {
        name: "toolhost mcp",
        program: dist.join("bin/toolhost"),
        args: vec![
            "--plugins".into(),
            dist.join("plugins").display().to_string(),
            "mcp".into(),
            "--cwd".into(),
            workspace.display().to_string(),
        ],
        // An empty config home: the user's settings file must not change what is measured.
        envs: vec![
            ("XDG_CONFIG_HOME", workspace.clone()),
            ("TOOLHOST_PLUGIN_INDEX", index.clone()),
        ],
        tool: "read_file",
        arguments: json!({"path": "ten_kb.txt"}),
    };
    let reference = Server {
        name: "server-filesystem",
        program: PathBuf::from("node"),
        args: vec![
            reference_entry.display().to_string(),
            workspace.display().to_string(),
        ],
        envs: Vec::new(),
        tool: "read_text_file",
        arguments: json!({"path": file}),
    };

    // The same server with read_file isolated in a worker process.
    let mut isolated_args = vec!["--isolation".to_string(), "process".to_string()];
    isolated_args.extend(toolhost.args.iter().cloned());
    let isolated = Server {
        name: "toolhost mcp, isolated",
        args: isolated_args,
        program: toolhost.program.clone(),
        envs: toolhost.envs.clone(),
        tool: toolhost.tool,
        arguments: toolhost.arguments.clone(),
    };

    let plugins = plugin_crates()?.len();
    let startup = startup_medians(&toolhost, &reference)?;
    // rmcp alone, beside the two (see `xtask/mcp-floor`).
    let floor = Server {
        name: "rmcp alone (mcp-floor)",
        program: target_dir().join("release/mcp-floor"),
        args: Vec::new(),
        envs: Vec::new(),
        tool: "read_file",
        arguments: json!({"path": file}),
    };
    let [toolhost_calls, reference_calls, floor_calls] =
        read_latencies(&[&toolhost, &reference, &floor])?
            .try_into()
            .map_err(|_| "three servers, three series")?;
    let [isolated_calls, reference_again] = read_latencies(&[&isolated, &reference])?
        .try_into()
        .map_err(|_| "two servers, two series")?;
    let floor_ratio = ms(median(&floor_calls)) / ms(median(&reference_calls));
    let isolated_ratio = ms(median(&isolated_calls)) / ms(median(&reference_again));
    let startup_ratio = ms(startup.0) / ms(startup.1);
    let read_ratio = ms(median(&toolhost_calls)) / ms(median(&reference_calls));

    println!(
        "mcp: toolhost mcp ({plugins} plugins, release) vs {NPM_PACKAGE} {reference_version} (node)"
    );
    println!("  startup: spawn to initialize answered, median of {STARTUP_RUNS}");
    println!("    {:<36} {:>9.2} ms", toolhost.name, ms(startup.0));
    println!("    {:<36} {:>9.2} ms", reference.name, ms(startup.1));
    println!(
        "    ratio {startup_ratio:.3} (target <= {STARTUP_TARGET}) {}",
        verdict(startup_ratio, STARTUP_TARGET)
    );
    println!("  read a {FILE_BYTES}-byte file: tools/call round trip, {CALLS} calls each");
    println!("    {:<36} {:>9} {:>9}", "", "median", "p95");
    for (server, calls) in [
        (&toolhost, &toolhost_calls),
        (&reference, &reference_calls),
        (&floor, &floor_calls),
    ] {
        println!(
            "    {:<36} {:>6.3} ms {:>6.3} ms",
            format!("{} {}", server.name, server.tool),
            ms(median(calls)),
            ms(p95(calls))
        );
    }
    println!(
        "    ratio of medians {read_ratio:.3} (target <= {READ_TARGET}) {}",
        verdict(read_ratio, READ_TARGET)
    );
    println!("    the floor, rmcp alone: ratio of medians {floor_ratio:.3}");
    for (server, calls) in [(&isolated, &isolated_calls), (&reference, &reference_again)] {
        println!(
            "    {:<36} {:>6.3} ms {:>6.3} ms",
            format!("{} {}", server.name, server.tool),
            ms(median(calls)),
            ms(p95(calls))
        );
    }
    println!(
        "    isolated: ratio of medians {isolated_ratio:.3} (target <= {ISOLATED_READ_TARGET}) {}",
        verdict(isolated_ratio, ISOLATED_READ_TARGET)
    );
    let http = super::mcp_http::figures(&toolhost)?;
    Ok(json!({
        "http": http,
        "bench": "mcp",
        "reference": format!("{NPM_PACKAGE} {reference_version}"),
        "plugins": plugins,
        "startup_ms": {"toolhost": ms(startup.0), "reference": ms(startup.1)},
        "startup_ratio": startup_ratio,
        "startup_target": STARTUP_TARGET,
        "read_ms": {
            "toolhost": {"median": ms(median(&toolhost_calls)), "p95": ms(p95(&toolhost_calls))},
            "reference": {"median": ms(median(&reference_calls)), "p95": ms(p95(&reference_calls))},
        },
        "read_ratio": read_ratio,
        "floor_read_ms": {"median": ms(median(&floor_calls)), "p95": ms(p95(&floor_calls))},
        "floor_read_ratio": floor_ratio,
        "read_target": READ_TARGET,
        "isolated_read_ms": {"median": ms(median(&isolated_calls)), "p95": ms(p95(&isolated_calls)),
                             "reference_median": ms(median(&reference_again))},
        "isolated_read_ratio": isolated_ratio,
        "isolated_read_target": ISOLATED_READ_TARGET,
    }))
}

fn verdict(ratio: f64, target: f64) -> &'static str {
    if ratio <= target {
        "ok"
    } else {
        "MISSED"
    }
}

/// Median startup of each server, runs interleaved so that noise hits both alike.
fn startup_medians(a: &Server, b: &Server) -> Result<(Duration, Duration), String> {
    let mut times_a = Vec::with_capacity(STARTUP_RUNS);
    let mut times_b = Vec::with_capacity(STARTUP_RUNS);
    for _ in 0..STARTUP_RUNS {
        times_a.push(time_startup(a)?);
        times_b.push(time_startup(b)?);
    }
    Ok((median(&times_a), median(&times_b)))
}

/// Spawn to the `initialize` response; the session is then closed (untimed).
fn time_startup(server: &Server) -> Result<Duration, String> {
    let start = Instant::now();
    let mut session = Session::spawn(server.command(), server.name)?;
    session.initialize()?;
    let elapsed = start.elapsed();
    session.close()?;
    Ok(elapsed)
}

/// Round-trip times of the read call on each server, calls alternating between the sessions.
fn read_latencies(servers: &[&Server]) -> Result<Vec<Vec<Duration>>, String> {
    let mut sessions = Vec::with_capacity(servers.len());
    for server in servers {
        let mut session = Session::spawn(server.command(), server.name)?;
        session.initialize()?;
        session.notify("notifications/initialized")?;
        let first = session.call_tool(server.tool, &server.arguments)?;
        check_read(server, &first)?;
        for _ in 1..WARMUP {
            session.call_tool(server.tool, &server.arguments)?;
        }
        sessions.push(session);
    }
    let mut times = vec![Vec::with_capacity(CALLS); servers.len()];
    for _ in 0..CALLS {
        for ((session, server), times) in sessions.iter_mut().zip(servers).zip(&mut times) {
            let start = Instant::now();
            session.call_tool(server.tool, &server.arguments)?;
            times.push(start.elapsed());
        }
    }
    for session in sessions {
        session.close()?;
    }
    Ok(times)
}
