//! The layout `cargo xtask install` makes (`PREFIX/bin/toolhost`,
//! `PREFIX/lib/toolhost/plugins/`), with the debug build copied into a temporary prefix: the
//! host finds its plugins there by itself and runs them in-process, as its own.

use std::path::Path;

use serde_json::{json, Value};
use toolhost_tests::{isolated_command, library, run, toolhost_bin, workdir};

fn install_into(prefix: &Path, plugins: &[&str]) -> std::path::PathBuf {
    let bin = prefix.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::copy(toolhost_bin(), bin.join("toolhost")).unwrap();
    let dir = prefix.join("lib/toolhost/plugins");
    std::fs::create_dir_all(&dir).unwrap();
    for name in plugins {
        let source = library(name);
        std::fs::copy(&source, dir.join(source.file_name().unwrap())).unwrap();
    }
    bin.join("toolhost")
}

#[test]
fn an_installed_host_finds_its_plugins_in_lib_toolhost_plugins() {
    let prefix = workdir();
    let toolhost = install_into(prefix.path(), &["list_files", "read_file"]);
    let config = workdir();
    let ws = workdir();
    std::fs::write(ws.path().join("a.txt"), "hello\n").unwrap();

    let listed = run(isolated_command(&toolhost, config.path()).args(["tools", "--json"]));
    assert_eq!(listed.code, 0, "{listed:?}");
    let plugins = prefix.path().join("lib/toolhost/plugins");
    let plugins = plugins.canonicalize().unwrap();
    let tools: Vec<(String, String, bool)> = listed.json()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let library = Path::new(t["library"].as_str().unwrap());
            (
                t["name"].as_str().unwrap().to_string(),
                t["isolation"].as_str().unwrap().to_string(),
                library.canonicalize().unwrap().starts_with(&plugins),
            )
        })
        .collect();
    assert_eq!(
        tools,
        [
            ("list_files".to_string(), "in_process".to_string(), true),
            ("read_file".to_string(), "in_process".to_string(), true),
        ]
    );
    let read = run(isolated_command(&toolhost, config.path())
        .args([
            "call",
            "read_file",
            r#"{"path":"a.txt"}"#,
            "--json",
            "--cwd",
        ])
        .arg(ws.path()));
    let json: Value = read.json();
    assert_eq!(json["is_error"], json!(false), "{json}");
    assert!(
        json["text"].as_str().unwrap().contains("1 | hello"),
        "{json}"
    );
}

#[test]
fn a_host_without_its_plugin_directory_says_where_it_looked() {
    let prefix = workdir();
    let toolhost = install_into(prefix.path(), &[]);
    std::fs::remove_dir(prefix.path().join("lib/toolhost/plugins")).unwrap();
    let config = workdir();
    let got = run(isolated_command(&toolhost, config.path()).args(["serve"]));
    assert_eq!(got.code, 2, "{got:?}");
    let bin = prefix.path().join("bin");
    let expected = format!(
        "no plugin was found in {}, {}, {} (the host's own plugin directory, relative to the \
         executable; none exists), and neither --plugins nor TOOLHOST_PLUGIN_PATH was given",
        bin.join("plugins").display(),
        prefix.path().join("plugins").display(),
        prefix.path().join("lib/toolhost/plugins").display(),
    );
    assert!(got.stderr.contains(&expected), "{}", got.stderr);
}
