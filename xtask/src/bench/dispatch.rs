//! `bench dispatch`: what the host adds to one tool call, measured in one process.
//!
//! `dispatch_bench`, the binary of the fixture plugin `tests/fixtures/noop_tool` (release),
//! calls the same no-op handler several ways in one process, [`CALLS`] calls per round after as
//! many warm-up calls, and reports the median per-call time of [`ROUNDS`] rounds:
//! - `direct`: `NoopTool.execute(&call, &ctx)` through the rlib: the baseline;
//! - `abi`: the handler behind the ABI adapter on the same thread, as a host must call it
//!   (`describe` and `execute` with the parameters and the context as JSON, the result decoded):
//!   the floor of any host on this ABI;
//! - `handoff`: an empty job to the host's pool of call threads and back (every call runs on a
//!   thread of its own, so that its timeout can be kept);
//! - `host`: `Host::call("noop", "{}")` with the built library loaded, alone and (`host_all`)
//!   beside every real plugin.
//!
//! The target: at most 2 µs added per call over the direct call (`host - direct`).
//! Measured on a shared 2-core machine: before the dispatch work 10–13 µs on the quietest runs
//! and 45–65 µs on most (every call waited for two thread wake-ups), now 2.2–3.2 µs: NOT met.
//! What remains is the ABI's JSON (`abi`, about 1.2 µs: the SDK decodes the task context for
//! `describe` and again for `execute`, and the host decodes the result; `describe` now runs
//! beside `execute`), the handoff to the call's thread (`handoff`, 0.5–1 µs, several cache lines
//! crossing between cores) and the host's own checks and bookkeeping (about 0.5 µs). With both
//! cores busy, a call costs 10–30 µs before and after.
//!
//! As context, what a client of `toolhost serve` sees is measured from outside as before: one
//! process, [`SERVE_CALLS`] pipelined `read_file` requests for a one-line file (the JSON-lines
//! frontend, the pipes, the dispatch and the tool), the time per answer.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::bench::startup::tempfile_dir;
use crate::build;
use crate::util::{library_file_name, plugin_crates, target_dir};

/// Calls per round of the in-process measurements.
const CALLS: usize = 10_000;

/// Rounds of the in-process measurements; the median per-call time is reported.
const ROUNDS: usize = 20;

/// Requests per `serve` round.
const SERVE_CALLS: usize = 5000;

/// `serve` rounds (one process each); the median is reported.
const SERVE_ROUNDS: usize = 5;

/// The target for the host's added cost per call.
const TARGET_US: f64 = 2.0;

/// The in-process figures, as `dispatch_bench` names them, with what each one is.
const FIGURES: [(&str, &str); 6] = [
    ("direct", "direct: NoopTool.execute through the rlib"),
    (
        "test_host",
        "TestHost::call (the SDK's test entry; builds the call)",
    ),
    ("abi", "ABI adapter, same thread (describe + execute, JSON)"),
    ("handoff", "handoff to a call thread and back (empty job)"),
    ("host", "Host::call, the no-op plugin alone"),
    ("host_all", "Host::call, beside every real plugin"),
];

/// Runs the benchmark and returns its JSON record.
pub fn dispatch() -> Result<Value, String> {
    let dist = build::dist()?;
    let release = target_dir().join("release");
    let figures = in_process(&release)?;
    let median = |name: &str| figures[name]["median_us"].as_f64().unwrap_or(f64::NAN);
    let plugins_count = plugin_crates()?.len();
    println!(
        "dispatch: a no-op tool, in one process (release), median of {ROUNDS} rounds of {CALLS} calls"
    );
    for (name, label) in FIGURES {
        println!("  {label:<58} {:>8.3} µs/call", median(name));
    }
    let added = median("host") - median("direct");
    let added_all = median("host_all") - median("direct");
    let met = added <= TARGET_US;
    println!(
        "  {:<58} {added:>8.3} µs/call",
        "added by the host (Host::call - direct)"
    );
    println!(
        "  {:<58} {added_all:>8.3} µs/call",
        format!("the same beside the {plugins_count} real plugins")
    );
    println!(
        "  parts: the ABI alone {:.3}, the handoff alone {:.3} (a call has both, and the\n  host's steps on the call's thread)",
        median("abi") - median("direct"),
        median("handoff"),
    );
    println!(
        "  target <= {TARGET_US} µs added per call: {}",
        if met { "met" } else { "NOT met" }
    );

    let workspace = tempfile_dir("toolhost-bench-dispatch")?
        .canonicalize()
        .map_err(|e| e.to_string())?;
    let isolation = super::isolation::report(&figures, &dist, &release, &workspace)?;
    std::fs::write(workspace.join("one.txt"), "hello\n").map_err(|e| e.to_string())?;
    let host = dist.join("bin/toolhost");
    let plugins = dist.join("plugins");
    let read = json!({"tool": "read_file", "params": {"path": "one.txt"}});
    let mut read_us = Vec::new();
    for _ in 0..SERVE_ROUNDS {
        read_us.push(per_call_us(&host, &plugins, &workspace, &read, |a| {
            a["is_error"] == false && a["text"].as_str().is_some_and(|t| t.contains("1 | hello"))
        })?);
    }
    let read = median_of(read_us);
    println!(
        "context: one `toolhost serve`, {SERVE_CALLS} pipelined requests, median of {SERVE_ROUNDS} rounds"
    );
    println!(
        "  {:<58} {read:>8.2} µs/request",
        "read_file, 1-line file (frontend + pipes + dispatch + tool)"
    );
    Ok(json!({
        "bench": "dispatch",
        "calls": CALLS,
        "rounds": ROUNDS,
        "plugins": plugins_count,
        "in_process": figures,
        "added_us": added,
        "added_beside_all_plugins_us": added_all,
        "target_us": TARGET_US,
        "target_met": met,
        "isolation": isolation,
        "serve": {
            "calls": SERVE_CALLS,
            "rounds": SERVE_ROUNDS,
            "read_file_us_per_request": read,
        },
    }))
}

/// Runs `dispatch_bench` from `release` (built by the workspace build) over the real plugins
/// staged there, and returns its figures.
fn in_process(release: &Path) -> Result<Value, String> {
    let output = Command::new(release.join("dispatch_bench"))
        .arg("--plugins")
        .arg(release.join("plugins"))
        .arg("--faults")
        .arg(release.join(library_file_name("fixture_faults")))
        .args([
            "--rounds",
            &ROUNDS.to_string(),
            "--calls",
            &CALLS.to_string(),
        ])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run dispatch_bench: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "dispatch_bench failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    serde_json::from_slice(&output.stdout)
        .map_err(|e| format!("dispatch_bench printed no JSON ({e})"))
}

/// Sends `SERVE_CALLS` copies of `request` (with ids) to a fresh `toolhost serve` and returns
/// the wall time per answer; every answer must pass `ok`. Startup is outside the timed span:
/// one untimed request is answered first.
fn per_call_us(
    host: &Path,
    plugins: &Path,
    workspace: &Path,
    request: &Value,
    ok: impl Fn(&Value) -> bool,
) -> Result<f64, String> {
    let mut child = Command::new(host)
        .arg("--plugins")
        .arg(plugins)
        .args(["serve", "--cwd"])
        .arg(workspace)
        .env("XDG_CONFIG_HOME", workspace)
        .env_remove("TOOLHOST_SETTINGS")
        .env_remove("TOOLHOST_PLUGIN_PATH")
        .env_remove("TOOLHOST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start toolhost serve: {e}"))?;
    let mut stdin = child.stdin.take().ok_or("no stdin pipe")?;
    let mut stdout = BufReader::new(child.stdout.take().ok_or("no stdout pipe")?);
    let line_for = |id: usize| {
        let mut message = request.clone();
        message["id"] = json!(id);
        let mut line = message.to_string();
        line.push('\n');
        line
    };
    let mut line = String::new();
    let mut read_answer = |line: &mut String| -> Result<Value, String> {
        line.clear();
        if stdout.read_line(line).map_err(|e| e.to_string())? == 0 {
            return Err("toolhost serve closed stdout".to_string());
        }
        serde_json::from_str(line).map_err(|e| format!("not JSON ({e}): {line}"))
    };
    // Warm-up: startup and the first call stay out of the timed span.
    stdin
        .write_all(line_for(0).as_bytes())
        .and_then(|()| stdin.flush())
        .map_err(|e| e.to_string())?;
    let first = read_answer(&mut line)?;
    if !ok(&first) {
        return Err(format!("unexpected answer: {first}"));
    }
    let batch: String = (1..=SERVE_CALLS).map(line_for).collect();
    let start = Instant::now();
    // The writer runs beside the reader, so neither pipe fills up and blocks the other.
    let writer = std::thread::spawn(move || -> std::io::Result<()> {
        stdin.write_all(batch.as_bytes())?;
        stdin.flush()
        // stdin drops here: serve exits after the last answer.
    });
    for expected in 1..=SERVE_CALLS {
        let answer = read_answer(&mut line)?;
        if answer["id"] != expected || !ok(&answer) {
            return Err(format!("unexpected answer to request {expected}: {answer}"));
        }
    }
    let elapsed = start.elapsed();
    writer
        .join()
        .map_err(|_| "writer thread panicked".to_string())?
        .map_err(|e| e.to_string())?;
    child.wait().map_err(|e| e.to_string())?;
    Ok(us(elapsed) / SERVE_CALLS as f64)
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn median_of(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}
