//! `cargo xtask install [--prefix DIR]`: a release build installed as `DIR/bin/toolhost` and
//! `DIR/lib/toolhost/plugins/*.so` (default prefix `~/.local`), where the host finds its own
//! plugins (`../lib/toolhost/plugins` relative to the executable) and runs them in-process.

use std::path::{Path, PathBuf};

use crate::build::{stage, Profile};
use crate::util::{library_file_name, plugin_crates};

/// Builds the release and installs it; returns the prefix.
pub fn run(args: &[String]) -> Result<PathBuf, String> {
    let prefix = prefix(args)?;
    let release = stage(Profile::Release)?;
    let names: Vec<String> = plugin_crates()?
        .iter()
        .map(|name| library_file_name(name))
        .collect();
    lay_out(&release, &names, &prefix)?;
    Ok(prefix)
}

/// `--prefix DIR`, else `~/.local`.
fn prefix(args: &[String]) -> Result<PathBuf, String> {
    match args {
        [] => std::env::var_os("HOME")
            .map(|home| PathBuf::from(home).join(".local"))
            .ok_or_else(|| "HOME is not set: pass --prefix DIR".to_string()),
        [flag, dir] if flag == "--prefix" => Ok(PathBuf::from(dir)),
        _ => Err("usage: cargo xtask install [--prefix DIR]".to_string()),
    }
}

/// Copies `toolhost` and the plugin libraries `libraries` of `profile_dir` into `prefix`'s
/// layout. Each file is written beside its place and renamed over it, so a toolhost running
/// from the prefix keeps the files it mapped.
pub fn lay_out(profile_dir: &Path, libraries: &[String], prefix: &Path) -> Result<(), String> {
    let bin = prefix.join("bin");
    let plugins = prefix.join("lib").join("toolhost").join("plugins");
    for dir in [&bin, &plugins] {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    replace(&profile_dir.join("toolhost"), &bin.join("toolhost"))?;
    for file in libraries {
        replace(&profile_dir.join(file), &plugins.join(file))?;
    }
    Ok(())
}

fn replace(source: &Path, dest: &Path) -> Result<(), String> {
    let name = dest
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let staged = dest.with_file_name(format!(".{name}.installing"));
    std::fs::copy(source, &staged).map_err(|e| {
        format!(
            "cannot copy {} to {}: {e}",
            source.display(),
            staged.display()
        )
    })?;
    std::fs::rename(&staged, dest).map_err(|e| {
        let _ = std::fs::remove_file(&staged);
        format!("cannot install {}: {e}", dest.display())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_binary_and_the_plugins_go_where_the_host_looks() -> Result<(), String> {
        let root = std::env::temp_dir().join(format!("xtask-install-{}", std::process::id()));
        let profile = root.join("profile");
        let prefix = root.join("prefix");
        std::fs::create_dir_all(&profile).map_err(|e| e.to_string())?;
        for (file, text) in [("toolhost", "host"), ("liba.so", "a"), ("libb.so", "b")] {
            std::fs::write(profile.join(file), text).map_err(|e| e.to_string())?;
        }
        let libraries = ["liba.so".to_string(), "libb.so".to_string()];
        lay_out(&profile, &libraries, &prefix)?;
        // Again over the first install: the files are replaced.
        std::fs::write(profile.join("liba.so"), "a2").map_err(|e| e.to_string())?;
        lay_out(&profile, &libraries, &prefix)?;
        let read = |path: &str| std::fs::read_to_string(prefix.join(path)).unwrap_or_default();
        assert_eq!(read("bin/toolhost"), "host");
        assert_eq!(read("lib/toolhost/plugins/liba.so"), "a2");
        assert_eq!(read("lib/toolhost/plugins/libb.so"), "b");
        let mut left: Vec<String> = std::fs::read_dir(prefix.join("lib/toolhost/plugins"))
            .map_err(|e| e.to_string())?
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["liba.so", "libb.so"]);
        std::fs::remove_dir_all(&root).map_err(|e| e.to_string())?;
        Ok(())
    }

    #[test]
    fn the_prefix_defaults_to_local() {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        assert_eq!(prefix(&[]).ok(), home.map(|h| h.join(".local")));
        assert_eq!(
            prefix(&["--prefix".to_string(), "/opt/th".to_string()]).ok(),
            Some(PathBuf::from("/opt/th"))
        );
        assert!(prefix(&["--prefix".to_string()]).is_err());
    }
}
