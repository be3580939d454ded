use super::*;

fn repo(dir: &Path) {
    std::fs::create_dir_all(dir.join(".git/hooks")).ok();
    std::fs::create_dir_all(dir.join(".git/objects")).ok();
    std::fs::write(dir.join(".git/config"), "[core]\n\tbare = false\n").ok();
    std::fs::write(dir.join(".git/HEAD"), "ref: refs/heads/main\n").ok();
}

#[test]
fn what_exists_is_protected_in_every_repository() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let root = dir.path().to_path_buf();
    repo(&root);
    repo(&root.join("vendor/lib"));
    std::fs::create_dir_all(root.join(".git/modules/sub")).ok();
    std::fs::create_dir_all(root.join("sub")).ok();
    std::fs::write(root.join("sub/.git"), "gitdir: ../.git/modules/sub\n").ok();
    std::fs::write(root.join(".git/modules/sub/config"), "").ok();
    // A repository without a configuration is read-only as a whole.
    std::fs::create_dir_all(root.join("bare-ish/.git/objects")).ok();
    let found = Repositories::find(std::slice::from_ref(&root)).unwrap_or_else(|e| panic!("{e}"));
    let protected = found.protected();
    // The submodule's repository is read-only with `.git/modules`.
    assert_eq!(
        protected.pinned,
        [root.join(".git"), root.join("vendor/lib/.git")]
    );
    assert_eq!(
        protected.read_only,
        [
            root.join("sub/.git"),
            root.join(".git/config"),
            root.join(".git/hooks"),
            root.join(".git/modules"),
            root.join("bare-ish/.git"),
            root.join("vendor/lib/.git/config"),
            root.join("vendor/lib/.git/hooks"),
        ]
    );
}

#[test]
fn what_the_command_made_is_set_aside() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let root = dir.path().to_path_buf();
    repo(&root);
    std::fs::create_dir_all(root.join("src/deep/er")).ok();
    std::fs::write(root.join("src/deep/er/file.rs"), "").ok();
    let found = Repositories::find(std::slice::from_ref(&root)).unwrap_or_else(|e| panic!("{e}"));
    // What a command does: a new repository in an old directory and in a new one, a
    // `commondir` and `info/` in the old repository, a file in the objects (allowed).
    std::fs::create_dir_all(root.join("src/deep/er/.git/hooks")).ok();
    std::fs::create_dir_all(root.join("new/a/b")).ok();
    std::fs::write(root.join("new/a/b/.git"), "gitdir: /tmp/evil\n").ok();
    std::fs::write(root.join(".git/commondir"), "/tmp/evil\n").ok();
    std::fs::create_dir_all(root.join(".git/info")).ok();
    std::fs::write(root.join(".git/objects/ab"), "").ok();
    let set_aside = found.set_aside_new();
    let paths: Vec<&PathBuf> = set_aside.iter().map(|s| &s.path).collect();
    assert_eq!(
        paths,
        [
            &root.join(".git/commondir"),
            &root.join(".git/info"),
            &root.join("new/a/b/.git"),
            &root.join("src/deep/er/.git"),
        ]
    );
    for entry in &set_aside {
        let to = entry.moved_to.clone().unwrap_or_else(|e| panic!("{e}"));
        assert!(to.to_string_lossy().ends_with(SET_ASIDE_SUFFIX), "{to:?}");
        assert!(!entry.path.exists() && to.exists(), "{entry:?}");
        assert!(entry.message().contains("set aside"), "{}", entry.message());
    }
    assert!(root.join(".git/objects/ab").exists());
    // A second run takes a numbered name.
    std::fs::write(root.join(".git/commondir"), "/tmp/evil\n").ok();
    let again = found.set_aside_new();
    assert_eq!(again.len(), 1, "{again:?}");
    assert_eq!(
        again[0].moved_to,
        Ok(root.join(format!(".git/commondir{SET_ASIDE_SUFFIX}-1")))
    );
}

#[test]
fn unchanged_trees_are_not_read_again() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let root = dir.path().to_path_buf();
    std::fs::create_dir_all(root.join("old")).ok();
    let mut found =
        Repositories::find(std::slice::from_ref(&root)).unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(root.join("old/.git")).ok();
    // As if the first look had been taken after the change: `old` is not read again.
    found.taken_at = SystemTime::now() + Duration::from_secs(5);
    assert_eq!(found.set_aside_new(), []);
    found.taken_at = SystemTime::now() - Duration::from_secs(5);
    assert_eq!(found.set_aside_new().len(), 1);
}

#[test]
fn configured_hooks_directories_are_guarded() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let root = dir.path().to_path_buf();
    repo(&root);
    std::fs::write(
        root.join(".git/config"),
        "[core]\n\tbare = false\n[Core]\n\thooksPath = \".husky\" # husky\n",
    )
    .ok();
    let found = Repositories::find(std::slice::from_ref(&root)).unwrap_or_else(|e| panic!("{e}"));
    assert!(!found.protected().read_only.contains(&root.join(".husky")));
    std::fs::create_dir_all(root.join(".husky")).ok();
    let set_aside = found.set_aside_new();
    assert_eq!(set_aside.len(), 1, "{set_aside:?}");
    assert_eq!(set_aside[0].path, root.join(".husky"));
    std::fs::create_dir_all(root.join(".husky")).ok();
    let found = Repositories::find(std::slice::from_ref(&root)).unwrap_or_else(|e| panic!("{e}"));
    assert!(found.protected().read_only.contains(&root.join(".husky")));
    assert_eq!(hooks_path("[core]\nfsmonitor = x\n"), None);
    assert_eq!(
        hooks_path("[alias]\nhooksPath = no\n[core]\n  hookspath=hooks ; c\n").as_deref(),
        Some("hooks")
    );
}

#[test]
fn nested_roots_are_walked_once() {
    assert_eq!(
        outermost(&["/w/a".into(), "/w".into(), "/x/../w/b".into(), "/y".into()]),
        [PathBuf::from("/w"), PathBuf::from("/y")]
    );
}
