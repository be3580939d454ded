//! The host's verdict on a path: where it really leads, inside or outside, what
//! `.clineignore` says of the path as typed and of its target, and how it is shown.

use std::path::Path;

use super::{sys, Location, Workspace};
use crate::model::PathVerdict;

impl Workspace {
    /// Everything the policies say about `path`: where it really leads, whether that is inside
    /// the workspace, and whether `.clineignore` blocks the path as typed or its target.
    pub fn verdict(&self, path: &str) -> PathVerdict {
        let absolute = self.resolve(path);
        let (resolved, anchor, refused) = match self.real_target(&absolute) {
            Ok((real, anchor)) => (real, Some(anchor), false),
            Err(e) => (absolute.clone(), None, sys::is_link_refused(&e)),
        };
        let location = self.locate(&resolved);
        let leads_to = self.leads_to(&absolute, &location);
        // As in Cline, a path is matched as a directory only when it is written with a trailing
        // slash; the files below an ignored directory are matched through their parents.
        let typed_dir = path.ends_with('/') || path.ends_with('\\');
        // Backslashes count as separators for the rules, as in Cline's matcher.
        let typed = self.resolve(&path.replace('\\', "/"));
        let typed_rule = self
            .lexical_root(&typed)
            .and_then(|(root, rel)| self.roots[root].ignore.blocking_rule(&rel, typed_dir));
        let real_rule = match &location {
            Location::Inside { root, relative } => {
                self.roots[*root].ignore.blocking_rule(relative, typed_dir)
            }
            Location::Outside(_) => None,
        };
        let ignore_rule = typed_rule.or(real_rule);
        PathVerdict {
            path: path.to_string(),
            absolute: absolute.to_string_lossy().into_owned(),
            resolved: resolved.to_string_lossy().into_owned(),
            inside_workspace: location.is_inside() && !refused,
            ignored: ignore_rule.is_some(),
            display: self.display(&absolute),
            refused,
            ignore_rule,
            leads_to,
            anchor,
        }
    }

    /// Where a path really leads, for people, when that is not where it seems to lead: inside
    /// a root as the root is configured (relative to cwd inside it), outside with the home
    /// directory as `~`.
    fn leads_to(&self, absolute: &Path, location: &Location) -> Option<String> {
        match location {
            Location::Inside { root, relative } => {
                let root = &self.roots[*root];
                let configured = root.path.join(relative);
                let real = root.handle().ok().map(|h| h.real.join(relative));
                let same = configured == absolute || real.as_deref() == Some(absolute);
                (!same).then(|| home_relative(self.display(&configured)))
            }
            Location::Outside(real) => (real != absolute).then(|| home_relative(real)),
        }
    }

    /// Cline's "readable path": relative to cwd with `/` separators when inside it, the
    /// directory's name when it is cwd, absolute otherwise.
    pub fn display(&self, absolute: &Path) -> String {
        let cwd = self.cwd();
        match absolute.strip_prefix(cwd) {
            Ok(rel) if rel.as_os_str().is_empty() => cwd
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| cwd.to_string_lossy().into_owned()),
            Ok(rel) => rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/"),
            Err(_) => absolute.to_string_lossy().into_owned(),
        }
    }
}

/// A path with the home directory (`$HOME`, or its real path) written as `~`.
fn home_relative(path: impl AsRef<Path>) -> String {
    let home = std::env::var_os("HOME");
    tilde(path.as_ref(), home.as_deref().map(Path::new))
}

/// `path` with `home` (or its real path) written as `~`; as it is without a home, or with `/`.
pub(super) fn tilde(path: &Path, home: Option<&Path>) -> String {
    let Some(home) = home.filter(|h| !h.as_os_str().is_empty() && *h != Path::new("/")) else {
        return path.to_string_lossy().into_owned();
    };
    let real_home = std::fs::canonicalize(home).ok();
    let relative = path
        .strip_prefix(home)
        .ok()
        .or_else(|| real_home.as_deref().and_then(|h| path.strip_prefix(h).ok()));
    match relative {
        Some(rest) if rest.as_os_str().is_empty() => "~".to_string(),
        Some(rest) => format!("~/{}", rest.to_string_lossy()),
        None => path.to_string_lossy().into_owned(),
    }
}
