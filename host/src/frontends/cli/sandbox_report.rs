//! `toolhost policy sandbox`: the sandbox of execute_command's commands as its settings
//! section (`[execute_command]`) makes it, for a workspace.

use serde_json::Value;
use tool_api::workspace::Workspace;

use crate::command_sandbox::report;
use crate::command_sandbox::settings::SandboxSettings;
use crate::settings::Settings;

/// The settings section whose sandbox keys execute_command sends with each command.
const SECTION: &str = "execute_command";

/// The report of [`report::report`] for `workspace` under `settings`; `Err` names the setting
/// that cannot be used.
pub(super) fn report(workspace: &Workspace, settings: &Settings) -> Result<Value, String> {
    let section = settings
        .lookup(SECTION)
        .cloned()
        .unwrap_or(Value::Object(Default::default()));
    let sandbox = SandboxSettings::from_section(&section, SECTION).map_err(|e| e.to_string())?;
    let context = crate::command_sandbox::Context {
        workspace,
        settings,
        private_dir: None,
    };
    report::report(context, &sandbox).map_err(|e| e.to_string())
}
