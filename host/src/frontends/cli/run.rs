//! Running a command's work: one call, a JSON-lines session, a replayed message.

use std::io::{IsTerminal, Read, Write};
use std::path::Path;
use std::process::ExitCode;

use serde_json::Value;

use super::args::{CallArgs, ReplayArgs, ServeArgs};
use super::host::{approval_mode, build_host, build_host_with_ui, serving_host, PluginSource};
use super::report::print_line;
use crate::frontends::FrontendError;
use crate::permissions::ApprovalMode;
use crate::ui::{TerminalUi, Ui};

pub(super) fn call(
    plugins: &PluginSource,
    settings: Option<&Path>,
    args: CallArgs,
) -> Result<ExitCode, FrontendError> {
    let params = match args.params.as_deref() {
        None => "{}".to_string(),
        Some("-") => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(FrontendError::ParamsStdin)?;
            text
        }
        Some(text) => text.to_string(),
    };
    match serde_json::from_str::<Value>(&params) {
        Ok(Value::Object(_)) => {}
        Ok(_) => return Err(FrontendError::ParamsNotObject),
        Err(e) => return Err(FrontendError::ParamsJson(e)),
    }
    let host = build_host(
        plugins,
        settings,
        &args.workspace.roots(),
        approval_mode(args.yes),
    )?;
    let Some(tool) = host.lookup(&args.tool) else {
        return Err(FrontendError::UnknownTool {
            name: args.tool,
            loaded: host.tools().into_iter().map(|(name, _)| name).collect(),
        });
    };
    let outcome = host.call_tool(&tool, &params);
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

pub(super) fn serve(
    plugins: &PluginSource,
    settings: Option<&Path>,
    args: ServeArgs,
) -> Result<ExitCode, FrontendError> {
    let approval = if args.yes {
        ApprovalMode::ApproveAll
    } else if args.ask {
        ApprovalMode::Ask
    } else {
        ApprovalMode::DenyUnlessAuto
    };
    let host = crate::frontends::serve::run(args.ask, |ui| {
        serving_host(
            plugins,
            settings,
            &args.workspace.roots(),
            approval,
            &args.hot_swap,
            ui,
        )
    })?;
    host.registry().shutdown();
    Ok(ExitCode::SUCCESS)
}

pub(super) fn replay(
    plugins: &PluginSource,
    settings: Option<&Path>,
    args: ReplayArgs,
) -> Result<ExitCode, FrontendError> {
    let message = if args.file.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(FrontendError::Stdin)?;
        text
    } else {
        std::fs::read_to_string(&args.file).map_err(|source| FrontendError::Read {
            path: args.file.clone(),
            source,
        })?
    };
    let approval = approval_mode(args.yes);
    let transcript = crate::frontends::replay::Transcript::printing();
    let asker: Option<Box<dyn Ui>> = match approval {
        ApprovalMode::Ask => Some(Box::new(TerminalUi)),
        ApprovalMode::ApproveAll | ApprovalMode::DenyUnlessAuto => None,
    };
    let ui = Box::new(crate::frontends::replay::ReplayUi::new(
        transcript.clone(),
        asker,
    ));
    let host = build_host_with_ui(plugins, settings, &args.workspace.roots(), approval, ui)?;
    crate::frontends::replay::replay(host.clone(), &message, args.chunk, &transcript);
    host.registry().shutdown();
    Ok(ExitCode::SUCCESS)
}
