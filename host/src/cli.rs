//! The `toolhost` command line.
//!
//! Exit codes: 0 success; 1 the tool call failed (its text is still printed); 2 bad usage
//! (unknown tool, malformed parameters, bad arguments).

use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use clap::{Args, Parser, Subcommand};
use serde_json::{json, Value};

use crate::known_tools::is_cline_tool;
use crate::plugins::discovery::plugin_dirs;
use crate::policy::{ApprovalMode, Workspace};
use crate::settings::Settings;
use crate::ui::{HeadlessUi, TerminalUi, Ui};
use crate::{Host, HostConfig};

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
        format: crate::schema::SchemaFormat,
    },
    /// Serves every loaded tool as an MCP server on stdin/stdout.
    Mcp(crate::mcp_server::McpArgs),
    /// Lists the MCP servers of the MCP settings file, their status and their tools (starting
    /// the enabled ones).
    McpServers {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Curated plugin bundles: keys, signing, verification.
    #[command(subcommand)]
    Bundle(crate::bundle::BundleCommand),
    /// Hook scripts: which ones a workspace would run, and trust in a workspace's own.
    #[command(subcommand)]
    Hooks(crate::hooks::command::HooksCommand),
}

/// Arguments of `toolhost serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The workspace directory. Default: the current directory.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Approve everything without asking.
    #[arg(long)]
    pub yes: bool,
    /// Hot swap.
    #[command(flatten)]
    pub hot_swap: HotSwapArgs,
}

/// The hot-swap options of the long-running frontends (`serve`, `mcp`).
#[derive(Debug, Args, Default)]
pub struct HotSwapArgs {
    /// Reload a plugin when its library in a plugin directory is replaced (hot swap).
    #[arg(long)]
    pub watch: bool,
    /// With `--watch`: also load a library whose version is older than the running one.
    #[arg(long, requires = "watch")]
    pub allow_downgrade: bool,
}

/// Arguments of `toolhost replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The recorded assistant message, or `-` for stdin.
    pub file: PathBuf,
    /// The workspace directory. Default: the current directory.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
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
    /// The workspace directory. Default: the current directory.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
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
        /// The workspace directory. Default: the current directory.
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
    },
    /// What CLINE_COMMAND_PERMISSIONS and .clineignore say about a command, without running it:
    /// allowed or refused, which rule or construct decided, the commands found and how strictly
    /// they were checked, and the .clineignore check. Exit code 0 when execute_command would run
    /// it, 1 when it would refuse it.
    CheckCommand {
        /// The command, as execute_command would receive it (after `--` if it starts with `-`).
        #[arg(allow_hyphen_values = true)]
        command: String,
        /// The workspace directory. Default: the current directory.
        #[arg(long, value_name = "DIR")]
        cwd: Option<PathBuf>,
        /// Print JSON (the verdict's fields, `clineignore_path`, `configured`, `segments`,
        /// `commands`, `unsafe_constructs`, `configuration_problem`).
        #[arg(long)]
        json: bool,
    },
}

/// Parses the arguments and runs the command.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.verbose);
    match run(cli) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("toolhost: {message}");
            ExitCode::from(2)
        }
    }
}

fn init_logging(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("TOOLHOST_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
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
        )?,
    };
    // A host for commands that only look: no workspace of their own, nothing approved.
    let inspecting_host = || {
        build_host(
            &plugins,
            cli.settings.as_deref(),
            None,
            ApprovalMode::DenyUnlessAuto,
        )
    };
    match cli.command {
        Command::Bundle(command) => crate::bundle::run_command(command, cli.trusted_key.as_deref()),
        Command::Hooks(command) => {
            crate::hooks::command::run_command(command, cli.settings.as_deref())
        }
        Command::Tools { json } => {
            let host = inspecting_host()?;
            print_tools(&host, json);
            Ok(ExitCode::SUCCESS)
        }
        Command::McpServers { json } => {
            let report = crate::mcp_servers::report(&*inspecting_host()?)?;
            if json {
                print_line(&report.to_string());
            } else {
                print!("{}", crate::mcp_servers::render_text(&report));
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Call(args) => call(&plugins, cli.settings.as_deref(), args),
        Command::Parse => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| format!("cannot read stdin: {e}"))?;
            let blocks = crate::parser::parse_assistant_message(&text);
            print_line(&serde_json::to_string(&blocks).unwrap_or_default());
            Ok(ExitCode::SUCCESS)
        }
        Command::Replay(args) => replay(&plugins, cli.settings.as_deref(), args),
        Command::Serve(args) => serve(&plugins, cli.settings.as_deref(), args),
        Command::Mcp(mut args) => {
            let hot_swap = std::mem::take(&mut args.hot_swap);
            crate::mcp_server::run(args, |cwd, approval| {
                serving_host(&plugins, cli.settings.as_deref(), cwd, approval, &hot_swap)
            })
        }
        Command::Schema { format } => {
            let host = inspecting_host()?;
            let tools = host.tools();
            let specs: Vec<_> = tools.iter().map(|(_, tool)| &tool.spec).collect();
            print_line(&crate::schema::render(&specs, format));
            Ok(ExitCode::SUCCESS)
        }
        Command::Policy(PolicyCommand::CheckPath { path, cwd }) => {
            let workspace = open_workspace(cwd.as_deref())?;
            print_line(&check_path_json(&workspace, &path).to_string());
            Ok(ExitCode::SUCCESS)
        }
        Command::Policy(PolicyCommand::CheckCommand { command, cwd, json }) => {
            let workspace = open_workspace(cwd.as_deref())?;
            let report = crate::policy::commands::explain_command(
                &workspace,
                crate::policy::CommandPermissions::global(),
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

fn open_workspace(cwd: Option<&Path>) -> Result<Workspace, String> {
    let dir = cwd.unwrap_or(Path::new("."));
    Workspace::new(dir).map_err(|e| format!("cannot use {} as the workspace: {e}", dir.display()))
}

fn build_host(
    plugins: &PluginSource,
    settings: Option<&Path>,
    cwd: Option<&Path>,
    approval: ApprovalMode,
) -> Result<std::sync::Arc<Host>, String> {
    let ui: Box<dyn Ui> = match approval {
        ApprovalMode::Ask => Box::new(TerminalUi),
        ApprovalMode::ApproveAll | ApprovalMode::DenyUnlessAuto => Box::new(HeadlessUi),
    };
    build_host_with_ui(plugins, settings, cwd, approval, ui)
}

fn build_host_with_ui(
    plugins: &PluginSource,
    settings: Option<&Path>,
    cwd: Option<&Path>,
    approval: ApprovalMode,
    ui: Box<dyn Ui>,
) -> Result<std::sync::Arc<Host>, String> {
    let settings = Settings::load(settings).map_err(|e| e.to_string())?;
    let workspace = open_workspace(cwd)?;
    Ok(plugins.host(HostConfig {
        plugin_dirs: plugins.dirs.clone(),
        workspace,
        settings,
        approval,
        ui,
        task_id: new_task_id(),
    }))
}

/// Where the plugins come from: the plugin directories, or a signed bundle.
#[derive(Default)]
struct PluginSource {
    dirs: Vec<PathBuf>,
    bundle: Option<crate::bundle::Opened>,
}

impl PluginSource {
    /// Checks the bundle's signature and, before anything reads them, applies its command
    /// permissions.
    fn new(
        plugins: &[PathBuf],
        bundle: Option<&Path>,
        trusted_key: Option<&Path>,
    ) -> Result<Self, String> {
        let bundle = match (bundle, trusted_key) {
            (Some(dir), Some(key)) => crate::bundle::Opened::open(dir, key)?,
            (Some(_), None) => return Err("--bundle needs --trusted-key PUB".to_string()),
            (None, Some(_)) => {
                return Err(
                    "--trusted-key is only used with --bundle or `toolhost bundle`".to_string(),
                )
            }
            (None, None) => {
                return Ok(Self {
                    dirs: plugin_dirs(plugins),
                    bundle: None,
                })
            }
        };
        bundle.apply_command_permissions();
        Ok(Self {
            dirs: Vec::new(),
            bundle: Some(bundle),
        })
    }

    /// Loads the plugins (a bundle's admitted ones, with its approval defaults) and builds the
    /// host.
    fn host(&self, mut config: HostConfig) -> std::sync::Arc<Host> {
        let Some(bundle) = &self.bundle else {
            if config.plugin_dirs.is_empty() {
                tracing::warn!(
                    "no plugin directory found: pass --plugins DIR or set TOOLHOST_PLUGIN_PATH"
                );
            }
            return Host::new(config);
        };
        bundle.apply_approvals(&mut config.settings);
        Host::with_registry(config, bundle.load())
    }
}

fn new_task_id() -> String {
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or_default();
    format!("{millis}-{}", std::process::id())
}

fn call(
    plugins: &PluginSource,
    settings: Option<&Path>,
    args: CallArgs,
) -> Result<ExitCode, String> {
    let params = match args.params.as_deref() {
        None => "{}".to_string(),
        Some("-") => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| format!("cannot read the parameters from stdin: {e}"))?;
            text
        }
        Some(text) => text.to_string(),
    };
    match serde_json::from_str::<Value>(&params) {
        Ok(Value::Object(_)) => {}
        Ok(_) => return Err("the parameters must be a JSON object".to_string()),
        Err(e) => return Err(format!("the parameters are not valid JSON: {e}")),
    }
    let host = build_host(
        plugins,
        settings,
        args.cwd.as_deref(),
        approval_mode(args.yes),
    )?;
    if host.lookup(&args.tool).is_none() {
        let tools = host.tools();
        let names: Vec<&str> = tools.iter().map(|(name, _)| name.as_str()).collect();
        return Err(format!(
            "no tool named '{}' is loaded (loaded: {})",
            args.tool,
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        ));
    }
    let outcome = host.call(&args.tool, &params);
    if args.json {
        print_line(&serde_json::to_string(&outcome.to_json()).unwrap_or_default());
    } else {
        print_exact(&outcome.model_text());
    }
    host.registry().shutdown();
    Ok(if outcome.is_error() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Prints the model's text byte for byte; a newline is added only for a terminal's sake.
fn print_exact(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    if stdout.is_terminal() && !text.ends_with('\n') {
        let _ = stdout.write_all(b"\n");
    }
    let _ = stdout.flush();
}

/// Approvals: `--yes`, else ask on a terminal, else deny what is not auto-approved.
fn approval_mode(yes: bool) -> ApprovalMode {
    if yes {
        ApprovalMode::ApproveAll
    } else if TerminalUi::detect().is_some() {
        ApprovalMode::Ask
    } else {
        ApprovalMode::DenyUnlessAuto
    }
}

fn serve(
    plugins: &PluginSource,
    settings: Option<&Path>,
    args: ServeArgs,
) -> Result<ExitCode, String> {
    let approval = if args.yes {
        ApprovalMode::ApproveAll
    } else {
        ApprovalMode::DenyUnlessAuto
    };
    let host = serving_host(
        plugins,
        settings,
        args.cwd.as_deref(),
        approval,
        &args.hot_swap,
    )?;
    crate::serve::serve(&host, std::io::stdin().lock(), std::io::stdout().lock())
        .map_err(|e| format!("serve: {e}"))?;
    host.registry().shutdown();
    Ok(ExitCode::SUCCESS)
}

/// The host of a long-running frontend: with `--watch`, one that loads private copies and
/// swaps in replaced libraries.
fn serving_host(
    plugins: &PluginSource,
    settings: Option<&Path>,
    cwd: Option<&Path>,
    approval: ApprovalMode,
    hot_swap: &HotSwapArgs,
) -> Result<std::sync::Arc<Host>, String> {
    if !hot_swap.watch {
        return build_host(plugins, settings, cwd, approval);
    }
    if plugins.bundle.is_some() {
        return Err(
            "--watch cannot be used with --bundle: the signed manifest fixes the libraries"
                .to_string(),
        );
    }
    let host = Host::new_for_hot_swap(HostConfig {
        plugin_dirs: plugins.dirs.clone(),
        workspace: open_workspace(cwd)?,
        settings: Settings::load(settings).map_err(|e| e.to_string())?,
        approval,
        ui: Box::new(HeadlessUi),
        task_id: new_task_id(),
    });
    host.watch(&plugins.dirs, hot_swap.allow_downgrade)
        .map_err(|e| format!("cannot watch the plugin directories: {e}"))?;
    Ok(host)
}

fn replay(
    plugins: &PluginSource,
    settings: Option<&Path>,
    args: ReplayArgs,
) -> Result<ExitCode, String> {
    let message = if args.file.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| format!("cannot read stdin: {e}"))?;
        text
    } else {
        std::fs::read_to_string(&args.file)
            .map_err(|e| format!("cannot read {}: {e}", args.file.display()))?
    };
    let approval = approval_mode(args.yes);
    let transcript = crate::replay::Transcript::printing();
    let asker: Option<Box<dyn Ui>> = match approval {
        ApprovalMode::Ask => Some(Box::new(TerminalUi)),
        ApprovalMode::ApproveAll | ApprovalMode::DenyUnlessAuto => None,
    };
    let ui = Box::new(crate::replay::ReplayUi::new(transcript.clone(), asker));
    let host = build_host_with_ui(plugins, settings, args.cwd.as_deref(), approval, ui)?;
    crate::replay::replay(host.clone(), &message, args.chunk, &transcript);
    host.registry().shutdown();
    Ok(ExitCode::SUCCESS)
}

fn print_line(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{text}");
    let _ = stdout.flush();
}

fn print_tools(host: &Host, json: bool) {
    let registry = host.registry();
    let tools = host.tools();
    if json {
        let tools: Vec<Value> = tools
            .iter()
            .map(|(name, tool)| {
                let plugin = &tool.handler.plugin;
                json!({
                    "name": name,
                    "plugin": plugin.name,
                    "plugin_version": plugin.version.to_string(),
                    "abi_version": plugin.abi_version.to_string(),
                    "library": plugin.path,
                    "loaded": plugin.is_loaded(),
                    "partial": tool.spec.partial,
                    "handler_id": tool.handler.id,
                    "cline_tool": is_cline_tool(name),
                    "run_time": registry.get(name).is_none(),
                    "description": tool.spec.description,
                })
            })
            .collect();
        let warnings: Vec<Value> = registry
            .warnings()
            .iter()
            .map(|w| json!({"file": w.file, "message": w.message}))
            .collect();
        print_line(&json!({"tools": tools, "warnings": warnings}).to_string());
        return;
    }
    let mut out = String::new();
    for (name, tool) in &tools {
        let plugin = &tool.handler.plugin;
        out.push_str(&format!(
            "{name:<28} {:<22} {:<8} handler={:<24} partial={:<5} {}\n",
            plugin.name,
            plugin.version,
            tool.handler.id,
            tool.spec.partial,
            plugin.path.display()
        ));
    }
    print!("{out}");
}

/// What `policy check-command` prints without `--json`.
pub fn render_command_report(report: &crate::policy::commands::CommandExplanation) -> String {
    use crate::policy::commands::{CheckedPart, Reason};
    let verdict = &report.check.verdict;
    let mut out = String::new();
    let stricter = if verdict.stricter_than_cline {
        " (stricter than Cline)"
    } else {
        ""
    };
    let outcome = if verdict.allowed {
        "allowed"
    } else {
        "refused"
    };
    out.push_str(&format!(
        "{outcome}: {}{stricter}\n",
        verdict.reason.as_str()
    ));
    let part = verdict.failed_segment.as_deref().unwrap_or_default();
    let decided = match verdict.reason {
        Reason::NoConfig => {
            "CLINE_COMMAND_PERMISSIONS is not set: nothing is restricted".to_string()
        }
        Reason::Allowed => "every part passed the rules (see below)".to_string(),
        Reason::InvalidConfig => report.configuration_problem.clone().unwrap_or_default(),
        Reason::Denied | Reason::SegmentDenied => format!(
            "deny pattern \"{}\" matches \"{}\"",
            verdict.matched_pattern.as_deref().unwrap_or_default(),
            if part.is_empty() { "the command" } else { part }
        ),
        Reason::NoMatchDenyDefault => "no allow pattern matches the command".to_string(),
        Reason::SegmentNoMatch => format!("no allow pattern matches \"{part}\""),
        Reason::RedirectDetected => "a redirect, and allowRedirects is not true".to_string(),
        Reason::ShellOperatorDetected => format!(
            "{} outside quotes",
            match verdict.detected_operator.as_deref() {
                Some("parse_error") => "a command the parser cannot read".to_string(),
                Some(operator) => format!("the operator {operator}"),
                None => "an operator".to_string(),
            }
        ),
        Reason::DynamicCommand => format!("\"{part}\" runs something only known at run time"),
        Reason::UnsafeExpansion => format!(
            "{part} ({}) has an effect the check cannot compute",
            verdict.detected_operator.as_deref().unwrap_or_default()
        ),
        Reason::RiskyOption => format!(
            "{} in \"{part}\" runs code or writes files, and no allow pattern names it",
            verdict.detected_operator.as_deref().unwrap_or_default()
        ),
    };
    out.push_str(&format!("  decided by: {decided}\n"));
    if let Some(message) = &verdict.denial_message {
        out.push_str(&format!("  message: {message}\n"));
    }
    let list = |out: &mut String, title: &str, parts: &[CheckedPart]| {
        if parts.is_empty() {
            return;
        }
        out.push_str(title);
        for p in parts {
            let outcome = match (&p.refused, &p.denied_by, &p.allowed_by) {
                (Some(reason), Some(pattern), _) => {
                    format!("refused: {} (deny \"{pattern}\")", reason.as_str())
                }
                (Some(reason), None, _) => format!("refused: {}", reason.as_str()),
                (None, _, Some(pattern)) => format!("allowed by \"{pattern}\""),
                (None, _, None) => "passed".to_string(),
            };
            let risky = if p.risky_options.is_empty() {
                String::new()
            } else {
                format!(
                    "; runs code or writes files: {}",
                    p.risky_options.join(", ")
                )
            };
            out.push_str(&format!(
                "  {}  [{}] {outcome}{risky}\n",
                p.command,
                p.checked_with.replace('_', " ")
            ));
        }
    };
    list(
        &mut out,
        "Cline's check, segment by segment:\n",
        &report.trace.segments,
    );
    list(
        &mut out,
        "Commands that would run (the stricter check):\n",
        &report.trace.commands,
    );
    if !report.trace.unsafe_constructs.is_empty() {
        out.push_str("Constructs whose effect cannot be computed:\n");
        for u in &report.trace.unsafe_constructs {
            out.push_str(&format!("  {} ({})\n", u.construct, u.operator));
        }
    }
    match &report.check.clineignore_path {
        Some(path) => out.push_str(&format!(".clineignore: blocks {path}\n")),
        None => out.push_str(".clineignore: no argument is blocked\n"),
    }
    out
}

/// The JSON `policy check-path` prints: the path as given, where it resolves and really
/// leads, and what decided (the magic-link refusal, the `.clineignore` rule, the boundary).
pub fn check_path_json(workspace: &Workspace, path: &str) -> Value {
    let verdict = workspace.verdict(path);
    let (allowed, reason) = if verdict.refused {
        (
            false,
            "refused: the path goes through a /proc or /dev/fd magic link or a symbolic link loop"
                .to_string(),
        )
    } else if let Some(rule) = &verdict.ignore_rule {
        (
            false,
            format!("blocked by the .clineignore rule '{rule}' (the path as typed, or the file it leads to)"),
        )
    } else if !verdict.inside_workspace {
        (
            false,
            "outside the workspace: needs approval (reads outside are not auto-approved by default)"
                .to_string(),
        )
    } else {
        (true, "inside the workspace and not ignored".to_string())
    };
    json!({
        "path": verdict.path,
        "absolute": verdict.absolute,
        "resolved": verdict.resolved,
        "inside_workspace": verdict.inside_workspace,
        "ignored": verdict.ignored,
        "ignore_rule": verdict.ignore_rule,
        "refused": verdict.refused,
        "allowed": allowed,
        "reason": reason,
    })
}
