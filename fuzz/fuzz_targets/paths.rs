//! The `.clineignore` matcher and the path resolution: never a panic; a path whose verdict is
//! inside the workspace resolves beneath the root, and opening it never reaches a file outside;
//! the resolved path is where the path really leads; `.clineignore` itself is blocked whenever
//! it has rules.
//!
//! Input: the `.clineignore` text, a NUL, the path (both lossy UTF-8). The workspace is a small
//! tree with links that lead out, back in, and round in a loop, beside a directory outside it.
#![no_main]

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use tool_api::workspace::{ClineIgnore, Workspace};

/// The workspace root (canonical), beside `outside/secret.txt`.
fn root() -> &'static PathBuf {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let base = tempfile::tempdir()
            .unwrap_or_else(|e| panic!("temporary directory: {e}"))
            .keep();
        let base = std::fs::canonicalize(base).unwrap_or_else(|e| panic!("canonicalize: {e}"));
        let ws = base.join("ws");
        let outside = base.join("outside");
        for dir in [&ws.join("sub/deep"), &ws.join("secrets"), &outside] {
            std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("create: {e}"));
        }
        let write = |path: PathBuf| std::fs::write(&path, "inside").unwrap_or_else(|e| panic!("write: {e}"));
        write(ws.join("a.txt"));
        write(ws.join("sub/b.txt"));
        write(ws.join("sub/deep/c.txt"));
        write(ws.join("secrets/key.pem"));
        std::fs::write(outside.join("secret.txt"), "OUTSIDE").unwrap_or_else(|e| panic!("write: {e}"));
        let link = |target: &Path, name: &str| symlink(target, ws.join(name)).unwrap_or_else(|e| panic!("symlink: {e}"));
        link(&outside, "out");
        link(&outside.join("secret.txt"), "out.txt");
        link(Path::new("../outside/secret.txt"), "rel_out.txt");
        link(Path::new("sub"), "in");
        link(Path::new("secrets/key.pem"), "key_link");
        link(Path::new("loop"), "loop");
        link(Path::new("/proc/self/root"), "magic");
        ws
    })
}

fuzz_target!(|data: &[u8]| {
    let (rules, path) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (&[][..], data),
    };
    let rules = String::from_utf8_lossy(rules);
    let path = String::from_utf8_lossy(path);
    let root = root();
    // The matcher alone, on the path as relative text.
    let ignore = ClineIgnore::from_text(root, &rules);
    let relative = Path::new(path.trim_start_matches('/'));
    let _ = ignore.blocks(relative, path.ends_with('/'));
    let _ = ignore.allows(root, &path);

    std::fs::write(root.join(".clineignore"), rules.as_bytes()).unwrap_or_else(|e| panic!("write: {e}"));
    let workspace = Workspace::new(root).unwrap_or_else(|e| panic!("workspace: {e}"));
    let verdict = workspace.verdict(&path);
    let resolved = Path::new(&verdict.resolved);
    if verdict.inside_workspace {
        assert!(resolved.starts_with(root), "inside, but resolved to {resolved:?}");
    }
    if !verdict.refused {
        if let Ok(real) = std::fs::canonicalize(&verdict.absolute) {
            assert_eq!(resolved, real, "the verdict's target is not where {path:?} leads");
        }
    }
    if verdict.inside_workspace && !verdict.ignored {
        if let Ok(mut file) = workspace.open_file(&verdict) {
            let bytes = file.read_all(1024).unwrap_or_default();
            assert_ne!(bytes, b"OUTSIDE", "{path:?} opened a file outside the workspace");
        }
    }
    if workspace.ignore().is_active() {
        assert!(workspace.verdict(".clineignore").ignored, ".clineignore is not blocked");
    }
});
