//! `bench hotswap`: a client calls a tool in a loop through `toolhost serve --watch` while the
//! plugin's library is replaced several times. Reports failed calls (target 0) and the time from
//! the file landing to the first call answered by the new version (target under 250 ms).

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::startup::{ms, tempfile_dir};
use crate::build;
use crate::util::{target_dir, workspace_root};

const NAME: &str = "hotswap_probe";
const SWAPS: usize = 8;

/// Runs the benchmark.
pub fn hotswap() -> Result<Value, String> {
    let dist = build::dist()?;
    let root = tempfile_dir("hotswap")?;
    let crate_dir = root.join(NAME);
    let made = Command::new(dist.join("bin/toolhost"))
        .args(["plugin", "new", NAME, "--tool-api-path"])
        .arg(workspace_root().join("tool-api"))
        .arg("--dir")
        .arg(&crate_dir)
        .status()
        .map_err(|e| format!("cannot run toolhost plugin new: {e}"))?;
    if !made.success() {
        return Err(format!("toolhost plugin new {NAME} failed"));
    }
    let v1 = build_version(&crate_dir, "v1", &root.join("v1.so"))?;
    let v2 = build_version(&crate_dir, "v2", &root.join("v2.so"))?;
    let plugins = root.join("plugins");
    let ws = root.join("ws");
    for dir in [&plugins, &ws] {
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    }
    std::fs::write(ws.join("a.txt"), "one two\n").map_err(|e| e.to_string())?;
    let library = plugins.join(format!("lib{NAME}.so"));
    install(&v1, &library)?;

    let mut child = Command::new(dist.join("bin/toolhost"))
        .arg("--plugins")
        .arg(&plugins)
        .args(["serve", "--watch", "--allow-downgrade", "--cwd"])
        .arg(&ws)
        .env("XDG_CONFIG_HOME", &root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start toolhost: {e}"))?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let mut stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);

    // The client: calls in a loop, recording when each answer came and which version gave it.
    let answers: Arc<Mutex<Vec<(Instant, String, bool)>>> = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let client = {
        let answers = answers.clone();
        let stop = stop.clone();
        std::thread::spawn(move || -> Result<(), String> {
            let mut id = 0u64;
            while !stop.load(Ordering::Relaxed) {
                id += 1;
                let request = json!({"id": id, "tool": NAME, "params": {"path": "a.txt"}});
                writeln!(stdin, "{request}").map_err(|e| e.to_string())?;
                let mut line = String::new();
                stdout.read_line(&mut line).map_err(|e| e.to_string())?;
                let answer: Value = serde_json::from_str(&line).map_err(|e| e.to_string())?;
                let text = answer["text"].as_str().unwrap_or_default().to_string();
                let failed = answer["is_error"] != false;
                answers
                    .lock()
                    .map_err(|e| e.to_string())?
                    .push((Instant::now(), text, failed));
            }
            Ok(())
        })
    };

    std::thread::sleep(Duration::from_millis(500));
    let mut switches = Vec::new();
    for swap in 0..SWAPS {
        let (source, marker) = if swap % 2 == 0 {
            (&v2, "v2")
        } else {
            (&v1, "v1")
        };
        install(source, &library)?;
        let landed = Instant::now();
        let deadline = landed + Duration::from_secs(5);
        let switched = loop {
            let seen = answers
                .lock()
                .map_err(|e| e.to_string())?
                .iter()
                .find(|(at, text, _)| *at >= landed && text.starts_with(marker))
                .map(|(at, _, _)| *at);
            if let Some(at) = seen {
                break Some(at - landed);
            }
            if Instant::now() > deadline {
                break None;
            }
            std::thread::sleep(Duration::from_millis(2));
        };
        switches.push(switched.ok_or(format!("swap {swap}: the new version was never served"))?);
        std::thread::sleep(Duration::from_millis(400));
    }
    stop.store(true, Ordering::Relaxed);
    client.join().map_err(|_| "the client panicked")??;
    let _ = child.kill();
    let _ = child.wait();

    let answers = answers.lock().map_err(|e| e.to_string())?;
    let failed = answers.iter().filter(|(_, _, failed)| *failed).count();
    let mut sorted = switches.clone();
    sorted.sort();
    let median = sorted[sorted.len() / 2];
    let worst = sorted[sorted.len() - 1];
    println!(
        "hotswap: {SWAPS} library replacements under a continuous client ({} calls)",
        answers.len()
    );
    println!(
        "  failed calls                     {failed:>9}   target 0     {}",
        verdict(failed == 0)
    );
    println!("  landing to new version (median)  {:>9.1} ms", ms(median));
    println!(
        "  landing to new version (worst)   {:>9.1} ms   target < 250 ms {}",
        ms(worst),
        verdict(worst < Duration::from_millis(250))
    );
    Ok(json!({
        "bench": "hotswap",
        "swaps": SWAPS,
        "calls": answers.len(),
        "failed_calls": failed,
        "switch_median_ms": ms(median),
        "switch_worst_ms": ms(worst),
        "switch_ms": switches.iter().map(|d| ms(*d)).collect::<Vec<_>>(),
    }))
}

fn verdict(met: bool) -> &'static str {
    if met {
        "met"
    } else {
        "MISSED"
    }
}

/// Builds the crate with its output prefixed by `marker` and returns a copy of the library.
fn build_version(crate_dir: &Path, marker: &str, into: &Path) -> Result<PathBuf, String> {
    let lib_rs = crate_dir.join("src/lib.rs");
    let source = std::fs::read_to_string(&lib_rs).map_err(|e| e.to_string())?;
    let original = source
        .replace("format!(\"v1 {}: {} lines", "format!(\"{}: {} lines")
        .replace("format!(\"v2 {}: {} lines", "format!(\"{}: {} lines");
    let marked = original.replace(
        "format!(\"{}: {} lines",
        &format!("format!(\"{marker} {{}}: {{}} lines"),
    );
    std::fs::write(&lib_rs, marked).map_err(|e| e.to_string())?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let status = Command::new(cargo)
        .args(["build", "--release", "--quiet", "--manifest-path"])
        .arg(crate_dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", target_dir())
        .status()
        .map_err(|e| e.to_string())?;
    if !status.success() {
        return Err(format!("building {NAME} failed"));
    }
    std::fs::copy(target_dir().join(format!("release/lib{NAME}.so")), into)
        .map_err(|e| e.to_string())?;
    Ok(into.to_path_buf())
}

/// Replaces `target` atomically, as a build tool installs a file.
fn install(source: &Path, target: &Path) -> Result<(), String> {
    let staging = target.with_extension("staging");
    std::fs::copy(source, &staging).map_err(|e| e.to_string())?;
    std::fs::rename(&staging, target).map_err(|e| e.to_string())
}
