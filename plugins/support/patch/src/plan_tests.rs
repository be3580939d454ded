#![allow(clippy::unwrap_used)]

use std::fs;
use std::path::Path;

use super::*;
use crate::files::load;
use crate::parser::parse;
use crate::preprocess::{files_to_load, patch_lines};
use std::fs::Permissions;
use std::os::unix::fs::PermissionsExt;
use tool_api::workspace::Workspace;

/// A workspace in a temporary directory; `secret/` is `.clineignore`d.
struct Ws {
    dir: tempfile::TempDir,
    workspace: Workspace,
}

impl Ws {
    fn new(files: &[(&str, &str)]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join(".clineignore"), "secret/\n").unwrap();
        for (path, text) in files {
            let target = dir.path().join(path);
            fs::create_dir_all(target.parent().unwrap()).unwrap();
            fs::write(target, text).unwrap();
        }
        let workspace = Workspace::new(dir.path()).unwrap();
        Self { dir, workspace }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn verdict(&self, path: &str) -> PathVerdict {
        self.workspace.verdict(path)
    }

    fn check(&self, path: &str) -> Result<PathVerdict, Failure> {
        let verdict = self.verdict(path);
        if verdict.ignored {
            return Err(Failure::Blocked(path.to_string()));
        }
        Ok(verdict)
    }

    /// Plans a patch the way the tool does; errors as their messages.
    fn plan(&self, patch: &str) -> Result<Plan, String> {
        let lines = patch_lines(patch).map_err(|e| e.0)?;
        let mut loaded = HashMap::new();
        let message = |failure: Failure| match failure {
            Failure::Patch(e) => e.0,
            Failure::Blocked(p) => format!("blocked: {p}"),
            Failure::Host(e) => format!("host: {}", e.message),
        };
        for path in files_to_load(patch) {
            let file = load(&self.workspace, &path, self.verdict(&path)).map_err(message)?;
            loaded.insert(path, file);
        }
        let texts = loaded
            .iter()
            .map(|(p, f)| (p.clone(), f.text.clone()))
            .collect();
        let parsed = parse(&lines, &texts, &|| false).map_err(|e| e.0)?;
        plan(&parsed, &loaded, &self.workspace, &|p| self.check(p)).map_err(message)
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.verdict(rel).resolved.into()
    }
}

fn summary(plan: &Plan) -> Vec<(String, &'static str)> {
    plan.touched
        .iter()
        .map(|t| (t.path.clone(), t.tool))
        .collect()
}

#[test]
fn updates_adds_deletes_and_moves_become_operations() {
    let ws = Ws::new(&[("a.txt", "a\nb\n"), ("m.txt", "m\n"), ("d.txt", "d")]);
    let plan = ws
        .plan("*** Begin Patch\n*** Update File: a.txt\n@@\n a\n-b\n+B\n*** Add File: n/new.txt\n+new\n*** Update File: m.txt\n*** Move to: moved.txt\n@@\n-m\n+M\n*** Delete File: d.txt\n*** End Patch")
        .unwrap();
    let original = |rel: &str| {
        Some(Original {
            bytes: fs::read(ws.root().join(rel)).unwrap(),
            permissions: Permissions::from_mode(
                fs::metadata(ws.root().join(rel))
                    .unwrap()
                    .permissions()
                    .mode()
                    & 0o7777,
            ),
        })
    };
    assert_eq!(
        plan.ops,
        vec![
            Op::Write {
                label: "a.txt".into(),
                target: ws.verdict("a.txt"),
                bytes: b"a\nB\n".to_vec(),
                replaces: original("a.txt"),
            },
            Op::Write {
                label: "n/new.txt".into(),
                target: ws.verdict("n/new.txt"),
                bytes: b"new".to_vec(),
                replaces: None,
            },
            Op::Write {
                label: "moved.txt".into(),
                target: ws.verdict("moved.txt"),
                bytes: b"M\n".to_vec(),
                replaces: None,
            },
            Op::Remove {
                label: "m.txt".into(),
                target: crate::files::entry_verdict(&ws.workspace, &ws.verdict("m.txt")),
            },
            Op::Remove {
                label: "d.txt".into(),
                target: crate::files::entry_verdict(&ws.workspace, &ws.verdict("d.txt")),
            },
        ]
    );
    assert_eq!(
        summary(&plan),
        vec![
            ("a.txt".to_string(), "editedExistingFile"),
            ("n/new.txt".to_string(), "newFileCreated"),
            ("moved.txt".to_string(), "newFileCreated"),
            ("m.txt".to_string(), "fileDeleted"),
            ("d.txt".to_string(), "fileDeleted"),
        ]
    );
    assert_eq!(plan.touched[0].start_line_numbers, vec![2]);
    assert_eq!(
        plan.results,
        vec![
            ("a.txt".to_string(), Entry::Saved("a\nB\n".into())),
            ("n/new.txt".to_string(), Entry::Saved("new".into())),
            ("moved.txt".to_string(), Entry::Saved("M\n".into())),
            ("m.txt".to_string(), Entry::Deleted),
            ("d.txt".to_string(), Entry::Deleted),
        ]
    );
}

#[test]
fn existing_files_are_not_overwritten_by_add_or_move() {
    let ws = Ws::new(&[("a.txt", "a\n"), ("b.txt", "b\n")]);
    assert_eq!(
        ws.plan("*** Add File: a.txt\n+x").unwrap_err(),
        "Add File Error: File already exists: a.txt"
    );
    assert_eq!(
        ws.plan("*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n-a\n+A\n*** End Patch")
            .unwrap_err(),
        "Move File Error: File already exists: b.txt"
    );
}

#[test]
fn a_move_onto_the_file_itself_is_an_update() {
    let ws = Ws::new(&[("a.txt", "a\n")]);
    let plan = ws
        .plan("*** Begin Patch\n*** Update File: a.txt\n*** Move to: ./a.txt\n@@\n-a\n+A\n*** End Patch")
        .unwrap();
    assert_eq!(
        summary(&plan),
        vec![("a.txt".to_string(), "editedExistingFile")]
    );
}

#[test]
fn two_actions_on_one_file_are_refused() {
    let ws = Ws::new(&[("a.txt", "a\n"), ("b.txt", "b\n")]);
    assert_eq!(
        ws.plan("*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** Delete File: ./a.txt\n*** End Patch")
            .unwrap_err(),
        "Duplicate delete for file: ./a.txt"
    );
    assert_eq!(
        ws.plan("*** Begin Patch\n*** Update File: a.txt\n*** Move to: n.txt\n@@\n-a\n+A\n*** Add File: n.txt\n+x\n*** End Patch")
            .unwrap_err(),
        "Duplicate add for file: n.txt"
    );
}

#[test]
fn clines_commit_errors_are_kept() {
    let ws = Ws::new(&[("a", "a")]);
    assert_eq!(
        ws.plan("*** Add File: n\n+").unwrap_err(),
        "ADD action without file content"
    );
    assert_eq!(
        ws.plan("*** Begin Patch\n*** Update File: a\n@@\n-a\n*** End Patch")
            .unwrap_err(),
        "UPDATE change for a has no new content"
    );
}

#[test]
fn unsafe_updates_are_refused() {
    let ws = Ws::new(&[("bin", ""), ("ro", "r\n")]);
    fs::write(ws.root().join("bin"), b"\xff\n").unwrap();
    let mut permissions = fs::metadata(ws.root().join("ro")).unwrap().permissions();
    permissions.set_readonly(true);
    fs::set_permissions(ws.root().join("ro"), permissions).unwrap();
    assert_eq!(
        ws.plan("*** Begin Patch\n*** Update File: bin\n@@\n+x\n*** End Patch")
            .unwrap_err(),
        "Cannot update bin: the file is not UTF-8 text. No file was changed."
    );
    assert_eq!(
        ws.plan("*** Begin Patch\n*** Update File: ro\n@@\n-r\n+R\n*** End Patch")
            .unwrap_err(),
        "Cannot update ro: the file is read-only. No file was changed."
    );
    // Deleting either is fine.
    assert!(ws
        .plan("*** Begin Patch\n*** Delete File: bin\n*** Delete File: ro\n*** End Patch")
        .is_ok());
}

#[test]
fn new_paths_are_checked_against_clineignore() {
    let ws = Ws::new(&[("a", "a\n")]);
    assert_eq!(
        ws.plan("*** Add File: secret/n\n+x").unwrap_err(),
        "blocked: secret/n"
    );
    assert_eq!(
        ws.plan(
            "*** Begin Patch\n*** Update File: a\n*** Move to: secret/a\n@@\n-a\n+A\n*** End Patch"
        )
        .unwrap_err(),
        "blocked: secret/a"
    );
}

#[test]
fn actions_follow_javascript_object_order() {
    let ws = Ws::new(&[]);
    let plan = ws
        .plan("*** Begin Patch\n*** Add File: b\n+b\n*** Add File: 2\n+2\n*** End Patch")
        .unwrap();
    assert_eq!(
        summary(&plan),
        vec![
            ("2".to_string(), "newFileCreated"),
            ("b".to_string(), "newFileCreated")
        ]
    );
}

#[cfg(unix)]
#[test]
fn symlinked_files_are_written_through_and_deleted_as_links() {
    let ws = Ws::new(&[("real.txt", "a\n"), ("other.txt", "o\n")]);
    std::os::unix::fs::symlink("real.txt", ws.root().join("link.txt")).unwrap();
    std::os::unix::fs::symlink("other.txt", ws.root().join("old-link.txt")).unwrap();
    let plan = ws
        .plan("*** Begin Patch\n*** Update File: link.txt\n@@\n-a\n+A\n*** Delete File: old-link.txt\n*** End Patch")
        .unwrap();
    let targets: Vec<&Path> = plan
        .ops
        .iter()
        .map(|op| match op {
            Op::Write { target, .. } | Op::Remove { target, .. } => Path::new(&target.resolved),
        })
        .collect();
    let real = ws.path("real.txt");
    let link = ws.root().join("old-link.txt");
    assert_eq!(targets, vec![real.as_path(), link.as_path()]);
}
