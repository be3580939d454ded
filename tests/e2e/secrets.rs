//! The user's secrets stay unread by sandboxed commands, attacked from inside
//! `execute_command`: every entry of the deny-read list planted in a home of the test's own
//! (SSH and GPG keys, cloud, git and registry credentials, password stores, browser profiles,
//! histories, toolhost's and Cline's files) read with `cat`, Python, a symbolic link and a hard
//! link; `deny_read` and `allow_read`; the strict read profile (`read = "workspace"`); secret
//! variables in the environment; and what `toolhost policy sandbox` says of all of it.
//!
//! `HOME`, `XDG_CONFIG_HOME` and `TMPDIR` point inside the test's directory: nothing outside
//! it is read.

use serde_json::{json, Value};
use toolhost_tests::{run, Home, Run};

/// A fake secret at each place of the deny-read list (relative to the home directory).
const PLANTED: [&str; 27] = [
    ".ssh/id_ed25519",
    ".gnupg/private-keys-v1.d/key.key",
    ".aws/credentials",
    ".azure/msal_token_cache.json",
    ".config/gcloud/credentials.db",
    ".kube/config",
    ".docker/config.json",
    ".git-credentials",
    ".config/git/credentials",
    ".netrc",
    ".config/gh/hosts.yml",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".password-store/bank.gpg",
    ".local/share/keyrings/login.keyring",
    ".mozilla/firefox/abc.default/logins.json",
    ".config/google-chrome/Default/Cookies",
    ".config/chromium/Default/Login Data",
    ".bash_history",
    ".zsh_history",
    ".python_history",
    ".config/toolhost/mcp-token",
    ".cline/data/secrets.json",
    ".config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
    ".vscode-server/data/User/globalStorage/saoudrizwan.claude-dev/state.json",
];

/// What each planted secret holds: `hunter2-` and its index, so that a leak names it.
fn secret(index: usize) -> String {
    format!("hunter2-{index}-leaked")
}

/// The test's user, with the secrets planted in its home.
struct Scene(Home);

impl std::ops::Deref for Scene {
    type Target = Home;

    fn deref(&self) -> &Home {
        &self.0
    }
}

impl Scene {
    fn new(settings: &str) -> Self {
        Self::with_workspace(settings, "ws")
    }

    /// A scene whose workspace is `ws` in the test's directory (`home/project`: inside the
    /// home, on the same mount as the secrets).
    fn with_workspace(settings: &str, ws: &str) -> Self {
        let scene = Home::with_workspace(settings, &["execute_command"], ws);
        let home = &scene.home;
        for (index, path) in PLANTED.iter().enumerate() {
            let path = home.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, secret(index)).unwrap();
        }
        std::fs::write(home.join("notes.txt"), "home notes are readable\n").unwrap();
        std::fs::create_dir_all(home.join(".cargo/bin")).unwrap();
        std::fs::write(home.join(".cargo/bin/tool.txt"), "toolchain file\n").unwrap();
        std::fs::write(scene.ws.join("main.rs"), "fn main() {}\n").unwrap();
        Scene(scene)
    }

    /// Runs a command the model marks as safe, with `env` added to the host's environment.
    fn execute_with(&self, script: &str, env: &[(&str, &str)]) -> Run {
        let params = json!({"command": script, "requires_approval": "false"});
        let mut command = self.toolhost();
        command
            .args(["call", "execute_command", &params.to_string(), "--cwd"])
            .arg(&self.ws)
            .envs(env.iter().copied());
        run(&mut command)
    }

    fn execute(&self, script: &str) -> String {
        let result = self.execute_with(script, &[]);
        assert_eq!(result.code, 0, "{}{}", result.stdout, result.stderr);
        result.stdout
    }

    fn policy_json(&self, env: &[(&str, &str)]) -> Value {
        let mut command = self.toolhost();
        command
            .args(["policy", "sandbox", "--json", "--cwd"])
            .arg(&self.ws)
            .envs(env.iter().copied());
        let result = run(&mut command);
        assert_eq!(result.code, 0, "{}{}", result.stdout, result.stderr);
        serde_json::from_str(&result.stdout).unwrap()
    }
}

const SETTINGS: &str = "[auto_approve]\nexecute_safe_commands = true\n";

/// The leaked secrets' indexes in `text`.
fn leaks(text: &str) -> Vec<usize> {
    (0..PLANTED.len())
        .filter(|&i| text.contains(&secret(i)))
        .collect()
}

#[test]
fn no_listed_secret_is_read_by_cat_python_or_a_symbolic_link() {
    let scene = Scene::new(SETTINGS);
    let mut script = String::new();
    for (index, path) in PLANTED.iter().enumerate() {
        let file = scene.home.join(path);
        let file = file.display();
        script.push_str(&format!(
            "cat '{file}'; \
             python3 -c 'import sys; print(open(sys.argv[1]).read())' '{file}'; \
             ln -s '{file}' link-{index}; cat link-{index}; "
        ));
    }
    // Whole directories too, and the home as a whole.
    script.push_str(&format!(
        "echo ssh-entries=$(ls -A {home}/.ssh | wc -l); grep -r hunter2 {home}; \
         cat {home}/notes.txt; echo probes-done",
        home = scene.home.display()
    ));
    let text = scene.execute(&script);
    assert!(text.contains("probes-done"), "{text}");
    assert_eq!(leaks(&text), Vec::<usize>::new(), "{text}");
    assert!(text.contains("ssh-entries=0"), "{text}");
    // The rest of the home is read as before; the secrets are where they were.
    assert!(text.contains("home notes are readable"), "{text}");
    assert_eq!(
        std::fs::read_to_string(scene.home.join(PLANTED[0])).unwrap(),
        secret(0)
    );
}

#[test]
fn a_hard_link_to_a_secret_cannot_be_made_even_where_the_command_may_write() {
    // The home is writable here and holds the workspace (one mount, as on most machines), so
    // nothing but the masks stands between the command and a hard link in the workspace that
    // the file tools would read later.
    let scene = Scene::with_workspace(
        &format!("{SETTINGS}[execute_command]\nwritable_roots = [\"~\"]\n"),
        "home/project",
    );
    let mut script = String::new();
    for (index, path) in PLANTED.iter().enumerate() {
        let file = scene.home.join(path);
        script.push_str(&format!(
            "ln '{}' hard-{index} && cat hard-{index}; ",
            file.display()
        ));
    }
    script.push_str("echo probes-done");
    let text = scene.execute(&script);
    assert!(text.contains("probes-done"), "{text}");
    assert_eq!(leaks(&text), Vec::<usize>::new(), "{text}");
    // Nothing in the workspace leads to a secret once the sandbox is gone.
    for entry in std::fs::read_dir(&scene.ws).unwrap().flatten() {
        let content = std::fs::read_to_string(entry.path()).unwrap_or_default();
        assert_eq!(leaks(&content), Vec::<usize>::new(), "{:?}", entry.path());
    }
}

#[test]
fn deny_read_adds_paths_and_allow_read_lets_entries_through() {
    let scene = Scene::new(&format!(
        "{SETTINGS}[execute_command]\ndeny_read = [\"~/notes.*\"]\n\
         allow_read = [\"~/.npmrc\", \"~/.config/gh\"]\n"
    ));
    let home = scene.home.display();
    let text = scene.execute(&format!(
        "cat {home}/notes.txt; cat {home}/.npmrc; cat {home}/.config/gh/hosts.yml; \
         cat {home}/.pypirc; echo probes-done"
    ));
    assert!(text.contains("probes-done"), "{text}");
    assert!(!text.contains("home notes are readable"), "{text}");
    let npmrc = PLANTED.iter().position(|p| *p == ".npmrc").unwrap();
    let gh = PLANTED
        .iter()
        .position(|p| *p == ".config/gh/hosts.yml")
        .unwrap();
    assert_eq!(leaks(&text), [gh, npmrc], "{text}");
    // A setting that would hide the workspace refuses the command, naming the setting.
    std::fs::write(
        scene.base.join("settings.toml"),
        format!(
            "{SETTINGS}[execute_command]\ndeny_read = [\"{}\"]\n",
            scene.base.display()
        ),
    )
    .unwrap();
    let result = scene.execute_with("echo ran", &[]);
    assert!(!result.stdout.contains("\nran"), "{}", result.stdout);
    assert!(
        result.stdout.contains(&format!(
            "execute_command.deny_read names {}, which holds the workspace root {}",
            scene.base.display(),
            scene.ws.display()
        )),
        "{}",
        result.stdout
    );
}

#[test]
fn the_strict_read_profile_reads_only_the_workspace_the_system_and_the_toolchains() {
    let scene = Scene::new(&format!(
        "{SETTINGS}[execute_command]\nread = \"workspace\"\n"
    ));
    let home = scene.home.display();
    let text = scene.execute(&format!(
        "cat {home}/notes.txt; echo home-entries=$(ls {home} | wc -l); cat main.rs; cat {home}/.cargo/bin/tool.txt; \
         head -c 4 /usr/bin/env | od -c | head -1; /usr/bin/python3 -c 'print(6 * 7)'; \
         echo made > made.txt && cat made.txt; ls /var > /dev/null; echo probes-done"
    ));
    assert!(text.contains("probes-done"), "{text}");
    assert!(!text.contains("home notes are readable"), "{text}");
    assert!(text.contains("home-entries=0"), "{text}");
    assert!(text.contains("fn main() {}"), "{text}");
    assert!(text.contains("toolchain file"), "{text}");
    assert!(text.contains("E   L   F"), "{text}");
    assert!(text.contains("\n42\n"), "{text}");
    assert!(text.contains("\nmade\n"), "{text}");
    assert_eq!(leaks(&text), Vec::<usize>::new(), "{text}");
    assert!(
        text.contains("reading outside the workspace, the system and the toolchains"),
        "{text}"
    );
}

/// Secret-looking variables the host has, and what each holds.
const SECRET_ENV: [(&str, &str); 7] = [
    ("OPENAI_API_KEY", "hunter2-env-openai"),
    ("GITHUB_TOKEN", "hunter2-env-github"),
    ("AWS_ACCESS_KEY_ID", "hunter2-env-aws-id"),
    ("AWS_SECRET_ACCESS_KEY", "hunter2-env-aws-secret"),
    ("DB_PASSWORD", "hunter2-env-db"),
    ("GOOGLE_APPLICATION_CREDENTIALS", "hunter2-env-gcp"),
    ("TOOLHOST_TEST_OWN_SECRET", "hunter2-env-own"),
];

#[test]
fn secret_variables_are_removed_unless_kept_and_the_policy_names_them() {
    let scene = Scene::new(&format!(
        "{SETTINGS}[execute_command]\nenv_keep = [\"GH_TOKEN\"]\n"
    ));
    let mut env: Vec<(&str, &str)> = SECRET_ENV.to_vec();
    env.extend([
        ("GH_TOKEN", "kept-gh-token"),
        ("PLAIN_SETTING", "plain-value"),
    ]);
    let result = scene.execute_with(
        "env; python3 -c 'import os; print(dict(os.environ))'; cat /proc/self/environ | tr '\\0' '\\n'; \
         cat /proc/1/environ /proc/$PPID/environ; echo probes-done",
        &env,
    );
    let text = result.stdout;
    assert!(text.contains("probes-done"), "{text}");
    for (name, value) in SECRET_ENV {
        assert!(!text.contains(value), "{name}: {text}");
    }
    assert!(text.contains("GH_TOKEN=kept-gh-token"), "{text}");
    assert!(text.contains("PLAIN_SETTING=plain-value"), "{text}");
    // The policy says what passes, by name only.
    let report = scene.policy_json(&env);
    let verdict = |name: &str| {
        report["env"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == name)
            .map(|v| v["verdict"].as_str().unwrap_or_default().to_string())
    };
    for (name, _) in SECRET_ENV {
        assert_eq!(verdict(name).as_deref(), Some("removed"), "{name}");
    }
    assert_eq!(verdict("GH_TOKEN").as_deref(), Some("kept"));
    assert_eq!(verdict("PLAIN_SETTING").as_deref(), Some("passes"));
    let printed = report.to_string();
    for (_, value) in SECRET_ENV {
        assert!(!printed.contains(value), "{printed}");
    }
    // toolhost's own variables are never kept.
    std::fs::write(
        scene.base.join("settings.toml"),
        format!("{SETTINGS}[execute_command]\nenv_keep = [\"TOOLHOST_TEST_OWN_SECRET\"]\n"),
    )
    .unwrap();
    let result = scene.execute_with("env", &env);
    assert!(
        !result.stdout.contains("hunter2-env-own"),
        "{}",
        result.stdout
    );
    assert!(
        result.stdout.contains(
            "The setting execute_command.env_keep names TOOLHOST_TEST_OWN_SECRET, one of \
             toolhost's own variables (TOOLHOST_*), which no command gets."
        ),
        "{}",
        result.stdout
    );
}

#[test]
fn the_policy_shows_the_list_what_exists_here_and_the_read_profile() {
    let scene = Scene::new(&format!(
        "{SETTINGS}[execute_command]\nallow_read = [\"~/.npmrc\"]\nread = \"workspace\"\n"
    ));
    let report = scene.policy_json(&[]);
    let entry = |path: &str| {
        report["deny_read"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["path"] == path)
            .cloned()
            .unwrap_or_else(|| panic!("{path}: {report}"))
    };
    assert_eq!(
        entry("~/.ssh"),
        json!({"path": "~/.ssh", "category": "ssh",
               "what": "SSH private keys, their configuration, known hosts",
               "hidden": [scene.home.join(".ssh")], "allowed": []})
    );
    assert_eq!(
        entry("~/.*_history")["hidden"],
        json!([
            scene.home.join(".bash_history"),
            scene.home.join(".python_history"),
            scene.home.join(".zsh_history")
        ])
    );
    assert_eq!(
        entry("~/.npmrc")["allowed"],
        json!([scene.home.join(".npmrc")])
    );
    assert_eq!(entry("~/.oci")["hidden"], json!([]));
    assert_eq!(report["read"], "workspace");
    let readable: Vec<&str> = report["readable"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["path"].as_str())
        .collect();
    assert!(
        readable.contains(&scene.ws.to_str().unwrap()),
        "{readable:?}"
    );
    assert!(readable.contains(&"/usr"), "{readable:?}");
    let cargo = scene.home.join(".cargo");
    assert!(readable.contains(&cargo.to_str().unwrap()), "{readable:?}");
    // The text form marks what exists here.
    let mut command = scene.toolhost();
    command.args(["policy", "sandbox", "--cwd"]).arg(&scene.ws);
    let text = run(&mut command).stdout;
    assert!(text.contains("  * ~/.ssh "), "{text}");
    assert!(text.contains("  + ~/.npmrc "), "{text}");
    assert!(text.contains("    ~/.oci "), "{text}");
}
