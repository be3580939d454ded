//! Where Cline's rules and workflows are, and what each file says of itself.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use instruction_files::{front_matter, home, offerable, InstructionFile, Origin};
use serde_json::{json, Value};
use tool_api::sdk::prelude::*;

/// The file name Cline names after its place rather than its stem.
const AGENTS_FILE: &str = "AGENTS.md";

/// A workflow: its file, offered as a prompt.
#[derive(Debug)]
pub struct Workflow {
    /// The file (its name is the prompt's).
    pub file: InstructionFile,
}

impl Workflow {
    /// Its entry in `prompts/list`.
    pub fn listing(&self) -> Value {
        let mut entry = json!({"name": self.file.name, "arguments": [{
            "name": "input",
            "description": "What to apply the workflow to (the text after its slash command)",
            "required": false
        }]});
        if let Some(description) = &self.file.description {
            entry["description"] = json!(description);
        }
        entry
    }

    /// The prompt: the message Cline sends for the workflow's slash command, the workflow's
    /// instructions in an `explicit_instructions` block named after its file, then `input`.
    pub fn prompt(&self, request: &OfferRequest, input: &str) -> Result<Value, ToolError> {
        let text = self.file.read(request)?;
        let body = front_matter::split(&text).1.trim();
        let file_name = self
            .file
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let message = format!(
            "<explicit_instructions type=\"{file_name}\">\n{body}\n</explicit_instructions>\n{input}"
        );
        let mut answer = json!({"messages": [
            {"role": "user", "content": {"type": "text", "text": message}}
        ]});
        if let Some(description) = &self.file.description {
            answer["description"] = json!(description);
        }
        Ok(answer)
    }
}

/// The rules of `request`'s workspace and of the user, in Cline's search order.
pub fn rules(request: &OfferRequest) -> Vec<InstructionFile> {
    let cwd = Path::new(&request.workspace.cwd);
    let mut places = vec![
        (cwd.join(AGENTS_FILE), Origin::Workspace),
        (cwd.join(".clinerules"), Origin::Workspace),
        (cwd.join(".cline/rules"), Origin::Workspace),
    ];
    if let Some(home) = home() {
        places.extend([
            (home.join(".agents").join(AGENTS_FILE), Origin::User),
            (home.join(".cline/rules"), Origin::User),
            (home.join("Documents/Cline/Rules"), Origin::User),
        ]);
    }
    let mut seen = HashSet::new();
    let candidates = places
        .iter()
        .flat_map(|(place, origin)| {
            rule_files(place)
                .into_iter()
                .map(move |path| candidate(path, *origin))
        })
        .filter(|file| seen.insert(file.path.clone()))
        .collect();
    described(request, candidates, |file| {
        let agents = file.path.file_name().is_some_and(|n| n == AGENTS_FILE);
        match (agents, file.path.parent() == Some(cwd), file.origin) {
            (true, true, _) => Some("Workspace AGENTS.md".to_string()),
            (true, false, Origin::User) => Some("Global AGENTS.md".to_string()),
            _ => None,
        }
    })
}

/// The workflows of `request`'s workspace and of the user, one per name (the first found).
pub fn workflows(request: &OfferRequest) -> Vec<Workflow> {
    let cwd = Path::new(&request.workspace.cwd);
    let mut places = vec![(cwd.join(".clinerules/workflows"), Origin::Workspace)];
    if let Some(home) = home() {
        places.extend([
            (home.join("Documents/Cline/Workflows"), Origin::User),
            (home.join(".cline/workflows"), Origin::User),
        ]);
    }
    places.push((cwd.join(".cline/workflows"), Origin::Workspace));
    let candidates = places
        .iter()
        .flat_map(|(place, origin)| {
            markdown_files(place)
                .into_iter()
                .map(move |path| candidate(path, *origin))
        })
        .collect();
    let mut names = HashSet::new();
    described(request, candidates, |_| None)
        .into_iter()
        .filter(|file| names.insert(file.name.to_lowercase()))
        .map(|file| Workflow { file })
        .collect()
}

/// A file found at `path`, named after its stem until its front matter is read.
fn candidate(path: PathBuf, origin: Origin) -> InstructionFile {
    let name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    InstructionFile {
        name,
        description: None,
        path,
        origin,
    }
}

/// The offerable `candidates`, read (through the confined access) for their front matter:
/// named by it, by `place_name`, or by their stem; without the disabled and the empty ones.
fn described(
    request: &OfferRequest,
    candidates: Vec<InstructionFile>,
    place_name: impl Fn(&InstructionFile) -> Option<String>,
) -> Vec<InstructionFile> {
    offerable(request, candidates)
        .into_iter()
        .filter_map(|mut file| {
            let text = file.read(request).ok()?;
            let (front, body) = front_matter::split(&text);
            if front_matter::is_disabled(front.as_ref()) || body.trim().is_empty() {
                return None;
            }
            if let Some(name) =
                front_matter::string_field(front.as_ref(), "name").or_else(|| place_name(&file))
            {
                file.name = name;
            }
            file.description = front_matter::string_field(front.as_ref(), "description");
            Some(file)
        })
        .collect()
}

/// The rule files of a place: the file itself, or a directory's Markdown files and its
/// `AGENTS.md`.
fn rule_files(place: &Path) -> Vec<PathBuf> {
    if place.is_file() {
        return vec![place.to_path_buf()];
    }
    let mut files = markdown_files(place);
    let agents = place.join(AGENTS_FILE);
    if agents.is_file() && !files.contains(&agents) {
        files.push(agents);
    }
    files
}

/// A directory's regular Markdown files (`.md`, `.markdown`, `.txt`), by name; none when it
/// does not exist or cannot be read.
fn markdown_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|path| {
            path.extension().is_some_and(|ext| {
                ["md", "markdown", "txt"]
                    .iter()
                    .any(|known| ext.eq_ignore_ascii_case(known))
            })
        })
        .collect();
    files.sort();
    files
}
