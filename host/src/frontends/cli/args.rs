//! The arguments of the `toolhost` command line (clap), one type per command that has more
//! than a flag.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use super::{bundle, egress, hooks, plugin};
use crate::frontends::{HotSwapArgs, WorkspaceArgs};

/// `toolhost mcp-servers login|logout NAME`.
#[derive(Debug, Subcommand)]
pub enum SignInCommand {
    /// Signs in to a remote MCP server that needs it (OAuth): opens the authorization page in
    /// the browser ($BROWSER, else xdg-open with a display) and prints its address, then waits
    /// for the redirect to a loopback port.
    Login {
        /// The server's name in the MCP settings file.
        name: String,
        /// Only print the address; open no browser.
        #[arg(long)]
        no_browser: bool,
    },
    /// Forgets the sign-in to a server (its tokens and the scopes it asked for).
    Logout {
        /// The server's name in the MCP settings file.
        name: String,
    },
}

/// Runs tool plugins for coding agents.
#[derive(Debug, Parser)]
#[command(name = "toolhost", version, about)]
pub struct Cli {
    /// A plugin directory (repeatable). Default: $TOOLHOST_PLUGIN_PATH, else `plugins/` next to
    /// the executable or one level up.
    #[arg(long = "plugins", global = true, value_name = "DIR")]
    pub plugins: Vec<PathBuf>,
    /// The settings file. Default: $TOOLHOST_SETTINGS, else ~/.config/toolhost/settings.toml.
    #[arg(long, global = true, value_name = "FILE")]
    pub settings: Option<PathBuf>,
    /// A curated plugin bundle: only what its signed manifest admits is loaded, and its policy
    /// applies (needs --trusted-key; instead of --plugins).
    #[arg(long, global = true, value_name = "DIR", conflicts_with = "plugins")]
    pub bundle: Option<PathBuf>,
    /// The public key that must have signed the bundle's manifest.
    #[arg(long, global = true, value_name = "PUB")]
    pub trusted_key: Option<PathBuf>,
    /// Where plugins run by default: `process` (each in a worker process of its own) or
    /// `in-process`. Without it, the host's own plugin directory runs in-process and any other
    /// isolated; `[plugins.<name>] isolation` and a bundle's requirement still decide first.
    #[arg(long, global = true, value_enum, value_name = "MODE")]
    pub isolation: Option<crate::settings::Isolation>,
    /// The tool set served: `cline-legacy` (default), `cline-sdk`, with a preset
    /// (`cline-sdk:plan`). Default: `[tools] set` of the settings.
    #[arg(long, global = true, value_name = "SET[:PRESET]", value_parser = crate::settings::ToolSet::parse)]
    pub tools: Option<crate::settings::ToolSet>,
    /// More logging on stderr (repeatable). $TOOLHOST_LOG takes a tracing filter.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Lists every registered tool name.
    Tools {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Runs one tool call and prints exactly what the model would receive.
    Call(CallArgs),
    /// Checks what the policies say, without running anything.
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// Parses assistant text from stdin and prints its blocks as JSON.
    Parse,
    /// Feeds a recorded assistant message through the parser as a stream and runs its tool
    /// calls, printing what an agent's UI would show.
    Replay(ReplayArgs),
    /// Serves tool calls as JSON lines on stdin/stdout (`{"id","tool","params"}` in,
    /// `{"id","is_error","text","images"}` out).
    Serve(ServeArgs),
    /// Prints every loaded tool's definition in a provider's format.
    Schema {
        /// The format.
        #[arg(long, value_enum, default_value = "mcp")]
        format: crate::agent::schema::SchemaFormat,
        /// Schemas valid for the format's strict mode (`openai`, `openai-responses`): every
        /// property required, the optional ones nullable, no additional properties.
        #[arg(long)]
        strict: bool,
    },
    /// Serves every loaded tool as an MCP server on stdin/stdout.
    Mcp(crate::frontends::mcp::McpArgs),
    /// Lists the MCP servers of the MCP settings file, their status and their tools (starting
    /// the enabled ones).
    McpServers {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Sign in to a server, or out.
        #[command(subcommand)]
        action: Option<SignInCommand>,
    },
    /// For plugin authors and their users: a loaded plugin's access (`show`), a new plugin
    /// crate (`new`), what a host checks before loading a library (`check`).
    #[command(subcommand, visible_alias = "plugins")]
    Plugin(plugin::PluginCommand),
    /// Curated plugin bundles: keys, signing, verification.
    #[command(subcommand)]
    Bundle(bundle::BundleCommand),
    /// Hook scripts: which ones a workspace would run, and trust in a workspace's own.
    #[command(subcommand)]
    Hooks(hooks::HooksCommand),
    /// The egress proxy's connection log.
    #[command(subcommand)]
    Egress(egress::EgressCommand),
}

/// Arguments of `toolhost serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The workspace.
    #[command(flatten)]
    pub workspace: WorkspaceArgs,
    /// Approve everything without asking.
    #[arg(long)]
    pub yes: bool,
    /// The client answers questions: approvals and ask_followup_question come to it as
    /// `{"ask": {...}}` lines, answered with `{"answer": ID, "response", "text"}`.
    #[arg(long, conflicts_with = "yes")]
    pub ask: bool,
    /// Hot swap.
    #[command(flatten)]
    pub hot_swap: HotSwapArgs,
}

/// Arguments of `toolhost replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The recorded assistant message, or `-` for stdin.
    pub file: PathBuf,
    /// The workspace.
    #[command(flatten)]
    pub workspace: WorkspaceArgs,
    /// Approve everything without asking.
    #[arg(long)]
    pub yes: bool,
    /// How many characters each streamed chunk holds.
    #[arg(long, default_value_t = 16)]
    pub chunk: usize,
}

/// Arguments of `toolhost call`.
#[derive(Debug, Args)]
pub struct CallArgs {
    /// The tool's name.
    pub tool: String,
    /// The parameters as a JSON object, or `-` to read them from stdin. Default: `{}`.
    pub params: Option<String>,
    /// The workspace.
    #[command(flatten)]
    pub workspace: WorkspaceArgs,
    /// Approve everything without asking.
    #[arg(long)]
    pub yes: bool,
    /// Print `{"is_error", "text", "images"}` as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `toolhost policy ...`
#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// Whether .clineignore and the workspace boundary allow a path, and why (JSON).
    CheckPath {
        /// The path, as a tool would receive it.
        path: String,
        /// The workspace.
        #[command(flatten)]
        workspace: WorkspaceArgs,
    },
    /// What CLINE_COMMAND_PERMISSIONS and .clineignore say about a command, without running it:
    /// allowed or refused, which rule or construct decided, the commands found and how strictly
    /// they were checked, and the .clineignore check. Exit code 0 when execute_command would run
    /// it, 1 when it would refuse it.
    CheckCommand {
        /// The command, as execute_command would receive it (after `--` if it starts with `-`).
        #[arg(allow_hyphen_values = true)]
        command: String,
        /// The workspace.
        #[command(flatten)]
        workspace: WorkspaceArgs,
        /// Print JSON (the verdict's fields, `clineignore_path`, `configured`, `segments`,
        /// `commands`, `unsafe_constructs`, `configuration_problem`).
        #[arg(long)]
        json: bool,
    },
    /// What execute_command's sandbox hides and passes: the deny-read list and which of its
    /// entries exist here, what commands may read, and which variables of this environment
    /// they get (names only).
    Sandbox {
        /// The workspace.
        #[command(flatten)]
        workspace: WorkspaceArgs,
        /// The settings section of the tool whose commands to show (default: execute_command's).
        #[arg(long, value_name = "NAME")]
        section: Option<String>,
        /// Print JSON (`section`, `sandbox`, `network`, `read`, `applies`, `deny_read`,
        /// `allow_read`, `own_files`, `readable`, `env_patterns`, `env_keep`, `env`).
        #[arg(long)]
        json: bool,
    },
}
