//! `cargo xtask new-plugin NAME [--dir PATH]`: a standalone plugin crate, outside the workspace,
//! depending on this checkout's tool-api, with one example tool, a test and a README.

use std::path::PathBuf;

use crate::util::workspace_root;

const CARGO_TOML: &str = include_str!("templates/Cargo.toml.in");
const LIB_RS: &str = include_str!("templates/lib.rs.in");
const README: &str = include_str!("templates/README.md.in");

/// Creates the crate; returns its directory.
pub fn run(args: &[String]) -> Result<PathBuf, String> {
    let mut name = None;
    let mut dir = None;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match arg.as_str() {
            "--dir" => dir = Some(PathBuf::from(rest.next().ok_or("--dir needs a path")?)),
            other if name.is_none() => name = Some(other.to_string()),
            other => return Err(format!("unexpected argument '{other}'")),
        }
    }
    let name = name.ok_or("usage: cargo xtask new-plugin NAME [--dir PATH]")?;
    if !is_valid_name(&name) {
        return Err(format!("'{name}' is not a valid tool name: use lower-case letters, digits and '_', starting with a letter"));
    }
    let dir = dir.unwrap_or_else(|| PathBuf::from(&name));
    if dir.exists()
        && std::fs::read_dir(&dir)
            .map(|mut d| d.next().is_some())
            .unwrap_or(true)
    {
        return Err(format!("{} exists and is not empty", dir.display()));
    }
    let tool_api = workspace_root().join("tool-api");
    let fill = |template: &str| {
        template
            .replace("{{name}}", &name)
            .replace("{{type_name}}", &type_name(&name))
            .replace("{{tool_api}}", &tool_api.display().to_string())
    };
    std::fs::create_dir_all(dir.join("src"))
        .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let write = |path: PathBuf, text: String| {
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
    };
    write(dir.join("Cargo.toml"), fill(CARGO_TOML))?;
    write(dir.join("src/lib.rs"), fill(LIB_RS))?;
    write(dir.join("README.md"), fill(README))?;
    write(dir.join(".gitignore"), "/target\n".to_string())?;
    // The host's lock file pins the same dependency versions the host was built with, so the
    // plugin builds against exactly the tool-api and abi_stable the host uses.
    let lock = workspace_root().join("Cargo.lock");
    if lock.exists() {
        std::fs::copy(&lock, dir.join("Cargo.lock"))
            .map_err(|e| format!("cannot copy Cargo.lock: {e}"))?;
    }
    Ok(dir)
}

fn is_valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// `word_count` → `WordCount`.
fn type_name(name: &str) -> String {
    name.split('_')
        .map(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .map(|first| first.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect()
}
