//! git's risky options: `-c` and `--config-env` (with the code a setting runs), transports
//! that run commands, configuration writes, and each subcommand's options (see
//! [`super::tables`]).

use super::scan::{leading_literal, long_match, may_start_with, scan, Options, Scan};
use super::tables::{
    GIT_COMMAND_KEYS, GIT_CONFIG_READS, GIT_CONFIG_WRITES, GIT_GLOBAL_VALUES, GIT_OUTPUT,
    GIT_RISKY_SUBS, GIT_SUBS, GIT_VALUES,
};
use crate::found::{Risky, Word};

/// The risky options of a git command: global options, then the subcommand's.
pub(super) fn git(words: &[Word]) -> Vec<Risky> {
    let mut risky = Vec::new();
    let mut i = 1;
    let mut sub = None;
    while i < words.len() {
        let w = &words[i];
        let (known, complete) = leading_literal(w);
        if !complete && !known.starts_with("-c") && may_start_with(w, "-") {
            risky.push(Risky::unknown(0, i));
            i += 1;
            continue;
        }
        if known == "-c" && complete {
            let value = words.get(i + 1);
            let mut r = Risky::new("-c", vec![0, i, i + 1], (i, 0..2));
            r.code = value.and_then(git_config_code);
            risky.push(r);
            i += 2;
            continue;
        }
        if let Some(value) = known.strip_prefix("-c") {
            if !value.starts_with('-') {
                let mut r = Risky::new("-c", vec![0, i], (i, 0..2));
                r.code = complete.then(|| git_code(value)).flatten();
                r.split = Some((i, 2));
                risky.push(r);
                i += 1;
                continue;
            }
        }
        if let Some(long) = known.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (long, None),
            };
            if let Some(full) = long_match(&["config-env"], name).filter(|_| name.len() >= 3) {
                let mut parts = vec![0, i];
                if value.is_none() {
                    parts.push(i + 1);
                }
                risky.push(Risky::new(
                    format!("--{full}"),
                    parts,
                    (i, 0..2 + name.len()),
                ));
                i += if value.is_none() { 2 } else { 1 };
                continue;
            }
            if value.is_some() && long_match(&["exec-path"], name).is_some() && name.len() >= 3 {
                risky.push(Risky::new(
                    "--exec-path",
                    vec![0, i],
                    (i, 0..2 + name.len()),
                ));
            }
            let next = value.is_none() && GIT_GLOBAL_VALUES.contains(&known.as_str());
            i += if next { 2 } else { 1 };
            continue;
        }
        if known.starts_with('-') {
            i += if GIT_GLOBAL_VALUES.contains(&known.as_str()) {
                2
            } else {
                1
            };
            continue;
        }
        sub = Some(i);
        break;
    }
    // `ext::` and `fd::` transports run commands (git refuses ext:: unless configured, which
    // `-c` or the environment can do).
    for (k, w) in words.iter().enumerate().skip(1) {
        for transport in ["ext::", "fd::"] {
            if let Some(pos) = w.text().find(transport) {
                let start = w.text()[..pos].chars().count();
                risky.push(Risky::new(
                    transport,
                    vec![0, k],
                    (k, start..start + transport.len()),
                ));
            }
        }
    }
    let Some(sub) = sub else {
        return risky;
    };
    let name = words[sub].text();
    let sub_len = name.chars().count();
    if GIT_RISKY_SUBS.contains(&name) {
        risky.push(Risky::new(name, vec![0, sub], (sub, 0..sub_len)));
    }
    let spec = GIT_SUBS.iter().find(|s| s.names.contains(&name));
    let mut long: Vec<&'static str> = GIT_OUTPUT.to_vec();
    long.extend(spec.iter().flat_map(|s| s.long.iter().copied()));
    let entry = Options {
        short: spec.map_or("", |s| s.short),
        long: &long,
        short_values: spec.map_or("", |s| s.short_values),
        long_values: &[],
    };
    let scan = scan(words, sub + 1, &entry, true);
    for r in scan.risky.iter().cloned() {
        // A dynamic word after an option that takes a value is that value.
        let previous = r.words.get(1).and_then(|&w| w.checked_sub(1));
        let is_value = !r.nameable()
            && previous.is_some_and(|p| {
                let (known, complete) = leading_literal(&words[p]);
                complete && GIT_VALUES.contains(&known.as_str())
            });
        if !is_value {
            risky.push(r);
        }
    }
    let operand = |n: usize| scan.operands.get(n).map(|&i| words[i].text());
    match name {
        "bisect" if operand(0) == Some("run") => {
            let k = scan.operands[0];
            risky.push(Risky::new("bisect run", vec![0, sub, k], (k, 0..3)));
        }
        "submodule" if scan.operands.iter().any(|&k| words[k].text() == "foreach") => {
            let k = scan
                .operands
                .iter()
                .copied()
                .find(|&k| words[k].text() == "foreach")
                .unwrap_or(sub);
            risky.push(Risky::new("submodule foreach", vec![0, sub, k], (k, 0..7)));
        }
        "config" if git_config_writes(&scan, words) => {
            risky.push(Risky::new(
                "config (a write)",
                vec![0, sub],
                (sub, 0..sub_len),
            ));
        }
        _ => {}
    }
    risky
}

/// Whether `git config …` may write (or edit) the configuration.
fn git_config_writes(scan: &Scan, words: &[Word]) -> bool {
    let options: Vec<&str> = scan.options.iter().map(|o| o.name.as_str()).collect();
    if options.iter().any(|o| GIT_CONFIG_WRITES.contains(o)) {
        return true;
    }
    if scan
        .operands
        .iter()
        .any(|&i| words[i].dynamic || words[i].literal.is_none())
    {
        return true;
    }
    if options.iter().any(|o| GIT_CONFIG_READS.contains(o)) {
        return false;
    }
    let operands: Vec<&str> = scan.operands.iter().map(|&i| words[i].text()).collect();
    match operands.as_slice() {
        ["get" | "list", ..] => false,
        ["set" | "unset" | "edit" | "rename-section" | "remove-section", ..] => true,
        [_key] => false,
        _ => true,
    }
}

/// The shell code a `-c KEY=VALUE` word makes git run, when known.
fn git_config_code(word: &Word) -> Option<String> {
    if word.dynamic {
        return None;
    }
    git_code(word.text())
}

fn git_code(setting: &str) -> Option<String> {
    let (key, value) = setting.split_once('=')?;
    let key = key.to_ascii_lowercase();
    if key.starts_with("alias.") {
        return value.strip_prefix('!').map(str::to_string);
    }
    if key.starts_with("credential.") && key.ends_with(".helper") || key == "credential.helper" {
        return value.strip_prefix('!').map(str::to_string);
    }
    if GIT_COMMAND_KEYS.contains(&key.as_str()) || key.starts_with("pager.") {
        return Some(value.to_string());
    }
    None
}
