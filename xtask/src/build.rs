//! Building the workspace and laying out plugin directories.
//!
//! Always whole-workspace builds: selecting packages with `-p` resolves other features and
//! rebuilds shared dependencies, overwriting the (unhashed) plugin libraries.

use std::path::PathBuf;

use crate::util::{cargo, library_file_name, plugin_crates, target_dir};

/// A cargo profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// `dev`, in `target/debug`.
    Dev,
    /// `release`, in `target/release`.
    Release,
}

impl Profile {
    fn dir(self) -> PathBuf {
        target_dir().join(match self {
            Self::Dev => "debug",
            Self::Release => "release",
        })
    }
}

/// Builds the workspace and stages the real plugins in `<profile dir>/plugins/`, the directory
/// the host finds next to its executable. Returns the profile directory.
pub fn stage(profile: Profile) -> Result<PathBuf, String> {
    let mut args = vec!["build", "--workspace"];
    if profile == Profile::Release {
        args.push("--release");
    }
    cargo(&args, &[])?;
    let dir = profile.dir();
    let plugins = dir.join("plugins");
    copy_plugins(&dir, &plugins)?;
    Ok(dir)
}

/// Replaces `dest` with every real plugin library from `profile_dir` (linked, else copied).
fn copy_plugins(profile_dir: &std::path::Path, dest: &std::path::Path) -> Result<(), String> {
    if dest.exists() {
        std::fs::remove_dir_all(dest)
            .map_err(|e| format!("cannot clear {}: {e}", dest.display()))?;
    }
    std::fs::create_dir_all(dest).map_err(|e| format!("cannot create {}: {e}", dest.display()))?;
    for name in plugin_crates()? {
        let file = library_file_name(&name);
        // A hard link where the file system allows it, else a copy: either way the staged file
        // keeps today's contents, because the linker writes a rebuilt library to a new file
        // (and cargo links that into place) rather than into the old one.
        let (from, to) = (profile_dir.join(&file), dest.join(&file));
        std::fs::hard_link(&from, &to)
            .or_else(|_| std::fs::copy(&from, &to).map(drop))
            .map_err(|e| format!("cannot stage {file}: {e}"))?;
    }
    Ok(())
}

/// Release build into `target/dist/`: `bin/toolhost` and `plugins/*.so`.
pub fn dist() -> Result<PathBuf, String> {
    let release = stage(Profile::Release)?;
    let dist = target_dir().join("dist");
    let bin = dist.join("bin");
    std::fs::create_dir_all(&bin).map_err(|e| format!("cannot create {}: {e}", bin.display()))?;
    std::fs::copy(release.join("toolhost"), bin.join("toolhost"))
        .map_err(|e| format!("cannot copy toolhost: {e}"))?;
    copy_plugins(&release, &dist.join("plugins"))?;
    Ok(dist)
}
