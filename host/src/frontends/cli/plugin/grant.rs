//! `toolhost plugin grant NAME` and `revoke NAME`: the user's grant to one build of a plugin
//! (what it declares, [`crate::plugins::grants`]).

use std::io::{BufRead, IsTerminal, Write};
use std::process::ExitCode;

use tool_api::model::access::Access;

use crate::frontends::FrontendError;
use crate::Host;

/// Grants the plugin `name` of `host` what it declares, asking first unless `yes`.
pub fn grant(host: &Host, name: &str, yes: bool) -> Result<ExitCode, FrontendError> {
    let failed = |message: String| FrontendError::PluginGrant(message);
    let registry = host.registry();
    let Some(plugin) = registry.plugins().iter().find(|p| p.name == name) else {
        return Err(FrontendError::NoSuchPlugin(name.to_string()));
    };
    let declared = Access::declared(&plugin.capabilities)
        .map_err(|e| failed(e.to_string()))?
        .ok_or_else(|| {
            failed(format!(
                "plugin \"{name}\" declares no access: grant it in the settings ([plugins.{name}])"
            ))
        })?;
    let question = format!(
        "Grant plugin \"{name}\" {} ({}) what it declares: {declared}? [y/N] ",
        plugin.version,
        plugin.path.display()
    );
    if !yes {
        let stdin = std::io::stdin();
        if !stdin.is_terminal() {
            return Err(failed(format!(
                "{question}\nnobody to ask (no terminal): add --yes to grant it"
            )));
        }
        eprint!("{question}");
        let _ = std::io::stderr().flush();
        let mut answer = String::new();
        let _ = stdin.lock().read_line(&mut answer);
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            println!("Nothing was granted.");
            return Ok(ExitCode::from(1));
        }
    }
    let file = crate::plugins::grants::remember(
        name,
        &plugin.version.to_string(),
        &plugin.path,
        &declared,
    )
    .map_err(failed)?;
    println!(
        "Granted plugin \"{name}\" {} what it declares ({declared}), for this build; kept in {}.",
        plugin.version,
        file.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Takes back the grant of `name`.
pub fn revoke(name: &str) -> Result<ExitCode, FrontendError> {
    let had = crate::plugins::grants::forget(name).map_err(FrontendError::PluginGrant)?;
    if had {
        println!("Revoked the grant of plugin \"{name}\".");
    } else {
        println!("Plugin \"{name}\" had no grant.");
    }
    Ok(ExitCode::SUCCESS)
}
