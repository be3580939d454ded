//! Skills on disk: discovery, front matter, and the instructions of one skill.
//!
//! A skill is a directory holding `SKILL.md`, whose YAML front matter gives a string `name`
//! (equal to the directory's name) and a string `description`; the rest of the file is the
//! instructions.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use regex::Regex;
use yaml_rust2::{Yaml, YamlLoader};

/// A discovered skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// Its name (= its directory's name).
    pub name: String,
    /// Its `SKILL.md`.
    pub path: PathBuf,
}

/// The project skill directories under `cwd`, in Cline's scan order.
pub fn project_dirs(cwd: &Path) -> Vec<PathBuf> {
    [
        ".clinerules/skills",
        ".cline/skills",
        ".claude/skills",
        ".agents/skills",
    ]
    .into_iter()
    .map(|dir| cwd.join(dir))
    .collect()
}

/// The global skill directories under `home`, in Cline's scan order.
pub fn global_dirs(home: &Path) -> Vec<PathBuf> {
    [".cline/skills", ".agents/skills"]
        .into_iter()
        .map(|dir| home.join(dir))
        .collect()
}

/// Every skill in `dirs`, in scan order; directories that do not exist or cannot be read
/// contribute nothing. Entries are taken in name order, for a stable result (Cline takes the
/// file system's order).
pub fn discover(dirs: &[PathBuf]) -> Vec<Skill> {
    let mut skills = Vec::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut names: Vec<String> = entries
            .filter_map(Result::ok)
            .filter(|e| e.path().is_dir())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        for name in names {
            let path = dir.join(&name).join("SKILL.md");
            if let Some(skill) = load_metadata(&path, &name) {
                skills.push(skill);
            }
        }
    }
    skills
}

/// One skill per name, the last one found winning (global over project, later directories over
/// earlier ones), in the order of the winners' positions, as Cline resolves them.
pub fn resolve(skills: Vec<Skill>) -> Vec<Skill> {
    let mut seen = std::collections::HashSet::new();
    let mut kept: Vec<Skill> = skills
        .into_iter()
        .rev()
        .filter(|s| seen.insert(s.name.clone()))
        .collect();
    kept.reverse();
    kept
}

fn load_metadata(path: &Path, dir_name: &str) -> Option<Skill> {
    let text = std::fs::read_to_string(path).ok()?;
    let (front, _) = split_front_matter(&text);
    let data = front.as_ref()?;
    let name = data["name"].as_str()?;
    data["description"].as_str().filter(|d| !d.is_empty())?;
    (!name.is_empty() && name == dir_name).then(|| Skill {
        name: name.to_string(),
        path: path.to_path_buf(),
    })
}

/// The instructions of a skill: its `SKILL.md` without the front matter, trimmed.
pub fn instructions(skill: &Skill) -> std::io::Result<String> {
    let text = std::fs::read_to_string(&skill.path)?;
    Ok(split_front_matter(&text).1.trim().to_string())
}

fn front_matter_pattern() -> Option<&'static Regex> {
    static PATTERN: OnceLock<Option<Regex>> = OnceLock::new();
    PATTERN
        .get_or_init(|| Regex::new(r"^---\r?\n([\s\S]*?)\r?\n---\r?\n?([\s\S]*)$").ok())
        .as_ref()
}

/// The parsed front matter (`None` when there is none or it is not valid YAML) and the body.
/// Like Cline's parser it fails open: without valid front matter the body is the whole text.
pub fn split_front_matter(text: &str) -> (Option<Yaml>, &str) {
    let Some(captures) = front_matter_pattern().and_then(|p| p.captures(text)) else {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_is_split_off() {
        let (front, body) = split_front_matter("---\nname: a\ndescription: \"b: c\"\n---\n\n# A\n");
        let field = |key: &str| {
            front
                .as_ref()
                .and_then(|f| f[key].as_str().map(str::to_string))
        };
        assert_eq!(field("name").as_deref(), Some("a"));
        assert_eq!(field("description").as_deref(), Some("b: c"));
        assert_eq!(body, "\n# A\n");
    }

    #[test]
    fn invalid_or_missing_front_matter_fails_open() {
        assert_eq!(
            split_front_matter("# no front matter"),
            (None, "# no front matter")
        );
        let broken = "---\nname: [unclosed\n---\nbody";
        assert_eq!(split_front_matter(broken), (None, broken));
    }

    #[test]
    fn later_skills_win_and_keep_their_position() {
        let skill = |name: &str, path: &str| Skill {
            name: name.into(),
            path: path.into(),
        };
        let resolved = resolve(vec![
            skill("a", "p/a"),
            skill("b", "p/b"),
            skill("a", "g/a"),
        ]);
        assert_eq!(resolved, vec![skill("b", "p/b"), skill("a", "g/a")]);
    }
}
