//! The environment a sandboxed command gets: the host's without the variables whose names
//! look like secrets (`secret_env.txt`: `*_TOKEN`, `*_KEY`, `*SECRET*`, `*PASSWORD*`, cloud
//! credentials, toolhost's own), except those `env_keep` names. The supervisor removes them
//! (the patterns travel in the policy); this module says which, and why.

use serde::Serialize;
use toolhost_sandbox::wildcard_match;

use super::table;

/// The patterns, kept as data: `pattern | category | what they are`.
const TABLE: &str = include_str!("secret_env.txt");

/// The category of toolhost's own variables, which `env_keep` cannot keep.
const OWN_CATEGORY: &str = "toolhost";

/// A pattern of variable names removed from commands' environments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SecretPattern {
    /// The pattern (`*_TOKEN`); case does not matter.
    pub pattern: &'static str,
    /// What kind (`token`, `cloud`, `toolhost`, ...).
    pub category: &'static str,
    /// What the variables are.
    pub what: &'static str,
}

/// The patterns, in the table's order.
pub fn patterns() -> Vec<SecretPattern> {
    table::rows(TABLE)
        .map(|row| {
            let [pattern, category, what] = table::three(&row);
            SecretPattern {
                pattern,
                category,
                what,
            }
        })
        .collect()
}

/// What happens to one variable of a sandboxed command's environment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum Verdict {
    /// The command gets it.
    Passes,
    /// Removed: the first pattern that matches its name.
    Removed {
        /// The pattern.
        pattern: &'static str,
    },
    /// A pattern matches it, and `env_keep` keeps it.
    Kept {
        /// The pattern.
        pattern: &'static str,
    },
}

/// What happens to the variable `name` with `env_keep`.
pub fn verdict(name: &str, env_keep: &[String]) -> Verdict {
    let Some(found) = patterns()
        .into_iter()
        .find(|p| wildcard_match(p.pattern, name, true))
    else {
        return Verdict::Passes;
    };
    if found.category != OWN_CATEGORY && env_keep.iter().any(|kept| kept == name) {
        Verdict::Kept {
            pattern: found.pattern,
        }
    } else {
        Verdict::Removed {
            pattern: found.pattern,
        }
    }
}

/// The pattern of toolhost's own variables that `name` matches, if it does.
pub(super) fn own_pattern(name: &str) -> Option<&'static str> {
    patterns()
        .into_iter()
        .find(|p| p.category == OWN_CATEGORY && wildcard_match(p.pattern, name, true))
        .map(|p| p.pattern)
}

/// Every pattern, as the policy's `env_remove` of a sandboxed command.
pub(super) fn removed_patterns() -> Vec<String> {
    patterns().iter().map(|p| p.pattern.to_string()).collect()
}

/// The patterns of toolhost's own variables, which even an escalated run loses.
pub(super) fn own_patterns() -> Vec<String> {
    patterns()
        .iter()
        .filter(|p| p.category == OWN_CATEGORY)
        .map(|p| p.pattern.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_looking_names_are_removed_unless_kept() {
        let keep = ["GITHUB_TOKEN".to_string(), "TOOLHOST_MCP_TOKEN".to_string()];
        let verdicts: Vec<(&str, Verdict)> = [
            "PATH",
            "HOME",
            "OPENAI_API_KEY",
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_SESSION_TOKEN",
            "AZURE_CLIENT_SECRET",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "PGPASSWORD",
            "npm_config__auth",
            "GITHUB_TOKEN",
            "TOOLHOST_MCP_TOKEN",
            "SSH_AUTH_SOCK",
            "KEYBOARD_LAYOUT",
        ]
        .into_iter()
        .map(|name| (name, verdict(name, &keep)))
        .collect();
        let removed = |pattern| Verdict::Removed { pattern };
        assert_eq!(
            verdicts,
            [
                ("PATH", Verdict::Passes),
                ("HOME", Verdict::Passes),
                ("OPENAI_API_KEY", removed("*_KEY")),
                ("AWS_ACCESS_KEY_ID", removed("*_KEY_ID")),
                ("AWS_SECRET_ACCESS_KEY", removed("*_KEY")),
                ("AWS_SESSION_TOKEN", removed("*_TOKEN")),
                ("AZURE_CLIENT_SECRET", removed("*SECRET*")),
                ("GOOGLE_APPLICATION_CREDENTIALS", removed("*CREDENTIAL*")),
                ("PGPASSWORD", removed("*PASSWORD*")),
                ("npm_config__auth", removed("*_AUTH")),
                ("GITHUB_TOKEN", Verdict::Kept { pattern: "*_TOKEN" }),
                ("TOOLHOST_MCP_TOKEN", removed("TOOLHOST_*")),
                ("SSH_AUTH_SOCK", Verdict::Passes),
                ("KEYBOARD_LAYOUT", Verdict::Passes),
            ]
        );
        assert_eq!(own_pattern("toolhost_settings"), Some("TOOLHOST_*"));
        assert_eq!(own_pattern("GITHUB_TOKEN"), None);
        assert_eq!(own_patterns(), ["TOOLHOST_*"]);
    }
}
