//! Skills on disk: discovery, front matter, the instructions of one skill, and the skills a
//! workspace has under the settings ([`available`]). Used by use_skill and by Cline's SDK
//! `skills` tool.
//!
//! A skill is a directory holding `SKILL.md`, whose YAML front matter gives a string `name`
//! (equal to the directory's name) and a string `description`; the rest of the file is the
//! instructions.

use std::path::{Path, PathBuf};

use crate::front_matter;

/// A discovered skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// Its name (= its directory's name).
    pub name: String,
    /// What it is for (its front matter's `description`).
    pub description: String,
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
    let (front, _) = front_matter::split(&text);
    let data = front.as_ref()?;
    let name = data["name"].as_str()?;
    let description = data["description"].as_str().filter(|d| !d.is_empty())?;
    (!name.is_empty() && name == dir_name).then(|| Skill {
        name: name.to_string(),
        description: description.to_string(),
        path: path.to_path_buf(),
    })
}

/// The instructions of a skill: its `SKILL.md` without the front matter, trimmed.
pub fn instructions(skill: &Skill) -> std::io::Result<String> {
    let text = std::fs::read_to_string(&skill.path)?;
    Ok(front_matter::split(&text).1.trim().to_string())
}

/// The skills the model may load: discovered, resolved by name, minus the disabled ones.
/// `setting` reads the settings (a call's, or those an MCP client's request came with).
pub fn available(
    cwd: &Path,
    setting: impl Fn(&str) -> Option<serde_json::Value>,
) -> Result<Vec<Skill>, String> {
    // `~` and `${env:NAME}` expanded as in every path setting.
    let configured = setting("skills.global_dirs");
    let global = tool_api::sdk::paths::setting_paths("skills.global_dirs", configured.as_ref())?
        .unwrap_or_else(|| {
            // Cline uses the home directory (Node's `os.homedir()`, which is $HOME on Unix).
            std::env::var_os("HOME")
                .map(|home| global_dirs(Path::new(&home)))
                .unwrap_or_default()
        });
    let mut dirs = project_dirs(cwd);
    dirs.extend(global);
    let disabled: Vec<String> = setting("skills.disabled")
        .and_then(|value| serde_json::from_value(value).ok())
        .unwrap_or_default();
    Ok(resolve(discover(&dirs))
        .into_iter()
        .filter(|s| {
            !disabled
                .iter()
                .any(|d| *d == s.name || Path::new(d) == s.path)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_skills_win_and_keep_their_position() {
        let skill = |name: &str, path: &str| Skill {
            name: name.into(),
            description: String::new(),
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
