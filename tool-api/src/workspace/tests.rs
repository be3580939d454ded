#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::os::unix::fs::symlink;

use super::*;
use crate::model::PathVerdict;

struct Tree {
    _temp: tempfile::TempDir,
    ws: PathBuf,
    outside: PathBuf,
}

fn tree(clineignore: &str) -> Tree {
    let temp = tempfile::tempdir().unwrap();
    let ws = temp.path().join("ws");
    let outside = temp.path().join("outside");
    fs::create_dir_all(ws.join("src")).unwrap();
    fs::create_dir_all(&outside).unwrap();
    fs::write(ws.join("src/a.txt"), "inside\n").unwrap();
    fs::write(ws.join(".env"), "SECRET=1\n").unwrap();
    fs::write(outside.join("secret.txt"), "outside\n").unwrap();
    if !clineignore.is_empty() {
        fs::write(ws.join(".clineignore"), clineignore).unwrap();
    }
    Tree {
        _temp: temp,
        ws,
        outside,
    }
}

fn read(workspace: &Workspace, path: &str) -> Result<String, FsError> {
    let verdict = workspace.verdict(path);
    let mut file = workspace.open_file(&verdict)?;
    Ok(String::from_utf8(file.read_all(1 << 20)?).unwrap())
}

#[test]
fn plain_reads_inside_work() {
    let t = tree("");
    let ws = Workspace::new(&t.ws).unwrap();
    assert_eq!(read(&ws, "src/a.txt").unwrap(), "inside\n");
    let verdict = ws.verdict("src/a.txt");
    assert!(verdict.inside_workspace && !verdict.ignored && !verdict.refused);
    assert_eq!(verdict.display, "src/a.txt");
    assert!(read(&ws, "src/missing.txt").unwrap_err().is_not_found());
}

#[test]
fn links_to_ignored_files_are_ignored() {
    let t = tree(".env\nsecrets/\n");
    symlink(".env", t.ws.join("notes.txt")).unwrap();
    symlink(t.ws.join(".env"), t.ws.join("abs-notes.txt")).unwrap();
    fs::create_dir(t.ws.join("secrets")).unwrap();
    fs::write(t.ws.join("secrets/key"), "KEY").unwrap();
    symlink("secrets", t.ws.join("public")).unwrap();
    let ws = Workspace::new(&t.ws).unwrap();
    for path in [
        ".env",
        ".ENV",
        "notes.txt",
        "abs-notes.txt",
        "public/key",
        "SECRETS/key",
    ] {
        let verdict = ws.verdict(path);
        assert!(verdict.ignored, "{path}: {verdict:?}");
        assert!(
            matches!(read(&ws, path), Err(FsError::Ignored { .. })),
            "{path}"
        );
    }
    assert_eq!(
        ws.verdict("public/key").ignore_rule.as_deref(),
        Some("secrets/")
    );
}

#[test]
fn a_hard_link_to_an_ignored_file_is_ignored() {
    let t = tree(".env\n");
    fs::hard_link(t.ws.join(".env"), t.ws.join("copy.txt")).unwrap();
    let ws = Workspace::new(&t.ws).unwrap();
    assert!(matches!(
        read(&ws, "copy.txt"),
        Err(FsError::Ignored { .. })
    ));
    fs::hard_link(t.ws.join("src/a.txt"), t.ws.join("src/b.txt")).unwrap();
    let fresh = Workspace::new(&t.ws).unwrap();
    assert_eq!(read(&fresh, "src/b.txt").unwrap(), "inside\n");
}

#[test]
fn links_out_of_the_workspace_lead_outside() {
    let t = tree("");
    symlink(&t.outside, t.ws.join("out")).unwrap();
    let ws = Workspace::new(&t.ws).unwrap();
    let verdict = ws.verdict("out/secret.txt");
    assert!(!verdict.inside_workspace);
    assert_eq!(
        Path::new(&verdict.resolved),
        fs::canonicalize(t.outside.join("secret.txt")).unwrap()
    );
    // Approved as outside, it reads; a verdict that claims inside does not.
    assert_eq!(read(&ws, "out/secret.txt").unwrap(), "outside\n");
    let forged = PathVerdict {
        inside_workspace: true,
        ..verdict
    };
    assert!(matches!(
        ws.open_file(&forged),
        Err(FsError::Escaped { .. })
    ));
}

#[test]
fn a_swap_after_the_verdict_changes_nothing() {
    let t = tree("");
    fs::create_dir(t.ws.join("d")).unwrap();
    fs::write(t.ws.join("d/secret.txt"), "inside d\n").unwrap();
    let ws = Workspace::new(&t.ws).unwrap();
    let verdict = ws.verdict("d/secret.txt");
    assert!(verdict.inside_workspace);
    fs::rename(t.ws.join("d"), t.ws.join("d-old")).unwrap();
    symlink(&t.outside, t.ws.join("d")).unwrap();
    let opened = ws.open_file(&verdict);
    assert!(matches!(opened, Err(FsError::Changed { .. })), "{opened:?}");
}

#[test]
fn magic_links_are_refused() {
    let t = tree(".env\n");
    let ws = Workspace::new(&t.ws).unwrap();
    for path in [
        "/proc/self/cwd/.env".to_string(),
        format!("/proc/self/root{}/.env", t.ws.display()),
        "/dev/fd/0".to_string(),
        "/proc/self/fd/0".to_string(),
    ] {
        let verdict = ws.verdict(&path);
        assert!(verdict.refused, "{path}: {verdict:?}");
        assert!(!verdict.inside_workspace, "{path}");
        assert!(
            matches!(read(&ws, &path), Err(FsError::Refused { .. })),
            "{path}"
        );
    }
}

#[test]
fn only_regular_files_are_read() {
    let t = tree("");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        t.ws.join("fifo"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let ws = Workspace::new(&t.ws).unwrap();
    assert!(matches!(
        read(&ws, "fifo"),
        Err(FsError::NotRegular("a FIFO"))
    ));
    assert!(matches!(
        read(&ws, "/dev/zero"),
        Err(FsError::NotRegular("a device"))
    ));
    assert!(matches!(
        read(&ws, "/proc/self/status"),
        Err(FsError::NotRegular(_))
    ));
    assert!(matches!(read(&ws, "src"), Err(FsError::IsADirectory)));
    let big = fs::File::create(t.ws.join("big.png")).unwrap();
    big.set_len(2 << 30).unwrap();
    let mut file = ws.open_file(&ws.verdict("big.png")).unwrap();
    assert!(matches!(
        file.read_all(1 << 20),
        Err(FsError::TooLarge { .. })
    ));
}

#[test]
fn writes_are_atomic_and_stay_in_their_directory() {
    let t = tree(".env\n");
    let ws = Workspace::new(&t.ws).unwrap();
    ws.write_file(&ws.verdict("new/dir/f.txt"), b"hello")
        .unwrap();
    assert_eq!(fs::read(t.ws.join("new/dir/f.txt")).unwrap(), b"hello");
    let names: Vec<_> = fs::read_dir(t.ws.join("new/dir")).unwrap().collect();
    assert_eq!(names.len(), 1);
    assert!(matches!(
        ws.write_file(&ws.verdict(".env"), b"x"),
        Err(FsError::Ignored { .. })
    ));
    assert_eq!(fs::read(t.ws.join(".env")).unwrap(), b"SECRET=1\n");
    // A failed write removes the directories it made.
    let long = format!("fresh/{}", "n".repeat(300));
    assert!(ws.write_file(&ws.verdict(&long), b"x").is_err());
    assert!(!t.ws.join("fresh").exists());
    // A link swapped in after the verdict does not redirect the write.
    fs::create_dir(t.ws.join("d")).unwrap();
    let verdict = ws.verdict("d/w.txt");
    fs::remove_dir(t.ws.join("d")).unwrap();
    symlink(&t.outside, t.ws.join("d")).unwrap();
    assert!(ws.write_file(&verdict, b"x").is_err());
    assert!(!t.outside.join("w.txt").exists());
    assert_eq!(fs::read_dir(&t.outside).unwrap().count(), 1);
}

#[test]
fn a_walk_from_outside_still_sees_the_rules_of_the_roots_below_it() {
    let t = tree(".env\n");
    let ws = Workspace::new(&t.ws).unwrap();
    let parent = t.ws.parent().unwrap().to_string_lossy().into_owned();
    let dir = ws.open_dir(&ws.verdict(&parent)).unwrap();
    assert!(dir.is_ignored("ws/.env", false));
    assert!(!dir.is_ignored("ws/src/a.txt", false));
    let inner = dir.subdir("ws").unwrap();
    assert!(matches!(
        inner.open_file(".env"),
        Err(FsError::Ignored { .. })
    ));
    assert!(inner.open_file("src/a.txt").is_ok());
}

#[test]
fn nothing_is_written_inside_git() {
    let t = tree("");
    fs::create_dir_all(t.ws.join(".git/hooks")).unwrap();
    let ws = Workspace::new(&t.ws).unwrap();
    for path in [".git/hooks/pre-commit", ".git/config", "sub/.GIT/config"] {
        assert!(
            matches!(
                ws.write_file(&ws.verdict(path), b"x"),
                Err(FsError::Protected { .. })
            ),
            "{path}"
        );
    }
    assert!(!t.ws.join(".git/hooks/pre-commit").exists());
    assert!(!t.ws.join("sub").exists());
    ws.write_file(&ws.verdict(".gitignore"), b"target\n")
        .unwrap();
}

#[test]
fn directories_are_listed_through_their_handle() {
    let t = tree("");
    symlink(&t.outside, t.ws.join("out")).unwrap();
    symlink("src", t.ws.join("also-src")).unwrap();
    let ws = Workspace::new(&t.ws).unwrap();
    let dir = ws.open_dir(&ws.verdict(".")).unwrap();
    let mut names: Vec<(String, EntryKind)> = dir
        .entries()
        .unwrap()
        .into_iter()
        .map(|e| (e.name.to_string_lossy().into_owned(), e.kind))
        .collect();
    names.sort();
    assert!(names.contains(&("out".to_string(), EntryKind::Symlink)));
    assert!(matches!(
        dir.follow(OsStr::new("out")),
        Err(FsError::Escaped { .. })
    ));
    match dir.follow(OsStr::new("also-src")).unwrap() {
        Followed::Dir(sub) => {
            let inner: Vec<_> = sub.entries().unwrap();
            assert_eq!(inner.len(), 1);
            assert_eq!(
                sub.location(),
                &Location::Inside {
                    root: 0,
                    relative: PathBuf::from("src")
                }
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        String::from_utf8(dir.open_file("src/a.txt").unwrap().read_all(100).unwrap()).unwrap(),
        "inside\n"
    );
    assert!(dir.open_file("out/secret.txt").is_err());
}

use std::ffi::OsStr;
