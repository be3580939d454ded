//! The rule "no circles": in a crate, no module depends on itself through the modules it
//! imports, neither between files (modules) nor between rooms (the top-level modules:
//! `host/src/call/`, `host/src/frontends/`, …; a file at the top level, and the crate root, is
//! a room of its own).
//!
//! A module depends on the module every path it writes leads to (see [`super::resolve`]): the
//! leaves of its `use` items and the paths in its code, outside test code. A `mod x;`
//! declaration is structure, not a dependency. A parent and its child are no exception: a
//! child using an item of its parent's `mod.rs` while the parent uses the child is a circle.
//!
//! **Re-exports are a facade**: a `use` with a visibility (`pub`, `pub(crate)`, …) of items of
//! the module's own descendants makes no dependency, and a path through it leads to the module
//! that holds the item (`crate::Host` is `call::Host` when the root re-exports it). The module
//! itself depends on the item only where its own code names it (`pub use child::Item;` and
//! `fn f() -> Item` in the parent is the parent using the child). A re-export of anything else
//! (`pub use super::found::Word`) is a dependency like any `use`.
//!
//! Each circle is a strongly connected component of the graph (Tarjan's algorithm), reported
//! once with every dependency in it and one line that makes it. A circle of rooms made only of
//! single-file rooms is the same circle as the one of their modules, and is reported once.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use super::crates::Crate;
use super::syntax::{Kind, ModPath};

/// The lines that make one dependency (file and line), with the path written on each.
type Sites = BTreeMap<(PathBuf, usize), String>;

/// The dependencies between nodes (modules or rooms).
type Graph = BTreeMap<(ModPath, ModPath), Sites>;

/// The circles of one crate, modules and rooms.
pub fn check(krate: &Crate) -> Vec<String> {
    let modules = module_graph(krate);
    let mut problems = report(krate, "modules", &modules);
    let rooms = room_graph(&modules);
    let single_file = |room: &ModPath| {
        krate
            .files
            .iter()
            .filter(|f| f.module.first() == room.first())
            .count()
            == 1
    };
    for component in components(&rooms) {
        if !component.iter().all(single_file) {
            problems.push(describe(krate, "rooms", &component, &rooms));
        }
    }
    problems
}

/// Which module depends on which, and where.
fn module_graph(krate: &Crate) -> Graph {
    let mut graph = Graph::new();
    for file in &krate.files {
        for used in &file.facts.paths {
            let Some(target) = krate.resolve(&used.path, used.kind == Kind::Code) else {
                continue;
            };
            let scope = &used.path.scope;
            let below = target.len() > scope.len() && target.starts_with(scope);
            if below && used.kind == (Kind::Use { reexport: true }) {
                continue;
            }
            let Some(to) = krate.modules.get(&target).map(|m| m.file_module.clone()) else {
                continue;
            };
            if to != file.module {
                graph
                    .entry((file.module.clone(), to))
                    .or_default()
                    .entry((file.path.clone(), used.line))
                    .or_insert_with(|| used.path.segments.join("::"));
            }
        }
    }
    graph
}

/// The dependencies between rooms, from those between modules.
fn room_graph(modules: &Graph) -> Graph {
    let room = |module: &ModPath| module.iter().take(1).cloned().collect::<ModPath>();
    let mut rooms = Graph::new();
    for ((from, to), sites) in modules {
        if room(from) != room(to) {
            let entry = rooms.entry((room(from), room(to))).or_default();
            for (site, path) in sites {
                entry.entry(site.clone()).or_insert_with(|| path.clone());
            }
        }
    }
    rooms
}

fn report(krate: &Crate, what: &str, graph: &Graph) -> Vec<String> {
    components(graph)
        .iter()
        .map(|component| describe(krate, what, component, graph))
        .collect()
}

/// One circle: its nodes, then each dependency between them with its first line.
fn describe(krate: &Crate, what: &str, component: &[ModPath], graph: &Graph) -> String {
    let names: Vec<String> = component.iter().map(name).collect();
    let mut text = format!(
        "{}: a circle of {} {what}: {}",
        krate.root.display(),
        component.len(),
        names.join(", ")
    );
    let members: BTreeSet<&ModPath> = component.iter().collect();
    for ((from, to), sites) in graph {
        if !members.contains(from) || !members.contains(to) {
            continue;
        }
        let Some(((file, line), path)) = sites.first_key_value() else {
            continue;
        };
        let more = match sites.len() - 1 {
            0 => String::new(),
            1 => " (and 1 more line)".to_string(),
            n => format!(" (and {n} more lines)"),
        };
        text.push_str(&format!(
            "\n      {} -> {}: {}:{line} `{path}`{more}",
            name(from),
            name(to),
            file.display()
        ));
    }
    text
}

/// `crate` for the root, `call::flow` for the others.
fn name(module: &ModPath) -> String {
    if module.is_empty() {
        "crate".to_string()
    } else {
        module.join("::")
    }
}

/// The strongly connected components of more than one node, each sorted, in order.
fn components(graph: &Graph) -> Vec<Vec<ModPath>> {
    let nodes: Vec<&ModPath> = graph
        .keys()
        .flat_map(|(from, to)| [from, to])
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let index: BTreeMap<&ModPath, usize> = nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
    let mut successors = vec![Vec::new(); nodes.len()];
    for (from, to) in graph.keys() {
        successors[index[from]].push(index[to]);
    }
    let mut tarjan = Tarjan {
        successors,
        order: vec![None; nodes.len()],
        low: vec![0; nodes.len()],
        on_stack: vec![false; nodes.len()],
        stack: Vec::new(),
        next: 0,
        components: Vec::new(),
    };
    for v in 0..nodes.len() {
        if tarjan.order[v].is_none() {
            tarjan.connect(v);
        }
    }
    let mut out: Vec<Vec<ModPath>> = tarjan
        .components
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| {
            let mut c: Vec<ModPath> = c.into_iter().map(|i| nodes[i].clone()).collect();
            c.sort();
            c
        })
        .collect();
    out.sort();
    out
}

/// Tarjan's strongly connected components over node indices.
struct Tarjan {
    successors: Vec<Vec<usize>>,
    /// The order in which each node was reached.
    order: Vec<Option<usize>>,
    /// The earliest node reachable from each node's subtree that is still on the stack.
    low: Vec<usize>,
    on_stack: Vec<bool>,
    stack: Vec<usize>,
    next: usize,
    components: Vec<Vec<usize>>,
}

impl Tarjan {
    fn connect(&mut self, v: usize) {
        self.order[v] = Some(self.next);
        self.low[v] = self.next;
        self.next += 1;
        self.stack.push(v);
        self.on_stack[v] = true;
        for k in 0..self.successors[v].len() {
            let w = self.successors[v][k];
            match self.order[w] {
                None => {
                    self.connect(w);
                    self.low[v] = self.low[v].min(self.low[w]);
                }
                Some(order) if self.on_stack[w] => self.low[v] = self.low[v].min(order),
                Some(_) => {}
            }
        }
        if Some(self.low[v]) == self.order[v] {
            let mut component = Vec::new();
            while let Some(w) = self.stack.pop() {
                self.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            self.components.push(component);
        }
    }
}

#[cfg(test)]
#[path = "circles_tests.rs"]
mod tests;
