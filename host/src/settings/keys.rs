//! The keys of the host's own sections (`[auto_approve]`, `[limits]`, `[hooks]`, `[workspace]`,
//! `[egress]`, `[plugins]`
//! and `[plugins.<name>]`, `[agent]`): a misspelled one is named with the known key nearest
//! to it. In the typed sections it is an error, as it always was; in `[agent]`, read by key,
//! a warning. A top-level section whose name is one or two letters off a host section's is
//! warned about too. The other sections are the tools', which check their own keys.

use std::collections::BTreeSet;
use std::sync::{Mutex, PoisonError};

use serde_json::Value;

use super::error::{InvalidSettings, UnknownKey};
use super::plugins::PluginOptions;
use super::sections::{
    AutoApprove, EgressSettings, HookSettings, Limits, ToolsSettings, WorkspaceSettings,
};

/// The keys the host reads from `[agent]`.
const AGENT_KEYS: [&str; 3] = ["mode", "parallel_tool_calling", "yolo"];

/// What one check found: warnings to show (an unknown key is an error instead in the typed
/// sections).
pub(super) fn check(raw: &Value) -> Result<Vec<String>, InvalidSettings> {
    let mut warnings = Vec::new();
    let Some(top) = raw.as_object() else {
        return Ok(warnings);
    };
    let typed = typed_sections();
    let host_sections: Vec<&str> = typed
        .iter()
        .map(|(name, _)| *name)
        .chain(["agent", "plugins"])
        .collect();
    for (name, keys) in &typed {
        if let Some(section) = top.get(*name).and_then(Value::as_object) {
            if let Some(slip) = unknown(section.keys(), keys).into_iter().next() {
                return Err(unknown_in(name, slip));
            }
        }
    }
    if let Some(plugins) = top.get("plugins").and_then(Value::as_object) {
        let keys = plugin_keys();
        let defaults = plugins
            .iter()
            .filter(|(_, v)| !v.is_object())
            .map(|(k, _)| k);
        if let Some(slip) = unknown(defaults, &keys).into_iter().next() {
            return Err(unknown_in("plugins", slip));
        }
        for (plugin, table) in plugins.iter().filter(|(_, v)| v.is_object()) {
            let table = table.as_object().into_iter().flat_map(|t| t.keys());
            if let Some(slip) = unknown(table, &keys).into_iter().next() {
                return Err(unknown_in(&format!("plugins.{plugin}"), slip));
            }
        }
    }
    if let Some(agent) = top.get("agent").and_then(Value::as_object) {
        let keys: Vec<String> = AGENT_KEYS.iter().map(|k| k.to_string()).collect();
        for problem in unknown(agent.keys(), &keys) {
            warnings.push(format!("[agent]: {problem}; it is ignored"));
        }
    }
    for name in top.keys().filter(|k| !host_sections.contains(&k.as_str())) {
        if let Some(near) = nearest(name, host_sections.iter().copied()) {
            warnings.push(format!(
                "[{name}] is not a section toolhost knows (did you mean [{near}]?); the \
                 plugins may read it, the host does not"
            ));
        }
    }
    Ok(warnings)
}

fn unknown_in(section: &str, unknown: UnknownKey) -> InvalidSettings {
    InvalidSettings::UnknownKey {
        section: section.to_string(),
        unknown,
    }
}

/// The typed sections and their keys (the fields of their defaults).
fn typed_sections() -> [(&'static str, Vec<String>); 6] {
    [
        ("egress", fields(&EgressSettings::default())),
        ("auto_approve", fields(&AutoApprove::default())),
        ("limits", fields(&Limits::default())),
        ("hooks", fields(&HookSettings::default())),
        ("workspace", fields(&WorkspaceSettings::default())),
        ("tools", fields(&ToolsSettings::default())),
    ]
}

fn plugin_keys() -> Vec<String> {
    fields(&PluginOptions::default())
}

fn fields(value: &impl serde::Serialize) -> Vec<String> {
    match serde_json::to_value(value) {
        Ok(Value::Object(map)) => map.keys().cloned().collect(),
        _ => Vec::new(),
    }
}

/// The keys of `present` that are not in `known`.
fn unknown<'a>(present: impl Iterator<Item = &'a String>, known: &[String]) -> Vec<UnknownKey> {
    present
        .filter(|key| !known.contains(key))
        .map(|key| UnknownKey {
            key: key.clone(),
            nearest: nearest(key, known.iter().map(String::as_str)).map(str::to_string),
            known: known.to_vec(),
        })
        .collect()
}

/// The candidate nearest to `word` in edit distance, when it is close enough to be a slip:
/// at most a third of its length, and at most 2.
fn nearest<'a>(word: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .map(|c| (distance(word, c), c))
        .filter(|(d, c)| *d > 0 && *d <= 2 && *d * 3 <= c.chars().count().max(3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Levenshtein distance.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous + usize::from(ca != *cb);
            previous = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(previous + 1);
        }
    }
    row[b.len()]
}

/// Logs `message` as a warning, once per process.
pub(super) fn warn_once(message: String) {
    static SHOWN: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
    let fresh = SHOWN
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(message.clone());
    if fresh {
        tracing::warn!(target: "toolhost::settings", "{message}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The check's warnings, or its error as the user reads it.
    fn check(raw: &Value) -> Result<Vec<String>, String> {
        super::check(raw).map_err(|e| e.to_string())
    }

    #[test]
    fn slips_are_named_with_the_nearest_key() {
        assert_eq!(
            check(&json!({"auto_approve": {"edit_file": true}})),
            Err("[auto_approve]: unknown key `edit_file` (did you mean `edit_files`?)".into())
        );
        assert_eq!(
            check(&json!({"plugins": {"memroy_mb": 5}})),
            Err("[plugins]: unknown key `memroy_mb` (did you mean `memory_mb`?)".into())
        );
        assert_eq!(
            check(&json!({"plugins": {"read_file": {"netwrk": true}}})),
            Err("[plugins.read_file]: unknown key `netwrk` (did you mean `network`?)".into())
        );
        assert_eq!(
            check(&json!({"agent": {"paralel_tool_calling": false, "mode": "plan"}})),
            Ok(vec![
                "[agent]: unknown key `paralel_tool_calling` (did you mean \
                 `parallel_tool_calling`?); it is ignored"
                    .to_string()
            ])
        );
        assert_eq!(
            check(&json!({"auto_aprove": {}, "limits": {}})),
            Ok(vec![
                "[auto_aprove] is not a section toolhost knows (did you mean [auto_approve]?); \
                 the plugins may read it, the host does not"
                    .to_string()
            ])
        );
    }

    #[test]
    fn the_tools_sections_are_theirs() {
        let settings = json!({
            "web": {"anything": 1}, "mcp": {"settings_file": "x"}, "model": {"id": "m"},
            "browser": {}, "skills": {}, "llm": {}, "subagents": {}, "search_files": {},
            "focus_chain": {}, "http_tools": {}, "report_bug": {}, "execute_command": {},
        });
        assert_eq!(check(&settings), Ok(Vec::new()));
        assert_eq!(
            check(&json!({"agent": {"zzz": 1}})),
            Ok(vec![
                "[agent]: unknown key `zzz` (the keys are: mode, parallel_tool_calling, yolo); \
                 it is ignored"
                    .to_string()
            ])
        );
    }
}
