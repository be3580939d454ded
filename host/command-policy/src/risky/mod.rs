//! Options that run code or write files, for programs commonly allowed with a wildcard.
//!
//! `git *` is meant to allow git, not to allow `git -c alias.x='!rm -rf ~' x`. An option in
//! this table therefore counts as a command of its own: an allow pattern covers it only if the
//! pattern names the option literally (`git -c *` allows `git -c core.pager=cat log`; `git *`
//! does not), and deny rules see it as a command of its own (`git -cX` is also `git -cX`
//! against a deny rule `git -c*`). Code an option is known to run (a git alias starting with
//! `!`, a `core.pager`) is analysed like the rest of the line and must pass the deny rules.
//!
//! Options are read as the programs read them: clusters of short options (`-ni`, `-o FILE`,
//! `-oFILE`), long options with `=` or a separate value, and unambiguous prefixes of long
//! options (`--to-com=…` is `--to-command` to GNU tar). An argument only known at run time
//! where an option could stand (`git $OPT log`) could be any of them: no pattern can name it,
//! so it is refused under an allow list. This table is the one place that lists the options;
//! the README shows it as a table.
//!
//! The tables are [`tables`] (data only); [`scan`] reads options with them, [`git`] reads git's.

mod git;
mod scan;
mod tables;

use crate::found::{Risky, Word};
use crate::scripts::{awk_risk, sed_risk};
use git::git;
use scan::{may_start_with, scan, word_prefix_known};
use tables::{Operands, FIND_EXEC, FIND_RISKY, FIND_VALUES, SSH_COMMAND_KEYS, TABLE};

/// The risky options of a command (`words[0]` is its name, possibly with a directory).
pub fn find(words: &[Word]) -> Vec<Risky> {
    let Some(name) = words.first().filter(|w| !w.dynamic) else {
        return Vec::new();
    };
    let base = name.text().rsplit('/').next().unwrap_or_default();
    let Some(entry) = TABLE.iter().find(|e| e.names.contains(&base)) else {
        return Vec::new();
    };
    if entry.operands == Operands::Git {
        return git(words);
    }
    let mut risky = Vec::new();
    if entry.operands == Operands::Find {
        find_primaries(words, &mut risky);
        return risky;
    }
    let scan = scan(words, 1, &entry.options(), true);
    risky.extend(scan.risky.iter().cloned());
    let operand = |i: usize| &words[i];
    match entry.operands {
        Operands::Plain | Operands::Git | Operands::Find => {}
        Operands::Sed | Operands::Awk => {
            let sed = entry.operands == Operands::Sed;
            let sandboxed = scan.options.iter().any(|o| o.name == "--sandbox");
            let script_options: &[&str] = if sed {
                &["-e", "--expression"]
            } else {
                &["-e", "--source"]
            };
            let mut scripts: Vec<(usize, Option<String>)> = scan
                .options
                .iter()
                .filter(|o| script_options.contains(&o.name.as_str()))
                .map(|o| (o.value_word.unwrap_or(o.word), o.value.clone()))
                .collect();
            let from_file = scan.options.iter().any(|o| {
                let name = o.name.as_str();
                if sed {
                    matches!(name, "-f" | "--file")
                } else {
                    matches!(name, "-f" | "--file" | "-i" | "--include" | "-E" | "--exec")
                }
            });
            if scripts.is_empty() && !from_file {
                if let Some(&first) = scan.operands.first() {
                    scripts.push((first, None));
                }
            }
            for (word, attached) in scripts {
                let w = operand(word);
                let text = attached.unwrap_or_else(|| w.text().to_string());
                let risk = if w.dynamic {
                    Some("only known at run time")
                } else if sandboxed {
                    None
                } else if sed {
                    sed_risk(&text)
                } else {
                    awk_risk(&text)
                };
                if let Some(risk) = risk {
                    let what = if sed { "sed script" } else { "awk program" };
                    let mut r = Risky::new(
                        format!("{what} ({risk})"),
                        vec![0, word],
                        (word, 0..w.text().chars().count()),
                    );
                    if w.dynamic {
                        r.fixed.clear();
                    }
                    risky.push(r);
                }
            }
        }
        Operands::Tee => {
            for &i in &scan.operands {
                let w = operand(i);
                let len = w.text().chars().count();
                let mut r = Risky::new("a file tee writes", vec![0, i], (i, 0..len));
                if w.dynamic {
                    r.fixed.clear();
                }
                risky.push(r);
            }
        }
        Operands::Dd => {
            for &i in &scan.operands {
                let w = operand(i);
                if may_start_with(w, "of=") {
                    let mut r = Risky::new("of=", vec![0, i], (i, 0..3));
                    if !w.text().starts_with("of=") {
                        r.fixed.clear();
                    }
                    risky.push(r);
                }
            }
        }
        Operands::Uniq => {
            if let Some(&i) = scan.operands.get(1) {
                let w = operand(i);
                let len = w.text().chars().count();
                let mut r = Risky::new("the file uniq writes", vec![0, i], (i, 0..len));
                if w.dynamic {
                    r.fixed.clear();
                }
                risky.push(r);
            }
        }
        Operands::Tar => {
            // `tar xIf PROGRAM ARCHIVE`: the first argument is a cluster without its dash.
            if let Some(first) = words.get(1).filter(|w| !w.dynamic) {
                let text = first.text();
                if !text.starts_with('-') && text.chars().all(|c| c.is_ascii_alphabetic()) {
                    if let Some(k) = text.chars().position(|c| entry.short.contains(c)) {
                        risky.push(Risky::new(
                            format!("-{}", text.chars().nth(k).unwrap_or_default()),
                            vec![0, 1],
                            (1, 0..k + 1),
                        ));
                    }
                }
            }
        }
        Operands::Ssh => {
            for option in scan.options.iter().filter(|o| o.name == "-o") {
                let (word, text, offset) = match (&option.value, option.value_word) {
                    (Some(attached), _) => (option.word, attached.clone(), 2),
                    (None, Some(next)) => (next, words[next].text().to_string(), 0),
                    (None, None) => continue,
                };
                let w = &words[word];
                let key: String = text
                    .chars()
                    .take_while(|c| !matches!(c, '=' | ' ' | '\t'))
                    .collect();
                let known_key = !w.dynamic || word_prefix_known(w, offset + key.len() + 1);
                if SSH_COMMAND_KEYS.contains(&key.to_ascii_lowercase().as_str()) || !known_key {
                    let mut r = Risky::new(
                        format!("-o {key}"),
                        vec![0, option.word, word],
                        (word, offset..offset + key.chars().count()),
                    );
                    if !known_key {
                        r.fixed.clear();
                    }
                    risky.push(r);
                }
            }
        }
        Operands::Zip => {
            for (i, w) in words.iter().enumerate().skip(1) {
                if w.text().starts_with("-TT") {
                    risky.push(Risky::new("-TT", vec![0, i], (i, 0..3)));
                }
            }
        }
    }
    risky.sort_by_key(|r| r.words.get(1).copied());
    risky
}

/// find's primaries are whole words: the risky ones, and any argument only known at run time
/// where a primary could stand. The command of `-exec … ;` is checked as a command of its own.
fn find_primaries(words: &[Word], risky: &mut Vec<Risky>) {
    let mut i = 1;
    while i < words.len() {
        let w = &words[i];
        let text = w.text();
        if !w.dynamic && FIND_RISKY.contains(&text) {
            risky.push(Risky::new(text, vec![0, i], (i, 0..text.chars().count())));
            if FIND_EXEC.contains(&text) {
                while i < words.len() && (words[i].dynamic || !matches!(words[i].text(), ";" | "+"))
                {
                    i += 1;
                }
            }
        } else if !w.dynamic && (FIND_VALUES.contains(&text) || text.starts_with("-newer")) {
            i += 1;
        } else if w.dynamic && may_start_with(w, "-") {
            risky.push(Risky::unknown(0, i));
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests;
