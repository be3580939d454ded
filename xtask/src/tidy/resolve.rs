//! Where a path leads: the module of the crate that holds what it names.
//!
//! A path is read as rustc reads it: from `crate::`, `super::` (repeated), `self::`, or a
//! first segment that is a child module or a name a `use` of the module binds. It leads to the
//! longest prefix that is a module, through the names `use` items bind (`crate::Host`, when
//! the root has `pub use call::Host`, leads to `call`, where `Host` is) and through the glob
//! imports that give a name. A path that leaves the crate (`std::…`, another crate, a name
//! bound to one of those) leads nowhere.

use super::crates::Crate;
use super::syntax::{ModPath, RawPath};

/// How many `use` names one path may pass through (a loop of re-exports ends there).
const MAX_HOPS: usize = 16;

impl Crate {
    /// The module `path` leads to. In code (`code`) a path of one segment names an item, never
    /// a module: it leads somewhere only through a name a `use` binds.
    pub fn resolve(&self, path: &RawPath, code: bool) -> Option<ModPath> {
        let single = code && path.segments.len() == 1;
        self.resolve_in(&path.scope, &path.segments, single, 0)
    }

    fn resolve_in(
        &self,
        scope: &ModPath,
        segments: &[String],
        single: bool,
        hops: usize,
    ) -> Option<ModPath> {
        if hops > MAX_HOPS {
            return None;
        }
        let (first, mut rest) = segments.split_first()?;
        let start = match first.as_str() {
            "crate" => ModPath::new(),
            "self" => scope.clone(),
            "super" => {
                let mut module = parent(scope)?;
                while rest.first().is_some_and(|s| s == "super") {
                    module = parent(&module)?;
                    rest = &rest[1..];
                }
                module
            }
            name => {
                let module = self.modules.get(scope)?;
                if !single && module.children.contains(name) {
                    let mut child = scope.clone();
                    child.push(name.to_string());
                    child
                } else {
                    let alias = module.aliases.get(name)?;
                    return self.follow(alias, rest, hops);
                }
            }
        };
        self.walk(start, rest, hops)
    }

    /// From module `current`, the module the segments `rest` lead to.
    fn walk(&self, mut current: ModPath, rest: &[String], hops: usize) -> Option<ModPath> {
        for (i, segment) in rest.iter().enumerate() {
            let Some(module) = self.modules.get(&current) else {
                break;
            };
            if module.children.contains(segment) {
                current.push(segment.clone());
                continue;
            }
            if let Some(alias) = module.aliases.get(segment) {
                return self.follow(alias, &rest[i + 1..], hops);
            }
            if !module.defined.contains(segment) {
                for glob in &module.globs {
                    let from = self.resolve_in(&glob.scope, &glob.segments, false, hops + 1);
                    if let Some(target) = from.filter(|t| self.gives(t, segment, hops + 1)) {
                        return self.walk(target, &rest[i..], hops + 1);
                    }
                }
            }
            break;
        }
        Some(current)
    }

    /// Where a name bound by a `use` leads, followed by the segments `rest`.
    fn follow(&self, alias: &RawPath, rest: &[String], hops: usize) -> Option<ModPath> {
        let path = [alias.segments.as_slice(), rest].concat();
        self.resolve_in(&alias.scope, &path, false, hops + 1)
    }

    /// Whether `module` has something called `name`, itself or through its glob imports.
    fn gives(&self, module: &ModPath, name: &str, hops: usize) -> bool {
        let Some(m) = self.modules.get(module).filter(|_| hops <= MAX_HOPS) else {
            return false;
        };
        m.children.contains(name)
            || m.aliases.contains_key(name)
            || m.defined.contains(name)
            || m.globs.iter().any(|glob| {
                self.resolve_in(&glob.scope, &glob.segments, false, hops + 1)
                    .is_some_and(|target| self.gives(&target, name, hops + 1))
            })
    }
}

fn parent(module: &ModPath) -> Option<ModPath> {
    let (_, parent) = module.split_last()?;
    Some(parent.to_vec())
}
