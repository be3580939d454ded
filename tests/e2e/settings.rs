//! The settings file as a user writes it: `~` and `${env:NAME}` in path settings, a
//! configured file that does not exist, misspelled keys, and Cline's own MCP settings found
//! when none is configured. Every run has a temporary home and configuration directory.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};
use toolhost_tests::{isolated_command, run, toolhost_bin, workdir, PluginDir, Run};

/// A temporary home (also the configuration directory's parent) and a workspace.
struct Home {
    home: tempfile::TempDir,
    ws: tempfile::TempDir,
    plugins: PluginDir,
}

impl Home {
    fn new(plugins: &[&str]) -> Self {
        let dir = PluginDir::empty();
        for name in plugins {
            dir.add_library(name);
        }
        Self {
            home: workdir(),
            ws: workdir(),
            plugins: dir,
        }
    }

    fn home(&self) -> &Path {
        self.home.path()
    }

    fn config(&self) -> PathBuf {
        self.home().join(".config")
    }

    /// `toolhost` with this home, its `.config` and `.cline`, and `settings` (TOML) as its
    /// settings file.
    fn toolhost(&self, settings: &str) -> Command {
        let file = self.home().join("settings.toml");
        std::fs::write(&file, settings).unwrap();
        std::fs::create_dir_all(self.config()).unwrap();
        let mut command = isolated_command(&toolhost_bin(), &self.config());
        command
            .env("HOME", self.home())
            .env("CLINE_DIR", self.home().join(".cline"))
            .args(["--isolation", "in-process", "--plugins"])
            .arg(self.plugins.path())
            .arg("--settings")
            .arg(file);
        command
    }

    fn run(&self, settings: &str, args: &[&str]) -> Run {
        run(self.toolhost(settings).args(args))
    }

    fn call(&self, settings: &str, tool: &str, params: Value) -> Run {
        run(self
            .toolhost(settings)
            .args(["call", tool, &params.to_string(), "--json", "--cwd"])
            .arg(self.ws.path()))
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A settings file of one disabled server named `name` (nothing is started).
fn servers(name: &str) -> String {
    json!({"mcpServers": {name: {"command": "true", "disabled": true}}}).to_string()
}

#[test]
fn home_and_variables_are_expanded_in_path_settings() {
    let home = Home::new(&["read_file", "use_mcp_tool"]);
    write(&home.home().join("mcp/servers.json"), &servers("from-home"));
    let hooks = home.home().join("my-hooks");
    write(
        &hooks.join("PreToolUse"),
        "#!/bin/sh\necho '{\"contextModification\": \"from the expanded hooks dir\"}'\n",
    );
    std::fs::set_permissions(
        hooks.join("PreToolUse"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    std::fs::write(home.ws.path().join("a.txt"), "hello\n").unwrap();
    let settings = "[mcp]\nsettings_file = \"~/mcp/servers.json\"\n\
                    [hooks]\ndir = \"${env:TEST_HOOKS_PARENT}/my-hooks\"\n\
                    trust_file = \"~/trust/hooks.json\"\n";
    let report = run(home
        .toolhost(settings)
        .env("TEST_HOOKS_PARENT", home.home())
        .args(["mcp-servers", "--json"]));
    assert_eq!(report.code, 0, "{report:?}");
    let report = report.json();
    assert_eq!(
        report["settings_file"],
        json!(home.home().join("mcp/servers.json"))
    );
    assert_eq!(report["servers"][0]["name"], "from-home");
    let read = run(home
        .toolhost(settings)
        .env("TEST_HOOKS_PARENT", home.home())
        .args(["call", "read_file", r#"{"path":"a.txt"}"#, "--cwd"])
        .arg(home.ws.path()));
    assert!(
        read.stdout.contains("from the expanded hooks dir"),
        "{read:?}"
    );
    // The trust file is written where `~` says.
    let workspace_hook = home.ws.path().join(".clinerules/hooks/PostToolUse");
    write(&workspace_hook, "#!/bin/sh\nexit 0\n");
    std::fs::create_dir_all(home.home().join("trust")).unwrap();
    let trust = run(home
        .toolhost(settings)
        .env("TEST_HOOKS_PARENT", home.home())
        .args(["hooks", "trust"])
        .arg(&workspace_hook));
    assert_eq!(trust.code, 0, "{trust:?}");
    assert!(home.home().join("trust/hooks.json").is_file());
    // A variable that is not set is an error naming the key, not a path nobody meant.
    let unset = home.run(
        "[hooks]\ndir = \"${env:TOOLHOST_TEST_NOT_SET}/hooks\"\n",
        &["tools"],
    );
    assert_eq!(unset.code, 2, "{unset:?}");
    assert!(
        unset.stderr.contains(
            "The setting hooks.dir (${env:TOOLHOST_TEST_NOT_SET}/hooks) cannot be used: the \
             environment variable TOOLHOST_TEST_NOT_SET is not set."
        ),
        "{}",
        unset.stderr
    );
}

#[test]
fn a_configured_file_that_does_not_exist_is_an_error_naming_the_key() {
    let home = Home::new(&["read_file", "use_mcp_tool"]);
    let missing = home.home().join("nowhere/servers.json");
    let settings = format!("[mcp]\nsettings_file = {:?}\n", missing.to_str().unwrap());
    let expected = format!(
        "The file {} (setting mcp.settings_file) cannot be used: it does not exist.",
        missing.display()
    );
    let report = home.run(&settings, &["mcp-servers"]);
    assert_eq!(report.code, 2, "{report:?}");
    assert!(report.stderr.contains(&expected), "{}", report.stderr);
    let call = home.call(
        &settings,
        "use_mcp_tool",
        json!({"server_name": "x", "tool_name": "y", "arguments": "{}"}),
    );
    let json = call.json();
    assert_eq!(json["is_error"], json!(true));
    assert!(json["text"].as_str().unwrap().contains(&expected), "{json}");
    let hooks = home.home().join("no-hooks-here");
    let got = home.run(
        &format!("[hooks]\ndir = {:?}\n", hooks.to_str().unwrap()),
        &["tools"],
    );
    assert_eq!(got.code, 2, "{got:?}");
    assert!(
        got.stderr.contains(&format!(
            "The directory {} (setting hooks.dir) cannot be used: it does not exist.",
            hooks.display()
        )),
        "{}",
        got.stderr
    );
}

#[test]
fn misspelled_keys_of_the_host_are_named_with_the_nearest_one() {
    let home = Home::new(&["read_file"]);
    std::fs::write(home.ws.path().join("a.txt"), "hello\n").unwrap();
    let settings = "[agent]\nparalel_tool_calling = false\n[auto_aprove]\nread_files = true\n\
                    [web]\nsomething_of_the_tools = 1\n";
    let got = home.call(settings, "read_file", json!({"path": "a.txt"}));
    assert_eq!(got.json()["is_error"], json!(false), "{got:?}");
    for warning in [
        "[agent]: unknown key `paralel_tool_calling` (did you mean `parallel_tool_calling`?); it \
         is ignored",
        "[auto_aprove] is not a section toolhost knows (did you mean [auto_approve]?)",
    ] {
        assert_eq!(
            got.stderr.matches(warning).count(),
            1,
            "{warning:?} once in:\n{}",
            got.stderr
        );
    }
    assert!(
        !got.stderr.contains("something_of_the_tools"),
        "{}",
        got.stderr
    );
    assert!(!got.stderr.contains("[web]"), "{}", got.stderr);
    // In the typed sections a slip is an error, as before, now with the nearest key.
    let got = home.run("[auto_approve]\nedit_file = true\n", &["tools"]);
    assert_eq!(got.code, 2, "{got:?}");
    assert!(
        got.stderr
            .contains("[auto_approve]: unknown key `edit_file` (did you mean `edit_files`?)"),
        "{}",
        got.stderr
    );
}

#[test]
fn clines_own_mcp_settings_are_found_when_none_is_configured() {
    let home = Home::new(&["use_mcp_tool"]);
    let settings_file = |home: &Home, env: &[(&str, &Path)]| {
        let mut command = home.toolhost("");
        for (name, value) in env {
            command.env(name, value);
        }
        let got = run(command.args(["mcp-servers", "--json"]));
        assert_eq!(got.code, 0, "{got:?}");
        let report = got.json();
        (
            PathBuf::from(report["settings_file"].as_str().unwrap()),
            report["servers"][0]["name"].as_str().map(str::to_string),
        )
    };
    let own = home.config().join("toolhost/cline_mcp_settings.json");
    // Nothing anywhere: toolhost's own place, no servers.
    assert_eq!(settings_file(&home, &[]), (own.clone(), None));
    let vscode = home
        .config()
        .join("Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json");
    write(&vscode, &servers("in-vscode"));
    assert_eq!(
        settings_file(&home, &[]),
        (vscode.clone(), Some("in-vscode".into()))
    );
    let cursor = home
        .config()
        .join("Cursor/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json");
    write(&cursor, &servers("in-cursor"));
    assert_eq!(settings_file(&home, &[]).0, vscode, "VS Code before Cursor");
    let cli = home
        .home()
        .join(".cline/data/settings/cline_mcp_settings.json");
    write(&cli, &servers("in-the-cli"));
    assert_eq!(
        settings_file(&home, &[]),
        (cli.clone(), Some("in-the-cli".into()))
    );
    // The Cline CLI's own variables move its file.
    let data = home.home().join("cline-data");
    write(
        &data.join("settings/cline_mcp_settings.json"),
        &servers("in-cline-data"),
    );
    assert_eq!(
        settings_file(&home, &[("CLINE_DATA_DIR", &data)])
            .1
            .as_deref(),
        Some("in-cline-data")
    );
    let explicit = home.home().join("elsewhere.json");
    write(&explicit, &servers("explicit"));
    assert_eq!(
        settings_file(&home, &[("CLINE_MCP_SETTINGS_PATH", &explicit)]),
        (explicit.clone(), Some("explicit".into()))
    );
    // toolhost's own file comes first.
    write(&own, &servers("toolhost-own"));
    assert_eq!(
        settings_file(&home, &[]),
        (own, Some("toolhost-own".into()))
    );
}
