#![allow(clippy::unwrap_used)]

use super::*;
use crate::preprocess::patch_lines;

fn files(entries: &[(&str, &str)]) -> HashMap<String, String> {
    entries
        .iter()
        .map(|(p, t)| (p.to_string(), t.to_string()))
        .collect()
}

/// Parses a raw patch (preprocessed as the tool does) against the given files.
fn run(patch: &str, entries: &[(&str, &str)]) -> Result<Parsed, String> {
    let lines = patch_lines(patch).map_err(|e| e.0)?;
    parse(&lines, &files(entries), &|| false).map_err(|e| e.0)
}

fn chunk(orig_index: usize, del: &[&str], ins: &[&str]) -> Chunk {
    Chunk {
        orig_index,
        del_lines: del.iter().map(|s| s.to_string()).collect(),
        ins_lines: ins.iter().map(|s| s.to_string()).collect(),
    }
}

fn update(chunks: Vec<Chunk>, move_to: Option<&str>) -> Action {
    Action::Update {
        chunks,
        move_to: move_to.map(str::to_string),
    }
}

fn parsed(actions: Vec<(&str, Action)>, fuzz: u64) -> Result<Parsed, String> {
    Ok(Parsed {
        actions: actions
            .into_iter()
            .map(|(p, a)| (p.to_string(), a))
            .collect(),
        fuzz,
    })
}

#[test]
fn every_kind_of_action_is_parsed() {
    let patch = "*** Begin Patch\n*** Add File: n.txt\n+one\n+\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n x\n-y\n+Y\n z\n*** Delete File: d.txt\n*** End Patch";
    assert_eq!(
        run(patch, &[("a.txt", "x\ny\nz\n"), ("d.txt", "gone")]),
        parsed(
            vec![
                (
                    "n.txt",
                    Action::Add {
                        content: "one\n".to_string()
                    }
                ),
                (
                    "a.txt",
                    update(vec![chunk(1, &["y"], &["Y"])], Some("b.txt"))
                ),
                ("d.txt", Action::Delete),
            ],
            0
        )
    );
}

#[test]
fn hunks_are_placed_after_their_anchor_and_each_other() {
    let file = "fn a() {\n    x\n}\nfn b() {\n    x\n}\n";
    let patch = "*** Begin Patch\n*** Update File: f\n@@ fn b() {\n-    x\n+    y\n@@\n }\n+// end\n*** End Patch";
    assert_eq!(
        run(patch, &[("f", file)]),
        parsed(
            vec![(
                "f",
                update(
                    vec![chunk(4, &["    x"], &["    y"]), chunk(6, &[], &["// end"])],
                    None
                )
            )],
            0
        )
    );
}

#[test]
fn a_trimmed_anchor_match_costs_one_fuzz() {
    let patch = "*** Begin Patch\n*** Update File: f\n@@ fn b() {\n-x\n+y\n*** End Patch";
    assert_eq!(
        run(patch, &[("f", "  fn b() {\nx\n")]),
        parsed(vec![("f", update(vec![chunk(1, &["x"], &["y"])], None))], 1)
    );
}

#[test]
fn the_first_hunk_may_omit_its_header() {
    assert_eq!(
        run("*** Update File: f\n a\n-b\n+B", &[("f", "a\nb\n")]),
        parsed(vec![("f", update(vec![chunk(1, &["b"], &["B"])], None))], 0)
    );
}

#[test]
fn a_blank_line_after_the_update_line_is_a_separator() {
    // Cline loops forever on this input.
    let patch = "*** Begin Patch\n*** Update File: f\n\n@@\n a\n-b\n+B\n*** End Patch";
    assert_eq!(
        run(patch, &[("f", "a\nb\n")]),
        parsed(vec![("f", update(vec![chunk(1, &["b"], &["B"])], None))], 0)
    );
    let headerless = "*** Begin Patch\n*** Update File: f\n\n a\n-b\n+B\n*** End Patch";
    assert_eq!(
        run(headerless, &[("f", "a\nb\n")]),
        parsed(vec![("f", update(vec![chunk(1, &["b"], &["B"])], None))], 0)
    );
}

#[test]
fn blank_lines_between_hunks_and_sections_separate_them() {
    // Cline throws `Invalid Line:` at the blank line between the hunks.
    let patch = "*** Begin Patch\n*** Update File: f\n@@\n a\n-b\n+B\n\n@@\n c\n-d\n+D\n\n\n*** Delete File: g\n\n*** Add File: h\n+h\n\n*** End Patch";
    assert_eq!(
        run(patch, &[("f", "a\nb\nc\nd\n"), ("g", "")]),
        parsed(
            vec![
                (
                    "f",
                    update(
                        vec![chunk(1, &["b"], &["B"]), chunk(3, &["d"], &["D"])],
                        None
                    )
                ),
                ("g", Action::Delete),
                (
                    "h",
                    Action::Add {
                        content: "h".to_string()
                    }
                ),
            ],
            0
        )
    );
}

#[test]
fn blank_lines_inside_a_hunk_are_empty_context_lines() {
    let patch = "*** Begin Patch\n*** Update File: f\n@@\n a\n\n\n-b\n+B\n*** End Patch";
    assert_eq!(
        run(patch, &[("f", "a\n\n\nb\n")]),
        parsed(vec![("f", update(vec![chunk(3, &["b"], &["B"])], None))], 0)
    );
    // Leading blank lines of a hunk are not part of it.
    let leading = "*** Begin Patch\n*** Update File: f\n@@\n\n a\n-b\n+B\n*** End Patch";
    assert_eq!(
        run(leading, &[("f", "a\nb\n")]),
        parsed(vec![("f", update(vec![chunk(1, &["b"], &["B"])], None))], 0)
    );
}

#[test]
fn a_blank_line_inside_added_content_is_still_an_error() {
    assert_eq!(
        run(
            "*** Begin Patch\n*** Add File: n\n+a\n\n+b\n*** End Patch",
            &[]
        ),
        Err("Invalid Add File line (missing '+'): ".to_string())
    );
}

#[test]
fn end_of_file_hunks_are_anchored_at_the_end() {
    let patch =
        "*** Begin Patch\n*** Update File: f\n@@\n x\n-end\n+END\n\n*** End of File\n*** End Patch";
    assert_eq!(
        run(patch, &[("f", "x\nend\nx\nend\n")]),
        parsed(
            vec![("f", update(vec![chunk(3, &["end"], &["END"])], None))],
            0
        )
    );
}

#[test]
fn hunks_that_do_not_fit_fail_the_patch() {
    // Cline skips such a hunk and reports success.
    let patch = "*** Begin Patch\n*** Update File: f\n@@\n nothing\n-like\n+this\n*** End Patch";
    assert_eq!(
        run(patch, &[("f", "a\nb\n")]),
        Err("f: hunk 1 does not match the file; these lines were not found:\nnothing\nlike\nNo file was changed. Read the file again and copy the context lines exactly.".to_string())
    );
    let second = "*** Begin Patch\n*** Update File: f\n@@\n a\n-b\n+B\n@@ zz\n+new\n*** End Patch";
    assert_eq!(
        run(second, &[("f", "a\nb\n")]),
        Err("f: hunk 2 cannot be placed: its line '@@ zz' is not in the file and the hunk has no context lines. No file was changed.".to_string())
    );
}

#[test]
fn a_missing_anchor_is_ignored_when_the_context_places_the_hunk() {
    let patch = "*** Begin Patch\n*** Update File: f\n@@ class Gone\n a\n-b\n+B\n*** End Patch";
    assert_eq!(
        run(patch, &[("f", "a\nb\n")]),
        parsed(vec![("f", update(vec![chunk(1, &["b"], &["B"])], None))], 0)
    );
}

#[test]
fn lines_that_cannot_start_a_hunk_are_invalid() {
    // At the start of a file Cline loops forever on both.
    assert_eq!(
        run(
            "*** Begin Patch\n*** Update File: f\n***\n*** End Patch",
            &[("f", "a")]
        ),
        Err("Invalid Line:\n***".to_string())
    );
    assert_eq!(
        run(
            "*** Begin Patch\n*** Update File: f\n@@x\n a\n*** End Patch",
            &[("f", "a")]
        ),
        Err("Invalid Line:\n@@x".to_string())
    );
    assert_eq!(
        run(
            "*** Begin Patch\n*** Update File: f\n@@\n a\n*** Oops\n*** End Patch",
            &[("f", "a")]
        ),
        Err("Invalid line: *** Oops".to_string())
    );
}

#[test]
fn clines_parse_errors_are_kept() {
    let cases = [
        (
            "hello\n*** Delete File: a",
            "Unknown line while parsing: hello",
        ),
        (
            "*** Delete File: a\n*** Delete File: a",
            "Duplicate delete for file: a",
        ),
        (
            "*** Delete File: a\n*** Add File: a\n+x",
            "Duplicate add for file: a",
        ),
        (
            "*** Add File: a\n+x",
            "Add File Error: File already exists: a",
        ),
        (
            "*** Update File: b\n@@\n+x",
            "Update File Error: Missing File: b",
        ),
        ("*** Delete File: b", "Delete File Error: Missing File: b"),
        (
            "*** Add File: n\nplain",
            "Invalid Add File line (missing '+'): plain",
        ),
    ];
    for (patch, error) in cases {
        assert_eq!(
            run(
                &format!("*** Begin Patch\n{patch}\n*** End Patch"),
                &[("a", "a\n")]
            ),
            Err(error.to_string()),
            "{patch}"
        );
    }
}

#[test]
fn a_second_patch_block_is_parsed_too() {
    let patch = "*** Begin Patch\n*** Delete File: a\n*** End Patch\n*** Begin Patch\n*** Delete File: b\n*** End Patch";
    assert_eq!(
        run(patch, &[("a", ""), ("b", "")]),
        parsed(vec![("a", Action::Delete), ("b", Action::Delete)], 0)
    );
}

#[test]
fn fuzzy_matches_add_their_fuzz() {
    let patch = "*** Begin Patch\n*** Update File: f\n@@\n a\n-b\n+B\n*** End Patch";
    assert_eq!(
        run(patch, &[("f", "    a\n    b\n")]),
        parsed(
            vec![("f", update(vec![chunk(1, &["b"], &["B"])], None))],
            100
        )
    );
}

/// Lines to build random patches from: every marker, malformed markers, blank lines and hunk
/// lines.
const PIECES: &[&str] = &[
    "*** Begin Patch",
    "*** End Patch",
    "*** Update File: a",
    "*** Update File: b",
    "*** Delete File: a",
    "*** Add File: c",
    "*** Move to: d",
    "*** End of File",
    "*** Oops",
    "***",
    "@@",
    "@@ x",
    "@@x",
    "@@ ",
    "",
    "",
    " ",
    " x",
    " y",
    "x",
    "-x",
    "-y",
    "+y",
    "+",
    "-",
];

#[test]
fn random_patches_always_terminate_within_the_step_budget() {
    let mut rng = fastrand::Rng::with_seed(0x5eed_a9c4);
    let entries = [("a", "x\ny\nx\n"), ("b", "")];
    let mut outcomes = [0usize; 2];
    for _ in 0..20_000 {
        let count = rng.usize(0..24);
        let mut lines: Vec<String> = (0..count)
            .map(|_| PIECES[rng.usize(0..PIECES.len())].to_string())
            .collect();
        if rng.bool() {
            lines.insert(0, "*** Begin Patch".to_string());
            lines.push("*** End Patch".to_string());
        }
        // Directly, and through the preprocessing the tool does.
        let direct = parse(&lines, &files(&entries), &|| false);
        let through = run(&lines.join("\n"), &entries);
        for error in [
            direct.as_ref().err().map(|e| e.0.as_str()),
            through.as_ref().err().map(String::as_str),
        ]
        .into_iter()
        .flatten()
        {
            assert!(!error.starts_with(NO_PROGRESS), "{lines:?}: {error}");
        }
        outcomes[usize::from(direct.is_ok())] += 1;
    }
    // Both outcomes occur: the generator exercises more than one path.
    assert!(outcomes[0] > 1000 && outcomes[1] > 300, "{outcomes:?}");
}

#[test]
fn the_step_budget_is_proportional_to_the_input() {
    // A worst case for the budget: many hunks, each one line.
    let mut lines = vec![
        "*** Begin Patch".to_string(),
        "*** Update File: a".to_string(),
    ];
    for _ in 0..500 {
        lines.push("@@".to_string());
    }
    lines.push("*** End Patch".to_string());
    assert_eq!(
        parse(&lines, &files(&[("a", "x\n")]), &|| false).map_err(|e| e.0),
        parsed(vec![("a", update(vec![], None))], 0)
    );
}
