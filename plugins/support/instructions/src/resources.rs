//! Instruction files offered to MCP clients as resources.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use tool_api::abi::{ToolError, ToolErrorKind};
use tool_api::model::OfferRequest;
use tool_api::workspace::Workspace;

/// The largest instruction file served (Cline reads them whole into the prompt).
const MAX_BYTES: u64 = 1 << 20;

/// Where an instruction file was found, which decides how far it is trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Under a workspace root: offered only when it really is inside the workspace (no
    /// symbolic link out of it) and `.clineignore` does not block it.
    Workspace,
    /// Under the user's own directories (`~/.cline`, `~/Documents/Cline`).
    User,
}

/// One instruction file (a skill's `SKILL.md`, a rule, a workflow) as an MCP resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstructionFile {
    /// Its name, as Cline shows it.
    pub name: String,
    /// What it is for, when its front matter says.
    pub description: Option<String>,
    /// The file.
    pub path: PathBuf,
    /// Where it was found.
    pub origin: Origin,
}

impl InstructionFile {
    /// Its URI: the file's `file://` URL.
    pub fn uri(&self) -> String {
        url::Url::from_file_path(&self.path)
            .map(String::from)
            .unwrap_or_else(|()| format!("file://{}", self.path.display()))
    }

    /// Its entry in `resources/list`.
    fn listing(&self) -> Value {
        let mut entry = json!({"uri": self.uri(), "name": self.name, "mimeType": "text/markdown"});
        if let Some(description) = &self.description {
            entry["description"] = json!(description);
        }
        entry
    }

    /// Whether it may be offered: a workspace file must lead inside the workspace and not be
    /// blocked by `.clineignore`.
    fn offerable(&self, workspace: &Workspace) -> bool {
        let verdict = workspace.verdict(&self.path.to_string_lossy());
        match self.origin {
            Origin::Workspace => verdict.inside_workspace && !verdict.ignored && !verdict.refused,
            Origin::User => !verdict.refused,
        }
    }

    /// Its text, opened through the workspace's confined access (a file swapped for a link
    /// out of the workspace since it was listed is refused, not followed).
    pub fn read(&self, request: &OfferRequest) -> Result<String, ToolError> {
        let workspace = Workspace::from_context(&request.workspace);
        let mut verdict = workspace.verdict(&self.path.to_string_lossy());
        if self.origin == Origin::Workspace && !verdict.inside_workspace {
            return Err(unreadable(&self.path, "it leads out of the workspace"));
        }
        if self.origin == Origin::User {
            // Outside the workspace on purpose: opened where it is, not refused for that.
            verdict.inside_workspace = false;
        }
        let bytes = workspace
            .open_file(&verdict)
            .and_then(|mut file| file.read_all(MAX_BYTES))
            .map_err(|e| unreadable(&self.path, &e.to_string()))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}

fn unreadable(path: &Path, why: &str) -> ToolError {
    ToolError::new(
        ToolErrorKind::FAILED,
        format!("cannot read {}: {why}", path.display()),
    )
}

/// The files of `found` that may be offered for `request`'s workspace.
pub fn offerable(request: &OfferRequest, found: Vec<InstructionFile>) -> Vec<InstructionFile> {
    let workspace = Workspace::from_context(&request.workspace);
    found
        .into_iter()
        .filter(|file| file.offerable(&workspace))
        .collect()
}

/// The answer to the resources handler extension `method` for `request` over the files
/// `found` finds (listed when [`offerable`], read only when listed, no templates,
/// subscriptions accepted for listed files); `None` for a method that is not about resources.
pub fn answer_resources(
    method: &str,
    request: &OfferRequest,
    found: impl Fn(&OfferRequest) -> Vec<InstructionFile>,
) -> Option<Result<Value, ToolError>> {
    let listed = || offerable(request, found(request));
    let find = |uri: &str| {
        listed()
            .into_iter()
            .find(|file| file.uri() == uri)
            .ok_or_else(|| {
                ToolError::new(
                    ToolErrorKind::INVALID_PARAMS,
                    format!("Resource not found: {uri}"),
                )
            })
    };
    let uri = request.param("uri").unwrap_or_default();
    Some(match method {
        "resources_list" => Ok(json!({
            "resources": listed().iter().map(InstructionFile::listing).collect::<Vec<_>>()
        })),
        "resource_templates_list" => Ok(json!({"resourceTemplates": []})),
        "resources_read" => find(uri).and_then(|file| {
            let text = file.read(request)?;
            Ok(json!({"contents": [{"uri": uri, "mimeType": "text/markdown", "text": text}]}))
        }),
        "resources_subscribe" | "resources_unsubscribe" => find(uri).map(|_| json!({})),
        _ => return None,
    })
}

/// The user's home directory (`$HOME`, as Cline's Node takes it).
pub fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|home| !home.is_empty())
        .map(PathBuf::from)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::path::Path;

    use serde_json::json;
    use tool_api::model::{OfferRequest, TaskContext, WorkspaceRoot};

    use super::*;

    fn request(root: &Path, params: Value) -> OfferRequest {
        let cwd = root.to_string_lossy().into_owned();
        let clineignore = std::fs::read_to_string(root.join(".clineignore")).ok();
        OfferRequest {
            workspace: TaskContext {
                cwd: cwd.clone(),
                workspace_roots: vec![WorkspaceRoot {
                    name: "w".into(),
                    path: cwd,
                    clineignore,
                }],
                ..TaskContext::default()
            },
            settings: json!({}),
            params: params.as_object().cloned().unwrap_or_default(),
        }
    }

    /// The workspace's `.clinerules/*.md`, found without any checks.
    fn every_rule(request: &OfferRequest) -> Vec<InstructionFile> {
        let dir = Path::new(&request.workspace.cwd).join(".clinerules");
        let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        paths.sort();
        paths
            .into_iter()
            .map(|path| InstructionFile {
                name: path.file_stem().unwrap().to_string_lossy().into_owned(),
                description: None,
                path,
                origin: Origin::Workspace,
            })
            .collect()
    }

    /// A workspace with a rule, a rule linking out of it to a secret, and an ignored rule.
    fn workspace() -> (tempfile::TempDir, tempfile::TempDir) {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("id_ed25519"), "PRIVATE KEY").unwrap();
        let rules = root.path().join(".clinerules");
        std::fs::create_dir(&rules).unwrap();
        std::fs::write(rules.join("a.md"), "Use tabs.").unwrap();
        std::os::unix::fs::symlink(outside.path().join("id_ed25519"), rules.join("b.md")).unwrap();
        std::fs::write(rules.join("c.md"), "hidden").unwrap();
        std::fs::write(root.path().join(".clineignore"), ".clinerules/c.md\n").unwrap();
        (root, outside)
    }

    fn answer(method: &str, request: &OfferRequest) -> Result<Value, ToolError> {
        answer_resources(method, request, every_rule).expect("a resources method")
    }

    #[test]
    fn only_files_really_inside_and_not_ignored_are_listed_and_read() {
        let (root, _outside) = workspace();
        let listed = answer("resources_list", &request(root.path(), json!({}))).unwrap();
        let names: Vec<&str> = listed["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["a"]);
        let uri = listed["resources"][0]["uri"].as_str().unwrap();
        let read = answer("resources_read", &request(root.path(), json!({"uri": uri}))).unwrap();
        assert_eq!(read["contents"][0]["text"], "Use tabs.");
        for name in ["b.md", "c.md"] {
            let path = root.path().join(".clinerules").join(name);
            let uri = url::Url::from_file_path(path).unwrap().to_string();
            let refused =
                answer("resources_read", &request(root.path(), json!({"uri": uri}))).unwrap_err();
            assert_eq!(refused.kind, ToolErrorKind::INVALID_PARAMS, "{name}");
        }
    }

    #[test]
    fn a_listed_file_swapped_for_a_link_out_is_not_followed() {
        let (root, outside) = workspace();
        let listed = answer("resources_list", &request(root.path(), json!({}))).unwrap();
        let uri = listed["resources"][0]["uri"].as_str().unwrap().to_string();
        let file = InstructionFile {
            name: "a".into(),
            description: None,
            path: root.path().join(".clinerules/a.md"),
            origin: Origin::Workspace,
        };
        assert_eq!(file.uri(), uri);
        std::fs::remove_file(&file.path).unwrap();
        std::os::unix::fs::symlink(outside.path().join("id_ed25519"), &file.path).unwrap();
        let error = file.read(&request(root.path(), json!({}))).unwrap_err();
        assert!(
            error.message.contains("out of the workspace"),
            "{}",
            error.message
        );
    }

    #[test]
    fn other_methods_are_not_about_resources() {
        let (root, _outside) = workspace();
        assert!(
            answer_resources("prompts_list", &request(root.path(), json!({})), every_rule)
                .is_none()
        );
    }
}
