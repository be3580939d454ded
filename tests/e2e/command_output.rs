//! What a command's output may cost, as an attack from inside a sandboxed `execute_command`:
//! the model's result is bounded in bytes whatever the shape of the output (one huge line,
//! binary, many short lines, long lines), and so are the `command_output` events and the
//! host's memory (measured as the `VmHWM` of a `toolhost serve` while a command prints 300 MB
//! in one line); the log on disk is bounded, private, and goes with its task, with the host's
//! exit, and (for a host that was killed) with the next run.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::json;
use toolhost::Settings;
use toolhost_tests::session::{Frontend, Session};
use toolhost_tests::{run, toolhost, PluginDir};

use crate::in_process;

const SAFE: &str = "[auto_approve]\nexecute_safe_commands = true\n";

/// A workspace with its own home and temporary directory, and a settings file.
pub struct Scene {
    _dir: tempfile::TempDir,
    pub ws: PathBuf,
    pub home: PathBuf,
    pub tmp: PathBuf,
    pub settings: PathBuf,
    pub plugins: PluginDir,
}

impl Scene {
    pub fn new(settings: &str) -> Self {
        let dir = toolhost_tests::workdir();
        let base = dir.path().canonicalize().unwrap();
        let [ws, home, tmp] = ["ws", "home", "tmp"].map(|name| base.join(name));
        for d in [&ws, &home, &tmp] {
            std::fs::create_dir(d).unwrap();
        }
        let path = base.join("settings.toml");
        std::fs::write(&path, format!("{SAFE}{settings}")).unwrap();
        let plugins = PluginDir::empty();
        plugins.add_library("execute_command");
        Scene {
            _dir: dir,
            ws,
            home,
            tmp,
            settings: path,
            plugins,
        }
    }

    /// `toolhost` with this scene's plugins, settings, home and temporary directory.
    pub fn toolhost(&self) -> Command {
        let mut command = toolhost();
        command
            .arg("--plugins")
            .arg(self.plugins.path())
            .arg("--settings")
            .arg(&self.settings)
            .env("HOME", &self.home)
            .env("TMPDIR", &self.tmp);
        command
    }

    /// `toolhost call execute_command` of `script`, marked as safe: the model's text.
    pub fn call(&self, script: &str) -> String {
        let params = json!({"command": script, "requires_approval": "false"});
        let result = run(self
            .toolhost()
            .args(["call", "execute_command", &params.to_string(), "--cwd"])
            .arg(&self.ws));
        assert_eq!(result.code, 0, "{}{}", result.stdout, result.stderr);
        result.stdout
    }

    /// A `toolhost serve` over this scene.
    pub fn serve(&self) -> Session {
        let cwd = self.ws.to_str().unwrap().to_string();
        Session::start(self.toolhost(), Frontend::Serve, &["--cwd", &cwd])
    }

    /// Every output log under the temporary directory.
    pub fn logs(&self) -> Vec<PathBuf> {
        logs_under(&self.tmp)
    }

    /// What is left in the temporary directory.
    pub fn leftovers(&self) -> Vec<PathBuf> {
        std::fs::read_dir(&self.tmp)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect()
    }
}

/// The output logs (`large-output-*.log`) under `dir`, at any depth.
pub fn logs_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(logs_under(&path));
        } else if entry
            .file_name()
            .to_string_lossy()
            .starts_with("large-output-")
        {
            found.push(path);
        }
    }
    found
}

/// The log a result names (`Full output saved to: PATH` at its end).
pub fn log_of(text: &str) -> PathBuf {
    text.rsplit_once("\nFull output saved to: ")
        .map(|(_, path)| PathBuf::from(path.trim_end()))
        .unwrap_or_else(|| panic!("no log in {:.2000}", text))
}

/// The output part of a result: after `Output:` and before the log's path.
fn output_part(text: &str) -> &str {
    let start = text.find("\nOutput:\n").map_or(text.len(), |i| i + 9);
    let end = text.rfind("\nFull output saved to: ").unwrap_or(text.len());
    &text[start..end.max(start)]
}

/// `VmHWM` (peak resident memory) of a process, in KiB.
fn peak_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no VmHWM in {status}"))
}

#[test]
fn a_huge_line_keeps_the_result_and_the_hosts_memory_small() {
    let scene = Scene::new("");
    let mut serve = scene.serve();
    let params = |command: &str| json!({"command": command, "requires_approval": "false"});
    let (failed, text) = serve.call("execute_command", params("true"));
    assert!(!failed, "{text}");
    let baseline = peak_kib(serve.pid());
    // 300 MB without a newline, through the sandboxed command's pipe.
    let started = Instant::now();
    let (failed, text) = serve.call(
        "execute_command",
        params("head -c 300000000 /dev/zero | tr '\\0' x"),
    );
    let took = started.elapsed();
    let peak = peak_kib(serve.pid());
    eprintln!(
        "VmHWM of toolhost serve: {baseline} KiB after `true`, {peak} KiB after 300 MB in one \
         line (+{} KiB, {took:?}); result {} bytes",
        peak - baseline,
        text.len()
    );
    assert!(!failed, "{:.500}", text);
    // The default limit: 64 KiB of output for the model.
    let output = output_part(&text);
    assert!(output.len() <= 64 * 1024, "{} bytes", output.len());
    assert!(
        text.starts_with("Command executed successfully (exit code 0).\nOutput:\nxxxx"),
        "{:.300}",
        text
    );
    assert!(output.contains("bytes truncated) ...\n"), "{:.300}", text);
    assert!(output.ends_with("xxxx"), "{:.300}", text);
    // A generous bound: the output itself is 300 MB.
    assert!(
        peak - baseline < 64 * 1024,
        "{baseline} KiB, then {peak} KiB"
    );
    // The log keeps its default 32 MiB: the first and last halves of the output, and says so.
    let log = log_of(&text);
    let size = std::fs::metadata(&log).unwrap().len();
    assert_eq!(size, 32 << 20);
}

#[test]
fn every_shape_of_output_stays_within_the_byte_limit() {
    let scene = Scene::new("");
    let settings = Settings::from_toml(&format!(
        "{SAFE}[execute_command]\noutput_byte_limit = 4096\n"
    ))
    .unwrap();
    let (host, ui) = in_process::host_with(scene.plugins.path(), &scene.ws, settings);
    for command in [
        // One line of 3 MB.
        "head -c 3000000 /dev/zero | tr '\\0' y",
        // Binary.
        "seq 1 300000 | gzip -1",
        // Bytes that are not UTF-8 (each grows to three when decoded), without newlines.
        "head -c 3000000 /dev/zero | tr '\\0' '\\377'",
        // Many short lines.
        "seq 1 500000",
        // Long lines.
        "for i in $(seq 1 50); do head -c 100000 /dev/zero | tr '\\0' z; echo; done",
        // Too long for the limit, too short to be written to a file as Cline does.
        "for i in $(seq 1 300); do echo $i-abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz; done",
    ] {
        let before = ui.of_kind("command_output").len();
        let params = json!({"command": command, "requires_approval": "false"});
        let outcome = host.call("execute_command", &params.to_string());
        let text = outcome.model_text();
        assert!(!outcome.is_error(), "{command}: {:.500}", text);
        let output = output_part(&text);
        assert!(
            output.len() <= 4096,
            "{command}: {} bytes of output",
            output.len()
        );
        // Cut in bytes, or (short lines) in lines as Cline cuts large output.
        assert!(
            output.contains(" bytes truncated) ...\n") || output.contains(" lines written to "),
            "{command}: {:.1000}",
            text
        );
        // What was cut is in the log, as long as the task lasts.
        assert!(log_of(&text).is_file(), "{command}: {:.1000}", text);
        let streamed = ui.of_kind("command_output");
        let streamed = &streamed[before..];
        let total: usize = streamed.iter().map(String::len).sum();
        let largest = streamed.iter().map(String::len).max().unwrap_or(0);
        assert!(
            total <= 600 * 1024 && largest <= 68 * 1024,
            "{command}: {total} bytes streamed, {largest} at once"
        );
    }
}

#[test]
fn the_log_is_bounded_private_and_says_where_it_was_cut() {
    let scene = Scene::new("");
    let settings = Settings::from_toml(&format!(
        "{SAFE}[execute_command]\noutput_log_limit_mb = 1\n"
    ))
    .unwrap();
    let (host, _ui) = in_process::host_with(scene.plugins.path(), &scene.ws, settings);
    let params = json!({"command": "seq 1 2000000", "requires_approval": "false"});
    let text = host
        .call("execute_command", &params.to_string())
        .model_text();
    let log = log_of(&text);
    let bytes = std::fs::read(&log).unwrap();
    let saved = String::from_utf8_lossy(&bytes);
    assert_eq!(bytes.len(), 1 << 20);
    assert!(saved.starts_with("1\n2\n3\n"), "{:.100}", saved);
    assert!(saved.ends_with("\n1999999\n2000000\n"));
    // Where it was cut, and how much: `seq 1 2000000` prints 14888896 bytes.
    let (before, rest) = saved.split_once("\n... (").expect("a cut notice");
    let (cut, after) = rest
        .split_once(
            " bytes of output cut here, beyond execute_command.output_log_limit_mb = 1) ...\n",
        )
        .unwrap_or_else(|| panic!("{:.300}", rest));
    let cut: usize = cut.parse().unwrap();
    assert_eq!(before.len() + cut + after.len(), 14888896);
    assert!(before.len() >= 500_000 && after.len() >= 500_000);
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&log), 0o600);
    assert_eq!(mode(log.parent().unwrap()), 0o700);
}

#[test]
fn logs_go_with_the_host_and_the_task() {
    for profile in ["workspace-write", "read-only"] {
        let scene = Scene::new(&format!(
            "[execute_command]\nsandbox = \"{profile}\"\noutput_log_limit_mb = 1\n"
        ));
        // `call`: the task and the host end with the call.
        let text = scene.call("seq 1 300000");
        assert!(text.contains("Full output saved to: "), "{profile}: {text}");
        assert_eq!(scene.logs(), Vec::<PathBuf>::new(), "{profile}");
        assert_eq!(scene.leftovers(), Vec::<PathBuf>::new(), "{profile}");

        // `serve`: the log stays while the host runs, and goes when it exits.
        let mut serve = scene.serve();
        let params = json!({"command": "seq 1 300000", "requires_approval": "false"});
        let (_, text) = serve.call("execute_command", params);
        let log = log_of(&text);
        assert!(log.is_file(), "{profile}: {text}");
        let (status, _) = serve.finish();
        assert!(status.success());
        assert!(!log.exists(), "{profile}");
        assert_eq!(scene.leftovers(), Vec::<PathBuf>::new(), "{profile}");
    }
}

#[test]
fn a_killed_hosts_logs_are_removed_by_the_next_run() {
    let scene = Scene::new("[execute_command]\noutput_log_limit_mb = 1\n");
    let mut serve = scene.serve();
    let params = json!({"command": "seq 1 300000", "requires_approval": "false"});
    let (_, text) = serve.call("execute_command", params);
    let log = log_of(&text);
    // Killed: nothing of its own runs any more.
    drop(serve);
    assert!(log.is_file());
    let text = scene.call("seq 1 300000");
    assert!(text.contains("Full output saved to: "), "{text}");
    assert!(!log.exists());
    assert_eq!(scene.leftovers(), Vec::<PathBuf>::new());
}

#[test]
fn the_logs_of_a_host_are_bounded_together() {
    let scene =
        Scene::new("[execute_command]\noutput_log_limit_mb = 1\noutput_logs_total_mb = 2\n");
    let mut serve = scene.serve();
    let mut logs = Vec::new();
    for _ in 0..4 {
        let params = json!({"command": "seq 1 400000", "requires_approval": "false"});
        let (_, text) = serve.call("execute_command", params);
        logs.push(log_of(&text));
    }
    // Each log holds 1 MiB: the two newest stay, the oldest went first.
    let kept: Vec<bool> = logs.iter().map(|log| log.is_file()).collect();
    assert_eq!(kept, [false, false, true, true]);
    assert_eq!(scene.logs().len(), 2);
}
