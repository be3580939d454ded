//! `bench stream`: an assistant message whose write_to_file content is 100 KB, 1 MB and 10 MB,
//! streamed in 64-byte chunks through the session with the partial handlers, against one parse
//! of the whole message (`stream_bench`, the release binary of the `tests` crate).
//!
//! The targets: 1 MB in at most 1 s, and linear work: the ratio to the whole-message parse is
//! shown for each size, and the verdict compares the session's cost per added megabyte
//! between the sizes (the session has a fixed part that one parse does not, so its ratio falls
//! as the message grows; quadratic work would make it rise). As context, `toolhost replay --chunk
//! 64 --yes` of the 1 MB message from outside (what a user runs: the transcript printed to a
//! pipe).

use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::{json, Value};

use crate::bench::startup::tempfile_dir;
use crate::build;
use crate::util::target_dir;

/// The content sizes of the issue.
const SIZES: [usize; 3] = [100_000, 1_000_000, 10_000_000];

/// Rounds per size; the median is reported.
const ROUNDS: usize = 3;

/// The target for the 1 MB message, in milliseconds.
const TARGET_1MB_MS: f64 = 1000.0;

/// Linear work: the session's cost per added megabyte from 1 MB to 10 MB at most this many
/// times its cost per added megabyte from 100 KB to 1 MB (quadratic work would make it 11×).
const LINEAR_SPREAD: f64 = 2.0;

/// Runs the benchmark and returns its JSON record.
pub fn stream() -> Result<Value, String> {
    let dist = build::dist()?;
    let release = target_dir().join("release");
    let sizes = SIZES.map(|s| s.to_string()).join(",");
    let output = Command::new(release.join("stream_bench"))
        .arg("--plugins")
        .arg(dist.join("plugins"))
        .args(["--sizes", &sizes, "--rounds", &ROUNDS.to_string()])
        .env_remove("TOOLHOST_SETTINGS")
        .env("TOOLHOST_PLUGIN_INDEX", "off")
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run stream_bench: {e}"))?;
    if !output.status.success() {
        return Err(format!("stream_bench failed ({})", output.status));
    }
    let report: Value = serde_json::from_slice(&output.stdout)
        .map_err(|e| format!("stream_bench printed no JSON ({e})"))?;
    let rows = report["sizes"].as_array().cloned().unwrap_or_default();
    println!("stream: write_to_file content streamed in 64-byte chunks through the session (release, median of {ROUNDS})");
    println!(
        "  {:>10} {:>8} {:>12} {:>14} {:>10} {:>9} {:>9} {:>8}",
        "content", "chunks", "session", "parser alone", "one parse", "ratio", "parser", "partials"
    );
    for row in &rows {
        println!(
            "  {:>10} {:>8} {:>9.1} ms {:>11.1} ms {:>7.2} ms {:>8.0}× {:>8.2}× {:>8}",
            human(row["content_bytes"].as_u64().unwrap_or(0)),
            row["chunks"],
            row["session_ms"].as_f64().unwrap_or(f64::NAN),
            row["stream_parse_ms"].as_f64().unwrap_or(f64::NAN),
            row["parse_ms"].as_f64().unwrap_or(f64::NAN),
            row["session_ratio"].as_f64().unwrap_or(f64::NAN),
            row["stream_parse_ratio"].as_f64().unwrap_or(f64::NAN),
            row["partial_updates"],
        );
    }
    let session_ms = |bytes: u64| {
        rows.iter()
            .find(|r| r["content_bytes"] == bytes)
            .and_then(|r| r["session_ms"].as_f64())
            .unwrap_or(f64::NAN)
    };
    let per_mb_small = (session_ms(1_000_000) - session_ms(100_000)) / 0.9;
    let per_mb_large = (session_ms(10_000_000) - session_ms(1_000_000)) / 9.0;
    let spread = per_mb_large / per_mb_small;
    let one_mb = rows
        .iter()
        .find(|r| r["content_bytes"] == 1_000_000)
        .and_then(|r| r["session_ms"].as_f64())
        .unwrap_or(f64::NAN);
    println!(
        "  1 MB: {one_mb:.0} ms (target <= {TARGET_1MB_MS:.0} ms) {}",
        verdict(one_mb <= TARGET_1MB_MS)
    );
    println!(
        "  cost per added MB: {per_mb_small:.0} ms from 100 KB to 1 MB, {per_mb_large:.0} ms from 1 MB to 10 MB: {spread:.2}× (target <= {LINEAR_SPREAD}: linear) {}",
        verdict(spread <= LINEAR_SPREAD)
    );
    println!(
        "  (the session's ratio to one parse falls with size: its fixed part, the first 16 KiB shown to the partial handler on every chunk, the call and the write, weighs less)"
    );
    let replay_ms = replay_from_outside(&dist)?;
    println!("  context: toolhost replay --chunk 64 --yes of the 1 MB message, from outside: {replay_ms:.0} ms");
    Ok(json!({
        "bench": "stream",
        "sizes": rows,
        "one_mb_ms": one_mb,
        "one_mb_target_ms": TARGET_1MB_MS,
        "per_added_mb_ms": [per_mb_small, per_mb_large],
        "marginal_cost_spread": spread,
        "marginal_cost_spread_target": LINEAR_SPREAD,
        "replay_1mb_ms": replay_ms,
    }))
}

fn verdict(ok: bool) -> &'static str {
    if ok {
        "ok"
    } else {
        "MISSED"
    }
}

fn human(bytes: u64) -> String {
    match bytes {
        b if b >= 1_000_000 => format!("{} MB", b / 1_000_000),
        b => format!("{} KB", b / 1000),
    }
}

/// `toolhost replay` of the 1 MB message by the release binary, transcript to a pipe.
fn replay_from_outside(dist: &std::path::Path) -> Result<f64, String> {
    let dir = tempfile_dir("toolhost-bench-stream")?;
    let workspace = dir.join("ws");
    std::fs::create_dir_all(&workspace).map_err(|e| e.to_string())?;
    let line = "    if a > b && v.len() < 3 { out.push_str(\"<p>done</p>\"); }\n";
    let content = &line.repeat(1_000_000 / line.len() + 1)[..1_000_000];
    let message = dir.join("message.txt");
    std::fs::write(
        &message,
        format!("I'll write it.\n\n<write_to_file>\n<path>big.txt</path>\n<content>\n{content}\n</content>\n</write_to_file>\n"),
    )
    .map_err(|e| e.to_string())?;
    let start = Instant::now();
    let output = Command::new(dist.join("bin/toolhost"))
        .arg("--plugins")
        .arg(dist.join("plugins"))
        .arg("replay")
        .arg(&message)
        .args(["--chunk", "64", "--yes", "--cwd"])
        .arg(&workspace)
        .env_remove("TOOLHOST_SETTINGS")
        .env("TOOLHOST_PLUGIN_INDEX", "off")
        .env("XDG_CONFIG_HOME", &dir)
        .stderr(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run toolhost replay: {e}"))?;
    let took = start.elapsed().as_secs_f64() * 1000.0;
    if !output.status.success() || !workspace.join("big.txt").exists() {
        return Err(format!("toolhost replay failed ({})", output.status));
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(took)
}
