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
        let (resolved, refused) = match self.real_target(&absolute) {
            Ok(real) => (real, false),
            Err(e) => (absolute.clone(), sys::is_link_refused(&e)),
        };
        let location = self.locate(&resolved);
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
