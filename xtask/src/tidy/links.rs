//! The rule "links resolve": every relative link of the documents a user reads (README.md,
//! docs/*.md, ARCHITECTURE.md) names a file or directory that exists and, with `#anchor`, a
//! heading of that file. Links to other sites are not followed.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// The documents whose links are checked, relative to the workspace root `root`.
pub fn documents(root: &Path) -> Vec<String> {
    let mut docs: Vec<String> = std::fs::read_dir(root.join("docs"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.file_name().into_string().ok())
        .filter(|name| name.ends_with(".md"))
        .map(|name| format!("docs/{name}"))
        .collect();
    docs.sort();
    [vec!["README.md".into(), "ARCHITECTURE.md".into()], docs].concat()
}

/// Every link of the files `sources` that does not resolve. `read` gives a file's text (`None`
/// when it cannot be read), `exists` whether a file or directory exists; paths are relative
/// to the workspace root, with `/` between their parts.
pub fn check(
    sources: &[String],
    read: impl Fn(&str) -> Option<String>,
    exists: impl Fn(&str) -> bool,
) -> Vec<String> {
    let mut headings: BTreeMap<String, Option<Vec<String>>> = BTreeMap::new();
    let mut problems = Vec::new();
    for source in sources {
        let Some(text) = read(source) else {
            problems.push(format!("{source}: cannot be read"));
            continue;
        };
        for (line, dest) in links(&text) {
            let at = format!("{source}:{line}: the link `{dest}`");
            let (path, anchor) = dest.split_once('#').unwrap_or((&dest, ""));
            let target = if path.is_empty() {
                Ok(source.clone())
            } else {
                resolve(source, path)
            };
            let target = match target {
                Ok(target) if exists(&target) => target,
                Ok(target) => {
                    problems.push(format!("{at} leads to {target}, which does not exist"));
                    continue;
                }
                Err(why) => {
                    problems.push(format!("{at} {why}"));
                    continue;
                }
            };
            if anchor.is_empty() {
                continue;
            }
            if !target.ends_with(".md") {
                problems.push(format!(
                    "{at} has an anchor into {target}, which is not Markdown and has no headings"
                ));
                continue;
            }
            let known = headings
                .entry(target.clone())
                .or_insert_with(|| read(&target).map(|text| anchors(&text)));
            if !known
                .as_ref()
                .is_some_and(|known| known.iter().any(|a| a == anchor))
            {
                problems.push(format!(
                    "{at}: {target} has no heading whose anchor is #{anchor}"
                ));
            }
        }
    }
    problems
}

/// The line and destination of every link and image of `text` that is not a URL.
fn links(text: &str) -> Vec<(usize, String)> {
    Parser::new_ext(text, Options::ENABLE_TABLES)
        .into_offset_iter()
        .filter_map(|(event, range)| match event {
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                Some((text[..range.start].matches('\n').count() + 1, dest_url))
            }
            _ => None,
        })
        .filter(|(_, dest)| !is_url(dest))
        .map(|(line, dest)| (line, dest.into_string()))
        .collect()
}

/// Whether `dest` starts with a URL scheme (`https:`, `mailto:`), as RFC 3986 spells one.
fn is_url(dest: &str) -> bool {
    dest.split_once(':').is_some_and(|(scheme, _)| {
        scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    })
}

/// `path` read from the directory of the file `source`, without `.` and `..`.
fn resolve(source: &str, path: &str) -> Result<String, &'static str> {
    if path.starts_with('/') {
        return Err("is absolute; a link between documents is relative to its file");
    }
    let mut parts: Vec<&str> = source.split('/').collect();
    parts.pop();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop().ok_or("leads out of the repository")?;
            }
            part => parts.push(part),
        }
    }
    Ok(parts.join("/"))
}

/// The anchors of the headings of `text`, as GitHub makes them: the heading's text in lower
/// case, spaces made `-`, other characters than letters, digits, `-` and `_` dropped; an anchor
/// already taken gets the first free `-1`, `-2`… Hand-written because no crate makes GitHub's
/// anchors: this follows its own slugger (github-slugger, JavaScript).
fn anchors(text: &str) -> Vec<String> {
    let mut anchors = Vec::new();
    let mut taken: HashMap<String, usize> = HashMap::new();
    let mut heading: Option<String> = None;
    for event in Parser::new_ext(text, Options::ENABLE_TABLES) {
        match (event, heading.as_mut()) {
            (Event::Start(Tag::Heading { .. }), _) => heading = Some(String::new()),
            (Event::Text(part) | Event::Code(part), Some(words)) => words.push_str(&part),
            (Event::End(TagEnd::Heading(_)), Some(words)) => {
                let slug: String = words
                    .to_lowercase()
                    .chars()
                    .filter_map(|c| match c {
                        ' ' => Some('-'),
                        c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                        _ => None,
                    })
                    .collect();
                let mut anchor = slug.clone();
                while taken.contains_key(&anchor) {
                    let n = taken.entry(slug.clone()).or_default();
                    *n += 1;
                    anchor = format!("{slug}-{n}");
                }
                taken.insert(anchor.clone(), 0);
                anchors.push(anchor);
                heading = None;
            }
            _ => {}
        }
    }
    anchors
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A repository of the given files, for `check`.
    fn check_files(files: &[(&str, &str)]) -> Vec<String> {
        let files: BTreeMap<String, String> = files
            .iter()
            .map(|(path, text)| (path.to_string(), text.to_string()))
            .collect();
        let sources: Vec<String> = files
            .keys()
            .filter(|p| p.ends_with(".md"))
            .cloned()
            .collect();
        let exists = |path: &str| {
            files.contains_key(path) || files.keys().any(|p| p.starts_with(&format!("{path}/")))
        };
        check(&sources, |path| files.get(path).cloned(), exists)
    }

    const README: &str = "# toolhost\n\nSee [the sandbox](docs/security.md#command-sandbox), \
        [MCP limits](docs/mcp.md#limits), [the tools](#the-tools), [a crate](host/), \
        [the site](https://example.com/#nothing) and `[not a link](gone.md)`.\n\n\
        ## The tools\n\n| tool | see |\n|---|---|\n| `x` | [Hot swap](docs/mcp.md#hot-swap-1) |\n";
    const SECURITY: &str = "# Security: what holds\n\n## Command sandbox\n\nBack to the \
        [README](../README.md#toolhost) and [its section](../README.md#the-tools).\n\n\
        ```sh\n# not a heading\n[nor](a-link.md)\n```\n";
    const MCP: &str = "# MCP\n\n### Limits\n\n## Hot swap\n\n## Hot swap\n\n\
        [Who answers](security.md#security-what-holds).\n";

    #[test]
    fn links_that_resolve_pass() {
        let files = [
            ("README.md", README),
            ("docs/security.md", SECURITY),
            ("docs/mcp.md", MCP),
            ("host/Cargo.toml", ""),
        ];
        assert_eq!(check_files(&files), Vec::<String>::new());
    }

    #[test]
    fn a_missing_file_or_heading_fails() {
        let readme = README
            .replace(
                "security.md#command-sandbox",
                "security.md#command-sandbox-1",
            )
            .replace("docs/mcp.md#limits", "docs/limits.md")
            .replace("(#the-tools)", "(#tools)")
            .replace("(host/)", "(../host/)");
        let files = [
            ("README.md", readme.as_str()),
            (
                "docs/security.md",
                &SECURITY.replace("../README.md#toolhost", "README.md"),
            ),
            (
                "docs/mcp.md",
                &MCP.replace("#security-what-holds", "#security"),
            ),
            ("host/Cargo.toml", ""),
            ("host/src/lib.rs", "[not read](nowhere.md)"),
        ];
        let readme_line = 3;
        assert_eq!(
            check_files(&files),
            [
                format!("README.md:{readme_line}: the link `docs/security.md#command-sandbox-1`: docs/security.md has no heading whose anchor is #command-sandbox-1"),
                format!("README.md:{readme_line}: the link `docs/limits.md` leads to docs/limits.md, which does not exist"),
                format!("README.md:{readme_line}: the link `#tools`: README.md has no heading whose anchor is #tools"),
                format!("README.md:{readme_line}: the link `../host/` leads out of the repository"),
                "docs/mcp.md:9: the link `security.md#security`: docs/security.md has no heading whose anchor is #security".into(),
                "docs/security.md:5: the link `README.md` leads to docs/README.md, which does not exist".into(),
            ]
        );
    }

    #[test]
    fn anchors_follow_github() {
        let text = "# Security: what holds against a hostile model\n\n\
            ## Committed files that `.clineignore` blocks\n\n## Questions over `serve --ask`\n\n\
            ## Hot swap\n\n## Hot swap\n\nSetext heading\n---\n\n## Fuzzing (`cargo xtask fuzz [--time SECONDS]`)\n";
        assert_eq!(
            anchors(text),
            [
                "security-what-holds-against-a-hostile-model",
                "committed-files-that-clineignore-blocks",
                "questions-over-serve---ask",
                "hot-swap",
                "hot-swap-1",
                "setext-heading",
                "fuzzing-cargo-xtask-fuzz---time-seconds",
            ]
        );
    }

    #[test]
    fn an_anchor_into_a_file_that_is_not_markdown_fails() {
        let files = [
            ("README.md", "[code](host/src/lib.rs#L3)"),
            ("host/src/lib.rs", ""),
        ];
        assert_eq!(
            check_files(&files),
            ["README.md:1: the link `host/src/lib.rs#L3` has an anchor into host/src/lib.rs, which is not Markdown and has no headings"]
        );
    }
}
