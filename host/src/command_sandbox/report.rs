//! What `toolhost policy sandbox` shows: the profile of a tool's sandboxed commands, the
//! deny-read list and what of it exists here, what commands may read, and what happens to
//! each variable of this environment (names only, never values).

use std::path::PathBuf;

use serde_json::{json, Value};
use toolhost_sandbox::FilesystemMode;

use super::deny_read::{self, covers};
use super::env_scrub;
use super::error::PolicyError;
use super::own_files::own_files;
use super::policy::{default_cache_roots, private_tmp_dirs, Context};
use super::read_profile::{self, ReadProfile};
use super::settings::{Network, SandboxSettings};

/// The report as JSON: `section`, `sandbox`, `network`, `egress` (with `network = "proxy"`:
/// the `[egress]` rules in the order they apply, whether the rest is asked, where answers
/// and logs are kept), `read`, `applies` (whether any of it
/// applies: not with `sandbox = "off"`), `deny_read` (each entry's `path`, `category`, `what`,
/// `hidden` and `allowed` paths found here), `allow_read` (each glob and the entries it lets
/// through), `own_files` (toolhost's own files, hidden too), `readable` (with
/// `read = "workspace"`: what commands may read, and why), `env_patterns`, `env_keep` and
/// `env` (each variable's name and verdict).
pub fn report(context: Context<'_>, settings: &SandboxSettings) -> Result<Value, PolicyError> {
    let entries = deny_read::entries(settings)?;
    let allow_read: Vec<Value> = settings
        .allow_read
        .iter()
        .map(|glob| {
            let expanded = tool_api::sdk::paths::expand(glob).unwrap_or_default();
            let lets: Vec<&str> = entries
                .iter()
                .filter(|e| {
                    tool_api::sdk::paths::expand(&e.path).is_ok_and(|p| covers(&expanded, &p))
                        || e.allowed.iter().any(|p| covers(&expanded, p))
                })
                .map(|e| e.path.as_str())
                .collect();
            json!({"glob": glob, "lets_through": lets})
        })
        .collect();
    let readable = (settings.read == ReadProfile::Workspace).then(|| {
        let mut readable: Vec<Value> = context
            .workspace
            .roots()
            .into_iter()
            .map(|r| json!({"path": r.path, "why": "the workspace"}))
            .collect();
        let mut add = |paths: Vec<PathBuf>, why: &str| {
            readable.extend(
                paths
                    .into_iter()
                    .filter(|p| p.exists())
                    .map(|p| json!({"path": p, "why": why})),
            );
        };
        let writable: Vec<PathBuf> = settings
            .writable_roots
            .iter()
            .filter_map(|p| tool_api::sdk::paths::expand(p).ok())
            .collect();
        add(writable, "writable_roots");
        add(default_cache_roots(), "a package cache");
        add(private_tmp_dirs(), "the command's own temporary directory");
        for (path, why) in read_profile::system_and_toolchains() {
            readable.push(json!({"path": path, "why": why}));
        }
        readable
    });
    let mut names: Vec<String> = std::env::vars_os()
        .map(|(name, _)| name.to_string_lossy().into_owned())
        .collect();
    names.sort();
    let env: Vec<Value> = names
        .iter()
        .map(|name| {
            let mut value = serde_json::to_value(env_scrub::verdict(name, &settings.env_keep))
                .unwrap_or(Value::Null);
            value["name"] = json!(name);
            value
        })
        .collect();
    let egress = match settings.network {
        Network::Proxy => {
            let policy = crate::egress::Policy::from_settings(&context.settings.egress)?;
            let rules: Vec<Value> = policy
                .listed()
                .into_iter()
                .map(|(rule, from)| json!({"rule": rule, "from": from}))
                .collect();
            json!({"rules": rules, "asks": policy.asks(), "allowed_file": policy.allowed_file,
                   "log_dir": policy.log_dir})
        }
        Network::Off | Network::Direct => Value::Null,
    };
    Ok(json!({
        "section": settings.section,
        "sandbox": settings.sandbox.as_str(),
        "network": settings.network.as_str(),
        "egress": egress,
        "read": settings.read.as_str(),
        "applies": settings.sandbox != FilesystemMode::Off,
        "deny_read": entries,
        "allow_read": allow_read,
        "own_files": own_files(context.settings, context.private_dir),
        "readable": readable,
        "env_patterns": env_scrub::patterns(),
        "env_keep": settings.env_keep,
        "env": env,
    }))
}

/// The report as text for a terminal.
pub fn render_text(report: &Value) -> String {
    let mut out = String::new();
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let section = text(&report["section"]);
    out.push_str(&format!(
        "[{section}] sandbox = {}, network = {}, read = {}\n",
        text(&report["sandbox"]),
        text(&report["network"]),
        text(&report["read"])
    ));
    if let Some(rules) = report["egress"]["rules"].as_array() {
        out.push_str("\nConnections (network = \"proxy\": through the egress proxy, [egress]; first match wins):\n");
        for rule in rules {
            out.push_str(&format!(
                "  {:<40} {}\n",
                text(&rule["rule"]),
                text(&rule["from"])
            ));
        }
        out.push_str(if report["egress"]["asks"] == json!(true) {
            "  anything else: asked (denied with nobody to ask); internal addresses only by an exact address rule\n"
        } else {
            "  anything else: denied (egress.ask = false); internal addresses only by an exact address rule\n"
        });
    }
    if report["applies"] == json!(false) {
        out.push_str(
            "The sandbox is off: commands read every file and get the whole environment; \
             nothing below applies.\n",
        );
    }
    out.push_str("\nHidden from commands (deny_read; * exists here and is hidden, + allow_read lets it through):\n");
    for entry in report["deny_read"].as_array().into_iter().flatten() {
        let hidden = entry["hidden"].as_array().map_or(0, Vec::len);
        let allowed = entry["allowed"].as_array().map_or(0, Vec::len);
        let mark = match (hidden, allowed) {
            (0, 0) => ' ',
            (0, _) => '+',
            _ => '*',
        };
        out.push_str(&format!(
            "  {mark} {:<44} {:<10} {}\n",
            text(&entry["path"]),
            text(&entry["category"]),
            text(&entry["what"])
        ));
    }
    for allow in report["allow_read"].as_array().into_iter().flatten() {
        let lets: Vec<String> = allow["lets_through"]
            .as_array()
            .into_iter()
            .flatten()
            .map(text)
            .collect();
        let lets = if lets.is_empty() {
            "no entry of the list (a path below a hidden directory cannot be let through alone)"
                .to_string()
        } else {
            lets.join(", ")
        };
        out.push_str(&format!("  allow_read {}: {lets}\n", text(&allow["glob"])));
    }
    let own: Vec<String> = report["own_files"]
        .as_array()
        .into_iter()
        .flatten()
        .map(text)
        .collect();
    if !own.is_empty() {
        out.push_str(&format!("  toolhost's own files: {}\n", own.join(", ")));
    }
    match report["readable"].as_array() {
        None => out.push_str(
            "\nReadable: everything the user can read but the above and what .clineignore \
             blocks (read = \"all\").\n",
        ),
        Some(readable) => {
            out.push_str("\nReadable (read = \"workspace\"), without what is hidden:\n");
            for place in readable {
                out.push_str(&format!(
                    "    {:<46} {}\n",
                    text(&place["path"]),
                    text(&place["why"])
                ));
            }
        }
    }
    out.push_str("\nEnvironment (names only):\n");
    for var in report["env"].as_array().into_iter().flatten() {
        let name = text(&var["name"]);
        let pattern = text(&var["pattern"]);
        let line = match var["verdict"].as_str() {
            Some("removed") => format!("  removed  {name} ({pattern})"),
            Some("kept") => format!("  kept     {name} ({pattern}, kept by {section}.env_keep)"),
            _ => format!("  passes   {name}"),
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command_sandbox::env_scrub::Verdict;

    #[test]
    fn verdicts_serialize_with_their_pattern() {
        let value = serde_json::to_value(Verdict::Removed { pattern: "*_KEY" }).ok();
        assert_eq!(
            value,
            Some(json!({"verdict": "removed", "pattern": "*_KEY"}))
        );
        let text = render_text(&json!({
            "section": "execute_command", "sandbox": "workspace-write", "network": "proxy",
            "egress": {"rules": [{"rule": "allow crates.io", "from": "the package registries"}],
                       "asks": true},
            "read": "all", "applies": true,
            "deny_read": [{"path": "~/.ssh", "category": "ssh", "what": "keys",
                           "hidden": ["/h/.ssh"], "allowed": []}],
            "allow_read": [], "own_files": [], "readable": null,
            "env": [{"name": "GH_TOKEN", "verdict": "kept", "pattern": "*_TOKEN"},
                    {"name": "PATH", "verdict": "passes"}],
        }));
        assert!(text.contains("  * ~/.ssh "), "{text}");
        assert!(
            text.contains("  kept     GH_TOKEN (*_TOKEN, kept by execute_command.env_keep)"),
            "{text}"
        );
        assert!(text.contains("  passes   PATH\n"), "{text}");
        assert!(text.contains("network = proxy"), "{text}");
        assert!(text.contains("  allow crates.io "), "{text}");
        assert!(text.contains("anything else: asked"), "{text}");
    }
}
