use std::path::Path;

use super::*;
use crate::tidy::tree::Tree;

/// The circles of the crate whose root is the first sample.
fn circles(files: &[(&str, &str)]) -> Vec<String> {
    let tree = Tree::of(files);
    let krate = Crate::load(&tree, Path::new(files[0].0));
    assert!(krate.problems.is_empty(), "{:?}", krate.problems);
    check(&krate)
}

/// The first line of each problem: which circle.
fn heads(problems: &[String]) -> Vec<&str> {
    problems
        .iter()
        .map(|p| p.lines().next().unwrap_or(""))
        .collect()
}

const LIB: &str = "mod a;\nmod b;\n";
const B_USES_A: &str = "use crate::a::f;\npub fn g() {}\n";
const A_AND_B: &str = "c/src/lib.rs: a circle of 2 modules: a, b";

#[test]
fn a_pair_is_reported_once_with_a_line_for_each_edge() {
    let problems = circles(&[
        ("c/src/lib.rs", LIB),
        ("c/src/a.rs", "pub fn f() {}\nuse crate::b::{g, h};\n"),
        ("c/src/b.rs", B_USES_A),
    ]);
    // Two single-file rooms: the same circle, not reported again as rooms.
    assert_eq!(
        problems,
        ["c/src/lib.rs: a circle of 2 modules: a, b\
          \n      a -> b: c/src/a.rs:2 `crate::b::g`\
          \n      b -> a: c/src/b.rs:1 `crate::a::f`"]
    );
}

#[test]
fn every_path_form_makes_an_edge() {
    for a in [
        // use trees: groups, nested groups, self in a group, renames, globs
        "use crate::{b::{self as bee, g}};",
        "use crate::{x::y, b::{inner::{Deep}}};",
        "use super::b::*;",
        "use super::{b};",
        // paths in code: expressions, types, patterns, macro arguments
        "pub fn f() { crate::b::g(); }",
        "pub fn f() { super::b::g(); }",
        "pub fn f(_: crate::b::T) {}",
        "pub struct S { t: Vec<crate::b::T> }",
        "pub fn f(w: W) { let crate::b::W(_x) = w; }",
        "pub fn f(e: E) { match e { super::b::E::V => {} } }",
        "pub fn f() -> String { format!(\"{}\", crate::b::NAME) }",
        "pub fn f() { let _ = vec![super::b::g()]; }",
        "pub fn f() { assert!(matches!(x, crate::b::E::V)); }",
        "impl crate::b::Trait for S {}",
        "pub fn f() { use crate::b::g; g(); }",
        // a name bound by a `use`, then used in code
        "use crate::b as bee;\npub fn f() { bee::g() }",
    ] {
        let crate_of = |a: &str| {
            circles(&[
                ("c/src/lib.rs", "mod a;\nmod b;\nmod x;\n"),
                ("c/src/a.rs", a),
                ("c/src/b/mod.rs", "mod inner;\nuse crate::a::f;\n"),
                ("c/src/b/inner.rs", "use crate::a::f;\npub struct Deep;\n"),
                ("c/src/x.rs", "pub fn y() {}\n"),
            ])
        };
        let problems = crate_of(&format!("pub fn f() {{}}\n{a}\n"));
        // `a, b` or `a, b::inner`
        assert!(
            heads(&problems)
                .first()
                .is_some_and(|h| h.starts_with(A_AND_B)),
            "{a}: {problems:?}"
        );
        // The same in a test module is no edge.
        let problems = crate_of(&format!("pub fn f() {{}}\nmod tests {{\n{a}\n}}\n"));
        assert!(problems.is_empty(), "{a}: {problems:?}");
    }
}

#[test]
fn self_and_relative_paths_lead_from_the_module_they_are_written_in() {
    for (root, a) in [
        (
            "mod a;\npub fn root() { self::a::f() }\n",
            "use crate::root;\n",
        ),
        (
            "mod a;\npub fn root() { a::f() }\n",
            "pub fn f() { super::root() }\n",
        ),
        (
            "mod a;\nuse a::f;\npub fn root() {}\n",
            "use super::root;\n",
        ),
    ] {
        let problems = circles(&[("c/src/lib.rs", root), ("c/src/a.rs", a)]);
        assert_eq!(
            heads(&problems),
            ["c/src/lib.rs: a circle of 2 modules: crate, a"],
            "{root}"
        );
    }
    // `a::inner -> b -> a` is no circle of modules (`a` only declares `inner`), but one of rooms.
    let problems = circles(&[
        ("c/src/lib.rs", LIB),
        ("c/src/a/mod.rs", "mod inner;\npub fn f() {}\n"),
        ("c/src/a/inner.rs", "pub fn h() { super::super::b::g() }\n"),
        ("c/src/b.rs", "pub fn g() { crate::a::f() }\n"),
    ]);
    assert_eq!(
        problems,
        ["c/src/lib.rs: a circle of 2 rooms: a, b\
          \n      a -> b: c/src/a/inner.rs:1 `super::super::b::g`\
          \n      b -> a: c/src/b.rs:1 `crate::a::f`"]
    );
}

#[test]
fn paths_that_leave_the_crate_or_name_locals_make_no_edge() {
    // `$crate` in a macro's body is the crate of whoever expands it.
    let a = "use std::fmt;\nuse serde::Serialize;\npub fn f(b: u8) -> u8 { b }\n\
             pub(in crate::b) fn g() -> fmt::Result { ::b::x(); Ok(()) }\n\
             macro_rules! m { () => { $crate::b::g() }; }\n";
    assert!(circles(&[
        ("c/src/lib.rs", LIB),
        ("c/src/a.rs", a),
        ("c/src/b.rs", B_USES_A)
    ])
    .is_empty());
}

#[test]
fn a_parent_and_its_child_importing_each_other_is_a_circle() {
    let parent = "mod child;\npub struct Item;\npub fn f() { child::g() }\n";
    let child = "use super::Item;\npub fn g() {}\n";
    let problems = circles(&[
        ("c/src/lib.rs", "mod a;\n"),
        ("c/src/a/mod.rs", parent),
        ("c/src/a/child.rs", child),
    ]);
    assert_eq!(
        problems,
        ["c/src/lib.rs: a circle of 2 modules: a, a::child\
          \n      a -> a::child: c/src/a/mod.rs:3 `child::g`\
          \n      a::child -> a: c/src/a/child.rs:1 `super::Item`"]
    );
    // `mod child;` alone is structure.
    let problems = circles(&[
        ("c/src/lib.rs", "mod a;\n"),
        ("c/src/a/mod.rs", "mod child;\npub struct Item;\n"),
        ("c/src/a/child.rs", child),
    ]);
    assert!(problems.is_empty(), "{problems:?}");
}

#[test]
fn a_re_export_is_a_facade() {
    // The root re-exports its child's item and the child uses the root: no circle.
    let facade = "mod a;\npub use a::A;\npub(crate) use a::f as g;\npub const LIMIT: u8 = 1;\n";
    let a = "pub struct A;\npub fn f() -> u8 { crate::LIMIT }\n";
    assert!(circles(&[("c/src/lib.rs", facade), ("c/src/a.rs", a)]).is_empty());
    // Unless the root's own code names what it re-exports.
    let uses = format!("{facade}pub fn make() -> A {{ A }}\n");
    let problems = circles(&[("c/src/lib.rs", &uses), ("c/src/a.rs", a)]);
    assert_eq!(
        heads(&problems),
        ["c/src/lib.rs: a circle of 2 modules: crate, a"]
    );
    // A path through the facade leads to where the item is: `crate::Thing` is `b`'s.
    let problems = circles(&[
        ("c/src/lib.rs", "mod a;\nmod b;\npub use b::Thing;\n"),
        ("c/src/a.rs", "pub fn f(_: crate::Thing) {}\n"),
        (
            "c/src/b.rs",
            "pub struct Thing;\npub fn g() { crate::a::f(Thing) }\n",
        ),
    ]);
    assert_eq!(heads(&problems), [A_AND_B]);
    // Through glob re-exports too.
    let problems = circles(&[
        ("c/src/lib.rs", "mod abi;\nmod other;\npub use abi::*;\n"),
        ("c/src/abi/mod.rs", "mod types;\npub use types::*;\n"),
        (
            "c/src/abi/types.rs",
            "pub struct T;\npub fn t() { crate::other::o() }\n",
        ),
        ("c/src/other.rs", "use crate::T;\npub fn o() {}\n"),
    ]);
    assert_eq!(
        heads(&problems)[0],
        "c/src/lib.rs: a circle of 2 modules: abi::types, other"
    );
    // A re-export of what is not below is a dependency like any `use`.
    let problems = circles(&[
        ("c/src/lib.rs", LIB),
        ("c/src/a.rs", "pub use crate::b::g;\npub fn f() {}\n"),
        ("c/src/b.rs", B_USES_A),
    ]);
    assert_eq!(heads(&problems), [A_AND_B]);
}

#[test]
fn test_code_is_left_out_and_only_it() {
    let a = "#[cfg(test)]\nuse crate::b::g;\n#[cfg(test)]\nfn helper() { crate::b::g() }\n\
             #[test]\nfn t() { crate::b::g() }\npub fn f() {}\n\
             #[cfg(all(test, unix))]\nmod unix_tests { use crate::b::*; }\n\
             mod tests { use crate::b::*; }\n\
             #[cfg(test)]\n#[path = \"a_tests.rs\"]\nmod checks;\n";
    let files = [
        ("c/src/lib.rs", LIB),
        ("c/src/a.rs", a),
        ("c/src/a_tests.rs", "use crate::b::g;\n"),
        ("c/src/b.rs", B_USES_A),
    ];
    assert!(circles(&files).is_empty());
    // A `#[cfg(test)]` item hides nothing after it.
    let a = format!("{a}pub fn after() {{ crate::b::g() }}\n");
    let problems = circles(&[files[0], ("c/src/a.rs", &a), files[2], files[3]]);
    assert_eq!(
        problems,
        ["c/src/lib.rs: a circle of 2 modules: a, b\
          \n      a -> b: c/src/a.rs:14 `crate::b::g`\
          \n      b -> a: c/src/b.rs:1 `crate::a::f`"]
    );
}

#[test]
fn a_path_attribute_names_the_file_of_a_module() {
    let problems = circles(&[
        ("c/src/lib.rs", LIB),
        (
            "c/src/a.rs",
            "#[path = \"elsewhere.rs\"]\nmod imp;\npub fn f() { imp::h() }\n",
        ),
        ("c/src/elsewhere.rs", "pub fn h() { crate::b::g() }\n"),
        ("c/src/b.rs", B_USES_A),
    ]);
    assert_eq!(
        problems,
        [
            "c/src/lib.rs: a circle of 3 modules: a, a::imp, b\
          \n      a -> a::imp: c/src/a.rs:3 `imp::h`\
          \n      a::imp -> b: c/src/elsewhere.rs:1 `crate::b::g`\
          \n      b -> a: c/src/b.rs:1 `crate::a::f`",
            "c/src/lib.rs: a circle of 2 rooms: a, b\
          \n      a -> b: c/src/elsewhere.rs:1 `crate::b::g`\
          \n      b -> a: c/src/b.rs:1 `crate::a::f`"
        ]
    );
}

#[test]
fn a_longer_circle_is_one_circle() {
    let problems = circles(&[
        ("c/src/lib.rs", "mod a;\nmod b;\nmod c;\nmod d;\n"),
        ("c/src/a.rs", "pub fn x() { crate::b::x() }\n"),
        ("c/src/b.rs", "pub fn x() { crate::c::x() }\n"),
        (
            "c/src/c.rs",
            "pub fn x() { crate::a::x(); crate::d::x() }\n",
        ),
        ("c/src/d.rs", "pub fn x() {}\n"),
    ]);
    assert_eq!(
        problems,
        ["c/src/lib.rs: a circle of 3 modules: a, b, c\
          \n      a -> b: c/src/a.rs:1 `crate::b::x`\
          \n      b -> c: c/src/b.rs:1 `crate::c::x`\
          \n      c -> a: c/src/c.rs:1 `crate::a::x`"]
    );
}

#[test]
fn rooms_in_a_circle_without_their_files_being_in_one() {
    let mut files = vec![
        ("c/src/lib.rs", "mod call;\nmod policy;\n"),
        ("c/src/call/mod.rs", "mod flow;\nmod task;\n"),
        (
            "c/src/call/flow.rs",
            "use crate::policy::approval::decide;\nuse crate::policy::approval::Mode;\n",
        ),
        ("c/src/call/task.rs", "pub struct Task;\n"),
        ("c/src/policy/mod.rs", "pub mod approval;\nmod commands;\n"),
        ("c/src/policy/approval.rs", "pub fn decide() {}\n"),
        (
            "c/src/policy/commands.rs",
            "pub fn check(_: &crate::call::task::Task) {}\n",
        ),
    ];
    assert_eq!(
        circles(&files),
        ["c/src/lib.rs: a circle of 2 rooms: call, policy\
          \n      call -> policy: c/src/call/flow.rs:1 `crate::policy::approval::decide` (and 1 more line)\
          \n      policy -> call: c/src/policy/commands.rs:1 `crate::call::task::Task`"]
    );
    files[6].1 = "pub fn check() {}\n";
    assert!(circles(&files).is_empty());
}

#[test]
fn a_local_named_like_a_module_is_no_path_to_it() {
    let root = "mod pattern;\npub fn f(pattern: u8) -> u8 { pattern }\npub const X: u8 = 1;\n";
    let pattern = "pub fn p() -> u8 { crate::X }\n";
    assert!(circles(&[("c/src/lib.rs", root), ("c/src/pattern.rs", pattern)]).is_empty());
}

#[test]
fn a_file_that_is_not_rust_or_is_missing_is_a_problem() {
    let tree = Tree::of(&[
        ("c/src/lib.rs", "mod a;\nmod gone;\n"),
        ("c/src/a.rs", "fn (\n"),
    ]);
    let krate = Crate::load(&tree, Path::new("c/src/lib.rs"));
    assert_eq!(krate.problems.len(), 2, "{:?}", krate.problems);
    assert_eq!(krate.problems[0], "c/src/lib.rs: no file for `mod gone;`");
    assert!(
        krate.problems[1].starts_with("c/src/a.rs: cannot be read as Rust: line 1:"),
        "{:?}",
        krate.problems
    );
}
