//! `toolhost policy sandbox`: the sandbox of a tool's commands as its settings section
//! makes it (`[execute_command]` unless `--section` names another), for a workspace.

use serde_json::Value;
use tool_api::workspace::Workspace;

use crate::command_sandbox::report;
use crate::command_sandbox::settings::SandboxSettings;
use crate::frontends::error::FrontendError;
use crate::settings::Settings;

/// The report of [`report::report`] for `workspace` under `settings`, for the tool whose
/// settings section is `section` (default: Cline's command tool's); `Err` names the setting
/// that cannot be used.
pub(super) fn report(
    workspace: &Workspace,
    settings: &Settings,
    section: Option<&str>,
) -> Result<Value, FrontendError> {
    let name = section.unwrap_or(crate::known_tools::COMMAND_TOOL);
    let keys = settings
        .lookup(name)
        .cloned()
        .unwrap_or(Value::Object(Default::default()));
    let sandbox = SandboxSettings::from_section(&keys, name)?;
    let context = crate::command_sandbox::Context {
        workspace,
        settings,
        private_dir: None,
        egress: None,
    };
    Ok(report::report(context, &sandbox)?)
}
