//! Tool sets: which generation of tools a host serves. Plugins say which sets (and presets of
//! a set) they belong to among their capabilities (`toolset:cline-sdk`,
//! `toolset:cline-sdk@act`); the host serves one set, chosen with `--tools NAME[:PRESET]` or
//! `[tools] set`, and registers only the plugins in it (and those that name no set). Two
//! generations may then both have a tool of one name (`apply_patch`) without a conflict. A set
//! chosen without a preset serves the plugins that name the set alone or its `default` preset.

use std::fmt;

use tool_api::model::TOOLSET_PREFIX;

/// The set served when none is chosen: the tools toolhost has always served.
pub const DEFAULT_SET: &str = "cline-legacy";

/// A chosen set and, optionally, one of its presets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolSet {
    /// The set's name (`cline-sdk`).
    pub name: String,
    /// The preset (`plan`); none: every plugin of the set.
    pub preset: Option<String>,
}

impl Default for ToolSet {
    fn default() -> Self {
        Self {
            name: DEFAULT_SET.to_string(),
            preset: None,
        }
    }
}

impl ToolSet {
    /// `NAME` or `NAME:PRESET`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let (name, preset) = match text.split_once(':') {
            Some((name, preset)) => (name, Some(preset)),
            None => (text, None),
        };
        let valid = |part: &str| {
            !part.is_empty()
                && part
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        };
        if !valid(name) || preset.is_some_and(|p| !valid(p)) {
            return Err(format!(
                "'{text}' is not a tool set: NAME or NAME:PRESET (cline-legacy, cline-sdk, \
                 cline-sdk:plan)"
            ));
        }
        Ok(Self {
            name: name.to_string(),
            preset: preset.map(str::to_string),
        })
    }

    /// Every set at once (`*`): what `toolhost plugin check` loads a library under.
    pub fn every() -> Self {
        Self {
            name: "*".to_string(),
            preset: None,
        }
    }

    /// Whether a plugin with `capabilities` is served: it names no set, or this one (in every
    /// preset, or in the chosen one; with no preset chosen, in its `default` preset).
    pub fn admits(&self, capabilities: &[String]) -> bool {
        let mut sets = capabilities
            .iter()
            .filter_map(|c| c.strip_prefix(TOOLSET_PREFIX))
            .peekable();
        if sets.peek().is_none() || self.name == "*" {
            return true;
        }
        sets.any(|entry| {
            let (name, preset) = match entry.split_once('@') {
                Some((name, preset)) => (name, Some(preset)),
                None => (entry, None),
            };
            name == self.name
                && match (&self.preset, preset) {
                    (_, None) => true,
                    (None, Some(preset)) => preset == "default",
                    (Some(chosen), Some(preset)) => chosen == preset,
                }
        })
    }
}

impl fmt::Display for ToolSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.preset {
            Some(preset) => write!(f, "{}:{preset}", self.name),
            None => f.write_str(&self.name),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn caps(entries: &[&str]) -> Vec<String> {
        entries.iter().map(|e| e.to_string()).collect()
    }

    #[test]
    fn a_plugin_is_served_by_the_sets_and_presets_it_names() {
        let sdk_plan = ToolSet::parse("cline-sdk:plan").unwrap();
        let sdk = ToolSet::parse("cline-sdk").unwrap();
        let legacy = ToolSet::default();
        let editor = caps(&["toolset:cline-sdk@act", "toolset:cline-sdk@default"]);
        let submit = caps(&["toolset:cline-sdk@yolo"]);
        let reader = caps(&["toolset:cline-sdk"]);
        let old = caps(&["partial", "toolset:cline-legacy"]);
        let anyone = caps(&["partial"]);
        assert!(!sdk_plan.admits(&editor));
        assert!(sdk.admits(&editor));
        assert!(!sdk.admits(&submit) && ToolSet::parse("cline-sdk:yolo").unwrap().admits(&submit));
        assert!(sdk_plan.admits(&reader));
        assert!(!sdk.admits(&old) && legacy.admits(&old));
        assert!(!legacy.admits(&reader));
        assert!(sdk_plan.admits(&anyone) && legacy.admits(&anyone));
        assert_eq!(sdk_plan.to_string(), "cline-sdk:plan");
        assert!(ToolSet::parse("cline sdk").is_err());
        assert!(ToolSet::parse("cline-sdk:").is_err());
    }
}
