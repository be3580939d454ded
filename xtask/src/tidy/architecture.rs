//! The rule "ARCHITECTURE.md is true": every path of the repository it names (in backticks,
//! starting with one of the top-level directories) exists.

/// Every path `text` names that `exists` does not know.
pub fn check(text: &str, exists: impl Fn(&str) -> bool) -> Vec<String> {
    let mut problems = Vec::new();
    for token in text.split('`').skip(1).step_by(2) {
        let in_repository = ["host/", "tool-api/", "plugins/", "tests/", "xtask/"]
            .iter()
            .any(|top| token.starts_with(top));
        let looks_like_path = in_repository && !token.contains([' ', '<', '*']);
        if looks_like_path && !exists(token) {
            problems.push(format!(
                "ARCHITECTURE.md names `{token}`, which does not exist"
            ));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_that_does_not_exist_fails() {
        let text = "- `host/src/call/` is the call; `host/src/gone.rs` was; `plugins/<tool>/` \
                    is a pattern, `cargo xtask tidy` a command, `Host::call` a name.";
        let exists = |path: &str| path == "host/src/call/";
        assert_eq!(
            check(text, exists),
            ["ARCHITECTURE.md names `host/src/gone.rs`, which does not exist"]
        );
        assert!(check("`host/src/call/` and `xtask/` and prose", |p| p
            != "nothing")
        .is_empty());
    }
}
