//! `toolhost plugin new NAME`: a plugin crate of its own, outside any workspace, depending on
//! tool-api by path, git or version, with one tool (and its partial handler), a test on the
//! SDK's test host and a README.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;

use crate::frontends::FrontendError;

const CARGO_TOML: &str = include_str!("templates/Cargo.toml.in");
const LIB_RS: &str = include_str!("templates/lib.rs.in");
const README: &str = include_str!("templates/README.md.in");

/// The arguments of `toolhost plugin new`.
#[derive(Debug, Args)]
pub struct NewArgs {
    /// The tool's (and crate's) name: lower-case letters, digits and `_`, starting with a letter.
    pub name: String,
    /// Where to write the crate (an empty or missing directory). Default: ./NAME.
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// tool-api from a checkout (the directory holding its Cargo.toml).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["tool_api_git", "tool_api_version"])]
    pub tool_api_path: Option<PathBuf>,
    /// tool-api from a git repository.
    #[arg(long, value_name = "URL", conflicts_with = "tool_api_version")]
    pub tool_api_git: Option<String>,
    /// tool-api from a registry, by version requirement.
    #[arg(long, value_name = "REQ")]
    pub tool_api_version: Option<String>,
}

/// Writes the crate and says where, and what to run next.
pub fn run(args: &NewArgs) -> Result<ExitCode, FrontendError> {
    let failed = |message: String| FrontendError::PluginNew(message);
    let name = &args.name;
    if !is_valid_name(name) {
        return Err(failed(format!(
            "'{name}' is not a valid tool name: use lower-case letters, digits and '_', \
             starting with a letter"
        )));
    }
    let dependency = dependency(args).map_err(failed)?;
    let dir = args.dir.clone().unwrap_or_else(|| PathBuf::from(name));
    let occupied = std::fs::read_dir(&dir).is_ok_and(|mut entries| entries.next().is_some());
    if occupied || dir.is_file() {
        return Err(failed(format!("{} exists and is not empty", dir.display())));
    }
    let fill = |template: &str| {
        template
            .replace("{{name}}", name)
            .replace("{{type_name}}", &type_name(name))
            .replace("{{tool_api}}", &dependency)
    };
    let write = |path: PathBuf, text: String| {
        std::fs::write(&path, text)
            .map_err(|e| failed(format!("cannot write {}: {e}", path.display())))
    };
    std::fs::create_dir_all(dir.join("src"))
        .map_err(|e| failed(format!("cannot create {}: {e}", dir.display())))?;
    write(dir.join("Cargo.toml"), fill(CARGO_TOML))?;
    write(dir.join("src/lib.rs"), fill(LIB_RS))?;
    write(dir.join("README.md"), fill(README))?;
    write(dir.join(".gitignore"), "/target\n".to_string())?;
    // From a checkout, its lock file pins the dependency versions the host was built with.
    if let Some(lock) = args
        .tool_api_path
        .as_deref()
        .or(default_checkout().as_deref())
        .and_then(|tool_api| tool_api.parent().map(|root| root.join("Cargo.lock")))
        .filter(|lock| lock.is_file())
    {
        std::fs::copy(&lock, dir.join("Cargo.lock"))
            .map_err(|e| failed(format!("cannot copy {}: {e}", lock.display())))?;
    }
    println!(
        "created {}: `cargo test` there, then `cargo build --release` and \
         `toolhost plugin check target/release/lib{name}.so`",
        dir.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// The `tool-api = ...` value of the crate's Cargo.toml.
fn dependency(args: &NewArgs) -> Result<String, String> {
    let quoted = |text: &str| toml_string(text);
    if let Some(path) = &args.tool_api_path {
        let path = path
            .canonicalize()
            .map_err(|e| format!("--tool-api-path {}: {e}", path.display()))?;
        return Ok(format!(
            "{{ path = {} }}",
            quoted(&path.display().to_string())
        ));
    }
    if let Some(url) = &args.tool_api_git {
        return Ok(format!("{{ git = {} }}", quoted(url)));
    }
    if let Some(requirement) = &args.tool_api_version {
        return Ok(quoted(requirement));
    }
    match default_checkout() {
        Some(path) => Ok(format!(
            "{{ path = {} }}",
            quoted(&path.display().to_string())
        )),
        None => Err(
            "say where tool-api comes from: --tool-api-path DIR, --tool-api-git URL or \
             --tool-api-version REQ"
                .to_string(),
        ),
    }
}

/// The tool-api of the checkout this toolhost was built from, when it is still there.
fn default_checkout() -> Option<PathBuf> {
    let tool_api = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tool-api");
    tool_api
        .join("Cargo.toml")
        .is_file()
        .then(|| tool_api.canonicalize().ok())
        .flatten()
}

/// `text` as a TOML basic string.
fn toml_string(text: &str) -> String {
    // serde_json's string escapes are valid TOML basic-string escapes.
    serde_json::Value::String(text.to_string()).to_string()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_types() {
        assert!(is_valid_name("word_count2"));
        assert!(!is_valid_name("Word"));
        assert!(!is_valid_name("2words"));
        assert_eq!(type_name("word_count"), "WordCount");
        assert_eq!(toml_string("a \"b\" \\c"), r#""a \"b\" \\c""#);
    }
}
