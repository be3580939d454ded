//! `cargo xtask soak [--calls N] [--debug] [--only mcp|serve] [--prebuilt]`: mixed tool calls (read, write, replace, apply_patch, list,
//! search, execute) over `toolhost mcp` with 16 requests in flight, then over `toolhost serve`
//! (16 lines in flight; serve answers them in order), against the release build. While it
//! runs, the server's resident memory, open file descriptors, threads and child processes are
//! sampled; the report gives each one's slope per 10,000 calls after a warm-up, which must be
//! flat, and the failed calls, which must be none.
//!
//! The client is the small JSON-RPC/JSON-lines client of the benchmarks: it must keep 16
//! requests in flight on one pipe and check every answer, which a blocking SDK client would
//! not do for it. Loopback only (pipes to a child), bounded in count (`--calls`, default
//! 100,000 per frontend) and in time ([`DEADLINE_PER_1000_CALLS`]).
//!
//! `cargo xtask test` runs [`short`]: a few hundred calls per frontend over the debug build.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

mod resources;

use resources::{sample, slope, Sample};

use crate::build;
use crate::util::target_dir;

/// Requests in flight.
const IN_FLIGHT: usize = 16;

/// Samples taken over a run.
const SAMPLES: usize = 200;

/// The share of the run before the slopes are measured (thread pools, caches and allocator
/// arenas grow to their working size first).
const WARMUP_FRACTION: f64 = 0.1;

/// The most a run may take per 1,000 calls, and at least.
const DEADLINE_PER_1000_CALLS: Duration = Duration::from_secs(20);
const MIN_DEADLINE: Duration = Duration::from_secs(180);

/// Runs shorter than this report their slopes without holding them to the limits: over a few
/// hundred calls the warm-up (thread pools growing to their size) is all there is to see.
const CALLS_FOR_SLOPES: usize = 10_000;

/// The calls per frontend of the short soak of `cargo xtask test` (50 of each kind).
const SHORT_CALLS: usize = 350;

/// Flat: growth per 10,000 calls at most this much resident memory...
const RSS_SLOPE_LIMIT_KIB: f64 = 512.0;
/// ... and at most this many file descriptors, threads or child processes.
const COUNT_SLOPE_LIMIT: f64 = 0.5;

/// Files of each kind in the workspace (a call of a kind cycles through them).
const FILES: usize = 64;

/// `cargo xtask soak [--calls N] [--debug] [--only mcp|serve] [--prebuilt]`: over the release
/// build, or the debug build; `--prebuilt` runs what is built without building first.
pub fn run(args: &[String]) -> Result<(), String> {
    let mut calls = 100_000;
    let mut debug = false;
    let mut prebuilt = false;
    let mut frontends = vec![Frontend::Mcp, Frontend::Serve];
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--calls" => {
                calls = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .ok_or("--calls needs a number")?;
            }
            "--debug" => debug = true,
            "--prebuilt" => prebuilt = true,
            "--only" => {
                frontends = match args.next().map(String::as_str) {
                    Some("mcp") => vec![Frontend::Mcp],
                    Some("serve") => vec![Frontend::Serve],
                    _ => return Err("--only needs mcp or serve".to_string()),
                }
            }
            _ => return Err(USAGE.to_string()),
        }
    }
    let (toolhost, plugins, profile) = match (debug, prebuilt) {
        (true, true) => {
            let dir = target_dir().join("debug");
            (dir.join("toolhost"), dir.join("plugins"), "debug")
        }
        (true, false) => {
            let dir = build::stage(build::Profile::Dev)?;
            (dir.join("toolhost"), dir.join("plugins"), "debug")
        }
        (false, prebuilt) => {
            let dist = if prebuilt {
                target_dir().join("dist")
            } else {
                build::dist()?
            };
            (dist.join("bin/toolhost"), dist.join("plugins"), "release")
        }
    };
    soak(&toolhost, &plugins, calls, profile, &frontends)
}

const USAGE: &str = "usage: cargo xtask soak [--calls N] [--debug] [--only mcp|serve] [--prebuilt]";

/// The short soak of `cargo xtask test`: [`SHORT_CALLS`] per frontend over the debug build
/// that `build::stage` made; failed calls fail it, the slopes are only shown.
pub fn short() -> Result<(), String> {
    let debug = target_dir().join("debug");
    soak(
        &debug.join("toolhost"),
        &debug.join("plugins"),
        SHORT_CALLS,
        "debug",
        &[Frontend::Mcp, Frontend::Serve],
    )
}

fn soak(
    toolhost: &Path,
    plugins: &Path,
    calls: usize,
    profile: &str,
    frontends: &[Frontend],
) -> Result<(), String> {
    let mut reports = Vec::new();
    let mut problems = Vec::new();
    for &frontend in frontends {
        let report = soak_one(toolhost, plugins, calls, frontend)?;
        print_report(&report, profile);
        problems.extend(
            report["problems"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(|p| format!("{}: {p}", frontend.name())),
        );
        reports.push(report);
    }
    let dir = target_dir().join("soak");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    std::fs::write(
        dir.join("latest.json"),
        format!("{:#}\n", json!({"profile": profile, "runs": reports})),
    )
    .map_err(|e| format!("cannot write the soak report: {e}"))?;
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!("soak: {}", problems.join("; ")))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Frontend {
    Mcp,
    Serve,
}

impl Frontend {
    fn name(self) -> &'static str {
        match self {
            Self::Mcp => "mcp",
            Self::Serve => "serve",
        }
    }
}

fn soak_one(
    toolhost: &Path,
    plugins: &Path,
    calls: usize,
    frontend: Frontend,
) -> Result<Value, String> {
    let dir = target_dir().join("soak").join(frontend.name());
    let _ = std::fs::remove_dir_all(&dir);
    let workspace = dir.join("ws");
    make_workspace(&workspace)?;
    let mut child = Command::new(toolhost)
        .arg("--plugins")
        .arg(plugins)
        .arg(frontend.name())
        .args(["--yes", "--cwd"])
        .arg(&workspace)
        .env_remove("TOOLHOST_SETTINGS")
        .env_remove("TOOLHOST_PLUGIN_PATH")
        .env_remove("CLINE_COMMAND_PERMISSIONS")
        .env("TOOLHOST_PLUGIN_INDEX", dir.join("plugin-index.json"))
        .env("XDG_CONFIG_HOME", &dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start toolhost {}: {e}", frontend.name()))?;
    let result = drive(&mut child, calls, frontend);
    drop(child.stdin.take());
    let deadline = Instant::now() + Duration::from_secs(10);
    while child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
    let (samples, failures, took) = result?;
    Ok(report(frontend, calls, &samples, &failures, took))
}

/// Sends `calls` requests keeping [`IN_FLIGHT`] outstanding, checks every answer, samples the
/// server's resources. Returns the samples, the failed calls, and the time taken.
fn drive(
    child: &mut Child,
    calls: usize,
    frontend: Frontend,
) -> Result<(Vec<Sample>, Vec<String>, Duration), String> {
    let pid = child.id();
    let mut stdin = child.stdin.take().ok_or("no stdin pipe")?;
    let mut stdout = BufReader::new(child.stdout.take().ok_or("no stdout pipe")?);
    let mut send = |message: &Value| -> Result<(), String> {
        writeln!(stdin, "{message}")
            .and_then(|()| stdin.flush())
            .map_err(|e| format!("cannot write to the server: {e}"))
    };
    let mut line = String::new();
    let mut read = |line: &mut String| -> Result<Value, String> {
        line.clear();
        match stdout.read_line(line) {
            Ok(0) => Err("the server closed its output".to_string()),
            Ok(_) => serde_json::from_str(line).map_err(|e| format!("not JSON ({e}): {line}")),
            Err(e) => Err(format!("cannot read from the server: {e}")),
        }
    };
    if frontend == Frontend::Mcp {
        send(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "toolhost-soak", "version": "1"}}}),
        )?;
        read(&mut line)?;
        send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
    }
    let request = |i: usize| -> Value {
        let (tool, params) = call(i);
        match frontend {
            Frontend::Mcp => json!({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                "params": {"name": tool, "arguments": params}}),
            Frontend::Serve => json!({"id": i + 1, "tool": tool, "params": params}),
        }
    };
    let started = Instant::now();
    let deadline = (DEADLINE_PER_1000_CALLS * (calls.div_ceil(1000) as u32)).max(MIN_DEADLINE);
    let every = (calls / SAMPLES).max(1);
    let mut samples = vec![sample(pid, 0)?];
    let mut failures = Vec::new();
    let mut sent = 0;
    let mut answered = 0;
    while sent < calls.min(IN_FLIGHT) {
        send(&request(sent))?;
        sent += 1;
    }
    while answered < calls {
        if started.elapsed() > deadline {
            return Err(format!(
                "{answered} of {calls} calls answered within {deadline:?}"
            ));
        }
        let message = read(&mut line)?;
        let Some(id) = message["id"].as_u64().filter(|&id| id > 0) else {
            continue; // a notification
        };
        let index = id as usize - 1;
        if let Err(why) = check(index, &message, frontend) {
            failures.push(format!("call {index} ({}): {why}", call(index).0));
        }
        answered += 1;
        if sent < calls {
            send(&request(sent))?;
            sent += 1;
        }
        if answered % every == 0 {
            samples.push(sample(pid, answered)?);
        }
    }
    Ok((samples, failures, started.elapsed()))
}

/// The `i`-th call of the mix: the kinds in turn, each over its own files, so that no two
/// calls in flight touch the same file and every replace and patch finds what the previous
/// one on its file left.
fn call(i: usize) -> (&'static str, Value) {
    let n = i / 7;
    let (file, round) = (n % FILES, n / FILES);
    let (from, to) = if round % 2 == 0 {
        ("A", "B")
    } else {
        ("B", "A")
    };
    match i % 7 {
        0 => ("read_file", json!({"path": format!("src/f{file}.txt")})),
        1 => (
            "write_to_file",
            json!({"path": format!("out/w{file}.txt"), "content": format!("written by call {i}\n")}),
        ),
        2 => (
            "replace_in_file",
            json!({"path": format!("edit/e{file}.txt"),
            "diff": format!("------- SEARCH\nstate = {from}\n=======\nstate = {to}\n+++++++ REPLACE")}),
        ),
        3 => (
            "apply_patch",
            json!({"input": format!(
            "*** Begin Patch\n*** Update File: patch/p{file}.txt\n@@\n-state = {from}\n+state = {to}\n*** End Patch")}),
        ),
        4 => ("list_files", json!({"path": "src", "recursive": "true"})),
        5 => (
            "search_files",
            json!({"path": "src", "regex": "needle \\d+"}),
        ),
        _ => (
            "execute_command",
            json!({"command": format!("echo soak {i}"), "requires_approval": "false"}),
        ),
    }
}

/// Whether an answer is the success the call should have had.
fn check(i: usize, message: &Value, frontend: Frontend) -> Result<(), String> {
    let (is_error, text) = match frontend {
        Frontend::Mcp => {
            if let Some(error) = message.get("error") {
                return Err(format!("JSON-RPC error {error}"));
            }
            let result = &message["result"];
            let text: String = result["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| c["text"].as_str())
                .collect();
            (result["isError"] == true, text)
        }
        Frontend::Serve => (
            message["is_error"] != false,
            message["text"].as_str().unwrap_or_default().to_string(),
        ),
    };
    let expected = match i % 7 {
        0 => format!("needle {}", (i / 7) % FILES),
        4 => "f0.txt".to_string(),
        5 => "Found ".to_string(),
        6 => format!("soak {i}"),
        _ => String::new(),
    };
    if is_error || !text.contains(&expected) {
        let shown: String = text.chars().take(200).collect();
        return Err(format!("error {is_error}, text {shown:?}"));
    }
    Ok(())
}

fn make_workspace(dir: &Path) -> Result<(), String> {
    for sub in ["src", "out", "edit", "patch"] {
        std::fs::create_dir_all(dir.join(sub)).map_err(|e| e.to_string())?;
    }
    let write = |path: PathBuf, text: String| {
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))
    };
    for f in 0..FILES {
        write(
            dir.join(format!("src/f{f}.txt")),
            format!("line one\nneedle {f}\nline three\n"),
        )?;
        write(
            dir.join(format!("edit/e{f}.txt")),
            "before\nstate = A\nafter\n".to_string(),
        )?;
        write(
            dir.join(format!("patch/p{f}.txt")),
            "before\nstate = A\nafter\n".to_string(),
        )?;
    }
    Ok(())
}

fn report(
    frontend: Frontend,
    calls: usize,
    samples: &[Sample],
    failures: &[String],
    took: Duration,
) -> Value {
    let warm: Vec<Sample> = samples
        .iter()
        .filter(|s| s.calls as f64 >= calls as f64 * WARMUP_FRACTION)
        .copied()
        .collect();
    let slopes = json!({
        "rss_kib": slope(&warm, |s| s.rss_kib),
        "fds": slope(&warm, |s| s.fds),
        "threads": slope(&warm, |s| s.threads),
        "children": slope(&warm, |s| s.children),
    });
    let mut problems = Vec::new();
    if !failures.is_empty() {
        problems.push(format!(
            "{} failed calls, first: {}",
            failures.len(),
            failures[0]
        ));
    }
    for (name, limit) in [
        ("rss_kib", RSS_SLOPE_LIMIT_KIB),
        ("fds", COUNT_SLOPE_LIMIT),
        ("threads", COUNT_SLOPE_LIMIT),
        ("children", COUNT_SLOPE_LIMIT),
    ] {
        let value = slopes[name].as_f64().unwrap_or(f64::NAN);
        // A NaN slope (no samples) counts as growing.
        if calls >= CALLS_FOR_SLOPES && (value.is_nan() || value > limit) {
            problems.push(format!(
                "{name} grows {value:.2} per 10,000 calls (limit {limit})"
            ));
        }
    }
    let max = |f: fn(&Sample) -> f64| samples.iter().map(f).fold(f64::MIN, f64::max);
    let first = samples.first().copied();
    let last = samples.last().copied();
    json!({
        "frontend": frontend.name(),
        "calls": calls,
        "in_flight": IN_FLIGHT,
        "failed": failures.len(),
        "failures": failures.iter().take(10).collect::<Vec<_>>(),
        "seconds": took.as_secs_f64(),
        "calls_per_second": calls as f64 / took.as_secs_f64().max(1e-9),
        "slopes_per_10k_calls": slopes,
        "first": first.map(sample_json),
        "last": last.map(sample_json),
        "max": {"rss_kib": max(|s| s.rss_kib), "fds": max(|s| s.fds), "threads": max(|s| s.threads), "children": max(|s| s.children)},
        "samples": samples.iter().copied().map(sample_json).collect::<Vec<_>>(),
        "problems": problems,
    })
}

fn sample_json(s: Sample) -> Value {
    json!({"calls": s.calls, "rss_kib": s.rss_kib, "fds": s.fds, "threads": s.threads, "children": s.children})
}

fn print_report(report: &Value, profile: &str) {
    let s = &report["slopes_per_10k_calls"];
    let f = |v: &Value| v.as_f64().unwrap_or(f64::NAN);
    println!(
        "soak {} ({profile}): {} calls, {} in flight, {:.0} s ({:.0} calls/s), {} failed",
        report["frontend"].as_str().unwrap_or_default(),
        report["calls"],
        report["in_flight"],
        f(&report["seconds"]),
        f(&report["calls_per_second"]),
        report["failed"],
    );
    println!(
        "  per 10,000 calls: RSS {:+.1} KiB (limit {RSS_SLOPE_LIMIT_KIB}), fds {:+.3}, threads {:+.3}, children {:+.3} (limit {COUNT_SLOPE_LIMIT})",
        f(&s["rss_kib"]), f(&s["fds"]), f(&s["threads"]), f(&s["children"]),
    );
    println!(
        "  first/last/max: RSS {:.0}/{:.0}/{:.0} KiB, fds {}/{}/{}, threads {}/{}/{}, children {}/{}/{}",
        f(&report["first"]["rss_kib"]), f(&report["last"]["rss_kib"]), f(&report["max"]["rss_kib"]),
        report["first"]["fds"], report["last"]["fds"], report["max"]["fds"],
        report["first"]["threads"], report["last"]["threads"], report["max"]["threads"],
        report["first"]["children"], report["last"]["children"], report["max"]["children"],
    );
    for problem in report["problems"].as_array().into_iter().flatten() {
        println!("  PROBLEM: {}", problem.as_str().unwrap_or_default());
    }
}
