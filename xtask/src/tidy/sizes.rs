//! The rule "small files": a source file of the product stays within [`MAX_LINES`] lines,
//! except the tables listed in [`LISTED_TABLES`] (data, one entry per thing they describe;
//! their logic lives beside them and keeps the budget).

use std::collections::BTreeMap;

use super::tree::Tree;

/// The line budget of one source file.
pub const MAX_LINES: usize = 500;

/// Files over the budget because they are tables, with what they hold.
pub const LISTED_TABLES: [(&str, &str); 2] = [
    (
        "host/command-policy/src/risky/tables.rs",
        "the options that run code or write files, one entry per program and per git subcommand",
    ),
    (
        "host/command-policy/src/wrappers/tables.rs",
        "the commands that run commands, one entry per wrapper with how it reads its arguments",
    ),
];

/// Every file of `tree` over the budget that is not a listed table.
pub fn check(tree: &Tree) -> Vec<String> {
    check_with(tree, &LISTED_TABLES)
}

fn check_with(tree: &Tree, tables: &[(&str, &str)]) -> Vec<String> {
    let listed: BTreeMap<&str, &str> = tables.iter().copied().collect();
    tree.files()
        .filter_map(|(file, text)| {
            let lines = text.lines().count();
            let name = file.to_string_lossy();
            (lines > MAX_LINES && !listed.contains_key(name.as_ref())).then(|| {
                format!("{name}: {lines} lines, over the budget of {MAX_LINES} (split it, or list it as a table)")
            })
        })
        .collect()
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
}
