//! Why a command could not do its work: [`FrontendError`], which `toolhost` prints as
//! `toolhost: MESSAGE` and exits with 2.

use std::net::{AddrParseError, SocketAddr};
use std::path::PathBuf;

use crate::call::hooks::trust::TrustError;
use crate::command_sandbox::error::{PolicyError, SettingsError as SandboxSettingsError};
use crate::error::CallError;
use crate::plugins::bundle::BundleError;
use crate::settings::{InvalidSettings, SettingsError};

/// Why a command of the command line, `serve` or `mcp` could not run (a usage error: exit 2).
#[derive(Debug, thiserror::Error)]
pub enum FrontendError {
    /// A tool's sandbox settings cannot be used (`policy sandbox`).
    #[error(transparent)]
    SandboxSettings(#[from] SandboxSettingsError),
    /// The `[egress]` settings cannot be used (`egress log`).
    #[error(transparent)]
    Egress(#[from] crate::egress::EgressError),
    /// The sandbox of a tool's commands cannot be built as its settings say (`policy sandbox`).
    #[error(transparent)]
    SandboxPolicy(#[from] PolicyError),
    /// The settings file cannot be read or used.
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// The settings' `[workspace] roots` cannot be used.
    #[error(transparent)]
    SettingsRoots(#[from] InvalidSettings),
    /// The current directory cannot be the workspace.
    #[error("cannot use . as the workspace: {0}")]
    CurrentDirectory(#[source] std::io::Error),
    /// The one root given cannot be the workspace.
    #[error("cannot use {} as the workspace: {source}", path.display())]
    Workspace {
        /// The root.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The roots given do not make a workspace.
    #[error("cannot open the workspace: {0}")]
    Roots(#[source] std::io::Error),
    /// The bundle, its key or its signature cannot be used.
    #[error(transparent)]
    Bundle(#[from] BundleError),
    /// `--bundle` without the key to check it.
    #[error("--bundle needs --trusted-key PUB")]
    BundleNeedsKey,
    /// `--trusted-key` without anything to check.
    #[error("--trusted-key is only used with --bundle or `toolhost bundle`")]
    KeyWithoutBundle,
    /// `toolhost bundle verify` without the key to check with.
    #[error("bundle verify needs --trusted-key PUB")]
    VerifyNeedsKey,
    /// A server over a bundle that admitted no plugin.
    #[error("the bundle admitted no plugin, so there is no tool to serve")]
    BundleAdmittedNothing,
    /// A server without any plugin.
    #[error(
        "no plugin was found {searched}, so there is no tool to serve; pass --plugins DIR or set \
         TOOLHOST_PLUGIN_PATH"
    )]
    NoPlugins {
        /// Where plugins were looked for.
        searched: String,
    },
    /// `--watch` with `--bundle`.
    #[error("--watch cannot be used with --bundle: the signed manifest fixes the libraries")]
    WatchWithBundle,
    /// The plugin directories cannot be watched.
    #[error("cannot watch the plugin directories: {0}")]
    Watch(#[source] std::io::Error),
    /// Stdin cannot be read.
    #[error("cannot read stdin: {0}")]
    Stdin(#[source] std::io::Error),
    /// A file the command reads cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// `toolhost call`'s parameters cannot be read from stdin.
    #[error("cannot read the parameters from stdin: {0}")]
    ParamsStdin(#[source] std::io::Error),
    /// `toolhost call`'s parameters are JSON, but no object.
    #[error("the parameters must be a JSON object")]
    ParamsNotObject,
    /// `toolhost call`'s parameters are not JSON.
    #[error("the parameters are not valid JSON: {0}")]
    ParamsJson(#[source] serde_json::Error),
    /// `toolhost call` names a tool no plugin registered.
    #[error("no tool named '{name}' is loaded (loaded: {})", loaded_list(loaded))]
    UnknownTool {
        /// The name asked for.
        name: String,
        /// The tools that are loaded.
        loaded: Vec<String>,
    },
    /// `toolhost schema --strict` for a format without a strict mode.
    #[error(
        "--strict needs --format openai or --format openai-responses (only they have a strict mode)"
    )]
    StrictNeedsFormat,
    /// The trust file of hook scripts cannot be read or written.
    #[error(transparent)]
    Trust(#[from] TrustError),
    /// `toolhost plugin new` could not write the crate.
    #[error("{0}")]
    PluginNew(String),
    /// `toolhost plugin check` could not check the library.
    #[error("{0}")]
    PluginCheck(String),
    /// `toolhost plugin grant` could not grant.
    #[error("{0}")]
    PluginGrant(String),
    /// `toolhost plugin show` of a name no loaded plugin has.
    #[error("no plugin named '{0}' is loaded (toolhost tools lists them)")]
    NoSuchPlugin(String),
    /// `toolhost mcp-servers` without a plugin that is an MCP client.
    #[error("no plugin with an MCP client is loaded, so no MCP server can be reached")]
    NoMcpClient,
    /// The MCP client plugin could not make its report.
    #[error("{}", .0.message)]
    McpServers(#[source] CallError),
    /// The client's stdin and stdout cannot be kept for the protocol.
    #[error("cannot take over stdin/stdout for the protocol: {0}")]
    TakeStdio(#[source] std::io::Error),
    /// The async runtime of `mcp` cannot start.
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// `serve` lost its client's streams.
    #[error("serve: {0}")]
    Serve(#[source] std::io::Error),
    /// `--http`'s address does not parse.
    #[error("--http {text}: not an address (HOST:PORT or PORT): {source}")]
    HttpAddr {
        /// The address given.
        text: String,
        /// Why it does not parse.
        source: AddrParseError,
    },
    /// `--token-file` cannot be read.
    #[error("cannot read the token file {}: {source}", path.display())]
    TokenFile {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// `--token-file`'s first line is empty.
    #[error("the token file {} is empty", path.display())]
    EmptyToken {
        /// The file.
        path: PathBuf,
    },
    /// `--http`'s address cannot be listened on.
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The address listened on cannot be read back.
    #[error(transparent)]
    LocalAddr(std::io::Error),
}

fn loaded_list(loaded: &[String]) -> String {
    if loaded.is_empty() {
        "none".to_string()
    } else {
        loaded.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_error_reads_as_it_always_did() {
        let unknown = |loaded: &[&str]| FrontendError::UnknownTool {
            name: "nope".into(),
            loaded: loaded.iter().map(|name| name.to_string()).collect(),
        };
        assert_eq!(
            unknown(&[]).to_string(),
            "no tool named 'nope' is loaded (loaded: none)"
        );
        assert_eq!(
            unknown(&["list_files", "read_file"]).to_string(),
            "no tool named 'nope' is loaded (loaded: list_files, read_file)"
        );
        let addr = crate::frontends::mcp::http::parse_addr("here:there");
        assert!(
            matches!(&addr, Err(FrontendError::HttpAddr { text, .. }) if text == "here:there"),
            "{addr:?}"
        );
        assert!(addr
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
            .starts_with("--http here:there: not an address (HOST:PORT or PORT): "));
    }
}
