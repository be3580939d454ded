//! The README's "Writing a plugin" guide, run line by line as its reader would: a new crate,
//! its test, its build, `plugin check`, a call from a plugin directory, a signed bundle and a
//! call from it.

use std::process::Command;

use toolhost_tests::{target_dir, toolhost_bin, workdir, workspace_root};

/// The guide's shell block.
fn guide() -> String {
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).unwrap();
    let section = readme
        .split("## Writing a plugin")
        .nth(1)
        .expect("the README has a Writing a plugin section");
    let block = section
        .split("```sh\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .expect("the section has a sh block");
    block.to_string()
}

#[test]
fn every_command_of_the_guide_runs() {
    let dir = workdir();
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let script = dir.path().join("guide.sh");
    std::fs::write(&script, format!("set -euo pipefail\n{}\n", guide())).unwrap();
    let bin = toolhost_bin();
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let output = Command::new("bash")
        .arg(&script)
        .current_dir(dir.path())
        .env("PATH", path)
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("XDG_STATE_HOME", home.join(".state"))
        .env("TOOLHOST_SRC", workspace_root())
        // The crate's dependencies are those the workspace already built.
        .env("CARGO_TARGET_DIR", target_dir().parent().unwrap())
        .env_remove("TOOLHOST_PLUGIN_PATH")
        .env_remove("TOOLHOST_SETTINGS")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("a host would load it"), "{stdout}");
    assert!(stdout.contains("declares: fs=workspace-read"), "{stdout}");
    assert_eq!(
        stdout.matches("notes.txt: 1 lines, 3 words").count(),
        2,
        "a call from the plugin directory and one from the bundle: {stdout}"
    );
}
