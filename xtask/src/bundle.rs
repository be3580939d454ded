//! `cargo xtask bundle --manifest FILE [--out DIR] [--key KEY]`: a curated bundle from the
//! release build.
//!
//! Builds `target/dist` (release), copies the libraries the manifest lists (`[[plugins]]`
//! `library`) from `target/dist/plugins/` into the bundle directory, fills in each one's
//! `sha256`, writes `bundle.toml` there and, with a key, signs it with the built
//! `toolhost bundle sign` (the signing code lives in the host only). The manifest's other
//! fields are kept; its formatting is TOML's default after the rewrite.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::util::target_dir;

/// Runs the task with its arguments; returns the bundle directory.
pub fn run(args: &[String]) -> Result<PathBuf, String> {
    let mut manifest = None;
    let mut out = None;
    let mut key = None;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = || {
            args.next()
                .map(PathBuf::from)
                .ok_or_else(|| format!("{arg} needs a value"))
        };
        match arg.as_str() {
            "--manifest" => manifest = Some(value()?),
            "--out" => out = Some(value()?),
            "--key" => key = Some(value()?),
            other => return Err(format!("bundle: unknown argument '{other}'")),
        }
    }
    let manifest =
        manifest.ok_or("usage: cargo xtask bundle --manifest FILE [--out DIR] [--key KEY]")?;
    let text = std::fs::read_to_string(&manifest)
        .map_err(|e| format!("cannot read {}: {e}", manifest.display()))?;
    let mut table: toml::Table = text
        .parse()
        .map_err(|e| format!("{}: {e}", manifest.display()))?;
    let name = table
        .get("bundle")
        .and_then(|b| b.get("name"))
        .and_then(toml::Value::as_str)
        .ok_or_else(|| format!("{}: [bundle] name is missing", manifest.display()))?
        .to_string();

    let dist = crate::build::dist()?;
    let out = out.unwrap_or_else(|| target_dir().join("bundles").join(&name));
    std::fs::create_dir_all(&out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    // A signature of an earlier manifest must not survive next to the new one.
    let _ = std::fs::remove_file(out.join("bundle.toml.sig"));

    let plugins = table
        .get_mut("plugins")
        .and_then(toml::Value::as_array_mut)
        .ok_or_else(|| format!("{}: no [[plugins]] entries", manifest.display()))?;
    for entry in plugins.iter_mut() {
        let entry = entry
            .as_table_mut()
            .ok_or("every [[plugins]] entry must be a table")?;
        let library = entry
            .get("library")
            .and_then(toml::Value::as_str)
            .ok_or("a [[plugins]] entry has no library")?
            .to_string();
        let target = out.join(&library);
        std::fs::copy(dist.join("plugins").join(&library), &target)
            .map_err(|e| format!("cannot copy {library} from the release build: {e}"))?;
        entry.insert("sha256".to_string(), toml::Value::String(sha256(&target)?));
    }
    let text = toml::to_string(&table).map_err(|e| format!("cannot write the manifest: {e}"))?;
    let written = out.join("bundle.toml");
    std::fs::write(&written, text)
        .map_err(|e| format!("cannot write {}: {e}", written.display()))?;

    if let Some(key) = key {
        sign(&dist, &out, &key)?;
    }
    Ok(out)
}

fn sha256(path: &Path) -> Result<String, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    Ok(hex::encode(Sha256::digest(&bytes)))
}

fn sign(dist: &Path, dir: &Path, key: &Path) -> Result<(), String> {
    let status = std::process::Command::new(dist.join("bin").join("toolhost"))
        .args(["bundle", "sign"])
        .arg(dir)
        .arg("--key")
        .arg(key)
        .status()
        .map_err(|e| format!("cannot start toolhost: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("toolhost bundle sign failed ({status})"))
    }
}
