//! The plugin index: a second run registers the tools of unchanged libraries without opening
//! them, opens a library on the first call of its tools, and never trusts an entry for a file
//! that changed.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use toolhost_tests::{library, run, toolhost, workdir, PluginDir, Run};

/// A plugin directory with real copies (not links) of the given plugins, so that a test can
/// replace one.
fn copied(plugins: &[&str]) -> tempfile::TempDir {
    let dir = workdir();
    for name in plugins {
        let source = library(name);
        std::fs::copy(&source, dir.path().join(source.file_name().unwrap())).unwrap();
    }
    dir
}

fn toolhost_with(index: &Path, plugins: &Path, args: &[&str]) -> Run {
    run(toolhost()
        .env("TOOLHOST_PLUGIN_INDEX", index)
        .arg("--plugins")
        .arg(plugins)
        .args(args))
}

/// `(tool name, plugin name, loaded)` of every listed tool.
fn listed(run: &Run) -> Vec<(String, String, bool)> {
    assert_eq!(run.code, 0, "{run:?}");
    run.json()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_string(),
                t["plugin"].as_str().unwrap().to_string(),
                t["loaded"].as_bool().unwrap(),
            )
        })
        .collect()
}

fn index_path() -> (tempfile::TempDir, PathBuf) {
    let dir = workdir();
    let path = dir.path().join("cache").join("plugin-index.json");
    (dir, path)
}

#[test]
fn a_second_run_registers_from_the_index_and_opens_on_first_call() {
    let plugins = PluginDir::empty();
    plugins.add_library("read_file").add_library("list_files");
    let (_keep, index) = index_path();
    let first = listed(&toolhost_with(&index, plugins.path(), &["tools", "--json"]));
    assert_eq!(
        first,
        vec![
            ("list_files".to_string(), "list_files".to_string(), true),
            ("read_file".to_string(), "read_file".to_string(), true),
        ]
    );
    assert!(index.exists(), "the index was written");
    let second = listed(&toolhost_with(&index, plugins.path(), &["tools", "--json"]));
    assert_eq!(
        second,
        vec![
            ("list_files".to_string(), "list_files".to_string(), false),
            ("read_file".to_string(), "read_file".to_string(), false),
        ]
    );
    // A call opens the library then, and behaves as always.
    let work = workdir();
    std::fs::write(work.path().join("a.txt"), "one\n").unwrap();
    let call = toolhost_with(
        &index,
        plugins.path(),
        &[
            "call",
            "read_file",
            r#"{"path":"a.txt"}"#,
            "--json",
            "--cwd",
            work.path().to_str().unwrap(),
        ],
    );
    assert_eq!(
        call.json(),
        json!({"is_error": false, "text": "1 | one\n\n(File has 1 lines total.)", "images": []})
    );
}

#[test]
fn a_replaced_library_is_loaded_again() {
    let dir = copied(&["read_file"]);
    let (_keep, index) = index_path();
    let before = listed(&toolhost_with(&index, dir.path(), &["tools", "--json"]));
    assert_eq!(
        before,
        vec![("read_file".to_string(), "read_file".to_string(), true)]
    );
    // Same file name, another plugin inside.
    std::fs::copy(library("list_files"), dir.path().join("libread_file.so")).unwrap();
    let after = listed(&toolhost_with(&index, dir.path(), &["tools", "--json"]));
    assert_eq!(
        after,
        vec![("list_files".to_string(), "list_files".to_string(), true)]
    );
}

#[test]
fn bad_libraries_are_never_indexed_and_warn_every_time() {
    let plugins = PluginDir::empty();
    plugins
        .add_library("read_file")
        .add_library("fixture_wrong_abi_version");
    let (_keep, index) = index_path();
    for _ in 0..2 {
        let run = toolhost_with(&index, plugins.path(), &["tools", "--json"]);
        let warnings: Vec<Value> = run.json()["warnings"].as_array().unwrap().clone();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0]["message"]
                .as_str()
                .unwrap()
                .starts_with("incompatible ABI version"),
            "{warnings:?}"
        );
    }
    let text = std::fs::read_to_string(&index).unwrap();
    assert!(text.contains("libread_file.so"), "{text}");
    assert!(!text.contains("wrong_abi_version"), "{text}");
}

#[test]
fn a_corrupt_index_is_ignored_and_rewritten() {
    let plugins = PluginDir::empty();
    plugins.add_library("read_file");
    let (_keep, index) = index_path();
    std::fs::create_dir_all(index.parent().unwrap()).unwrap();
    std::fs::write(&index, "{ not json").unwrap();
    let run = listed(&toolhost_with(&index, plugins.path(), &["tools", "--json"]));
    assert_eq!(
        run,
        vec![("read_file".to_string(), "read_file".to_string(), true)]
    );
    let rewritten: Value = serde_json::from_str(&std::fs::read_to_string(&index).unwrap()).unwrap();
    assert!(rewritten["libraries"].is_object(), "{rewritten}");
}

#[test]
fn the_index_can_be_switched_off() {
    let plugins = PluginDir::empty();
    plugins.add_library("read_file");
    let cache = workdir();
    for _ in 0..2 {
        let run = run(toolhost()
            .env("TOOLHOST_PLUGIN_INDEX", "off")
            .env("XDG_CACHE_HOME", cache.path())
            .arg("--plugins")
            .arg(plugins.path())
            .args(["tools", "--json"]));
        assert_eq!(
            listed(&run),
            vec![("read_file".to_string(), "read_file".to_string(), true)]
        );
    }
    assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 0);
}
