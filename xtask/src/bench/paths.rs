//! `bench paths`: what the confined file access costs, side by side with the build before it.
//!
//! The baseline is the release build of a revision whose path checks were a `realpath` and a
//! plain open (`TOOLHOST_BENCH_BASELINE`, default [`DEFAULT_BASELINE`]), built once into
//! `target/bench/baseline/<rev>` from `git archive`. Both builds run the same work on the search
//! bench's tree, alternately, with only the read_file and search_files plugins loaded:
//!
//! - read_file: [`READS`] reads of distinct files through one `toolhost serve` (JSON lines), so
//!   the per-call cost of checking and opening a path dominates rather than process start;
//! - search_files: `toolhost call search_files` for two regexes that read every file.
//!
//! Each is timed without a `.clineignore` and with one (a rule that matches nothing, so that the
//! same files are read but every open is checked against the rules). The target: the current
//! build at most 5% slower than the baseline on either tool.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::bench::startup::ms;
use crate::bench::tree::ensure_tree;
use crate::build;
use crate::util::{library_file_name, target_dir, workspace_root};

/// The last revision before the workspace capability (realpath checks, plain opens).
const DEFAULT_BASELINE: &str = "da14a12";

/// Reads per `serve` session.
const READS: usize = 2000;

/// Timed rounds; the median is reported.
const RUNS: usize = 7;

/// The slowdown allowed against the baseline.
const TARGET_RATIO: f64 = 1.05;

/// Regexes that make search_files read every file of the tree.
const REGEXES: [&str; 2] = ["quux_frobnicate", r"ERR_[A-Z]{3}[0-9]{4}"];

/// One build: its binary and a plugin directory with read_file and search_files.
struct Build {
    name: String,
    toolhost: PathBuf,
    plugins: PathBuf,
}

/// Runs the benchmark and returns its JSON record.
pub fn paths() -> Result<Value, String> {
    let tree = ensure_tree()?;
    let rev = std::env::var("TOOLHOST_BENCH_BASELINE").unwrap_or_else(|_| DEFAULT_BASELINE.into());
    let baseline = baseline_build(&rev)?;
    let dist = build::dist()?;
    let current = with_plugins("current", &dist.join("bin/toolhost"), &dist.join("plugins"))?;
    let files = sample_files(&tree.dir, READS)?;
    let config_home = target_dir().join("bench/paths-config");
    std::fs::create_dir_all(&config_home).map_err(|e| e.to_string())?;
    println!(
        "paths: the current release build vs the build of {rev} (realpath checks and plain opens), read_file and search_files alone\n  tree {} ; read_file: {READS} reads through `toolhost serve`; search_files: `toolhost call`; median of {RUNS} rounds",
        tree.dir.display()
    );
    println!(
        "  {:<34} {:>12} {:>12} {:>7}",
        "case", "baseline ms", "current ms", "ratio"
    );
    let rules = tree.dir.join(".clineignore");
    let mut rows = Vec::new();
    let mut worst: f64 = 0.0;
    for with_rules in [false, true] {
        if with_rules {
            std::fs::write(&rules, "*.no-such-extension\n").map_err(|e| e.to_string())?;
        }
        let suffix = if with_rules {
            ", with .clineignore"
        } else {
            ""
        };
        let builds = [&baseline, &current];
        let reads = compare(&builds, |b| {
            read_session(b, &tree.dir, &files, &config_home)
        })?;
        rows.push(row(
            &format!("read_file x{READS}{suffix}"),
            reads,
            &mut worst,
        ));
        for regex in REGEXES {
            let search = compare(&builds, |b| search_call(b, &tree.dir, regex, &config_home))?;
            rows.push(row(
                &format!("search_files {regex}{suffix}"),
                search,
                &mut worst,
            ));
        }
    }
    let _ = std::fs::remove_file(&rules);
    let met = worst <= TARGET_RATIO;
    println!(
        "  worst ratio {worst:.3}x (target <= {TARGET_RATIO}x: {})",
        if met { "met" } else { "NOT met" }
    );
    Ok(json!({
        "bench": "paths",
        "baseline": rev,
        "reads_per_session": READS,
        "runs": RUNS,
        "rows": rows,
        "worst_ratio": worst,
        "target_ratio": TARGET_RATIO,
        "target_met": met,
    }))
}

/// Prints and records one case: (baseline, current) medians.
fn row(name: &str, (baseline, current): (Duration, Duration), worst: &mut f64) -> Value {
    let ratio = ms(current) / ms(baseline);
    *worst = worst.max(ratio);
    println!(
        "  {name:<34} {:>12.1} {:>12.1} {ratio:>7.3}",
        ms(baseline),
        ms(current)
    );
    json!({"case": name, "baseline_ms": ms(baseline), "current_ms": ms(current), "ratio": ratio})
}

/// One warm-up each, then [`RUNS`] rounds alternating which build goes first; the medians.
fn compare(
    builds: &[&Build; 2],
    mut run: impl FnMut(&Build) -> Result<Duration, String>,
) -> Result<(Duration, Duration), String> {
    for build in builds {
        run(build)?;
    }
    let mut times: [Vec<Duration>; 2] = Default::default();
    for round in 0..RUNS {
        for step in 0..2 {
            let which = (round + step) % 2;
            times[which].push(run(builds[which])?);
        }
    }
    let [a, b] = times.map(|mut t| {
        t.sort();
        t[t.len() / 2]
    });
    Ok((a, b))
}

/// `toolhost serve` answering `files.len()` reads; the time until every answer is in.
fn read_session(
    build: &Build,
    dir: &Path,
    files: &[String],
    config_home: &Path,
) -> Result<Duration, String> {
    let mut input = String::new();
    for (i, file) in files.iter().enumerate() {
        let request = json!({"id": i.to_string(), "tool": "read_file", "params": {"path": file}});
        input.push_str(&request.to_string());
        input.push('\n');
    }
    let start = Instant::now();
    let mut child = command(build, config_home)
        .arg("serve")
        .arg("--cwd")
        .arg(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("{}: {e}", build.name))?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().map_err(|e| e.to_string())?;
    let elapsed = start.elapsed();
    writer
        .join()
        .map_err(|_| "the writer failed")?
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&output.stdout);
    let answered = text
        .lines()
        .filter(|line| serde_json::from_str::<Value>(line).is_ok_and(|v| v["is_error"] == false))
        .count();
    if answered != files.len() {
        return Err(format!(
            "{}: {answered} of {} reads succeeded",
            build.name,
            files.len()
        ));
    }
    Ok(elapsed)
}

/// `toolhost call search_files` over the tree.
fn search_call(
    build: &Build,
    dir: &Path,
    regex: &str,
    config_home: &Path,
) -> Result<Duration, String> {
    let start = Instant::now();
    let output = command(build, config_home)
        .args(["call", "search_files"])
        .arg(json!({"path": ".", "regex": regex}).to_string())
        .arg("--cwd")
        .arg(dir)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(|e| format!("{}: {e}", build.name))?;
    let elapsed = start.elapsed();
    let text = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() || !text.starts_with("Found ") || text.starts_with("Found 0 ") {
        return Err(format!("{}: search_files failed: {text}", build.name));
    }
    Ok(elapsed)
}

fn command(build: &Build, config_home: &Path) -> Command {
    let mut command = Command::new(&build.toolhost);
    command
        .arg("--plugins")
        .arg(&build.plugins)
        .env("XDG_CONFIG_HOME", config_home)
        .env("XDG_CACHE_HOME", config_home)
        .env_remove("TOOLHOST_SETTINGS")
        .env_remove("TOOLHOST_PLUGIN_PATH");
    command
}

/// A build with a plugin directory of its own holding read_file and search_files.
fn with_plugins(name: &str, toolhost: &Path, libraries: &Path) -> Result<Build, String> {
    let plugins = target_dir().join("bench/paths-plugins").join(name);
    std::fs::create_dir_all(&plugins).map_err(|e| e.to_string())?;
    for crate_name in ["read_file", "search_files"] {
        let file = library_file_name(crate_name);
        std::fs::copy(libraries.join(&file), plugins.join(&file))
            .map_err(|e| format!("cannot copy {file}: {e}"))?;
    }
    Ok(Build {
        name: name.to_string(),
        toolhost: toolhost.to_path_buf(),
        plugins,
    })
}

/// The release build of `rev`, made once from `git archive` into `target/bench/baseline/<rev>`.
fn baseline_build(rev: &str) -> Result<Build, String> {
    let root = target_dir().join("bench/baseline").join(rev);
    let source = root.join("src");
    let target = root.join("target");
    let release = target.join("release");
    if !release.join("toolhost").exists() {
        println!("building the baseline {rev} (once) in {}", root.display());
        if source.exists() {
            std::fs::remove_dir_all(&source).map_err(|e| e.to_string())?;
        }
        std::fs::create_dir_all(&source).map_err(|e| e.to_string())?;
        let archive = Command::new("sh")
            .arg("-c")
            .arg("git -C \"$1\" archive \"$2\" | tar -x -C \"$3\"")
            .arg("sh")
            .arg(workspace_root())
            .arg(rev)
            .arg(&source)
            .status()
            .map_err(|e| e.to_string())?;
        if !archive.success() {
            return Err(format!("git archive {rev} failed"));
        }
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
        let status = Command::new(cargo)
            .current_dir(&source)
            .args(["build", "--release", "--workspace"])
            .env("CARGO_TARGET_DIR", &target)
            .status()
            .map_err(|e| e.to_string())?;
        if !status.success() {
            return Err(format!("the baseline build of {rev} failed"));
        }
    }
    with_plugins("baseline", &release.join("toolhost"), &release)
}

/// Up to `count` visible source files of the tree, relative to it.
fn sample_files(dir: &Path, count: usize) -> Result<Vec<String>, String> {
    let mut files = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(relative) = stack.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(dir.join(&relative))
            .map_err(|e| e.to_string())?
            .filter_map(Result::ok)
            .collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || name == "generated" {
                continue;
            }
            let path = relative.join(&name);
            let kind = entry.file_type().map_err(|e| e.to_string())?;
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() && files.len() < count {
                files.push(path.to_string_lossy().into_owned());
            }
        }
    }
    if files.len() < count {
        return Err(format!("the tree has only {} files", files.len()));
    }
    Ok(files)
}
