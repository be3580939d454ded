//! Tool sets: which generation of tools a host serves. Plugins say which sets (and presets of
//! a set) they belong to among their capabilities (`toolset:cline-sdk`,
//! `toolset:cline-sdk@act`); the host serves one set, chosen with `--tools NAME[:PRESET]` or
//! `[tools] set`, and registers only the plugins in it (and those that name no set). Two
//! generations may then both have a tool of one name (`apply_patch`) without a conflict. A set
//! chosen without a preset serves the plugins that name the set alone or its `default` preset.
//!
//! An entry may also name the models it is for (Cline's model routing):
//! `toolset:NAME@PRESET?model~gpt,codex|provider~openai-native` is served only when the
//! settings' `model.id` contains `gpt` or `codex`, or `model.provider` contains
//! `openai-native` (case-insensitive); `?!...` only when none does. Without `model.id` no
//! `model~` condition holds.

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
    /// The model the tools are for, which an entry's condition may name.
    pub model: ModelFacts,
}

/// What the settings say of the model the tools are for (`model.id`, `model.provider`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelFacts {
    /// The model's id (`gpt-5-codex`).
    pub id: Option<String>,
    /// The provider's id (`openai-native`).
    pub provider: Option<String>,
}

impl ModelFacts {
    /// Whether an entry's condition holds: `[!]FIELD~TEXT[,TEXT...][|FIELD~...]`, `FIELD`
    /// `model` or `provider`; an alternative holds when the field contains one of the texts.
    /// A condition that does not read so holds for nobody, negated or not: a typo in an entry
    /// leaves its plugin out rather than serving it beside the one it stands in for.
    fn meets(&self, condition: &str) -> bool {
        let (negated, condition) = match condition.strip_prefix('!') {
            Some(rest) => (true, rest),
            None => (false, condition),
        };
        let mut holds = false;
        for alternative in condition.split('|') {
            let Some((field, texts)) = alternative.split_once('~') else {
                return Self::malformed(condition);
            };
            let value = match field.trim() {
                "model" => &self.id,
                "provider" => &self.provider,
                _ => return Self::malformed(condition),
            };
            let texts: Vec<String> = texts
                .split(',')
                .map(|text| text.trim().to_lowercase())
                .collect();
            if texts.iter().any(String::is_empty) {
                return Self::malformed(condition);
            }
            let value = value.as_deref().unwrap_or_default().to_lowercase();
            holds |= !value.is_empty() && texts.iter().any(|text| value.contains(text));
        }
        holds != negated
    }

    /// A condition that does not read: it holds for nobody, with a warning.
    fn malformed(condition: &str) -> bool {
        tracing::warn!(
            "a plugin's tool set condition '{condition}' is not FIELD~TEXT[,TEXT...][|...] with \
             FIELD model or provider: the entry is served to no model"
        );
        false
    }
}

impl Default for ToolSet {
    fn default() -> Self {
        Self {
            name: DEFAULT_SET.to_string(),
            preset: None,
            model: ModelFacts::default(),
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
            model: ModelFacts::default(),
        })
    }

    /// Whether this is a plan preset (Cline's SDK plan mode): its commands modify no file,
    /// which the host's command policy and sandbox services hold them to.
    pub fn is_plan(&self) -> bool {
        self.preset.as_deref() == Some("plan")
    }

    /// Every set at once (`*`): what `toolhost plugin check` loads a library under.
    pub fn every() -> Self {
        Self {
            name: "*".to_string(),
            preset: None,
            model: ModelFacts::default(),
        }
    }

    /// Whether a plugin with `capabilities` is served: it names no set, or this one (in every
    /// preset, or in the chosen one; with no preset chosen, in its `default` preset), for a
    /// model its entry's condition allows.
    pub fn admits(&self, capabilities: &[String]) -> bool {
        let mut sets = capabilities
            .iter()
            .filter_map(|c| c.strip_prefix(TOOLSET_PREFIX))
            .peekable();
        if sets.peek().is_none() || self.name == "*" {
            return true;
        }
        sets.any(|entry| {
            let (entry, condition) = match entry.split_once('?') {
                Some((entry, condition)) => (entry, Some(condition)),
                None => (entry, None),
            };
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
                && condition.is_none_or(|condition| self.model.meets(condition))
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

    #[test]
    fn an_entry_may_be_for_some_models_only() {
        let routed = "?model~codex,gpt|provider~openai-native";
        let patch = caps(&[&format!("toolset:cline-sdk@act{routed}")]);
        let editor = caps(&[&format!("toolset:cline-sdk@act?!{}", &routed[1..])]);
        let act = |id: Option<&str>, provider: Option<&str>| ToolSet {
            model: ModelFacts {
                id: id.map(str::to_string),
                provider: provider.map(str::to_string),
            },
            ..ToolSet::parse("cline-sdk:act").unwrap()
        };
        for (set, served_patch) in [
            (act(None, None), false),
            (act(Some("claude-sonnet-4"), None), false),
            (act(Some("GPT-5"), None), true),
            (act(Some("openai/gpt-5.1-codex"), Some("openrouter")), true),
            (act(Some("o3"), Some("openai-native")), true),
        ] {
            assert_eq!(set.admits(&patch), served_patch, "{:?}", set.model);
            assert_eq!(set.admits(&editor), !served_patch, "{:?}", set.model);
        }
        // Another preset's entry is not served, whatever the model.
        let plan = ToolSet {
            preset: Some("plan".to_string()),
            ..act(Some("gpt-5"), None)
        };
        assert!(!plan.admits(&patch) && !plan.admits(&editor));
        // A condition that does not read holds for nobody, negated or not.
        for malformed in [
            "size~big",
            "!size~big",
            "!",
            "",
            "!model",
            "model~",
            "!model~gpt,",
        ] {
            let entry = caps(&[&format!("toolset:cline-sdk@act?{malformed}")]);
            assert!(!act(Some("gpt-5"), None).admits(&entry), "{malformed:?}");
            assert!(!act(None, None).admits(&entry), "{malformed:?}");
        }
    }
}
