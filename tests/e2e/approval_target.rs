//! Approvals name the file really reached, and hold beyond the moment of asking.
//!
//! A sandboxed command plants symbolic links to `~/.ssh` (in the workspace and in a writable
//! root, where they persist); every tool whose approval concerns a path then asks about a path
//! through them, and the question names where it really leads (`→ ~/.ssh/...`). A directory
//! swapped for a link to `~/.ssh` while the approval question waits is not written through: the
//! host asks again with the new target (in process and in an isolated worker), or, with nobody
//! to ask, refuses saying so.
//!
//! Spoken as a `serve --ask` client, whose user is the test: it answers each question itself.
//! Every run has its own `HOME` (with a stand-in `.ssh`) and `TMPDIR` inside the test's
//! directory.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use serde_json::{json, Value};
use toolhost_tests::{install_script, run, toolhost_as_installed, PluginDir};

/// A guard against a hung host, not a timing assertion.
const PATIENCE: Duration = Duration::from_secs(60);

/// What the owner's `authorized_keys` holds before the test.
const OWNER_KEY: &str = "ssh-ed25519 AAAA owner\n";

/// The key the model tries to plant.
const ATTACKER_KEY: &str = "ssh-ed25519 AAAA attacker";

/// A workspace, a home with `.ssh`, a temporary directory (a writable root of the command
/// sandbox) and the settings, all under one test directory.
struct Scene {
    _dir: tempfile::TempDir,
    base: PathBuf,
    ws: PathBuf,
    home: PathBuf,
    ssh: PathBuf,
    tmp: PathBuf,
    plugins: PluginDir,
}

impl Scene {
    fn new(settings: &str) -> Self {
        let dir = toolhost_tests::workdir();
        let base = dir.path().canonicalize().unwrap();
        let [ws, home, tmp] = ["ws", "home", "tmp"].map(|name| base.join(name));
        let ssh = home.join(".ssh");
        for d in [&ws, &ssh, &tmp] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(ssh.join("authorized_keys"), OWNER_KEY).unwrap();
        std::fs::write(ssh.join("id_ed25519"), "PRIVATE KEY of the owner\n").unwrap();
        std::fs::write(base.join("settings.toml"), settings).unwrap();
        Scene {
            _dir: dir,
            base,
            ws,
            home,
            ssh,
            tmp,
            plugins: PluginDir::real(),
        }
    }

    /// `toolhost` with this scene's plugins, settings, home and temporary directory.
    fn toolhost(&self, isolation: &str) -> Command {
        let mut command = toolhost_as_installed();
        command
            .args(["--isolation", isolation, "--plugins"])
            .arg(self.plugins.path())
            .arg("--settings")
            .arg(self.base.join("settings.toml"))
            .env("HOME", &self.home)
            .env("TMPDIR", &self.tmp)
            .env_remove("TOOLHOST_SANDBOX_UNAVAILABLE");
        command
    }

    /// `toolhost serve --ask` in the workspace, and its client.
    fn serve(&self, isolation: &str) -> Client {
        let mut child = self
            .toolhost(isolation)
            .args(["serve", "--ask", "--cwd"])
            .arg(&self.ws)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start toolhost serve");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let Ok(line) = line else { break };
                let message: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("not a serve line ({e}): {line:.300}"));
                if sender.send(message).is_err() {
                    break;
                }
            }
        });
        Client {
            child,
            stdin,
            lines,
            next_id: 0,
        }
    }

    /// What `~/.ssh` holds now: names and contents.
    fn ssh_files(&self) -> Vec<(String, String)> {
        let mut files: Vec<(String, String)> = std::fs::read_dir(&self.ssh)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let text = std::fs::read_to_string(e.path()).unwrap_or_default();
                (e.file_name().to_string_lossy().into_owned(), text)
            })
            .collect();
        files.sort();
        files
    }

    /// What `~/.ssh` held before the test.
    fn untouched_ssh() -> Vec<(String, String)> {
        vec![
            ("authorized_keys".to_string(), OWNER_KEY.to_string()),
            (
                "id_ed25519".to_string(),
                "PRIVATE KEY of the owner\n".to_string(),
            ),
        ]
    }
}

/// A `serve --ask` client.
struct Client {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Value>,
    next_id: u64,
}

impl Client {
    /// Sends a request for `tool` and returns its id.
    fn request(&mut self, tool: &str, params: Value) -> u64 {
        self.next_id += 1;
        let line = json!({"id": self.next_id, "tool": tool, "params": params});
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
        self.next_id
    }

    /// The next line; a panic after [`PATIENCE`].
    fn line(&self) -> Value {
        self.lines
            .recv_timeout(PATIENCE)
            .unwrap_or_else(|_| panic!("no line from toolhost within {} s", PATIENCE.as_secs()))
    }

    /// The next line, which must be a question: its id and text.
    fn question(&self) -> (Value, String) {
        let line = self.line();
        let ask = &line["ask"];
        assert!(ask.is_object(), "a question was expected: {line}");
        (ask["id"].clone(), ask["text"].as_str().unwrap().to_string())
    }

    /// Answers the question `id`.
    fn answer(&mut self, id: &Value, response: &str) {
        let line = json!({"answer": id, "response": response});
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The next line, which must be the answer to request `id`.
    fn result(&self, id: u64) -> Value {
        let line = self.line();
        assert_eq!(
            line["id"], id,
            "the answer to request {id} was expected: {line}"
        );
        line
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Each tool whose approval concerns a path, called through a planted link, asks a question
/// that names the real target; denied, nothing changes and nothing is read. Approved, the
/// write lands in the file the question named, and nowhere else.
#[test]
fn a_link_made_by_a_sandboxed_command_is_named_in_every_approval_question() {
    let scene = Scene::new("[auto_approve]\nexecute_safe_commands = true\n");
    let mut client = scene.serve("in-process");
    let tmp_build = scene.tmp.join("build");
    // The model's command, in the sandbox: a link in the workspace, where it persists, and
    // one in TMPDIR, which is the command's own and gone when it ends; a marker outside the
    // writable roots (the home directory) shows that it ran confined.
    let marker = scene.home.join("marker");
    let script = format!(
        "ln -s '{ssh}' build && ln -s '{ssh}' '{tmp}' && (touch '{marker}' 2>/dev/null || echo confined)",
        ssh = scene.ssh.display(),
        tmp = tmp_build.display(),
        marker = marker.display()
    );
    let id = client.request(
        "execute_command",
        json!({"command": script, "requires_approval": "false"}),
    );
    let ran = client.result(id);
    assert_eq!(ran["is_error"], false, "{ran}");
    assert!(ran["text"].as_str().unwrap().contains("confined"), "{ran}");
    assert!(!marker.exists());
    assert_eq!(
        std::fs::read_link(scene.ws.join("build")).unwrap(),
        scene.ssh
    );
    assert!(std::fs::symlink_metadata(&tmp_build).is_err(), "{ran}");
    // The same link outside the workspace, made where a command's would not be seen (by
    // anything else that can write the temporary directory).
    std::os::unix::fs::symlink(&scene.ssh, &tmp_build).unwrap();

    let outside =
        |typed: &str, target: &str| format!("{typed} → ~/.ssh{target} (outside the workspace)");
    let tmp_keys = tmp_build.join("authorized_keys").display().to_string();
    let patch = "*** Begin Patch\n*** Add File: build/authorized_keys2\n+ssh-ed25519 AAAA attacker\n*** End Patch";
    let diff = "------- SEARCH\nssh-ed25519 AAAA owner\n=======\nssh-ed25519 AAAA attacker\n+++++++ REPLACE";
    let calls: Vec<(&str, Value, String)> = vec![
        (
            "write_to_file",
            json!({"path": "build/authorized_keys", "content": ATTACKER_KEY}),
            outside("build/authorized_keys", "/authorized_keys"),
        ),
        (
            "write_to_file",
            json!({"path": tmp_keys, "content": ATTACKER_KEY}),
            outside(&tmp_keys, "/authorized_keys"),
        ),
        (
            "replace_in_file",
            json!({"path": "build/authorized_keys", "diff": diff}),
            outside("build/authorized_keys", "/authorized_keys"),
        ),
        (
            "new_rule",
            json!({"path": "build/rc", "content": "x"}),
            outside("build/rc", "/rc"),
        ),
        (
            "read_file",
            json!({"path": "build/id_ed25519"}),
            outside("build/id_ed25519", "/id_ed25519"),
        ),
        ("list_files", json!({"path": "build"}), outside("build", "")),
        (
            "search_files",
            json!({"path": "build", "regex": "PRIVATE"}),
            outside("build", ""),
        ),
        (
            "list_code_definition_names",
            json!({"path": "build"}),
            outside("build", ""),
        ),
        (
            "apply_patch",
            json!({"input": patch}),
            "build/authorized_keys2 → ~/.ssh/authorized_keys2".to_string(),
        ),
    ];
    for (tool, params, named) in calls {
        let id = client.request(tool, params);
        let (question, text) = client.question();
        assert!(
            text.contains(&named),
            "{tool}: the question names {named:?}: {text}"
        );
        client.answer(&question, "no");
        let denied = client.result(id);
        assert_eq!(denied["is_error"], true, "{tool}: {denied}");
        assert!(
            !denied["text"].as_str().unwrap().contains("PRIVATE"),
            "{tool}: {denied}"
        );
        assert_eq!(scene.ssh_files(), Scene::untouched_ssh(), "{tool}");
    }

    // Approved knowingly, the write lands in the file the question named, and nowhere else.
    let id = client.request(
        "write_to_file",
        json!({"path": "build/authorized_keys", "content": ATTACKER_KEY}),
    );
    let (question, _) = client.question();
    client.answer(&question, "yes");
    let written = client.result(id);
    assert_eq!(written["is_error"], false, "{written}");
    assert_eq!(
        std::fs::read_to_string(scene.ssh.join("authorized_keys")).unwrap(),
        ATTACKER_KEY
    );
    assert_eq!(std::fs::read_dir(&scene.ws).unwrap().count(), 1);
    assert_eq!(std::fs::read_dir(&scene.ssh).unwrap().count(), 2);
}

/// `outside/build/authorized_keys` is asked about; before the answer, `build` becomes a link
/// to `~/.ssh`; approved, nothing is written there nor in the old directory, and a second
/// question names the new target.
fn swap_while_the_question_waits(isolation: &str, settings: &str) {
    let scene = Scene::new(settings);
    let outside = scene.base.join("outside");
    let build = outside.join("build");
    std::fs::create_dir_all(&build).unwrap();
    let typed = build.join("authorized_keys").display().to_string();
    let mut client = scene.serve(isolation);
    let id = client.request(
        "write_to_file",
        json!({"path": typed, "content": ATTACKER_KEY}),
    );
    let (first, text) = client.question();
    assert!(
        text.contains(&format!("{typed} (outside the workspace)")),
        "{text}"
    );
    std::fs::rename(&build, outside.join("build.old")).unwrap();
    std::os::unix::fs::symlink(&scene.ssh, &build).unwrap();
    client.answer(&first, "yes");

    let (second, text) = client.question();
    assert!(
        text.contains(&format!(
            "{typed} → ~/.ssh/authorized_keys (outside the workspace)"
        )),
        "the second question names the new target: {text}"
    );
    assert!(text.contains("asked again"), "{text}");
    client.answer(&second, "no");
    let denied = client.result(id);
    assert_eq!(denied["is_error"], true, "{denied}");
    assert_eq!(scene.ssh_files(), Scene::untouched_ssh());
    assert_eq!(
        std::fs::read_dir(outside.join("build.old"))
            .unwrap()
            .count(),
        0
    );
}

#[test]
fn a_directory_swapped_while_the_question_waits_is_asked_about_again() {
    swap_while_the_question_waits("in-process", "");
}

#[test]
fn an_isolated_worker_holds_the_approval_to_the_directory_that_was_asked_about() {
    // Granted the whole file system, so that only the pinned verdict stands in the way.
    swap_while_the_question_waits(
        "process",
        "[plugins.write_to_file]\nisolation = \"process\"\nfs = \"full\"\n",
    );
}

/// apply_patch asks about a new file inside the workspace after planning it; while it waits,
/// the file's directory becomes a link to `~/.ssh`. Approved, the patch writes nothing there:
/// the host runs it again, and it asks about the new target.
#[test]
fn apply_patch_asks_again_about_a_file_whose_directory_was_swapped() {
    let scene = Scene::new("");
    let build = scene.ws.join("build");
    std::fs::create_dir(&build).unwrap();
    let mut client = scene.serve("in-process");
    let patch = format!(
        "*** Begin Patch\n*** Add File: build/authorized_keys2\n+{ATTACKER_KEY}\n*** End Patch"
    );
    let id = client.request("apply_patch", json!({"input": patch}));
    let (first, text) = client.question();
    assert_eq!(
        text,
        "Apply this patch? It changes 1 file:\n  create build/authorized_keys2 (+1 −0)"
    );
    std::fs::rename(&build, scene.ws.join("build.old")).unwrap();
    std::os::unix::fs::symlink(&scene.ssh, &build).unwrap();
    client.answer(&first, "yes");

    let (second, text) = client.question();
    assert!(
        text.contains("create build/authorized_keys2 → ~/.ssh/authorized_keys2 (+1 −0)")
            && text.contains("Outside the workspace: build/authorized_keys2 → ~/.ssh/"),
        "the second question names the new target: {text}"
    );
    client.answer(&second, "no");
    let denied = client.result(id);
    assert_eq!(denied["is_error"], true, "{denied}");
    assert_eq!(scene.ssh_files(), Scene::untouched_ssh());
    assert_eq!(
        std::fs::read_dir(scene.ws.join("build.old"))
            .unwrap()
            .count(),
        0
    );
}

/// Auto-approved inside the workspace; a PreToolUse hook (it runs after the approval) swaps
/// the directory for a link to `~/.ssh`. With nobody to ask about the new target, the call is
/// refused, saying why and who could not approve it.
#[test]
fn with_nobody_to_ask_a_changed_path_is_refused_saying_so() {
    let hooks = toolhost_tests::workdir();
    let scene = Scene::new(&format!(
        "[auto_approve]\nedit_files = true\n[hooks]\ndir = '{}'\n",
        hooks.path().display()
    ));
    std::fs::create_dir(scene.ws.join("build")).unwrap();
    install_script(
        hooks.path(),
        "PreToolUse",
        &format!(
            "#!/bin/sh\ncat > /dev/null\nmv '{ws}/build' '{ws}/build.old' && ln -s '{ssh}' '{ws}/build'\necho '{{}}'\n",
            ws = scene.ws.display(),
            ssh = scene.ssh.display()
        ),
    );
    let params = json!({"path": "build/authorized_keys", "content": ATTACKER_KEY});
    let refused = run(scene
        .toolhost("in-process")
        .args([
            "call",
            "write_to_file",
            &params.to_string(),
            "--json",
            "--cwd",
        ])
        .arg(&scene.ws));
    assert_eq!(refused.code, 1, "{}", refused.stderr);
    let text = refused.json()["text"].as_str().unwrap().to_string();
    assert!(
        text.contains("build/authorized_keys changed after it was checked"),
        "{text}"
    );
    assert!(
        text.contains("It now leads to build/authorized_keys → ~/.ssh/authorized_keys"),
        "{text}"
    );
    assert!(
        text.contains("not auto-approved and no terminal to ask"),
        "{text}"
    );
    assert_eq!(scene.ssh_files(), Scene::untouched_ssh());
    assert_eq!(
        std::fs::read_dir(scene.ws.join("build.old"))
            .unwrap()
            .count(),
        0
    );
}

/// Where nothing changed, nothing is asked twice and the write lands as approved.
#[test]
fn an_unchanged_path_is_asked_about_once() {
    let scene = Scene::new("");
    let dir: &Path = &scene.ws.join("src");
    std::fs::create_dir(dir).unwrap();
    let mut client = scene.serve("in-process");
    let id = client.request(
        "write_to_file",
        json!({"path": "src/a.txt", "content": "a"}),
    );
    let (question, text) = client.question();
    assert_eq!(text, "Let write_to_file change src/a.txt?\n\ncontent: a");
    client.answer(&question, "yes");
    assert_eq!(client.result(id)["is_error"], false);
    assert_eq!(std::fs::read_to_string(dir.join("a.txt")).unwrap(), "a");
}
