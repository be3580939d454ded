#![allow(clippy::unwrap_used)]

use super::*;
use std::fs;
use std::path::Path;

/// Every entry under `root` (relative, sorted), with file contents; directories end in `/`.
fn tree(root: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let meta = fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                out.push((format!("{rel}/"), String::new()));
                stack.push(path);
            } else if meta.file_type().is_symlink() {
                let to = fs::read_link(&path).unwrap();
                out.push((rel, format!("-> {}", to.display())));
            } else {
                out.push((rel, fs::read_to_string(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

fn entries(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

fn original(path: &Path) -> Option<Original> {
    Some(Original {
        bytes: fs::read(path).unwrap(),
        permissions: fs::metadata(path).unwrap().permissions(),
    })
}

fn label(relative: &str) -> String {
    relative.rsplit('/').next().unwrap_or(relative).to_string()
}

fn write(ws: &Workspace, relative: &str, text: &str, replaces: Option<Original>) -> Op {
    Op::Write {
        label: label(relative),
        target: ws.verdict(relative),
        bytes: text.as_bytes().to_vec(),
        replaces,
    }
}

fn remove(ws: &Workspace, relative: &str) -> Op {
    Op::Remove {
        label: label(relative),
        target: crate::files::entry_verdict(ws, &ws.verdict(relative)),
    }
}

#[test]
fn every_change_is_made() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    let ws = Workspace::new(r).unwrap();
    fs::write(r.join("a"), "old a").unwrap();
    fs::write(r.join("b"), "old b").unwrap();
    let ops = [
        write(&ws, "a", "new a", original(&r.join("a"))),
        remove(&ws, "b"),
        write(&ws, "new/dir/c", "c", None),
    ];
    assert_eq!(commit(&ws, &ops), Ok(()));
    assert_eq!(
        tree(r),
        entries(&[
            ("a", "new a"),
            ("new/", ""),
            ("new/dir/", ""),
            ("new/dir/c", "c")
        ])
    );
}

#[test]
fn a_failure_while_staging_changes_nothing() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    let ws = Workspace::new(r).unwrap();
    fs::write(r.join("a"), "old a").unwrap();
    fs::write(r.join("blocker"), "").unwrap();
    let ops = [
        write(&ws, "a", "new a", original(&r.join("a"))),
        write(&ws, "fresh/x", "x", None),
        // A file stands where a directory would have to be.
        write(&ws, "blocker/sub/y", "y", None),
    ];
    let error = commit(&ws, &ops).unwrap_err().message;
    assert!(
        error.starts_with("Could not write y: ") && error.ends_with(". No file was changed."),
        "{error}"
    );
    assert_eq!(tree(r), entries(&[("a", "old a"), ("blocker", "")]));
}

#[test]
fn a_failure_while_installing_undoes_what_was_done() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    let ws = Workspace::new(r).unwrap();
    fs::write(r.join("a"), "old a").unwrap();
    fs::write(r.join("b"), "old b").unwrap();
    fs::create_dir(r.join("keep")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(r.join("a"), Permissions::from_mode(0o640)).unwrap();
        std::os::unix::fs::symlink("b", r.join("link")).unwrap();
    }
    let ops = [
        write(&ws, "a", "new a", original(&r.join("a"))),
        remove(&ws, "b"),
        remove(&ws, "link"),
        write(&ws, "new/c", "c", None),
        // Gone before its turn: the rename fails after everything else was installed.
        remove(&ws, "missing"),
    ];
    let error = commit(&ws, &ops).unwrap_err().message;
    assert!(
        error.starts_with("Could not change missing: ")
            && error.ends_with(". No file was changed."),
        "{error}"
    );
    assert_eq!(
        tree(r),
        entries(&[
            ("a", "old a"),
            ("b", "old b"),
            ("keep/", ""),
            ("link", "-> b")
        ])
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(r.join("a")).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
    }
}

#[test]
fn replaced_files_keep_their_permissions_and_new_ones_get_the_usual() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    let ws = Workspace::new(r).unwrap();
    fs::write(r.join("script"), "old").unwrap();
    fs::write(r.join("reference"), "").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(r.join("script"), Permissions::from_mode(0o751)).unwrap();
    }
    let ops = [
        write(&ws, "script", "new", original(&r.join("script"))),
        write(&ws, "created", "x", None),
    ];
    assert_eq!(commit(&ws, &ops), Ok(()));
    let mode = |name: &str| fs::metadata(r.join(name)).unwrap().permissions();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(mode("script").mode() & 0o7777, 0o751);
    }
    // A file made by fs::write gets 0666 less the umask; so must ours.
    assert_eq!(mode("created"), mode("reference"));
}
