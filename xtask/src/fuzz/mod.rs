//! `cargo xtask fuzz [--time SECONDS] [--runs N] [TARGET...]`: builds the fuzz targets of
//! `fuzz/` with cargo-fuzz (libFuzzer, nightly Rust) and runs each one, seeded from the
//! conformance data and the tests' inputs ([`seeds`]).
//!
//! - Each target runs for `--time` seconds (default 60), or `--runs` executions, from its
//!   corpus (`target/fuzz/corpus/<target>`, kept between runs) and its seeds.
//! - Executions, crashes and timeouts per target are printed and written to
//!   `target/fuzz/latest.json`; an input that crashes or times out is kept under
//!   `target/fuzz/artifacts/<target>/` and the run fails. Such an input becomes a regression
//!   test of the normal suite, beside the code it broke (a unit test naming the target that
//!   found it).
//! - Sanitizers are off (`-s none`): the code under test is safe Rust, where what a fuzzer
//!   finds is a panic, a hang or a broken invariant; AddressSanitizer would halve the
//!   executions for nothing it could add. Debug assertions (and overflow checks) are on.
//!
//! `cargo xtask test` runs [`smoke`]: a few seconds per target.

mod seeds;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::{json, Value};

use crate::util::{target_dir, workspace_root};

/// The fuzz targets (the `[[bin]]`s of `fuzz/Cargo.toml`).
pub const TARGETS: [&str; 9] = [
    "stream_parser",
    "arguments",
    "replace_in_file",
    "apply_patch",
    "command_policy",
    "paths",
    "serve_frames",
    "mcp_frames",
    "worker_frames",
];

/// Seconds per target in the smoke run of `cargo xtask test`.
const SMOKE_SECONDS: u64 = 3;

/// How long one input may run before libFuzzer counts it as a timeout.
const INPUT_TIMEOUT_SECONDS: u64 = 10;

/// How one run of the targets is bounded.
struct Budget {
    seconds: Option<u64>,
    runs: Option<u64>,
}

/// `cargo xtask fuzz` with its arguments.
pub fn run(args: &[String]) -> Result<(), String> {
    let mut budget = Budget {
        seconds: None,
        runs: None,
    };
    let mut targets = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut number = |name: &str| -> Result<u64, String> {
            args.next()
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| format!("{name} needs a number"))
        };
        match arg.as_str() {
            "--time" => budget.seconds = Some(number("--time")?),
            "--runs" => budget.runs = Some(number("--runs")?),
            name if TARGETS.contains(&name) => targets.push(name.to_string()),
            other => {
                return Err(format!(
                    "unknown fuzz argument '{other}' (targets: {})",
                    TARGETS.join(", ")
                ))
            }
        }
    }
    if budget.seconds.is_none() && budget.runs.is_none() {
        budget.seconds = Some(60);
    }
    if targets.is_empty() {
        targets = TARGETS.iter().map(|t| t.to_string()).collect();
    }
    ensure_cargo_fuzz()?;
    fuzz(&targets, &budget)
}

/// The smoke run of `cargo xtask test`: every target for a few seconds. Skipped, saying so,
/// only when no nightly toolchain can be had at all.
pub fn smoke() -> Result<(), String> {
    if let Err(why) = ensure_cargo_fuzz() {
        if !has_nightly() {
            println!("fuzz smoke skipped: {why}");
            return Ok(());
        }
        return Err(why);
    }
    let targets: Vec<String> = TARGETS.iter().map(|t| t.to_string()).collect();
    fuzz(
        &targets,
        &Budget {
            seconds: Some(SMOKE_SECONDS),
            runs: None,
        },
    )
}

fn has_nightly() -> bool {
    succeeds(Command::new("cargo").args(["+nightly", "--version"]))
}

/// Makes sure `cargo +nightly fuzz` works: installs the nightly toolchain (rustup, minimal
/// profile) and cargo-fuzz (`cargo install cargo-fuzz --locked`, from crates.io) when missing.
fn ensure_cargo_fuzz() -> Result<(), String> {
    if !has_nightly() {
        println!(
            "installing the nightly toolchain (rustup toolchain install nightly --profile minimal)"
        );
        let installed = succeeds(Command::new("rustup").args([
            "toolchain",
            "install",
            "nightly",
            "--profile",
            "minimal",
        ]));
        if !installed || !has_nightly() {
            return Err(
                "no nightly toolchain (cargo-fuzz needs one) and rustup could not install it"
                    .to_string(),
            );
        }
    }
    if succeeds(Command::new("cargo").args(["+nightly", "fuzz", "--version"])) {
        return Ok(());
    }
    println!("installing cargo-fuzz (cargo install cargo-fuzz --locked)");
    let status = Command::new("cargo")
        .args(["install", "cargo-fuzz", "--locked"])
        .status()
        .map_err(|e| format!("cannot run cargo install: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("cargo install cargo-fuzz failed ({status})"))
    }
}

fn succeeds(command: &mut Command) -> bool {
    command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Builds the targets, writes the seeds, runs each target within `budget`, and reports.
fn fuzz(targets: &[String], budget: &Budget) -> Result<(), String> {
    let root = workspace_root();
    let fuzz_dir = root.join("fuzz");
    let status = Command::new("cargo")
        .current_dir(&fuzz_dir)
        .args([
            "+nightly",
            "fuzz",
            "build",
            "-s",
            "none",
            "--debug-assertions",
        ])
        .status()
        .map_err(|e| format!("cannot run cargo fuzz: {e}"))?;
    if !status.success() {
        return Err(format!("cargo fuzz build failed ({status})"));
    }
    let work = target_dir().join("fuzz");
    let seeds = work.join("seeds");
    seeds::write_all(&root, &seeds)?;
    let binaries = fuzz_dir.join("target").join(host_triple()?).join("release");
    let mut results = Vec::new();
    let mut failed = Vec::new();
    for target in targets {
        let result = run_target(&binaries, &work, target, budget)?;
        println!(
            "fuzz {target}: {} executions in {:.0} s ({:.0}/s), {} crashes, {} timeouts",
            result["executions"],
            result["seconds"].as_f64().unwrap_or(0.0),
            result["executions_per_second"].as_f64().unwrap_or(0.0),
            result["crashes"],
            result["timeouts"],
        );
        if result["crashes"] != 0 || result["timeouts"] != 0 || result["ok"] != true {
            failed.push(format!(
                "{target} (inputs under {})",
                work.join("artifacts").join(target).display()
            ));
        }
        results.push(result);
    }
    let total: u64 = results
        .iter()
        .filter_map(|r| r["executions"].as_u64())
        .sum();
    println!("fuzz: {total} executions in total");
    let report = json!({"targets": results, "executions": total});
    std::fs::create_dir_all(&work).map_err(|e| e.to_string())?;
    std::fs::write(work.join("latest.json"), format!("{report:#}\n"))
        .map_err(|e| format!("cannot write the fuzz report: {e}"))?;
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("fuzzing found problems: {}", failed.join(", ")))
    }
}

/// One target's run: its executions, crashes and timeouts (the inputs libFuzzer kept).
fn run_target(
    binaries: &Path,
    work: &Path,
    target: &str,
    budget: &Budget,
) -> Result<Value, String> {
    let corpus = work.join("corpus").join(target);
    let artifacts = work.join("artifacts").join(target);
    // The targets' temporary workspaces, removed after the run.
    let tmp = work.join("tmp").join(target);
    for dir in [&corpus, &artifacts, &tmp] {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let before = artifact_names(&artifacts);
    let mut command = Command::new(binaries.join(target));
    command
        .arg(&corpus)
        .arg(work.join("seeds").join(target))
        .arg(format!("-timeout={INPUT_TIMEOUT_SECONDS}"))
        .arg("-rss_limit_mb=2048")
        .arg("-print_final_stats=1")
        .arg(format!("-artifact_prefix={}/", artifacts.display()))
        .env("TMPDIR", &tmp)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if let Some(seconds) = budget.seconds {
        command.arg(format!("-max_total_time={seconds}"));
    }
    if let Some(runs) = budget.runs {
        command.arg(format!("-runs={runs}"));
    }
    let started = Instant::now();
    let output = command
        .output()
        .map_err(|e| format!("cannot run the fuzz target {target}: {e}"))?;
    let seconds = started.elapsed().as_secs_f64();
    let _ = std::fs::remove_dir_all(&tmp);
    let log = String::from_utf8_lossy(&output.stderr);
    let executions = stat(&log, "stat::number_of_executed_units").unwrap_or(0);
    let new: Vec<String> = artifact_names(&artifacts)
        .into_iter()
        .filter(|name| !before.contains(name))
        .collect();
    let timeouts = new.iter().filter(|n| n.starts_with("timeout-")).count();
    let crashes = new.len() - timeouts;
    if !output.status.success() {
        let tail: Vec<&str> = log.lines().rev().take(40).collect();
        eprintln!(
            "fuzz {target} ended with {}:\n{}",
            output.status,
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        );
    }
    Ok(json!({
        "target": target,
        "ok": output.status.success(),
        "executions": executions,
        "seconds": seconds,
        "executions_per_second": executions as f64 / seconds.max(1e-9),
        "crashes": crashes,
        "timeouts": timeouts,
        "new_artifacts": new,
        "corpus_inputs": std::fs::read_dir(&corpus).map(|d| d.count()).unwrap_or(0),
    }))
}

fn artifact_names(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
                .collect()
        })
        .unwrap_or_default()
}

/// A number of libFuzzer's final statistics (`stat::name: N`).
fn stat(log: &str, name: &str) -> Option<u64> {
    log.lines()
        .rev()
        .filter_map(|line| line.strip_prefix(name))
        .find_map(|rest| rest.trim_start_matches(':').trim().parse().ok())
}

/// The host's target triple, where cargo-fuzz puts its binaries.
fn host_triple() -> Result<String, String> {
    let output = Command::new("rustc")
        .args(["+nightly", "-vV"])
        .output()
        .map_err(|e| format!("cannot run rustc: {e}"))?;
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
        .ok_or_else(|| "rustc -vV names no host".to_string())
}
