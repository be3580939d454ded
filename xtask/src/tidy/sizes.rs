//! The rule "small files": a source file of the product stays within [`MAX_LINES`] lines,
//! except the tables listed in [`LISTED_TABLES`] (data, one entry per thing they describe;
//! their logic lives beside them and keeps the budget). The list stays true: a listed file
//! that is gone or back within the budget is a problem too.

use std::collections::BTreeMap;
use std::path::Path;

use super::tree::Tree;

/// The line budget of one source file.
pub const MAX_LINES: usize = 500;

/// Files over the budget because they are tables, with what they hold.
pub const LISTED_TABLES: [(&str, &str); 1] = [(
    "host/command-policy/src/risky/tables.rs",
    "the options that run code or write files: one entry per program and per git subcommand, \
     find's primaries, ssh's command keys, git's configuration options",
)];

/// Every file of `tree` over the budget that is not a listed table.
pub fn check(tree: &Tree) -> Vec<String> {
    check_with(tree, &LISTED_TABLES)
}

fn check_with(tree: &Tree, tables: &[(&str, &str)]) -> Vec<String> {
    let listed: BTreeMap<&str, &str> = tables.iter().copied().collect();
    let mut problems: Vec<String> = tree
        .files()
        .filter_map(|(file, text)| {
            let lines = text.lines().count();
            let name = file.to_string_lossy();
            (lines > MAX_LINES && !listed.contains_key(name.as_ref())).then(|| {
                format!("{name}: {lines} lines, over the budget of {MAX_LINES} (split it, or list it as a table)")
            })
        })
        .collect();
    for (table, _) in tables {
        match tree.get(Path::new(table)).map(|text| text.lines().count()) {
            None => problems.push(format!("{table} is listed as a table, but does not exist")),
            Some(lines) if lines <= MAX_LINES => problems.push(format!(
                "{table} is listed as a table, but has {lines} lines, within the budget (unlist it)"
            )),
            Some(_) => {}
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(n: usize) -> String {
        "fn f() {}\n".repeat(n)
    }

    #[test]
    fn a_file_over_the_budget_fails_unless_it_is_a_listed_table() {
        let long = lines(MAX_LINES + 1);
        let tree = Tree::of(&[("host/src/long.rs", &long), ("host/src/table.rs", &long)]);
        assert_eq!(
            check_with(&tree, &[("host/src/table.rs", "a table")]),
            ["host/src/long.rs: 501 lines, over the budget of 500 (split it, or list it as a table)"]
        );
    }

    #[test]
    fn a_file_at_the_budget_passes() {
        let tree = Tree::of(&[("host/src/full.rs", &lines(MAX_LINES))]);
        assert!(check_with(&tree, &[]).is_empty());
    }

    #[test]
    fn a_listed_table_that_is_gone_or_small_fails() {
        let tree = Tree::of(&[("host/src/small.rs", &lines(MAX_LINES))]);
        assert_eq!(
            check_with(&tree, &[("host/src/small.rs", "a table"), ("host/src/gone.rs", "a table")]),
            [
                "host/src/small.rs is listed as a table, but has 500 lines, within the budget (unlist it)",
                "host/src/gone.rs is listed as a table, but does not exist",
            ]
        );
    }
}
