//! Verdicts pinned to their anchor: what was checked is what is reached, or nothing is.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use super::verdict::tilde;
use super::{FsError, Workspace};
use crate::model::PathVerdict;

/// A workspace `ws`, a directory `out/build` outside it, and `home/.ssh` (the stand-in for
/// what must not be written).
struct Scene {
    _temp: tempfile::TempDir,
    ws: PathBuf,
    build: PathBuf,
    ssh: PathBuf,
}

fn scene() -> Scene {
    let temp = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(temp.path()).unwrap();
    let (ws, build, ssh) = (
        base.join("ws"),
        base.join("out/build"),
        base.join("home/.ssh"),
    );
    for dir in [&ws, &build, &ssh] {
        fs::create_dir_all(dir).unwrap();
    }
    fs::create_dir(ws.join("d")).unwrap();
    fs::write(ws.join("d/a.txt"), "a\n").unwrap();
    Scene {
        _temp: temp,
        ws,
        build,
        ssh,
    }
}

/// Replaces the directory `dir` by a symbolic link to `target`.
fn swap_for_link(dir: &Path, target: &Path) {
    let mut aside = dir.as_os_str().to_owned();
    aside.push(".old");
    fs::rename(dir, aside).unwrap();
    symlink(target, dir).unwrap();
}

fn entries(dir: &Path) -> usize {
    fs::read_dir(dir).unwrap().count()
}

#[test]
fn a_verdict_names_where_a_link_leads_and_pins_that_directory() {
    let s = scene();
    symlink(&s.ssh, s.ws.join("keys")).unwrap();
    symlink("d", s.ws.join("also-d")).unwrap();
    let ws = Workspace::new(&s.ws).unwrap();
    let outside = ws.verdict("keys/authorized_keys");
    assert_eq!(
        outside.leads_to.as_deref(),
        Some(s.ssh.join("authorized_keys").to_str().unwrap())
    );
    let anchor = outside.anchor.clone().unwrap();
    assert_eq!(Path::new(&anchor.path), s.ssh);
    assert_eq!(
        ws.verdict("also-d/a.txt").leads_to.as_deref(),
        Some("d/a.txt")
    );
    assert_eq!(ws.verdict("d/a.txt").leads_to, None);
    assert_eq!(ws.verdict("d/new/b.txt").leads_to, None);
    assert_eq!(
        outside.shown(),
        format!(
            "keys/authorized_keys → {}",
            s.ssh.join("authorized_keys").display()
        )
    );
}

#[test]
fn the_home_directory_is_shown_as_a_tilde() {
    let s = scene();
    let home = s.ssh.parent().unwrap();
    assert_eq!(
        tilde(&s.ssh.join("authorized_keys"), Some(home)),
        "~/.ssh/authorized_keys"
    );
    assert_eq!(tilde(home, Some(home)), "~");
    assert_eq!(tilde(&s.build, Some(home)), s.build.to_string_lossy());
    assert_eq!(
        tilde(&s.build, Some(Path::new("/"))),
        s.build.to_string_lossy()
    );
}

#[test]
fn an_outside_directory_swapped_for_a_link_after_the_verdict_is_not_written() {
    let s = scene();
    let ws = Workspace::new(&s.ws).unwrap();
    let verdict = ws.verdict(s.build.join("authorized_keys").to_str().unwrap());
    assert!(!verdict.inside_workspace && verdict.leads_to.is_none());
    swap_for_link(&s.build, &s.ssh);
    let written = ws.write_file(&verdict, b"ssh-ed25519 AAAA attacker\n");
    assert!(
        matches!(written, Err(FsError::Changed { .. })),
        "{written:?}"
    );
    assert_eq!(entries(&s.ssh), 0);
    // The distinct error becomes the host's signal to check again.
    let error = crate::abi::ToolError::from(written.unwrap_err());
    assert_eq!(error.kind, crate::abi::ToolErrorKind::PATH_CHANGED);
}

#[test]
fn a_directory_replaced_by_another_is_a_change() {
    let s = scene();
    let ws = Workspace::new(&s.ws).unwrap();
    let read = ws.verdict("d/a.txt");
    let write = ws.verdict("d/b.txt");
    fs::rename(s.ws.join("d"), s.ws.join("d-old")).unwrap();
    fs::create_dir(s.ws.join("d")).unwrap();
    fs::write(s.ws.join("d/a.txt"), "other\n").unwrap();
    assert!(matches!(ws.open_file(&read), Err(FsError::Changed { .. })));
    assert!(matches!(
        ws.write_file(&write, b"x"),
        Err(FsError::Changed { .. })
    ));
    assert!(ws.open_dir(&ws.verdict("d")).is_ok());
    assert!(!s.ws.join("d/b.txt").exists() && !s.ws.join("d-old/b.txt").exists());
}

#[test]
fn a_link_where_a_missing_directory_was_is_a_change() {
    let s = scene();
    let ws = Workspace::new(&s.ws).unwrap();
    let verdict = ws.verdict("new/deeper/keys");
    symlink(&s.ssh, s.ws.join("new")).unwrap();
    let written = ws.write_file(&verdict, b"x");
    assert!(
        matches!(written, Err(FsError::Changed { .. })),
        "{written:?}"
    );
    assert_eq!(entries(&s.ssh), 0);
    // Made meanwhile as a real directory, it is used.
    fs::remove_file(s.ws.join("new")).unwrap();
    fs::create_dir(s.ws.join("new")).unwrap();
    ws.write_file(&verdict, b"x").unwrap();
    assert_eq!(fs::read(s.ws.join("new/deeper/keys")).unwrap(), b"x");
}

#[test]
fn a_file_swapped_for_a_link_is_not_read_through_it() {
    let s = scene();
    fs::write(s.ssh.join("id_ed25519"), "PRIVATE KEY\n").unwrap();
    let ws = Workspace::new(&s.ws).unwrap();
    let verdict = ws.verdict("d/a.txt");
    fs::remove_file(s.ws.join("d/a.txt")).unwrap();
    symlink(s.ssh.join("id_ed25519"), s.ws.join("d/a.txt")).unwrap();
    let opened = ws.open_file(&verdict);
    assert!(matches!(opened, Err(FsError::Changed { .. })), "{opened:?}");
}

#[test]
fn a_verdict_without_an_anchor_is_held_to_its_real_path() {
    let s = scene();
    let ws = Workspace::new(&s.ws).unwrap();
    let verdict = PathVerdict {
        anchor: None,
        ..ws.verdict(s.build.join("authorized_keys").to_str().unwrap())
    };
    swap_for_link(&s.build, &s.ssh);
    let written = ws.write_file(&verdict, b"x");
    assert!(
        matches!(written, Err(FsError::Changed { .. })),
        "{written:?}"
    );
    assert_eq!(entries(&s.ssh), 0);
}

#[test]
fn a_file_replaced_since_its_verdict_is_checked_again_and_then_written() {
    let s = scene();
    let ws = Workspace::new(&s.ws).unwrap();
    let verdict = ws.verdict("d/a.txt");
    // An editor's save: a new file renamed over the old one.
    fs::write(s.ws.join("d/.a.txt.new"), "saved\n").unwrap();
    fs::rename(s.ws.join("d/.a.txt.new"), s.ws.join("d/a.txt")).unwrap();
    assert!(matches!(
        ws.write_file(&verdict, b"x"),
        Err(FsError::Changed { .. })
    ));
    assert_eq!(fs::read(s.ws.join("d/a.txt")).unwrap(), b"saved\n");
    ws.write_file(&ws.verdict("d/a.txt"), b"x").unwrap();
    assert_eq!(fs::read(s.ws.join("d/a.txt")).unwrap(), b"x");
}
