//! Small helpers: running cargo, finding the workspace.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace root (the parent of `xtask/`). `cargo run` sets `CARGO_MANIFEST_DIR` for the
/// run too; that one is preferred, because a binary shared through one target directory by two
/// checkouts would otherwise work on the checkout that last compiled it.
pub fn workspace_root() -> PathBuf {
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from);
    manifest_dir
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// The target directory: `$CARGO_TARGET_DIR`, else `target/` in the workspace.
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target"))
}

/// Runs cargo with `args` in the workspace root; an unsuccessful exit is an error.
pub fn cargo(args: &[&str], envs: &[(&str, &str)]) -> Result<(), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let mut command = Command::new(&cargo);
    // xtask's builds start from a fresh checkout as often as not, where incremental caches
    // only take disk (gigabytes for this workspace); a developer's own setting wins.
    if std::env::var_os("CARGO_INCREMENTAL").is_none() {
        command.env("CARGO_INCREMENTAL", "0");
    }
    let status = command
        .current_dir(workspace_root())
        .args(args)
        .envs(envs.iter().copied())
        .status()
        .map_err(|e| format!("cannot run {cargo}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("cargo {} failed ({status})", args.join(" ")))
    }
}

/// The names of the real plugin crates: the directories of `plugins/` with a Cargo.toml.
pub fn plugin_crates() -> Result<Vec<String>, String> {
    let dir = workspace_root().join("plugins");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(Result::ok)
        .filter(|e| e.path().join("Cargo.toml").exists())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    Ok(names)
}

/// The file name cargo gives a crate's cdylib.
pub fn library_file_name(crate_name: &str) -> String {
    format!("lib{crate_name}.{}", std::env::consts::DLL_EXTENSION)
}
