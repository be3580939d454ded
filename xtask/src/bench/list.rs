//! `bench list`: `toolhost call list_files` (recursive) against `rg --files | head -200` on the
//! search bench's generated tree (20,000 visible files, a hidden and a gitignored directory).
//!
//! list_files stops at 200 entries, so ripgrep's listing is cut at 200 lines by `head`, run
//! through `sh -c` (the shell's spawn is part of the baseline; the floor row shows it). toolhost
//! runs with every plugin as a user has it: the plugin index on (warm after the first run, so
//! only list_files is opened). The same call without the index (every library opened at
//! startup) and with the list_files library alone are timed too. Runs are interleaved, the
//! median wall time is reported.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::bench::search::ensure_rg;
use crate::bench::startup::ms;
use crate::bench::tree::ensure_tree;
use crate::build;
use crate::util::{library_file_name, target_dir};

/// Timed runs per command; the median is reported.
const RUNS: usize = 21;

/// toolhost's time over the baseline's that the all-plugins call should stay under.
const TARGET_RATIO: f64 = 1.5;

/// The entries list_files shows at most, and the lines `head` keeps.
const LIMIT: usize = 200;

/// Builds a fresh command for one run.
type MakeCommand<'a> = Box<dyn Fn() -> Command + 'a>;

/// Runs the benchmark and returns its JSON record.
pub fn list() -> Result<Value, String> {
    let tree = ensure_tree()?;
    let rg = ensure_rg()?;
    let dist = build::dist()?;
    let alone = target_dir().join("bench/list-plugin");
    std::fs::create_dir_all(&alone).map_err(|e| e.to_string())?;
    let library = library_file_name("list_files");
    std::fs::copy(dist.join("plugins").join(&library), alone.join(&library))
        .map_err(|e| format!("cannot copy {library}: {e}"))?;
    let config_home = target_dir().join("bench/list-config");
    std::fs::create_dir_all(&config_home).map_err(|e| e.to_string())?;

    let toolhost = dist.join("bin/toolhost");
    let index = target_dir().join("bench/list-plugin-index.json");
    let all = dist.join("plugins");
    let commands: [(&str, MakeCommand); 5] = [
        (
            "sh -c true (shell floor)",
            Box::new(|| shell("true", &tree.dir)),
        ),
        (
            "rg --files | head -200",
            Box::new(|| {
                shell(
                    &format!("{} --files | head -{LIMIT}", rg.display()),
                    &tree.dir,
                )
            }),
        ),
        (
            "toolhost, all plugins",
            Box::new(|| {
                let mut command = list_files(&toolhost, &all, &tree.dir, &config_home);
                command.env("TOOLHOST_PLUGIN_INDEX", &index);
                command
            }),
        ),
        (
            "toolhost, all, no index",
            Box::new(|| list_files(&toolhost, &all, &tree.dir, &config_home)),
        ),
        (
            "toolhost, list_files alone",
            Box::new(|| list_files(&toolhost, &alone, &tree.dir, &config_home)),
        ),
    ];

    // Warm-up (page cache, dentries) and the check that both list LIMIT entries.
    let mut outputs = Vec::new();
    for (name, make) in &commands {
        outputs.push(run(&mut make()).map_err(|e| format!("{name}: {e}"))?.1);
    }
    let rg_lines = outputs[1].lines().count();
    for (index, output) in outputs.iter().enumerate().skip(2) {
        // Entries are the lines before the blank line that precedes the truncation notice.
        let entries = output.lines().take_while(|l| !l.is_empty()).count();
        if entries != LIMIT || !output.contains("File list truncated") {
            return Err(format!(
                "{}: expected {LIMIT} entries and the truncation notice, got {entries}:\n{}",
                commands[index].0,
                output.chars().take(500).collect::<String>()
            ));
        }
    }
    if rg_lines != LIMIT {
        return Err(format!("rg listed {rg_lines} files, expected {LIMIT}"));
    }

    let mut times: [Vec<Duration>; 5] = Default::default();
    for round in 0..RUNS {
        for step in 0..commands.len() {
            let index = (round + step) % commands.len();
            times[index].push(run(&mut (commands[index].1)())?.0);
        }
    }
    let medians: Vec<f64> = times.iter_mut().map(|t| ms(median(t))).collect();
    let ratio = medians[2] / medians[1];
    let unindexed_ratio = medians[3] / medians[1];
    let alone_ratio = medians[4] / medians[1];
    println!(
        "list: `toolhost call list_files` recursive (release) vs `rg --files | head -{LIMIT}`\n  tree {} ({} files); wall: median of {RUNS} interleaved runs",
        tree.dir.display(),
        tree.files
    );
    for ((name, _), median) in commands.iter().zip(&medians) {
        println!("  {name:<30} {median:>9.2} ms");
    }
    println!(
        "  ratio all plugins / rg: {ratio:.2}x (target <= {TARGET_RATIO}x: {})",
        if ratio <= TARGET_RATIO {
            "met"
        } else {
            "NOT met"
        }
    );
    println!(
        "  ratio without the index / rg: {unindexed_ratio:.2}x; list_files alone / rg: {alone_ratio:.2}x; opening the other plugins: {:.2} ms",
        medians[3] - medians[4]
    );
    Ok(json!({
        "bench": "list",
        "runs": RUNS,
        "tree": {"path": tree.dir, "files": tree.files},
        "shell_floor_ms": medians[0],
        "rg_ms": medians[1],
        "toolhost_ms": medians[2],
        "toolhost_unindexed_ms": medians[3],
        "plugin_alone_ms": medians[4],
        "ratio": ratio,
        "unindexed_ratio": unindexed_ratio,
        "plugin_alone_ratio": alone_ratio,
        "target_ratio": TARGET_RATIO,
        "target_met": ratio <= TARGET_RATIO,
    }))
}

fn shell(script: &str, dir: &Path) -> Command {
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .env_remove("RIPGREP_CONFIG_PATH");
    command
}

fn list_files(toolhost: &Path, plugins: &PathBuf, dir: &Path, config_home: &Path) -> Command {
    let mut command = Command::new(toolhost);
    command
        .arg("--plugins")
        .arg(plugins)
        .args([
            "call",
            "list_files",
            r#"{"path":".","recursive":"true"}"#,
            "--cwd",
        ])
        .arg(dir)
        .env("XDG_CONFIG_HOME", config_home)
        .env("TOOLHOST_PLUGIN_INDEX", "off")
        .env_remove("TOOLHOST_SETTINGS")
        .env_remove("TOOLHOST_PLUGIN_PATH");
    command
}

/// Runs a command with stdout captured (a pipe, as an agent reads it).
fn run(command: &mut Command) -> Result<(Duration, String), String> {
    command.stdin(Stdio::null()).stderr(Stdio::null());
    let start = Instant::now();
    let output = command.output().map_err(|e| format!("{command:?}: {e}"))?;
    let time = start.elapsed();
    if !output.status.success() {
        return Err(format!("{command:?} failed ({})", output.status));
    }
    Ok((time, String::from_utf8_lossy(&output.stdout).into_owned()))
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}
