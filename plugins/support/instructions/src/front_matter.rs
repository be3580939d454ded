//! A Markdown file's YAML front matter (between `---` lines at its start) and its body.

use std::sync::OnceLock;

use regex::Regex;
use yaml_rust2::{Yaml, YamlLoader};

fn pattern() -> Option<&'static Regex> {
    static PATTERN: OnceLock<Option<Regex>> = OnceLock::new();
    PATTERN
        .get_or_init(|| Regex::new(r"^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$").ok())
        .as_ref()
}

/// The parsed front matter (`None` when there is none or it is not valid YAML) and the body.
/// Like Cline's parser it fails open: without valid front matter the body is the whole text.
/// A leading byte order mark is skipped, as Cline's loader does.
pub fn split(text: &str) -> (Option<Yaml>, &str) {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(captures) = pattern().and_then(|p| p.captures(text)) else {
        return (None, text);
    };
    let (Some(yaml), Some(body)) = (captures.get(1), captures.get(2)) else {
        return (None, text);
    };
    match YamlLoader::load_from_str(yaml.as_str()) {
        Ok(mut docs) if !docs.is_empty() => (Some(docs.swap_remove(0)), body.as_str()),
        // An empty front matter block parses to nothing: an empty mapping, as js-yaml's `|| {}`.
        Ok(_) => (Some(Yaml::Hash(Default::default())), body.as_str()),
        Err(_) => (None, text),
    }
}

/// Whether the front matter turns the file off (`disabled: true` or `enabled: false`), as
/// Cline's rule, workflow and skill loaders read it.
pub fn is_disabled(front: Option<&Yaml>) -> bool {
    let Some(front) = front else {
        return false;
    };
    front["disabled"].as_bool() == Some(true) || front["enabled"].as_bool() == Some(false)
}

/// A non-empty string field of the front matter, trimmed.
pub fn string_field(front: Option<&Yaml>, key: &str) -> Option<String> {
    let value = front?[key].as_str()?.trim();
    (!value.is_empty()).then(|| value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_is_split_off() {
        let (front, body) = split("---\nname: a\ndescription: \"b: c\"\n---\n\n# A\n");
        assert_eq!(string_field(front.as_ref(), "name").as_deref(), Some("a"));
        assert_eq!(
            string_field(front.as_ref(), "description").as_deref(),
            Some("b: c")
        );
        assert_eq!(body, "\n# A\n");
    }

    #[test]
    fn invalid_or_missing_front_matter_fails_open() {
        assert_eq!(split("# no front matter"), (None, "# no front matter"));
        let broken = "---\nname: [unclosed\n---\nbody";
        assert_eq!(split(broken), (None, broken));
    }

    #[test]
    fn a_byte_order_mark_does_not_hide_the_front_matter() {
        let (front, body) = split("\u{feff}---\nname: a\n---\nbody");
        assert_eq!(string_field(front.as_ref(), "name").as_deref(), Some("a"));
        assert_eq!(body, "body");
    }

    #[test]
    fn disabled_or_not_enabled_turns_a_file_off() {
        let front = |text: &str| split(text).0;
        assert!(is_disabled(front("---\ndisabled: true\n---\nx").as_ref()));
        assert!(is_disabled(front("---\nenabled: false\n---\nx").as_ref()));
        assert!(!is_disabled(front("---\nenabled: true\n---\nx").as_ref()));
        assert!(!is_disabled(None));
    }
}
