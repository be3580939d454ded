//! `bench startup`: process start to the first tool call answered, all plugins loaded (the
//! plugin index off, so that every library is opened), and the same as a user's later runs have
//! it: with the plugin index, which opens only the library of the tool called.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::build;
use crate::util::{library_file_name, plugin_crates, target_dir};

/// Runs per measurement; the median is reported.
pub const RUNS: usize = 40;

/// Median wall time of running `command` to completion.
pub fn median_time(mut make: impl FnMut() -> Command) -> Result<Duration, String> {
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let mut command = make();
        command
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .stdin(Stdio::null());
        let start = Instant::now();
        let status = command.status().map_err(|e| e.to_string())?;
        times.push(start.elapsed());
        if !status.success() {
            return Err(format!("{command:?} failed ({status})"));
        }
    }
    times.sort();
    Ok(times[RUNS / 2])
}

/// Runs `toolhost tools` once with the plugin index file `index`, so that the runs measured
/// after it register the plugins from the index, as every run after a user's first does.
pub fn warm_plugin_index(toolhost: &Path, plugins: &Path, index: &Path) -> Result<(), String> {
    let status = Command::new(toolhost)
        .arg("--plugins")
        .arg(plugins)
        .arg("tools")
        .env("TOOLHOST_PLUGIN_INDEX", index)
        .stdout(Stdio::null())
        .status()
        .map_err(|e| format!("cannot run {}: {e}", toolhost.display()))?;
    if status.success() && index.exists() {
        Ok(())
    } else {
        Err(format!(
            "toolhost tools did not write the plugin index {}",
            index.display()
        ))
    }
}

/// Milliseconds, as a float.
pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Startup: process start to the first tool call answered with every plugin loaded, against
/// `true` (process spawn) as the floor; then the same with the plugin set loaded 2 and 4 times
/// over, to show that loading grows linearly with the number of libraries.
pub fn startup() -> Result<Value, String> {
    let dist = build::dist()?;
    let host = dist.join("bin/toolhost");
    let plugins = dist.join("plugins");
    let workspace = tempfile_dir("toolhost-bench-ws")?;
    std::fs::write(workspace.join("a.txt"), "hello\n").map_err(|e| e.to_string())?;

    let floor = median_time(|| Command::new("true"))?;
    let call = |dirs: Vec<std::path::PathBuf>| {
        let host = host.clone();
        let workspace = workspace.clone();
        move || {
            let mut command = Command::new(&host);
            for dir in &dirs {
                command.arg("--plugins").arg(dir);
            }
            command
                .args(["call", "read_file", r#"{"path":"a.txt"}"#, "--cwd"])
                .arg(&workspace)
                .env("XDG_CONFIG_HOME", &workspace)
                .env("TOOLHOST_PLUGIN_INDEX", "off");
            command
        }
    };
    let plugin_count = plugin_crates()?.len();
    let single = median_time(call(vec![plugins.clone()]))?;
    let mut scaling = Vec::new();
    for copies in [2usize, 4] {
        let dirs = copies_of(&plugins, copies)?;
        let time = median_time(call(dirs))?;
        scaling.push(json!({"libraries": plugin_count * copies, "median_ms": ms(time)}));
    }
    let index = workspace.join("plugin-index.json");
    warm_plugin_index(&host, &plugins, &index)?;
    let indexed = median_time(|| {
        let mut command = call(vec![plugins.clone()])();
        command.env("TOOLHOST_PLUGIN_INDEX", &index);
        command
    })?;
    let per_library_1 = (ms(single) - ms(floor)) / plugin_count as f64;
    println!("startup: spawn to first tool call answered ({plugin_count} plugins, release build, median of {RUNS})");
    println!(
        "  {:<34} {:>9.2} ms",
        "true (process spawn floor)",
        ms(floor)
    );
    println!(
        "  {:<34} {:>9.2} ms   ratio {:.1}x floor",
        "toolhost call read_file",
        ms(single),
        ms(single) / ms(floor)
    );
    println!(
        "  {:<34} {:>9.2} ms   ratio {:.1}x floor",
        "same, with the plugin index",
        ms(indexed),
        ms(indexed) / ms(floor)
    );
    for entry in &scaling {
        println!(
            "  {:<34} {:>9.2} ms",
            format!("same, {} libraries", entry["libraries"]),
            entry["median_ms"].as_f64().unwrap_or_default()
        );
    }
    println!("  host cost per library (1x set):    {per_library_1:.2} ms");
    Ok(json!({
        "bench": "startup",
        "floor_ms": ms(floor),
        "toolhost_ms": ms(single),
        "ratio_to_floor": ms(single) / ms(floor),
        "indexed_ms": ms(indexed),
        "plugins": plugin_count,
        "scaling": scaling,
    }))
}

/// `copies` directories, each with the plugin set under distinct file names (new inodes, so the
/// dynamic loader maps each one afresh).
fn copies_of(plugins: &Path, copies: usize) -> Result<Vec<std::path::PathBuf>, String> {
    let mut dirs = vec![plugins.to_path_buf()];
    for copy in 1..copies {
        let dir = tempfile_dir(&format!("toolhost-bench-copy{copy}"))?;
        for name in plugin_crates()? {
            let file = library_file_name(&name);
            std::fs::copy(plugins.join(&file), dir.join(format!("copy{copy}_{file}")))
                .map_err(|e| e.to_string())?;
        }
        dirs.push(dir);
    }
    Ok(dirs)
}

pub fn tempfile_dir(name: &str) -> Result<std::path::PathBuf, String> {
    let dir = target_dir().join("bench").join(name);
    if dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|e| e.to_string())?;
    }
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    Ok(dir)
}
