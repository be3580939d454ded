//! What a sandboxed command can still reach, attacked from inside `execute_command` with the
//! default settings: toolhost's own secrets and files, another host's plugins, git's hooks and
//! configuration in every repository (to run code when the user uses git later),
//! `.clineignore`'s includes, and the machine's memory and temporary directories.
//!
//! Each run gets its own home (`HOME`, with toolhost's configuration directory in it) and
//! temporary directory (`TMPDIR`) inside the test's directory.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};
use toolhost_tests::session::{Frontend, Session};
use toolhost_tests::{in_home, run, toolhost_as_installed, Home, Run};

const SETTINGS: &str = "[auto_approve]\nexecute_safe_commands = true\nread_files = true\n";

/// The test's user, with a git repository as its workspace.
struct Scene(Home);

impl std::ops::Deref for Scene {
    type Target = Home;

    fn deref(&self) -> &Home {
        &self.0
    }
}

impl Scene {
    fn new() -> Self {
        let libraries = ["execute_command", "write_to_file", "read_file"];
        let scene = Scene(Home::new(SETTINGS, &libraries));
        std::fs::write(scene.ws.join(".env"), "API_TOKEN=hunter2-secret\n").unwrap();
        std::fs::write(scene.ws.join("notes.md"), "public notes\n").unwrap();
        scene.git(&["init", "-q", "."]);
        scene.git(&["add", "notes.md"]);
        scene.git(&["commit", "-qm", "first"]);
        scene
    }

    /// git as the user runs it later, outside any sandbox, in the workspace.
    fn git(&self, args: &[&str]) -> Run {
        run(Command::new("git")
            .args(args)
            .current_dir(&self.ws)
            .env("HOME", &self.home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com"))
    }

    fn host(&self, command: Command, settings: &Path) -> Command {
        in_home(
            command,
            self.plugins.path(),
            settings,
            &self.home,
            &self.tmp,
        )
    }

    fn call(&self, tool: &str, params: &Value) -> Run {
        run(self
            .toolhost()
            .args(["call", tool, &params.to_string(), "--cwd"])
            .arg(&self.ws))
    }

    /// Runs a command the model marks as safe; the text the model reads.
    fn execute(&self, script: &str) -> String {
        let result = self.call(
            "execute_command",
            &json!({"command": script, "requires_approval": "false"}),
        );
        assert_eq!(result.code, 0, "{}{}", result.stdout, result.stderr);
        result.stdout
    }
}

fn marker(scene: &Scene, name: &str) -> PathBuf {
    scene.base.join(name)
}

#[test]
fn nothing_of_toolhosts_own_reaches_a_command() {
    let scene = Scene::new();
    let config = scene.home.join(".config/toolhost");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("mcp-token"), "token-in-config-dir\n").unwrap();
    std::fs::write(config.join("trusted-hooks.json"), "{\"trust-secret\": 1}\n").unwrap();
    std::fs::write(
        &scene.settings,
        format!(
            "{SETTINGS}# settings-secret\n[hooks]\ntrust_file = \"{}\"\n",
            scene.base.join("trust.json").display()
        ),
    )
    .unwrap();
    std::fs::write(
        scene.base.join("trust.json"),
        "{\"other-trust-secret\": 1}\n",
    )
    .unwrap();
    let script = format!(
        "env; cat /proc/1/environ /proc/$PPID/environ | tr '\\0' '\\n'; cat {config}/*; \
         cat {settings} {trust}; ls -la {config} $TMPDIR /tmp; echo probes-done",
        config = config.display(),
        settings = scene.settings.display(),
        trust = scene.base.join("trust.json").display()
    );
    let result = run(scene
        .toolhost()
        .env("TOOLHOST_MCP_TOKEN", "token-in-environment")
        .env("TOOLHOST_SOMETHING", "another-toolhost-variable")
        .args(["call", "execute_command"])
        .arg(json!({"command": script, "requires_approval": "false"}).to_string())
        .arg("--cwd")
        .arg(&scene.ws));
    let text = result.stdout;
    assert!(text.contains("probes-done"), "{text}");
    for secret in [
        "token-in-config-dir",
        "trust-secret",
        "settings-secret",
        "other-trust-secret",
        "token-in-environment",
        "another-toolhost-variable",
        "TOOLHOST_",
    ] {
        assert!(!text.contains(secret), "{secret} shows: {text}");
    }
    // The command's environment is otherwise the host's.
    assert!(
        text.contains(&format!("HOME={}", scene.home.display())),
        "{text}"
    );
}

/// The plugin libraries that are files anywhere in `dir`.
fn library_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "so") {
                found.push(path);
            }
        }
    }
    found
}

#[test]
fn one_hosts_command_cannot_patch_another_hosts_plugin() {
    let scene = Scene::new();
    // Host B serves execute_command isolated (a worker process of its own, which may start
    // programs), sharing the temporary directory with host A.
    let settings_b = scene.base.join("settings-b.toml");
    std::fs::write(
        &settings_b,
        format!(
            "{SETTINGS}[plugins.execute_command]\nisolation = \"process\"\nfs = \"full\"\n\
             spawn = true\nnetwork = true\n"
        ),
    )
    .unwrap();
    let mut b = Session::start(
        scene.host(toolhost_as_installed(), &settings_b),
        Frontend::Serve,
        &["--cwd", scene.ws.to_str().unwrap()],
    );
    let safe = |command: &str| json!({"command": command, "requires_approval": "false"});
    let (failed, text) = b.call("execute_command", safe("echo b-is-up"));
    assert!(!failed && text.contains("b-is-up"), "{text}");
    // B's plugin is loaded from memory: no copy of it is a file anyone could rewrite.
    assert_eq!(library_files(&scene.tmp), Vec::<PathBuf>::new());
    // Host A's command looks everywhere a copy could be and rewrites what it finds.
    let text = scene.execute(&format!(
        "for f in $(find {tmp} /tmp /dev/shm -name '*.so' 2>/dev/null); do \
         echo evil > \"$f\" && echo patched \"$f\"; done; ls -a {tmp}; echo probes-done",
        tmp = scene.tmp.display()
    ));
    assert!(text.contains("probes-done"), "{text}");
    assert!(!text.contains("patched"), "{text}");
    let (failed, text) = b.call("execute_command", safe("echo b-still-runs-its-plugin"));
    assert!(
        !failed && text.contains("b-still-runs-its-plugin"),
        "{text}"
    );
    b.finish();
}

#[test]
fn git_runs_nothing_a_command_planted() {
    let scene = Scene::new();
    let fsmonitor = marker(&scene, "fsmonitor-ran");
    let hook = marker(&scene, "hook-ran");
    let nested = marker(&scene, "nested-ran");
    std::fs::remove_dir_all(scene.ws.join(".git/hooks")).unwrap();
    // A linked worktree and a nested repository the user made.
    assert_eq!(scene.git(&["worktree", "add", "-q", "wt"]).code, 0);
    run(Command::new("git")
        .args(["init", "-q", "vendor/lib"])
        .current_dir(&scene.ws));
    let wt_link = std::fs::read_to_string(scene.ws.join("wt/.git")).unwrap();
    let script = format!(
        "cp -r .git evil-git && printf '[core]\\n\\tfsmonitor = touch {fsmonitor}\\n' >> evil-git/config; \
         echo \"$PWD/evil-git\" > .git/commondir; \
         mkdir -p .git/hooks && printf '#!/bin/sh\\ntouch {hook}\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit; \
         mkdir -p .git/modules/x && echo '[core] fsmonitor = touch {nested}' > .git/modules/x/config; \
         git init -q nested && printf '[core]\\n\\tfsmonitor = touch {nested}\\n' >> nested/.git/config; \
         echo 'gitdir: {evil}' > wt/.git; \
         printf '[core]\\n\\tfsmonitor = touch {nested}\\n' >> vendor/lib/.git/config; \
         echo probes-done",
        fsmonitor = fsmonitor.display(),
        hook = hook.display(),
        nested = nested.display(),
        evil = scene.ws.join("evil-git").display(),
    );
    let text = scene.execute(&script);
    assert!(text.contains("probes-done"), "{text}");
    for made in [
        ".git/commondir",
        ".git/hooks",
        ".git/modules",
        "nested/.git",
    ] {
        assert!(!scene.ws.join(made).exists(), "{made}: {text}");
        assert!(
            text.contains(&format!("set aside {}", scene.ws.join(made).display())),
            "{made}: {text}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(scene.ws.join("wt/.git")).unwrap(),
        wt_link
    );
    // The user's own git, later, outside the sandbox.
    std::fs::write(scene.ws.join("notes.md"), "changed\n").unwrap();
    for args in [
        &["status", "--short"][..],
        &["commit", "-qam", "second"],
        &["-C", "nested", "status"],
        &["-C", "vendor/lib", "status"],
        &["-C", "wt", "status"],
    ] {
        scene.git(args);
    }
    for ran in [&fsmonitor, &hook, &nested] {
        assert!(!ran.exists(), "{} ran: {text}", ran.display());
    }
    assert!(scene.git(&["log", "--oneline"]).stdout.contains("second"));
}

#[test]
fn files_clineignore_includes_are_protected_as_it_is() {
    let scene = Scene::new();
    std::fs::write(
        scene.ws.join(".clineignore"),
        "!include rules/secrets.txt\n",
    )
    .unwrap();
    std::fs::create_dir(scene.ws.join("rules")).unwrap();
    std::fs::write(scene.ws.join("rules/secrets.txt"), ".env\n").unwrap();
    let text =
        scene.execute(": > rules/secrets.txt; rm -f rules/secrets.txt; cat .env; echo probes-done");
    assert!(text.contains("probes-done"), "{text}");
    assert!(!text.contains("hunter2"), "{text}");
    assert_eq!(
        std::fs::read_to_string(scene.ws.join("rules/secrets.txt")).unwrap(),
        ".env\n"
    );
    let write = scene.call(
        "write_to_file",
        &json!({"path": "rules/secrets.txt", "content": ""}),
    );
    assert!(write.stdout.contains(".clineignore"), "{}", write.stdout);
    let read = scene.call("read_file", &json!({"path": "rules/secrets.txt"}));
    assert!(read.stdout.contains(".clineignore"), "{}", read.stdout);
    assert_eq!(
        std::fs::read_to_string(scene.ws.join("rules/secrets.txt")).unwrap(),
        ".env\n"
    );
    let read = scene.call("read_file", &json!({"path": ".env"}));
    assert!(!read.stdout.contains("hunter2"), "{}", read.stdout);
}

#[test]
fn git_shows_no_committed_file_that_clineignore_blocks() {
    let scene = Scene::new();
    // A repository without such files: git works in commands.
    std::fs::write(scene.ws.join(".clineignore"), ".env\nkeys/\n").unwrap();
    let text = scene.execute("git log --oneline; git show HEAD:notes.md");
    assert!(
        text.contains("first") && text.contains("public notes"),
        "{text}"
    );
    assert!(!text.contains("history of"), "{text}");
    // A key committed once, and removed since; the .env committed and still there.
    std::fs::create_dir(scene.ws.join("keys")).unwrap();
    std::fs::write(scene.ws.join("keys/deploy.pem"), "hunter2-key\n").unwrap();
    scene.git(&["add", "-f", "keys/deploy.pem", ".env"]);
    scene.git(&["commit", "-qm", "oops"]);
    scene.git(&["rm", "-rq", "keys"]);
    scene.git(&["commit", "-qm", "removed"]);
    let probes = "git show HEAD:.env; git show HEAD~1:keys/deploy.pem; \
        git cat-file -p $(git rev-parse HEAD:.env); git grep hunter2 HEAD~1; \
        git archive HEAD~1 | tar -xO; git clone -q . clone && cat clone/.env; \
        python3 -c 'import glob, zlib; [print(zlib.decompress(open(f, \"rb\").read())) \
        for f in glob.glob(\".git/objects/??/*\")]'; \
        echo probes-done";
    let text = scene.execute(probes);
    assert!(text.contains("probes-done"), "{text}");
    assert!(!text.contains("hunter2"), "{text}");
    assert!(
        text.contains("holds files that .clineignore blocks (.env, keys/deploy.pem)"),
        "{text}"
    );
    assert!(
        text.contains("execute_command.hide_committed_ignored"),
        "{text}"
    );
    // The user's own git still has everything.
    assert!(scene.git(&["show", "HEAD:.env"]).stdout.contains("hunter2"));
}

#[test]
fn memory_and_temporary_space_are_limited_and_given_back() {
    let scene = Scene::new();
    std::fs::write(
        &scene.settings,
        format!("{SETTINGS}[execute_command]\nmax_memory_mb = 256\nmax_tmp_mb = 32\n"),
    )
    .unwrap();
    let name = format!("escapes-{}", std::process::id());
    let text = scene.execute(
        "python3 -c 'b = bytearray(8 << 30); print(\"ALLOC\" + \"ATED\")'; echo memory-done",
    );
    assert!(
        text.contains("memory-done") && !text.contains("ALLOCATED"),
        "{text}"
    );
    assert!(text.contains("memory limit (256 MiB"), "{text}");
    assert!(text.contains("execute_command.max_memory_mb"), "{text}");
    let text = scene.execute(&format!(
        "head -c 20000000 /dev/zero > /dev/shm/{name} && echo shm-written; \
         head -c 40000000 /dev/zero > /tmp/{name}; ls -la /tmp; echo tmp-done"
    ));
    assert!(
        text.contains("shm-written") && text.contains("tmp-done"),
        "{text}"
    );
    assert!(text.contains("execute_command.max_tmp_mb"), "{text}");
    assert!(!Path::new("/dev/shm").join(&name).exists());
    assert!(!Path::new("/tmp").join(&name).exists());
}
