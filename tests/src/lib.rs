//! Support for the end-to-end tests: the built host binary and plugin libraries, plugin
//! directories assembled per test, the conformance data and its fixture trees.
//!
//! The first use builds the workspace (`cargo build --workspace`), because `cargo test` does not
//! build cdylib artifacts; with `TOOLHOST_TESTS_PREBUILT=1` (set by `cargo xtask test` after its
//! own build) that step is skipped.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use serde_json::Value;

pub mod session;

/// The workspace's root directory.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate lives inside the workspace")
        .to_path_buf()
}

/// The profile directory the tests were built into (`target/debug`), from the test binary's path.
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary has a path");
    // target/<profile>/deps/<test binary>
    exe.parent()
        .and_then(Path::parent)
        .expect("test binaries live in target/<profile>/deps")
        .to_path_buf()
}

/// Builds the workspace once per test process, unless `TOOLHOST_TESTS_PREBUILT=1`.
pub fn ensure_built() {
    static BUILT: OnceLock<Result<(), String>> = OnceLock::new();
    let result = BUILT.get_or_init(|| {
        if std::env::var("TOOLHOST_TESTS_PREBUILT").as_deref() == Ok("1") {
            return Ok(());
        }
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
        let mut command = Command::new(cargo);
        command
            .current_dir(workspace_root())
            .args(["build", "--workspace"]);
        if target_dir().file_name().is_some_and(|n| n == "release") {
            command.arg("--release");
        }
        let output = command
            .output()
            .map_err(|e| format!("cannot run cargo: {e}"))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(format!(
                "cargo build --workspace failed:\n{}",
                String::from_utf8_lossy(&output.stderr)
            ))
        }
    });
    if let Err(message) = result {
        panic!("{message}");
    }
}

/// The built `toolhost` binary.
pub fn toolhost_bin() -> PathBuf {
    ensure_built();
    target_dir().join("toolhost")
}

/// The built library of a crate (`lib<name>.so`).
pub fn library(crate_name: &str) -> PathBuf {
    ensure_built();
    let path = target_dir().join(format!(
        "lib{crate_name}.{}",
        std::env::consts::DLL_EXTENSION
    ));
    assert!(path.exists(), "{} was not built", path.display());
    path
}

/// The names of the real plugin crates (the directories under `plugins/`).
pub fn real_plugins() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(workspace_root().join("plugins"))
        .expect("plugins/ exists")
        .filter_map(Result::ok)
        .filter(|e| e.path().join("Cargo.toml").exists())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A fresh temporary directory whose name is neither hidden nor on an ignore list (tools treat
/// hidden and ignored directories specially; the default `.tmpXXXX` names are hidden).
pub fn workdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("toolhost-test-")
        .tempdir()
        .expect("temp dir")
}

/// A temporary plugin directory holding links to built libraries.
pub struct PluginDir {
    dir: tempfile::TempDir,
}

impl PluginDir {
    /// An empty directory.
    pub fn empty() -> Self {
        Self { dir: workdir() }
    }

    /// Every real plugin.
    pub fn real() -> Self {
        let dir = Self::empty();
        for name in real_plugins() {
            dir.add_library(&name);
        }
        dir
    }

    /// Adds the built library of `crate_name`.
    pub fn add_library(&self, crate_name: &str) -> &Self {
        let source = library(crate_name);
        let link = self
            .dir
            .path()
            .join(source.file_name().expect("a file name"));
        std::os::unix::fs::symlink(&source, link).expect("link the library");
        self
    }

    /// Adds a file with arbitrary bytes.
    pub fn add_file(&self, name: &str, bytes: &[u8]) -> &Self {
        std::fs::write(self.dir.path().join(name), bytes).expect("write the file");
        self
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// A finished `toolhost` process.
#[derive(Debug)]
pub struct Run {
    /// The exit code.
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Run {
    /// Standard output parsed as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
                self.stdout, self.stderr
            )
        })
    }
}

/// A `toolhost` command isolated from the user's environment: no settings file, no plugin
/// path, trusted hooks or Cline MCP settings from the environment (the trust file defaults to
/// the temporary config directory), no terminal; plugins run in-process unless the test's settings place them
/// (the per-test plugin directories are not the host's own, which would run them isolated:
/// see [`toolhost_as_installed`]).
pub fn toolhost() -> Command {
    let mut command = toolhost_as_installed();
    command.args(["--isolation", "in-process"]);
    command
}

/// `command` (a `toolhost`) run as a user whose home is `home`: the plugins of `plugins`, the
/// settings file `settings`, `HOME` and `XDG_CONFIG_HOME` (`home/.config`) there, `tmp` as
/// `TMPDIR`, no system git configuration, and the sandbox as this machine has it (a
/// `TOOLHOST_SANDBOX_UNAVAILABLE` of the test run removed).
pub fn in_home(
    mut command: Command,
    plugins: &Path,
    settings: &Path,
    home: &Path,
    tmp: &Path,
) -> Command {
    command
        .arg("--plugins")
        .arg(plugins)
        .arg("--settings")
        .arg(settings)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("TMPDIR", tmp)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("TOOLHOST_SANDBOX_UNAVAILABLE");
    command
}

/// A user of a test's own, in one temporary directory (`base`): a workspace (`ws`), a home
/// (`home`), a temporary directory (`tmp`), a settings file (`settings`) and a plugin
/// directory of some of the real libraries; [`Home::toolhost`] runs as that user
/// ([`in_home`]).
pub struct Home {
    _dir: tempfile::TempDir,
    /// The directory that holds the others.
    pub base: PathBuf,
    /// The workspace.
    pub ws: PathBuf,
    /// The home directory.
    pub home: PathBuf,
    /// The temporary directory (`TMPDIR`).
    pub tmp: PathBuf,
    /// The settings file.
    pub settings: PathBuf,
    /// The plugin directory.
    pub plugins: PluginDir,
}

impl Home {
    /// A user whose workspace is `base/ws`, with `settings` and the plugin `libraries`.
    pub fn new(settings: &str, libraries: &[&str]) -> Self {
        Self::with_workspace(settings, libraries, "ws")
    }

    /// [`Home::new`] with the workspace at `base/ws` (`home/project`: inside the home).
    pub fn with_workspace(settings: &str, libraries: &[&str], ws: &str) -> Self {
        let dir = workdir();
        let base = dir.path().canonicalize().expect("the test's directory");
        let [ws, home, tmp] = [ws, "home", "tmp"].map(|name| base.join(name));
        for d in [&ws, &home, &tmp] {
            std::fs::create_dir_all(d).expect("the user's directories");
        }
        let settings_file = base.join("settings.toml");
        std::fs::write(&settings_file, settings).expect("the settings file");
        let plugins = PluginDir::empty();
        for library in libraries {
            plugins.add_library(library);
        }
        Home {
            _dir: dir,
            base,
            ws,
            home,
            tmp,
            settings: settings_file,
            plugins,
        }
    }

    /// A `toolhost` (plugins in process) run as this user, with its settings.
    pub fn toolhost(&self) -> Command {
        in_home(
            toolhost(),
            self.plugins.path(),
            &self.settings,
            &self.home,
            &self.tmp,
        )
    }
}

/// [`toolhost`] without choosing where plugins run: the default rules apply.
pub fn toolhost_as_installed() -> Command {
    static CONFIG_HOME: OnceLock<tempfile::TempDir> = OnceLock::new();
    let config_home = CONFIG_HOME.get_or_init(|| tempfile::tempdir().expect("temp dir"));
    isolated_command(&toolhost_bin(), config_home.path())
}

/// `program` (a `toolhost` binary) with [`toolhost_as_installed`]'s environment, its
/// configuration and cache in `config_home`.
pub fn isolated_command(program: &Path, config_home: &Path) -> Command {
    let mut command = Command::new(program);
    command
        .env_remove("TOOLHOST_PLUGIN_PATH")
        .env_remove("TOOLHOST_SETTINGS")
        .env_remove("TOOLHOST_PLUGIN_INDEX")
        .env_remove("TOOLHOST_TRUSTED_HOOKS")
        .env_remove("TOOLHOST_LOG")
        .env_remove("RUST_BACKTRACE")
        .env("XDG_CONFIG_HOME", config_home)
        // The plugin index of these runs stays with them, and so does the egress log.
        .env("XDG_CACHE_HOME", config_home)
        .env("XDG_STATE_HOME", config_home)
        // Nor is the Cline CLI's MCP settings file found outside (VS Code's is under
        // XDG_CONFIG_HOME).
        .env_remove("CLINE_MCP_SETTINGS_PATH")
        .env_remove("CLINE_DATA_DIR")
        .env("CLINE_DIR", config_home.join("cline"))
        .stdin(Stdio::null());
    command
}

/// Runs a command to completion.
pub fn run(command: &mut Command) -> Run {
    let output = command.output().expect("run toolhost");
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// Writes the executable script `name` with `script` into `dir` (made when missing).
pub fn install_script(dir: &Path, name: &str, script: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir).expect("the script's directory");
    let path = dir.join(name);
    std::fs::write(&path, script).expect("the script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
        .expect("the script made executable");
    path
}

/// `toolhost --plugins DIR tools --json`, which must succeed, parsed.
pub fn tools_json(plugins: &Path) -> Value {
    let listing = run(toolhost()
        .arg("--plugins")
        .arg(plugins)
        .args(["tools", "--json"]));
    assert_eq!(listing.code, 0, "{}", listing.stderr);
    listing.json()
}

/// `toolhost --plugins DIR call TOOL PARAMS --cwd CWD [extra...] --json`, parsed.
pub fn call_json(
    plugins: &Path,
    cwd: &Path,
    tool: &str,
    params: &Value,
    extra: &[&str],
) -> (Run, Value) {
    let run = run(toolhost()
        .arg("--plugins")
        .arg(plugins)
        .args(["call", tool, &params.to_string(), "--json", "--cwd"])
        .arg(cwd)
        .args(extra));
    let json = run.json();
    (run, json)
}

/// One conformance case.
#[derive(Debug, Clone)]
pub struct Case {
    /// The case's id.
    pub id: String,
    /// Its input.
    pub input: Value,
    /// What Cline did.
    pub expect: Value,
}

/// The conformance directory: `$TOOLHOST_CONFORMANCE_DIR`, else the repository's copy in
/// `tests/conformance/`.
pub fn conformance_dir() -> PathBuf {
    std::env::var_os("TOOLHOST_CONFORMANCE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("tests/conformance"))
}

/// Every case of `<area>.jsonl`. A missing file fails the test: cases are never skipped.
pub fn cases(area: &str) -> Vec<Case> {
    let path = conformance_dir().join(format!("{area}.jsonl"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read conformance data {} ({e}); set TOOLHOST_CONFORMANCE_DIR",
            path.display()
        )
    });
    let cases: Vec<Case> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let v: Value = serde_json::from_str(line).expect("a JSON line");
            Case {
                id: v["id"].as_str().expect("an id").to_string(),
                input: v["input"].clone(),
                expect: v["expect"].clone(),
            }
        })
        .collect();
    assert!(!cases.is_empty(), "{} has no cases", path.display());
    cases
}

/// Creates the conformance fixture tree `name` as `<parent>/<name>` and returns its path.
pub fn make_fixture(name: &str, parent: &Path) -> PathBuf {
    use base64::Engine;
    let path = conformance_dir().join("fixtures.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {} ({e})", path.display()));
    let all: Value = serde_json::from_str(&text).expect("fixtures.json is JSON");
    let fixture = all["fixtures"]
        .as_array()
        .and_then(|list| list.iter().find(|f| f["name"] == name))
        .unwrap_or_else(|| panic!("no fixture named {name}"));
    let root = parent.join(name);
    std::fs::create_dir_all(&root).expect("create the fixture root");
    for dir in fixture["dirs"].as_array().into_iter().flatten() {
        std::fs::create_dir_all(root.join(dir.as_str().expect("a dir path")))
            .expect("create a dir");
    }
    for file in fixture["files"].as_array().into_iter().flatten() {
        let target = root.join(file["path"].as_str().expect("a file path"));
        std::fs::create_dir_all(target.parent().expect("a parent")).expect("create parents");
        let bytes: Vec<u8> = if let Some(content) = file["content"].as_str() {
            content.as_bytes().to_vec()
        } else if let Some(b64) = file["base64"].as_str() {
            base64::engine::general_purpose::STANDARD
                .decode(b64)
                .expect("valid base64")
        } else {
            let template = file["lines"]["template"].as_str().expect("a template");
            let count = file["lines"]["count"].as_u64().expect("a count");
            (1..=count)
                .map(|n| format!("{}\n", template.replace("{n}", &n.to_string())))
                .collect::<String>()
                .into_bytes()
        };
        std::fs::write(&target, bytes).expect("write a fixture file");
    }
    root
}

/// What the model reads when a call of `tool` needed the user's approval and there was
/// nobody to ask (no terminal, a frontend that asks nothing): who refused, and the
/// `[auto_approve]` settings that allow it.
pub fn nobody_to_ask(tool: &str, settings: &[&str]) -> String {
    refused_by(
        tool,
        "there is nobody to ask (no terminal, and the frontend asks nothing)",
        settings,
    )
}

/// [`nobody_to_ask`] for a refusal `who` explains ("subagents do not ask the user", ...).
pub fn refused_by(tool: &str, who: &str, settings: &[&str]) -> String {
    let settings: Vec<String> = settings.iter().map(|key| format!("{key} = true")).collect();
    format!(
        "{tool} was not run: it needs the user's approval, and {who}. [auto_approve] {} in the \
         settings, or --yes, allows it.",
        settings.join(" and ")
    )
}
