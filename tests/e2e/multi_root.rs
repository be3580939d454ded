//! Multi-root workspaces through `call`, `serve` and `mcp` (the official Python SDK client):
//! `@name:path` hints, relative paths against the primary root, search_files bucketed by root,
//! execute_command's `@name:command`, `.clineignore` per root, approval and the boundary over
//! every root (a path in no root, a link from a root to outside), and the roots of the
//! settings.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use tool_api::texts;
use toolhost_tests::session::{Frontend, Session};
use toolhost_tests::{run, toolhost, workdir, PluginDir};

use crate::sdk_client;

/// Two roots, `front` (the primary, named after its directory) and `back` (named on the
/// command line), each with its own `.clineignore`, and a directory outside both that `back`
/// links to.
struct Fixture {
    _dir: tempfile::TempDir,
    front: PathBuf,
    back: PathBuf,
    outside: PathBuf,
    settings: PathBuf,
}

impl Fixture {
    fn new() -> Self {
        let dir = workdir();
        let front = dir.path().join("front");
        let back = dir.path().join("elsewhere").join("back-end");
        let outside = dir.path().join("outside");
        for sub in [
            front.join("src"),
            back.join("src"),
            back.join("private"),
            outside.clone(),
        ] {
            std::fs::create_dir_all(sub).unwrap();
        }
        let write = |path: PathBuf, text: &str| std::fs::write(path, text).unwrap();
        write(front.join("src/app.ts"), "TODO front\n");
        write(front.join("secret.txt"), "front secret\n");
        write(front.join(".clineignore"), "secret.txt\n");
        write(back.join("src/api.rs"), "TODO back\n");
        write(back.join("notes.txt"), "back notes\n");
        write(back.join("other.txt"), "other notes\n");
        write(back.join("third.txt"), "third notes\n");
        write(back.join("secret.txt"), "back visible\n");
        write(back.join("private/key.txt"), "TODO private key\n");
        write(back.join(".clineignore"), "private/\n");
        write(outside.join("data.txt"), "TODO outside\n");
        std::os::unix::fs::symlink(&outside, back.join("escape")).unwrap();
        let settings = dir.path().join("settings.toml");
        write(
            settings.clone(),
            "[auto_approve]\nexecute_safe_commands = true\nedit_files = true\n",
        );
        Self {
            _dir: dir,
            front,
            back,
            outside,
            settings,
        }
    }

    /// `--cwd FRONT --workspace back=BACK`.
    fn root_args(&self) -> Vec<String> {
        vec![
            "--cwd".into(),
            self.front.to_string_lossy().into_owned(),
            "--workspace".into(),
            format!("back={}", self.back.display()),
        ]
    }
}

/// What one call answers.
enum Expect {
    Is(&'static str),
    Text(String),
    Contains(&'static str),
    /// Refused for want of an approval nobody could give: the tool, and the settings that
    /// allow it (the frontend says why nobody answered in its own words).
    NotApproved(&'static str, &'static [&'static str]),
}

fn plugins() -> PluginDir {
    let dir = PluginDir::empty();
    for tool in [
        "read_file",
        "search_files",
        "execute_command",
        "write_to_file",
    ] {
        dir.add_library(tool);
    }
    dir
}

fn command(command: &str) -> Value {
    json!({"command": command, "requires_approval": "false"})
}

/// The calls every frontend makes, and what each must answer.
fn cases(fx: &Fixture) -> Vec<(&'static str, Value, bool, Expect)> {
    let back_real = fx.back.canonicalize().unwrap();
    vec![
        // A hint selects the root; without one, paths are the primary root's.
        (
            "read_file",
            json!({"path": "@back:notes.txt"}),
            false,
            Expect::Is("1 | back notes\n\n(File has 1 lines total.)"),
        ),
        (
            "read_file",
            json!({"path": "@ back : other.txt "}),
            false,
            Expect::Is("1 | other notes\n\n(File has 1 lines total.)"),
        ),
        // By path when no root has that name (`elsewhere` is in back's path).
        (
            "read_file",
            json!({"path": "@elsewhere:third.txt"}),
            false,
            Expect::Is("1 | third notes\n\n(File has 1 lines total.)"),
        ),
        (
            "read_file",
            json!({"path": "notes.txt"}),
            true,
            Expect::Contains("File not found"),
        ),
        (
            "read_file",
            json!({"path": "@nothing:src/app.ts"}),
            false,
            Expect::Is("1 | TODO front\n\n(File has 1 lines total.)"),
        ),
        // Each root's own .clineignore.
        (
            "read_file",
            json!({"path": "secret.txt"}),
            true,
            Expect::Text(texts::tool_error(&texts::clineignore_error("secret.txt"))),
        ),
        (
            "read_file",
            json!({"path": "@back:secret.txt"}),
            false,
            Expect::Is("1 | back visible\n\n(File has 1 lines total.)"),
        ),
        (
            "read_file",
            json!({"path": "@back:private/key.txt"}),
            true,
            Expect::Text(texts::tool_error(&texts::clineignore_error(
                "@back:private/key.txt",
            ))),
        ),
        // The boundary: a link from a root to outside, a path in no root, `..` out of a root.
        (
            "read_file",
            json!({"path": "@back:escape/data.txt"}),
            true,
            Expect::NotApproved("read_file", &["read_files", "read_files_externally"]),
        ),
        (
            "read_file",
            json!({"path": fx.outside.join("data.txt")}),
            true,
            Expect::NotApproved("read_file", &["read_files", "read_files_externally"]),
        ),
        (
            "write_to_file",
            json!({"path": "@back:../../outside/planted.txt", "content": "x"}),
            true,
            Expect::NotApproved("write_to_file", &["edit_files", "edit_files_externally"]),
        ),
        (
            "write_to_file",
            json!({"path": "@back:escape/planted.txt", "content": "x"}),
            true,
            Expect::NotApproved("write_to_file", &["edit_files", "edit_files_externally"]),
        ),
        // Inside any root is inside: a write to the second root is auto-approved.
        (
            "write_to_file",
            json!({"path": "@back:made.txt", "content": "made\n"}),
            false,
            Expect::Contains("made.txt"),
        ),
        // Every root searched, bucketed by name; the ignored file and the link are left out.
        (
            "search_files",
            json!({"path": ".", "regex": "TODO"}),
            false,
            Expect::Is(
                "Found 2 results across 2 workspaces.\n\n## Workspace: front\nsrc/app.ts\n│----\n\
                 │TODO front\n│----\n\n## Workspace: back\nsrc/api.rs\n│----\n│TODO back\n│----",
            ),
        ),
        (
            "search_files",
            json!({"path": "src", "regex": "back"}),
            false,
            Expect::Is(
                "Found 1 result across 2 workspaces.\n\n## Workspace: back\nsrc/api.rs\n│----\n\
                 │TODO back\n│----",
            ),
        ),
        (
            "search_files",
            json!({"path": "@back:src", "regex": "TODO"}),
            false,
            Expect::Is("Found 1 result.\n\nsrc/api.rs\n│----\n│TODO back\n│----"),
        ),
        (
            "search_files",
            json!({"path": ".", "regex": "nowhere"}),
            false,
            Expect::Is("Found 0 results."),
        ),
        // A command in a named root: its directory, its writes, its root's .clineignore.
        (
            "execute_command",
            command("@back:pwd -P && echo hi > from-command.txt"),
            false,
            Expect::Text(format!(
                "Command executed successfully (exit code 0).\nOutput:\n{}",
                back_real.display()
            )),
        ),
        (
            "execute_command",
            command("@back:cat secret.txt"),
            false,
            Expect::Is("Command executed successfully (exit code 0).\nOutput:\nback visible"),
        ),
        (
            "execute_command",
            command("@back:cat private/key.txt"),
            true,
            Expect::Text(texts::tool_error(&texts::clineignore_error(
                "private/key.txt",
            ))),
        ),
        // The sandbox masks what each root's rules block.
        (
            "execute_command",
            command("@back:find private src -type f -size +0 | sort"),
            false,
            Expect::Is("Command executed successfully (exit code 0).\nOutput:\nsrc/api.rs"),
        ),
        (
            "execute_command",
            command("cat secret.txt"),
            true,
            Expect::Text(texts::tool_error(&texts::clineignore_error("secret.txt"))),
        ),
    ]
}

fn check(via: &str, fx: &Fixture, answers: &[(bool, String)]) {
    let cases = cases(fx);
    assert_eq!(answers.len(), cases.len(), "{via}");
    for ((tool, params, is_error, expect), (got_error, text)) in cases.iter().zip(answers) {
        let what = format!("{via}: {tool} {params}: {text}");
        assert_eq!(got_error, is_error, "{what}");
        match expect {
            Expect::Is(expected) => assert_eq!(text, expected, "{what}"),
            Expect::Text(expected) => assert_eq!(text, expected, "{what}"),
            Expect::Contains(part) => assert!(text.contains(part), "{what}"),
            Expect::NotApproved(tool, settings) => assert!(
                *text == toolhost_tests::nobody_to_ask(tool, settings)
                    || *text
                        == toolhost_tests::refused_by(
                            tool,
                            "nobody answered (the client cannot ask its user, or no answer \
                             came in time)",
                            settings
                        ),
                "{what}"
            ),
        }
    }
    assert_eq!(read(&fx.back.join("made.txt")), "made\n", "{via}");
    assert_eq!(read(&fx.back.join("from-command.txt")), "hi\n", "{via}");
    assert!(!fx.outside.join("planted.txt").exists(), "{via}");
    assert!(!fx.front.join("from-command.txt").exists(), "{via}");
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

#[test]
fn named_roots_through_call_serve_and_mcp() {
    let plugins = plugins();
    let fx = Fixture::new();
    let answers: Vec<(bool, String)> = cases(&fx)
        .into_iter()
        .map(|(tool, params, _, _)| {
            let got = run(toolhost()
                .arg("--plugins")
                .arg(plugins.path())
                .arg("--settings")
                .arg(&fx.settings)
                .args(["call", tool, &params.to_string(), "--json"])
                .args(fx.root_args()));
            let json = got.json();
            (
                json["is_error"].as_bool().unwrap(),
                json["text"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    check("call", &fx, &answers);

    let fx = Fixture::new();
    let mut command = toolhost();
    command
        .arg("--plugins")
        .arg(plugins.path())
        .arg("--settings")
        .arg(&fx.settings);
    let args = fx.root_args();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut session = Session::start(command, Frontend::Serve, &args);
    let answers: Vec<(bool, String)> = cases(&fx)
        .into_iter()
        .map(|(tool, params, _, _)| session.call(tool, params))
        .collect();
    check("serve", &fx, &answers);

    let fx = Fixture::new();
    let calls: Vec<(String, Value)> = cases(&fx)
        .into_iter()
        .map(|(tool, params, _, _)| (tool.to_string(), params))
        .collect();
    let back = format!("back={}", fx.back.display());
    let settings = fx.settings.to_string_lossy().into_owned();
    let answers: Vec<(bool, String)> = sdk_client::call_tools(
        plugins.path(),
        &fx.front,
        &["--workspace", &back, "--settings", &settings],
        &calls,
    )
    .into_iter()
    .map(|a| {
        (
            a["isError"].as_bool().unwrap(),
            a["text"].as_str().unwrap().to_string(),
        )
    })
    .collect();
    check("mcp", &fx, &answers);
}

/// Without roots on the command line, the settings' `[workspace] roots` are the workspace;
/// roots that cannot be told apart are refused before anything runs.
#[test]
fn roots_from_the_settings_and_roots_that_collide() {
    let plugins = plugins();
    let fx = Fixture::new();
    let settings = fx.front.parent().unwrap().join("roots.toml");
    std::fs::write(
        &settings,
        format!(
            "[workspace]\nroots = [{:?}, {:?}]\n",
            fx.front.to_str().unwrap(),
            format!("back={}", fx.back.display())
        ),
    )
    .unwrap();
    let got = run(toolhost()
        .current_dir(&fx.outside)
        .arg("--plugins")
        .arg(plugins.path())
        .arg("--settings")
        .arg(&settings)
        .args(["call", "search_files", r#"{"path":"src","regex":"TODO"}"#]));
    assert_eq!(got.code, 0, "{got:?}");
    assert!(
        got.stdout
            .starts_with("Found 2 results across 2 workspaces.\n\n## Workspace: front\n"),
        "{got:?}"
    );
    assert!(
        got.stdout.contains("## Workspace: back\nsrc/api.rs"),
        "{got:?}"
    );

    let got = run(toolhost()
        .arg("--plugins")
        .arg(plugins.path())
        .args(["call", "read_file", r#"{"path":"x"}"#, "--workspace"])
        .arg(format!("front={}", fx.front.display()))
        .arg("--workspace")
        .arg(format!("front={}", fx.back.display())));
    assert_eq!(got.code, 2, "{got:?}");
    assert!(
        got.stderr.contains("two workspace roots are named `front`"),
        "{got:?}"
    );
    let got = run(toolhost().arg("--plugins").arg(plugins.path()).args([
        "call",
        "read_file",
        r#"{"path":"x"}"#,
        "--workspace",
        "nameonly",
    ]));
    assert_eq!(got.code, 2, "{got:?}");
    assert!(got.stderr.contains("is not NAME=PATH"), "{got:?}");
}

/// An isolated plugin's worker is granted every root: read_file and search_files running in
/// worker processes reach the second root, and still not what its link leads to.
#[test]
fn isolated_plugins_are_granted_every_root() {
    let plugins = plugins();
    let fx = Fixture::new();
    let call = |tool: &str, params: Value| {
        let got = run(toolhost_tests::toolhost_as_installed()
            .args(["--isolation", "process", "--plugins"])
            .arg(plugins.path())
            .args(["call", tool, &params.to_string(), "--json"])
            .args(fx.root_args()));
        let json = got.json();
        (
            json["is_error"].as_bool().unwrap(),
            json["text"].as_str().unwrap().to_string(),
        )
    };
    assert_eq!(
        call("read_file", json!({"path": "@back:notes.txt"})),
        (
            false,
            "1 | back notes\n\n(File has 1 lines total.)".to_string()
        )
    );
    let (is_error, text) = call("search_files", json!({"path": ".", "regex": "TODO"}));
    assert!(!is_error, "{text}");
    assert!(
        text.starts_with("Found 2 results across 2 workspaces.")
            && text.contains("## Workspace: back\nsrc/api.rs"),
        "{text}"
    );
    assert_eq!(
        call("read_file", json!({"path": "@back:escape/data.txt"})),
        (
            true,
            toolhost_tests::nobody_to_ask("read_file", &["read_files", "read_files_externally"])
        )
    );
}
