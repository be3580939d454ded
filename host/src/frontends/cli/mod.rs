//! The `toolhost` command line.
//!
//! Exit codes: 0 success; 1 the tool call failed (its text is still printed); 2 bad usage
//! (unknown tool, malformed parameters, bad arguments).

mod args;
pub mod bundle;
pub mod egress;
pub mod hooks;
mod host;
pub mod mcp_servers;
pub mod plugin;
mod report;
mod run;
mod sandbox_report;

use std::io::Read;
use std::process::ExitCode;

use clap::Parser;
use serde_json::Value;

use crate::frontends::FrontendError;
use crate::permissions::ApprovalMode;

pub use args::{Cli, Command, PolicyCommand};
pub use report::{check_path_json, render_command_report};

use host::{build_host, policy_workspace, serving_host, PluginSource};
use report::print_line;

/// Parses the arguments and runs the command.
pub fn main() -> ExitCode {
    super::mcp::http::take_env_token();
    crate::command_sandbox::supervisor::run_supervisor_if_asked();
    crate::plugins::worker::serve::run_worker_if_asked();
    let cli = Cli::parse();
    init_logging(cli.verbose, matches!(cli.command, Command::Mcp(_)));
    let code = match run(cli) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("toolhost: {error}");
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
pub fn run(cli: Cli) -> Result<ExitCode, FrontendError> {
    let plugins = match &cli.command {
        Command::Bundle(_)
        | Command::Hooks(_)
        | Command::Egress(_)
        | Command::Plugin(
            plugin::PluginCommand::New(_)
            | plugin::PluginCommand::Check { .. }
            | plugin::PluginCommand::Revoke { .. },
        ) => PluginSource::default(),
        _ => PluginSource::new(
            &cli.plugins,
            cli.bundle.as_deref(),
            cli.trusted_key.as_deref(),
            cli.isolation,
        )?
        .with_tool_set(cli.tools.clone()),
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
        Command::Plugin(command) => plugin::run_command(command, inspecting_host),
        Command::Hooks(command) => hooks::run_command(command, cli.settings.as_deref()),
        Command::Egress(command) => egress::run_command(command, cli.settings.as_deref()),
        Command::Tools { json } => {
            let host = inspecting_host()?;
            report::print_tools(&host, json);
            Ok(ExitCode::SUCCESS)
        }
        Command::McpServers {
            action: Some(action),
            ..
        } => mcp_servers::sign_in(&*inspecting_host()?, action),
        Command::McpServers { json, .. } => {
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
                .map_err(FrontendError::Stdin)?;
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
                return Err(FrontendError::StrictNeedsFormat);
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
        Command::Policy(PolicyCommand::Sandbox {
            workspace,
            section,
            json,
        }) => {
            let settings = crate::settings::Settings::load(cli.settings.as_deref())?;
            let workspace = policy_workspace(&workspace, cli.settings.as_deref())?;
            let report = sandbox_report::report(&workspace, &settings, section.as_deref())?;
            if json {
                print_line(&report.to_string());
            } else {
                print!("{}", crate::command_sandbox::report::render_text(&report));
            }
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
