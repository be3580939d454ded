//! The workspace policies against a hostile model: symbolic links (file, directory, chains,
//! relative, absolute, made by a command mid-task), magic links, hard links, alias paths of the
//! workspace and case variants, against every path tool, for reads and writes, through `call`
//! and `mcp`, with and without `--yes`. Not one byte of an ignored file ever appears; walks never
//! leave the workspace; nothing outside or ignored is written without approval; and a loop that
//! swaps a directory with a link to the outside while reads, searches and writes run gets
//! nothing from outside and leaves no temporary file.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use toolhost::Settings;
use toolhost_tests::{toolhost, workdir, PluginDir};

use crate::{in_process, sdk_client};

/// Text that only ignored files contain.
const IGNORED_MARKERS: [&str; 3] = ["SECRET_ENV_VALUE", "SECRET_KEY_VALUE", "SECRET_PY_FUNC"];
/// Text (contents and names) that only files outside the workspace contain.
const OUTSIDE_MARKERS: [&str; 3] = ["OUTSIDE_CONTENT", "OUTSIDE_NAME", "OUTSIDE_PY_FUNC"];

/// A workspace full of traps, a directory outside it, and an alias path of the workspace.
struct Traps {
    _root: tempfile::TempDir,
    ws: PathBuf,
    outside: PathBuf,
    alias: PathBuf,
}

impl Traps {
    fn new() -> Self {
        let root = workdir();
        let ws = root.path().join("ws");
        let outside = root.path().join("outside");
        let alias = root.path().join("alias");
        std::fs::create_dir_all(ws.join("secrets")).unwrap();
        std::fs::create_dir_all(ws.join("sub")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        let write = |path: PathBuf, text: &str| std::fs::write(path, text).unwrap();
        write(ws.join(".clineignore"), ".env\nsecrets/\nsecret.py\n");
        write(ws.join(".env"), "SECRET_ENV_VALUE=1\n");
        write(ws.join("secrets/key.txt"), "SECRET_KEY_VALUE\n");
        write(ws.join("secret.py"), "def SECRET_PY_FUNC():\n    pass\n");
        write(ws.join("ok.txt"), "fine\n");
        write(outside.join("OUTSIDE_NAME.txt"), "OUTSIDE_CONTENT\n");
        write(
            outside.join("code.py"),
            "def OUTSIDE_PY_FUNC():\n    pass\n",
        );
        symlink(".env", ws.join("file-link")).unwrap();
        symlink("secrets", ws.join("dir-link")).unwrap();
        symlink("chain-b", ws.join("chain-a")).unwrap();
        symlink(".env", ws.join("chain-b")).unwrap();
        symlink("../.env", ws.join("sub/rel")).unwrap();
        symlink(ws.join(".env"), ws.join("abs-link")).unwrap();
        symlink("secret.py", ws.join("py-link.py")).unwrap();
        symlink(&outside, ws.join("out")).unwrap();
        symlink(outside.join("OUTSIDE_NAME.txt"), ws.join("out-file")).unwrap();
        symlink(outside.join("code.py"), ws.join("out-code.py")).unwrap();
        symlink("/proc/self/root", ws.join("sys")).unwrap();
        std::fs::hard_link(ws.join(".env"), ws.join("hard.txt")).unwrap();
        symlink(&ws, &alias).unwrap();
        Self {
            _root: root,
            ws,
            outside,
            alias,
        }
    }

    /// Every path that leads to an ignored file.
    fn ignored_paths(&self) -> Vec<String> {
        let ws = self.ws.display();
        vec![
            ".env".into(),
            ".ENV".into(),
            "SECRETS/key.txt".into(),
            "secrets/key.txt".into(),
            "file-link".into(),
            "dir-link/key.txt".into(),
            "chain-a".into(),
            "sub/rel".into(),
            "abs-link".into(),
            "hard.txt".into(),
            "made-by-command".into(),
            format!("{}/.env", self.alias.display()),
            format!("{}/dir-link/key.txt", self.alias.display()),
            format!("/proc/self/root{ws}/.env"),
            "/proc/self/cwd/.env".into(),
            format!("/proc/{}/root{ws}/.env", std::process::id()),
            "sys/etc/hostname".into(),
        ]
    }

    /// Paths that lead outside the workspace.
    fn outside_paths(&self) -> Vec<String> {
        vec![
            "out/OUTSIDE_NAME.txt".into(),
            "out-file".into(),
            "../outside/OUTSIDE_NAME.txt".into(),
            self.outside.join("OUTSIDE_NAME.txt").display().to_string(),
        ]
    }

    /// What must never change, and its bytes now.
    fn snapshot(&self) -> Vec<(PathBuf, Vec<u8>)> {
        [".env", "secrets/key.txt", "secret.py"]
            .iter()
            .map(|p| self.ws.join(p))
            .chain([self.outside.join("OUTSIDE_NAME.txt")])
            .map(|p| {
                let bytes = std::fs::read(&p).unwrap();
                (p, bytes)
            })
            .collect()
    }

    fn outside_names(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.outside)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

/// One tool call of the matrix.
#[derive(Debug, Clone)]
struct Probe {
    tool: &'static str,
    params: Value,
    /// Whether it reads a path outside the workspace the user may approve (`--yes`).
    approvable_outside: bool,
}

fn probe(tool: &'static str, params: Value) -> Probe {
    Probe {
        tool,
        params,
        approvable_outside: false,
    }
}

/// Every probe: each path tool against each trap.
fn probes(traps: &Traps) -> Vec<Probe> {
    let mut probes = Vec::new();
    for path in traps.ignored_paths() {
        probes.push(probe("read_file", json!({"path": path})));
        probes.push(probe(
            "search_files",
            json!({"path": path, "regex": "SECRET"}),
        ));
        probes.push(probe(
            "list_files",
            json!({"path": path, "recursive": "true"}),
        ));
        probes.push(probe(
            "write_to_file",
            json!({"path": path, "content": "overwritten"}),
        ));
        probes.push(probe(
            "replace_in_file",
            json!({"path": path, "diff": "------- SEARCH\nnot in the file\n=======\nx\n+++++++ REPLACE"}),
        ));
        probes.push(probe(
            "apply_patch",
            json!({"input": format!("*** Begin Patch\n*** Update File: {path}\n@@\n-SECRET_ENV_VALUE=1\n+gone\n*** End Patch")}),
        ));
    }
    for path in traps.outside_paths() {
        for (tool, params) in [
            ("read_file", json!({"path": path})),
            ("search_files", json!({"path": path, "regex": "OUTSIDE"})),
        ] {
            probes.push(Probe {
                tool,
                params,
                approvable_outside: true,
            });
        }
        // Without approval the answer must not tell whether the file exists or what is in it
        // (its name appears only in texts that also tell about it).
        probes.push(Probe {
            tool: "apply_patch",
            params: json!({"input": format!("*** Begin Patch\n*** Update File: {path}\n@@\n-guessed line\n+x\n*** End Patch")}),
            approvable_outside: true,
        });
    }
    // Walks from inside: nothing ignored, nothing outside, whatever is approved. A walk of a
    // link to the outside is a walk outside (approved with --yes); one through /proc is refused.
    for dir in [".", "sub", "dir-link", "out", "sys"] {
        for (tool, params) in [
            ("list_files", json!({"path": dir, "recursive": "true"})),
            ("list_files", json!({"path": dir})),
            (
                "search_files",
                json!({"path": dir, "regex": "SECRET|OUTSIDE"}),
            ),
            ("list_code_definition_names", json!({"path": dir})),
        ] {
            probes.push(Probe {
                tool,
                params,
                approvable_outside: dir == "out",
            });
        }
    }
    probes.push(probe(
        "apply_patch",
        json!({"input": "*** Begin Patch\n*** Add File: dir-link/new.txt\n+x\n*** Add File: SECRETS/other.txt\n+x\n*** End Patch"}),
    ));
    probes
}

/// What a probe's answer may not contain.
fn forbidden(probe: &Probe, yes: bool) -> Vec<&'static str> {
    let mut markers: Vec<&str> = IGNORED_MARKERS.to_vec();
    // With --yes the user approved reading outside paths named directly; never through a walk
    // that starts inside, and never without approval.
    if !(yes && probe.approvable_outside) {
        markers.extend(OUTSIDE_MARKERS);
    }
    markers
}

fn check_answer(probe: &Probe, yes: bool, answer: &str, how: &str) {
    for marker in forbidden(probe, yes) {
        assert!(
            !answer.contains(marker),
            "{how} {} {} leaked {marker}:\n{answer}",
            probe.tool,
            probe.params
        );
    }
    if probe.tool == "list_files" {
        // `sys` leads to /proc/self/root: no system directory may be listed through it.
        assert!(
            !answer
                .lines()
                .any(|line| line.trim_start_matches("🔒 ").starts_with("sys/")),
            "{how} {} listed the system:\n{answer}",
            probe.params
        );
    }
}

fn check_untouched(traps: &Traps, before: &[(PathBuf, Vec<u8>)], outside: &[String], how: &str) {
    for (path, bytes) in before {
        assert_eq!(
            &std::fs::read(path).unwrap(),
            bytes,
            "{how}: {} changed",
            path.display()
        );
    }
    assert_eq!(
        traps.outside_names(),
        outside,
        "{how}: files appeared outside"
    );
    assert!(!traps.ws.join("secrets/other.txt").exists(), "{how}");
    assert!(!traps.ws.join("secrets/new.txt").exists(), "{how}");
}

fn plugins() -> PluginDir {
    let plugins = PluginDir::empty();
    for name in [
        "read_file",
        "write_to_file",
        "apply_patch",
        "list_files",
        "search_files",
        "list_code_definition_names",
        "execute_command",
    ] {
        plugins.add_library(name);
    }
    plugins
}

/// A link to an ignored file made by a command of the model, as it could mid-task.
const MAKE_LINK: &str = "ln -s .env made-by-command";

#[test]
fn no_trap_leaks_through_call() {
    let plugins = plugins();
    for yes in [false, true] {
        let traps = Traps::new();
        let before = traps.snapshot();
        let outside = traps.outside_names();
        let extra: &[&str] = if yes { &["--yes"] } else { &[] };
        let command = call(
            plugins.path(),
            &traps.ws,
            "execute_command",
            &json!({"command": MAKE_LINK, "requires_approval": "false"}),
            &["--yes"],
        );
        assert_eq!(command["is_error"], false, "{command}");
        assert!(traps.ws.join("made-by-command").is_symlink());
        for probe in probes(&traps) {
            let answer = call(plugins.path(), &traps.ws, probe.tool, &probe.params, extra);
            check_answer(
                &probe,
                yes,
                &answer["text"].to_string(),
                &format!("call (yes: {yes})"),
            );
        }
        check_untouched(&traps, &before, &outside, &format!("call (yes: {yes})"));
    }
}

#[test]
fn no_trap_leaks_through_mcp() {
    let plugins = plugins();
    for yes in [false, true] {
        let traps = Traps::new();
        let before = traps.snapshot();
        let outside = traps.outside_names();
        let probes = probes(&traps);
        let mut calls = vec![(
            "execute_command".to_string(),
            json!({"command": MAKE_LINK, "requires_approval": "false"}),
        )];
        calls.extend(
            probes
                .iter()
                .map(|p| (p.tool.to_string(), p.params.clone())),
        );
        // Without --yes the command is denied: the link is then made by the test itself.
        if !yes {
            symlink(".env", traps.ws.join("made-by-command")).unwrap();
        }
        let extra: &[&str] = if yes { &["--yes"] } else { &[] };
        let results = sdk_client::call_tools(plugins.path(), &traps.ws, extra, &calls);
        assert_eq!(results.len(), calls.len());
        assert!(traps.ws.join("made-by-command").is_symlink());
        for (probe, result) in probes.iter().zip(&results[1..]) {
            check_answer(
                probe,
                yes,
                &result.to_string(),
                &format!("mcp (yes: {yes})"),
            );
        }
        check_untouched(&traps, &before, &outside, &format!("mcp (yes: {yes})"));
    }
}

/// `toolhost call … --json`, bounded in time.
fn call(plugins: &Path, cwd: &Path, tool: &str, params: &Value, extra: &[&str]) -> Value {
    let mut command = toolhost();
    command
        .arg("--plugins")
        .arg(plugins)
        .args(["call", tool, &params.to_string(), "--json", "--cwd"])
        .arg(cwd)
        .args(extra);
    let run = bounded(&mut command, Duration::from_secs(60));
    serde_json::from_str(&run.0)
        .unwrap_or_else(|e| panic!("{tool} {params}: {e}\n{}\n{}", run.0, run.1))
}

/// Runs a command to its end, failing the test if it runs past `limit` (no read may block).
fn bounded(command: &mut std::process::Command, limit: Duration) -> (String, String, i32) {
    let scratch = workdir();
    let out = scratch.path().join("out");
    let err = scratch.path().join("err");
    let mut child = command
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the command ran past {limit:?}: {command:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    (
        std::fs::read_to_string(out).unwrap(),
        std::fs::read_to_string(err).unwrap(),
        status.code().unwrap_or(-1),
    )
}

#[test]
fn fifos_devices_and_huge_files_get_clear_errors_without_being_read() {
    let ws = workdir();
    let fifo = ws.path().join("pipe");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    // A 2 GiB image, sparse: reading it whole would need 2 GiB of memory.
    let big = std::fs::File::create(ws.path().join("huge.png")).unwrap();
    big.set_len(2 << 30).unwrap();
    std::fs::write(ws.path().join("small.txt"), "fine\n").unwrap();
    let plugins = plugins();
    for (path, expected) in [
        ("pipe", "a FIFO"),
        ("/dev/zero", "a device"),
        ("/proc/self/environ", "a procfs or sysfs file"),
        ("huge.png", "File is too large to read into context."),
    ] {
        // Within 1 GiB of address space: a whole read of the image, or of /dev/zero, fails.
        let mut command = std::process::Command::new("sh");
        command
            .arg("-c")
            .arg("ulimit -v 1048576; exec \"$@\"")
            .arg("sh")
            .arg(toolhost_tests::toolhost_bin())
            .arg("--plugins")
            .arg(plugins.path())
            .args([
                "call",
                "read_file",
                &json!({"path": path}).to_string(),
                "--json",
                "--yes",
                "--cwd",
            ])
            .arg(ws.path())
            .env("XDG_CONFIG_HOME", ws.path())
            .env("XDG_CACHE_HOME", ws.path())
            .stdin(std::process::Stdio::null());
        let (stdout, stderr, code) = bounded(&mut command, Duration::from_secs(60));
        assert_eq!(code, 1, "{path}: {stdout} {stderr}");
        let answer: Value = serde_json::from_str(&stdout).unwrap();
        assert!(
            answer["text"].as_str().unwrap().contains(expected),
            "{path}: {answer}"
        );
    }
    // The session goes on: the next read works.
    let answer = call(
        plugins.path(),
        ws.path(),
        "read_file",
        &json!({"path": "small.txt"}),
        &[],
    );
    assert_eq!(answer["is_error"], false, "{answer}");
}

/// Swaps `a` and `b` (a directory and a link) atomically, again and again, until told to stop.
fn swapper(a: PathBuf, b: PathBuf, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        let mut swaps = 0;
        let deadline = Instant::now() + Duration::from_secs(120);
        while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
            rustix::fs::renameat_with(
                rustix::fs::CWD,
                &a,
                rustix::fs::CWD,
                &b,
                rustix::fs::RenameFlags::EXCHANGE,
            )
            .unwrap();
            swaps += 1;
        }
        swaps
    })
}

#[test]
fn a_directory_swapped_with_a_link_to_outside_yields_nothing_from_outside() {
    let root = workdir();
    let ws = root.path().join("ws");
    let outside = root.path().join("outside");
    std::fs::create_dir_all(ws.join("d")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(ws.join("d/f.txt"), "INSIDE\n").unwrap();
    std::fs::write(outside.join("f.txt"), "OUTSIDE_CONTENT\n").unwrap();
    symlink(&outside, ws.join("swap")).unwrap();
    let settings = Settings::from_toml("[auto_approve]\nedit_files = true\n").unwrap();
    let (host, _ui) = in_process::host_with(plugins().path(), &ws, settings);
    let stop = Arc::new(AtomicBool::new(false));
    let swaps = swapper(ws.join("d"), ws.join("swap"), stop.clone());
    let mut seen_inside = 0;
    for i in 0..3000 {
        let text = host.call("read_file", r#"{"path":"d/f.txt"}"#).model_text();
        assert!(!text.contains("OUTSIDE"), "read {i}: {text}");
        seen_inside += usize::from(text.contains("INSIDE"));
    }
    for i in 0..1000 {
        let text = host
            .call("search_files", r#"{"path":"d","regex":"SIDE"}"#)
            .model_text();
        assert!(!text.contains("OUTSIDE"), "search {i}: {text}");
    }
    for i in 0..1000 {
        let params = json!({"path": format!("d/new-{i}.txt"), "content": "written"});
        host.call("write_to_file", &params.to_string());
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swaps.join().unwrap();
    assert!(swaps > 100, "only {swaps} swaps");
    assert!(seen_inside > 0, "no read ever got through");
    // Nothing was written outside, and no temporary file is left on either side.
    let names = |dir: &Path| -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    };
    let real_inside = if ws.join("d").is_symlink() {
        ws.join("swap")
    } else {
        ws.join("d")
    };
    assert_eq!(names(&outside), ["f.txt"]);
    assert!(
        names(&real_inside).iter().all(|n| !n.starts_with('.')),
        "{:?}",
        names(&real_inside)
    );
    assert_eq!(
        std::fs::read(outside.join("f.txt")).unwrap(),
        b"OUTSIDE_CONTENT\n"
    );
}
