//! Escape probes: `..`, absolute paths and a symlink out of the workspace are outside it. With
//! no terminal and no `--yes` they are denied, and nothing outside is read or written.

use serde_json::json;
use toolhost_tests::{call_json, run, toolhost, PluginDir};

struct Probe {
    _root: tempfile::TempDir,
    ws: std::path::PathBuf,
    outside: std::path::PathBuf,
}

fn probe() -> Probe {
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("ws");
    let outside = root.path().join("outside");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "TOP SECRET\n").unwrap();
    std::fs::write(ws.join("inside.txt"), "fine\n").unwrap();
    std::os::unix::fs::symlink(&outside, ws.join("link")).unwrap();
    Probe {
        _root: root,
        ws,
        outside,
    }
}

fn escaping_paths(p: &Probe) -> Vec<String> {
    vec![
        "../outside/secret.txt".to_string(),
        p.outside.join("secret.txt").display().to_string(),
        "link/secret.txt".to_string(),
        "inside/../../outside/secret.txt".to_string(),
    ]
}

#[test]
fn reads_outside_the_workspace_are_denied_without_a_terminal() {
    let p = probe();
    let plugins = PluginDir::real();
    for path in escaping_paths(&p) {
        let (run, json) = call_json(
            plugins.path(),
            &p.ws,
            "read_file",
            &json!({"path": path}),
            &[],
        );
        assert_eq!(run.code, 1, "{path}");
        assert_eq!(
            json["text"],
            toolhost_tests::nobody_to_ask("read_file", &["read_files", "read_files_externally"]),
            "{path}"
        );
        assert!(
            !run.stdout.contains("TOP SECRET") && !run.stderr.contains("TOP SECRET"),
            "{path}"
        );
    }
    let (run, json) = call_json(
        plugins.path(),
        &p.ws,
        "read_file",
        &json!({"path": "inside.txt"}),
        &[],
    );
    assert_eq!(run.code, 0);
    assert_eq!(json["text"], "1 | fine\n\n(File has 1 lines total.)");
}

#[test]
fn yes_approves_reads_outside() {
    let p = probe();
    let plugins = PluginDir::real();
    let (run, json) = call_json(
        plugins.path(),
        &p.ws,
        "read_file",
        &json!({"path": "link/secret.txt"}),
        &["--yes"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(json["text"], "1 | TOP SECRET\n\n(File has 1 lines total.)");
}

#[test]
fn writes_outside_the_workspace_are_denied_and_nothing_is_written() {
    let p = probe();
    let plugins = PluginDir::real();
    let targets = [
        "../outside/new.txt".to_string(),
        p.outside.join("new2.txt").display().to_string(),
        "link/new3.txt".to_string(),
    ];
    for path in &targets {
        let (run, json) = call_json(
            plugins.path(),
            &p.ws,
            "write_to_file",
            &json!({"path": path, "content": "pwned"}),
            &[],
        );
        assert_eq!(run.code, 1, "{path}: {}", run.stderr);
        assert_eq!(
            json["text"],
            toolhost_tests::nobody_to_ask(
                "write_to_file",
                &["edit_files", "edit_files_externally"]
            ),
            "{path}"
        );
    }
    let (run, _) = call_json(
        plugins.path(),
        &p.ws,
        "replace_in_file",
        &json!({"path": "link/secret.txt", "diff": "------- SEARCH\nTOP SECRET\n=======\npwned\n+++++++ REPLACE"}),
        &[],
    );
    assert_eq!(run.code, 1);
    let mut names: Vec<String> = std::fs::read_dir(&p.outside)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, vec!["secret.txt"]);
    assert_eq!(
        std::fs::read_to_string(p.outside.join("secret.txt")).unwrap(),
        "TOP SECRET\n"
    );
}

#[test]
fn check_path_reports_the_boundary() {
    let p = probe();
    for path in escaping_paths(&p) {
        let run = run(toolhost()
            .args(["policy", "check-path", &path, "--cwd"])
            .arg(&p.ws));
        assert_eq!(run.code, 0);
        let json = run.json();
        assert_eq!(json["inside_workspace"], false, "{path}: {json}");
        assert_eq!(json["allowed"], false, "{path}");
        assert!(
            json["resolved"]
                .as_str()
                .unwrap()
                .ends_with("outside/secret.txt"),
            "{json}"
        );
    }
    let inside = run(toolhost()
        .args(["policy", "check-path", "inside.txt", "--cwd"])
        .arg(&p.ws))
    .json();
    assert_eq!(inside["inside_workspace"], true);
    assert_eq!(inside["allowed"], true);
}
