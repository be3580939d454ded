//! The `toolhost` command line.
//!
//! Exit codes: 0 success; 1 the tool call failed (its text is still printed); 2 bad usage
//! (unknown tool, malformed parameters, bad arguments).

pub mod bundle;
pub mod hooks;
mod host;
pub mod mcp_servers;
mod report;
mod run;

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use serde_json::Value;

use crate::frontends::{HotSwapArgs, WorkspaceArgs};
use crate::permissions::ApprovalMode;

pub use report::{check_path_json, render_command_report};

use host::{build_host, policy_workspace, serving_host, PluginSource};
use run::print_line;

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
    },
    /// Curated plugin bundles: keys, signing, verification.
    #[command(subcommand)]
    Bundle(bundle::BundleCommand),
    /// Hook scripts: which ones a workspace would run, and trust in a workspace's own.
    #[command(subcommand)]
    Hooks(hooks::HooksCommand),
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
}

/// Parses the arguments and runs the command.
pub fn main() -> ExitCode {
    super::mcp::http::take_env_token();
    crate::command_sandbox::supervisor::run_supervisor_if_asked();
    crate::plugins::worker::serve::run_worker_if_asked();
    let cli = Cli::parse();
    init_logging(cli.verbose, matches!(cli.command, Command::Mcp(_)));
    let code = match run(cli) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("toolhost: {message}");
            ExitCode::from(2)
        }
    };
    crate::plugins::private_dir::remove();
    code
}

/// Logging on stderr at the level `-v` asks for (`$TOOLHOST_LOG` overrides). Under `mcp`,
/// stderr stays quiet unless asked and the host's messages go to the client instead
/// ([`crate::frontends::mcp::log`]).
fn init_logging(verbose: u8, mcp: bool) {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::Layer;

    let default = match verbose {
        0 if mcp => "off",
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("TOOLHOST_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_filter(filter);
    let client = mcp.then(crate::frontends::mcp::log::layer);
    let _ = tracing_subscriber::registry()
        .with(stderr)
        .with(client)
        .try_init();
}

/// Runs a parsed command line; `Err` is a usage error (exit 2).
pub fn run(cli: Cli) -> Result<ExitCode, String> {
    let plugins = match &cli.command {
        Command::Bundle(_) | Command::Hooks(_) => PluginSource::default(),
        _ => PluginSource::new(
            &cli.plugins,
            cli.bundle.as_deref(),
            cli.trusted_key.as_deref(),
            cli.isolation,
        )?,
    };
    // A host for commands that only look: no workspace of their own, nothing approved.
    let inspecting_host = || {
        build_host(
            &plugins,
            cli.settings.as_deref(),
            &[],
            ApprovalMode::DenyUnlessAuto,
        )
    };
    match cli.command {
        Command::Bundle(command) => bundle::run_command(command, cli.trusted_key.as_deref()),
        Command::Hooks(command) => hooks::run_command(command, cli.settings.as_deref()),
        Command::Tools { json } => {
            let host = inspecting_host()?;
            report::print_tools(&host, json);
            Ok(ExitCode::SUCCESS)
        }
        Command::McpServers { json } => {
            let report = mcp_servers::report(&*inspecting_host()?)?;
            if json {
                print_line(&report.to_string());
            } else {
                print!("{}", mcp_servers::render_text(&report));
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Call(args) => run::call(&plugins, cli.settings.as_deref(), args),
        Command::Parse => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| format!("cannot read stdin: {e}"))?;
            let parser = crate::agent::session::parser_for(&inspecting_host()?.registry());
            let blocks = parser.parse(&text);
            print_line(&serde_json::to_string(&blocks).unwrap_or_default());
            Ok(ExitCode::SUCCESS)
        }
        Command::Replay(args) => run::replay(&plugins, cli.settings.as_deref(), args),
        Command::Serve(args) => run::serve(&plugins, cli.settings.as_deref(), args),
        Command::Mcp(mut args) => {
            let hot_swap = std::mem::take(&mut args.hot_swap);
            crate::frontends::mcp::run(args, |roots, approval, ui| {
                serving_host(
                    &plugins,
                    cli.settings.as_deref(),
                    roots,
                    approval,
                    &hot_swap,
                    ui,
                )
            })
        }
        Command::Schema { format, strict } => {
            if strict && !format.has_strict_mode() {
                return Err(
                    "--strict needs --format openai or --format openai-responses (only they have a strict mode)"
                        .to_string(),
                );
            }
            let host = inspecting_host()?;
            let tools = host.tools();
            let specs: Vec<_> = tools.iter().map(|(_, tool)| &tool.spec).collect();
            print_line(&crate::agent::schema::render_with(&specs, format, strict));
            Ok(ExitCode::SUCCESS)
        }
        Command::Policy(PolicyCommand::CheckPath { path, workspace }) => {
            let workspace = policy_workspace(&workspace, cli.settings.as_deref())?;
            print_line(&check_path_json(&workspace, &path).to_string());
            Ok(ExitCode::SUCCESS)
        }
        Command::Policy(PolicyCommand::CheckCommand {
            command,
            workspace,
            json,
        }) => {
            let workspace = policy_workspace(&workspace, cli.settings.as_deref())?;
            // `@name:command` runs in that root, as execute_command runs it.
            let (root, command) = match tool_api::workspace::parse_command_hint(&command) {
                Some((hint, rest)) if workspace.is_multi_root() => {
                    (workspace.command_root(hint), rest.to_string())
                }
                _ => (0, command),
            };
            let report = crate::permissions::commands::explain_command(
                &workspace,
                root,
                plugins.command_permissions(),
                &command,
            );
            if json {
                print_line(
                    &serde_json::to_value(&report)
                        .unwrap_or(Value::Null)
                        .to_string(),
                );
            } else {
                print!("{}", render_command_report(&report));
            }
            let runs = report.check.verdict.allowed && report.check.clineignore_path.is_none();
            Ok(if runs {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
    }
}
