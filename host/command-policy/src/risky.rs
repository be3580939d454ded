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

use std::ops::Range;

use super::found::{Risky, Word};
use super::pattern::{Glob, Pattern};
use super::scripts::{awk_risk, sed_risk};

impl Risky {
    fn new(option: impl Into<String>, words: Vec<usize>, fixed: (usize, Range<usize>)) -> Self {
        Self {
            option: option.into(),
            words,
            fixed: vec![fixed],
            code: None,
            split: None,
        }
    }

    /// An argument only known at run time where an option could stand.
    fn unknown(name: usize, word: usize) -> Self {
        Self {
            option: "an argument only known at run time".to_string(),
            words: vec![name, word],
            fixed: Vec::new(),
            code: None,
            split: None,
        }
    }

    /// Whether an allow pattern can name it at all.
    pub fn nameable(&self) -> bool {
        !self.fixed.is_empty()
    }
}

/// How a program's operands are checked, besides its options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operands {
    /// Operands are plain arguments.
    Plain,
    /// git: global options, then a subcommand with options of its own (see [`git`]).
    Git,
    /// sed: the script (the first operand, or the `-e` values) is read by a scanner.
    Sed,
    /// awk: the program (the first operand, or the `-e`/`--source` values) is read by a scanner.
    Awk,
    /// find: its primaries are words of their own (`-exec`, `-delete`).
    Find,
    /// tee: every operand is a file it writes.
    Tee,
    /// dd: the `of=` operand is a file it writes.
    Dd,
    /// uniq: a second operand is the file it writes.
    Uniq,
    /// tar: a first argument without a dash is a cluster of short options (`tar xIf …`).
    Tar,
    /// ssh, scp, sftp: `-o` options whose key runs a command.
    Ssh,
    /// zip: `-TT` is a two-letter option.
    Zip,
}

/// One program's options that run code or write files.
struct Entry {
    /// The program's names (without a directory).
    names: &'static [&'static str],
    /// Short options that run code or write files.
    short: &'static str,
    /// Long options (without dashes) that run code or write files.
    long: &'static [&'static str],
    /// Short options that take a value (attached or as the next word).
    short_values: &'static str,
    /// Long options that take the next word as their value when given without `=`.
    long_values: &'static [&'static str],
    /// How the operands are checked.
    operands: Operands,
}

const NONE: Entry = Entry {
    names: &[],
    short: "",
    long: &[],
    short_values: "",
    long_values: &[],
    operands: Operands::Plain,
};

/// git: `-c KEY=VALUE` and `--config-env` (any configuration: aliases, `core.pager`,
/// `core.sshCommand`…), `--exec-path=DIR`, `ext::`/`fd::` transports in any argument,
/// `git config` writes (anything but `--get*`, `--list`/`-l`, `get`, `list`, or reading one
/// key), and per subcommand: `--output`/`--output-directory` (any), `-o` (format-patch,
/// archive), `--exec` (archive, push, send-pack, fetch-pack), `-u`/`--upload-pack` (clone,
/// ls-remote; `--upload-pack` also fetch and pull), `--receive-pack` (push, send-pack),
/// `--template` (clone, init), `-c`/`--config` (clone), `-x`/`--exec` (rebase),
/// `-x`/`--extcmd` (difftool), `-O`/`--open-files-in-pager` (grep), the command options of
/// send-email, `bisect run`, `submodule foreach`, and `filter-branch` and `instaweb` as a
/// whole. `-C`, `--git-dir` and `--work-tree` are left alone: the repository they point at
/// runs what its own configuration says, and writing that configuration is risky itself.
const GIT: Entry = Entry {
    names: &["git"],
    short: "c",
    long: &["config-env", "exec-path"],
    operands: Operands::Git,
    ..NONE
};

/// find: `-exec`, `-execdir`, `-ok`, `-okdir` (the command they run is checked too),
/// `-fprint`, `-fprint0`, `-fprintf`, `-fls` (write files) and `-delete`.
const FIND: Entry = Entry {
    names: &["find"],
    operands: Operands::Find,
    ..NONE
};

/// fd: `-x`/`--exec`, `-X`/`--exec-batch` (the command they run is checked too).
const FD: Entry = Entry {
    names: &["fd", "fdfind"],
    short: "xX",
    long: &["exec", "exec-batch"],
    short_values: "edEtSjcoB",
    long_values: &[
        "extension",
        "exclude",
        "type",
        "size",
        "max-depth",
        "min-depth",
        "threads",
        "color",
        "owner",
        "base-directory",
        "search-path",
        "changed-within",
        "changed-before",
        "max-results",
        "ignore-file",
    ],
    ..NONE
};

/// sed: `-i`/`--in-place` (writes the files), `-f`/`--file` (a script the check cannot
/// read), and in the script the `e`, `w` and `W` commands and the `e` and `w` flags of `s`
/// (not with `--sandbox`, which refuses them).
const SED: Entry = Entry {
    names: &["sed", "gsed"],
    short: "if",
    long: &["in-place", "file"],
    short_values: "efl",
    long_values: &["expression", "file", "line-length"],
    operands: Operands::Sed,
};

/// awk, gawk, mawk, nawk: `-f`/`--file`, `-i`/`--include`, `-l`/`--load`, `-E`/`--exec`,
/// `-W` (programs the check cannot read), and a program with `system()`, a pipe, print
/// redirection (`>`, `>>`), `@load` or `@include` (not with gawk's `--sandbox`).
const AWK: Entry = Entry {
    names: &["awk", "gawk", "mawk", "nawk"],
    short: "filEW",
    long: &["file", "include", "load", "exec"],
    short_values: "fvFilEWe",
    long_values: &[
        "file",
        "assign",
        "field-separator",
        "include",
        "load",
        "exec",
        "source",
    ],
    operands: Operands::Awk,
};

/// tar: `--to-command`, `--checkpoint-action` (`exec=`), `-I`/`--use-compress-program`,
/// `-F`/`--info-script`/`--new-volume-script`, `--rsh-command`, `--rmt-command`.
const TAR: Entry = Entry {
    names: &["tar", "gtar", "bsdtar"],
    short: "IF",
    long: &[
        "to-command",
        "checkpoint-action",
        "use-compress-program",
        "info-script",
        "new-volume-script",
        "rsh-command",
        "rmt-command",
    ],
    short_values: "bCfFgHIKLNTVX",
    long_values: &[
        "file",
        "directory",
        "to-command",
        "checkpoint-action",
        "use-compress-program",
        "info-script",
        "new-volume-script",
        "rsh-command",
        "rmt-command",
        "exclude",
        "files-from",
    ],
    operands: Operands::Tar,
};

/// rg: `--pre COMMAND` (runs it on every file searched).
const RG: Entry = Entry {
    names: &["rg"],
    long: &["pre"],
    short_values: "ABCdEefgjMmrTt",
    long_values: &[
        "pre",
        "regexp",
        "file",
        "glob",
        "iglob",
        "type",
        "type-not",
        "replace",
        "max-count",
        "max-depth",
    ],
    ..NONE
};

/// sort: `-o`/`--output FILE`, `--compress-program PROGRAM`.
const SORT: Entry = Entry {
    names: &["sort"],
    short: "o",
    long: &["output", "compress-program"],
    short_values: "kotST",
    long_values: &[
        "key",
        "output",
        "field-separator",
        "buffer-size",
        "temporary-directory",
        "compress-program",
        "files0-from",
    ],
    ..NONE
};

/// uniq: a second operand is the file it writes (`uniq IN OUT`).
const UNIQ: Entry = Entry {
    names: &["uniq"],
    short_values: "fsw",
    long_values: &["skip-fields", "skip-chars", "check-chars"],
    operands: Operands::Uniq,
    ..NONE
};

/// tee: every file operand is a file it writes: a pattern must name the file.
const TEE: Entry = Entry {
    names: &["tee"],
    operands: Operands::Tee,
    ..NONE
};

/// dd: `of=FILE`.
const DD: Entry = Entry {
    names: &["dd"],
    operands: Operands::Dd,
    ..NONE
};

/// curl: `-o`/`--output`, `-O`/`--remote-name`, `--remote-name-all`, `--output-dir`,
/// `-D`/`--dump-header`, `-c`/`--cookie-jar`, `--trace`, `--trace-ascii`, `--stderr`,
/// `--libcurl`, `--etag-save`, `--hsts`, `--alt-svc` (write files), `-K`/`--config`
/// (a file of further options).
const CURL: Entry = Entry {
    names: &["curl"],
    short: "oODcK",
    long: &[
        "output",
        "remote-name",
        "remote-name-all",
        "output-dir",
        "dump-header",
        "cookie-jar",
        "trace",
        "trace-ascii",
        "stderr",
        "config",
        "libcurl",
        "etag-save",
        "hsts",
        "alt-svc",
    ],
    short_values: "AbcCdDeEFHKmoPQrTuUwxXyYz",
    long_values: &[
        "output",
        "output-dir",
        "dump-header",
        "cookie-jar",
        "trace",
        "trace-ascii",
        "stderr",
        "config",
        "libcurl",
        "etag-save",
        "hsts",
        "alt-svc",
        "data",
        "header",
        "request",
        "user",
        "user-agent",
        "referer",
        "cookie",
        "form",
        "upload-file",
        "write-out",
        "proxy",
        "max-time",
        "url",
    ],
    ..NONE
};

/// wget: `-O`/`--output-document`, `-o`/`--output-file`, `-a`/`--append-output`,
/// `-P`/`--directory-prefix` (where it writes), `-e`/`--execute` (wgetrc commands),
/// `--use-askpass` (runs a program).
const WGET: Entry = Entry {
    names: &["wget"],
    short: "OoaPe",
    long: &[
        "output-document",
        "output-file",
        "append-output",
        "directory-prefix",
        "execute",
        "use-askpass",
    ],
    short_values: "OoaPetTwUiBlARDIXQ",
    long_values: &[
        "output-document",
        "output-file",
        "append-output",
        "directory-prefix",
        "execute",
        "user-agent",
        "header",
        "tries",
        "timeout",
        "input-file",
    ],
    ..NONE
};

/// rsync: `-e`/`--rsh COMMAND`, `--rsync-path PROGRAM`.
const RSYNC: Entry = Entry {
    names: &["rsync"],
    short: "e",
    long: &["rsh", "rsync-path"],
    short_values: "efTBM",
    long_values: &[
        "rsh",
        "rsync-path",
        "filter",
        "exclude",
        "include",
        "temp-dir",
    ],
    ..NONE
};

/// ssh: `-o` with `ProxyCommand`, `LocalCommand`, `PermitLocalCommand`,
/// `KnownHostsCommand` or `Match` (run local commands), `-F` (a configuration file that
/// can).
const SSH: Entry = Entry {
    names: &["ssh"],
    short: "F",
    short_values: "bBcDEeFIiJLlmOopQRSWw",
    operands: Operands::Ssh,
    ..NONE
};

/// scp, sftp: as ssh, and `-S PROGRAM` (the ssh program to run); sftp's `-D PROGRAM`
/// (a local sftp server to run).
const SCP: Entry = Entry {
    names: &["scp", "sftp"],
    short: "FSD",
    short_values: "BbcDFiJlloPRSs",
    operands: Operands::Ssh,
    ..NONE
};

/// zip: `-TT`/`--unzip-command COMMAND` (runs it to test the archive).
const ZIP: Entry = Entry {
    names: &["zip"],
    long: &["unzip-command"],
    long_values: &["unzip-command"],
    operands: Operands::Zip,
    ..NONE
};

/// man: `-P`/`--pager PAGER`, `-H`/`--html[=BROWSER]` (run them).
const MAN: Entry = Entry {
    names: &["man"],
    short: "PH",
    long: &["pager", "html"],
    short_values: "CMPSsmLepERr",
    long_values: &["pager", "config-file", "manpath", "sections", "locale"],
    ..NONE
};

/// Every program with risky options.
const TABLE: &[Entry] = &[
    GIT, FIND, FD, SED, AWK, TAR, RG, SORT, UNIQ, TEE, DD, CURL, WGET, RSYNC, SSH, SCP, ZIP, MAN,
];

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
                const KEYS: &[&str] = &[
                    "proxycommand",
                    "localcommand",
                    "permitlocalcommand",
                    "knownhostscommand",
                    "match",
                ];
                let known_key = !w.dynamic || word_prefix_known(w, offset + key.len() + 1);
                if KEYS.contains(&key.to_ascii_lowercase().as_str()) || !known_key {
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
    const RISKY: &[&str] = &[
        "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls", "-delete",
    ];
    const EXEC: &[&str] = &["-exec", "-execdir", "-ok", "-okdir"];
    /// Primaries whose value is the next word.
    const VALUES: &[&str] = &[
        "-name",
        "-iname",
        "-path",
        "-ipath",
        "-wholename",
        "-iwholename",
        "-regex",
        "-iregex",
        "-lname",
        "-ilname",
        "-type",
        "-xtype",
        "-newer",
        "-anewer",
        "-cnewer",
        "-user",
        "-group",
        "-perm",
        "-size",
        "-mtime",
        "-mmin",
        "-atime",
        "-amin",
        "-ctime",
        "-cmin",
        "-maxdepth",
        "-mindepth",
        "-links",
        "-inum",
        "-samefile",
        "-uid",
        "-gid",
        "-used",
        "-fstype",
        "-context",
        "-printf",
        "-regextype",
        "-files0-from",
    ];
    let mut i = 1;
    while i < words.len() {
        let w = &words[i];
        let text = w.text();
        if !w.dynamic && RISKY.contains(&text) {
            risky.push(Risky::new(text, vec![0, i], (i, 0..text.chars().count())));
            if EXEC.contains(&text) {
                while i < words.len() && (words[i].dynamic || !matches!(words[i].text(), ";" | "+"))
                {
                    i += 1;
                }
            }
        } else if !w.dynamic && (VALUES.contains(&text) || text.starts_with("-newer")) {
            i += 1;
        } else if w.dynamic && may_start_with(w, "-") {
            risky.push(Risky::unknown(0, i));
        }
        i += 1;
    }
}

/// Which options a scan looks for and how it reads them.
struct Options<'a> {
    short: &'a str,
    long: &'a [&'a str],
    short_values: &'a str,
    long_values: &'a [&'a str],
}

impl Entry {
    fn options(&self) -> Options<'static> {
        Options {
            short: self.short,
            long: self.long,
            short_values: self.short_values,
            long_values: self.long_values,
        }
    }
}

/// An option as read by [`scan`].
#[derive(Debug, Clone)]
struct Opt {
    /// The word it is in.
    word: usize,
    /// `-x` or `--name` (a prefix as written, for long options).
    name: String,
    /// The value attached to it (`-oFILE`, `--output=FILE`).
    value: Option<String>,
    /// The next word, when that is its value.
    value_word: Option<usize>,
}

struct Scan {
    options: Vec<Opt>,
    operands: Vec<usize>,
    risky: Vec<Risky>,
}

/// Reads options from `words[start..]` as GNU getopt does (options may follow operands when
/// `permute`), noting the risky ones.
fn scan(words: &[Word], start: usize, entry: &Options<'_>, permute: bool) -> Scan {
    let mut out = Scan {
        options: Vec::new(),
        operands: Vec::new(),
        risky: Vec::new(),
    };
    let mut options_done = false;
    let mut i = start;
    while i < words.len() {
        let w = &words[i];
        let (known, complete) = leading_literal(w);
        if !options_done && complete && known == "--" {
            options_done = true;
            i += 1;
            continue;
        }
        if options_done
            || !may_start_with(w, "-")
            || (complete && (known == "-" || known.is_empty()))
        {
            out.operands.push(i);
            if !permute {
                options_done = true;
            }
            i += 1;
            continue;
        }
        if !known.starts_with('-') {
            // Only known at run time, and it may be an option.
            out.risky.push(Risky::unknown(0, i));
            i += 1;
            continue;
        }
        if let Some(long) = known.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (long, None),
            };
            if !complete && value.is_none() {
                // `--out$X`: the option's name is only known at run time.
                out.risky.push(Risky::unknown(0, i));
                i += 1;
                continue;
            }
            // An abbreviation stands for the option it abbreviates (`--expr` is `--expression`).
            let canonical = entry
                .long_values
                .iter()
                .find(|v| **v == name)
                .or_else(|| {
                    entry
                        .long_values
                        .iter()
                        .find(|v| !name.is_empty() && v.starts_with(name))
                })
                .copied()
                .unwrap_or(name);
            let takes_next = value.is_none() && entry.long_values.contains(&canonical);
            let value_word = (takes_next && i + 1 < words.len()).then_some(i + 1);
            if let Some(full) = long_match(entry.long, name) {
                let mut parts = vec![0, i];
                parts.extend(value_word);
                out.risky.push(Risky::new(
                    format!("--{full}"),
                    parts,
                    (i, 0..2 + name.chars().count()),
                ));
            }
            out.options.push(Opt {
                word: i,
                name: format!("--{canonical}"),
                value: value.map(str::to_string),
                value_word,
            });
            i += if takes_next { 2 } else { 1 };
            continue;
        }
        // A cluster of short options.
        let chars: Vec<char> = known.chars().skip(1).collect();
        let mut takes_next = false;
        let mut ended_in_value = false;
        for (k, &c) in chars.iter().enumerate() {
            let attached: String = chars[k + 1..].iter().collect();
            let is_value = entry.short_values.contains(c);
            let value_word = (is_value && attached.is_empty() && complete && i + 1 < words.len())
                .then_some(i + 1);
            if entry.short.contains(c) {
                let mut parts = vec![0, i];
                parts.extend(value_word);
                let mut r = Risky::new(format!("-{c}"), parts, (i, 0..k + 2));
                if is_value && !attached.is_empty() {
                    r.split = Some((i, k + 2));
                }
                out.risky.push(r);
            }
            if is_value {
                out.options.push(Opt {
                    word: i,
                    name: format!("-{c}"),
                    value: (!attached.is_empty() || !complete).then_some(attached.clone()),
                    value_word,
                });
                takes_next = attached.is_empty() && complete;
                ended_in_value = true;
                break;
            }
            out.options.push(Opt {
                word: i,
                name: format!("-{c}"),
                value: None,
                value_word: None,
            });
        }
        if !complete && !ended_in_value {
            // `-n$X`: more options only known at run time.
            out.risky.push(Risky::unknown(0, i));
        }
        i += if takes_next { 2 } else { 1 };
    }
    out
}

/// The long option `name` (as written) stands for, if it is one of `risky` or an unambiguous
/// abbreviation that could be one (GNU getopt and git accept those).
fn long_match<'a>(risky: &[&'a str], name: &str) -> Option<&'a str> {
    if name.is_empty() {
        return None;
    }
    risky
        .iter()
        .find(|r| **r == name)
        .or_else(|| risky.iter().find(|r| r.starts_with(name)))
        .copied()
}

/// The literal characters a word starts with (up to its first expansion or glob), and whether
/// that is the whole word.
fn leading_literal(word: &Word) -> (String, bool) {
    if word.literal.is_none() {
        return (String::new(), false);
    }
    let mut out = String::new();
    for glob in &word.template {
        match glob {
            Glob::Char(c) => out.push(*c),
            _ => return (out, false),
        }
    }
    (out, !word.dynamic)
}

/// Whether the first `len` characters of a word are known before it runs.
fn word_prefix_known(word: &Word, len: usize) -> bool {
    let (known, complete) = leading_literal(word);
    complete || known.chars().count() >= len
}

/// Whether a word may start with `prefix` when it runs.
fn may_start_with(word: &Word, prefix: &str) -> bool {
    if word.literal.is_none() {
        return true;
    }
    Pattern::new(&format!("{prefix}*")).may_match(&word.template)
}

/// git's global options that take the next word as their value.
const GIT_GLOBAL_VALUES: &[&str] = &[
    "-C",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--super-prefix",
    "--list-cmds",
    "--attr-source",
];

/// Configuration keys whose value is a shell command git runs (deny rules see it).
const GIT_COMMAND_KEYS: &[&str] = &[
    "core.pager",
    "core.editor",
    "core.sshcommand",
    "core.fsmonitor",
    "core.askpass",
    "sequence.editor",
    "diff.external",
    "gpg.program",
    "uploadpack.packobjectshook",
    "sendemail.sendmailcmd",
];

/// One git subcommand's risky options.
struct GitSub {
    names: &'static [&'static str],
    short: &'static str,
    long: &'static [&'static str],
    short_values: &'static str,
}

const GIT_SUBS: &[GitSub] = &[
    GitSub {
        names: &["format-patch"],
        short: "o",
        long: &[],
        short_values: "ov",
    },
    GitSub {
        names: &["archive"],
        short: "o",
        long: &["exec"],
        short_values: "o",
    },
    GitSub {
        names: &["clone"],
        short: "uc",
        long: &["upload-pack", "template", "config"],
        short_values: "bcoju",
    },
    GitSub {
        names: &["init"],
        short: "",
        long: &["template"],
        short_values: "b",
    },
    GitSub {
        names: &["fetch", "pull"],
        short: "",
        long: &["upload-pack"],
        short_values: "jo",
    },
    GitSub {
        names: &["ls-remote"],
        short: "u",
        long: &["upload-pack"],
        short_values: "u",
    },
    GitSub {
        names: &["push", "send-pack"],
        short: "",
        long: &["receive-pack", "exec"],
        short_values: "o",
    },
    GitSub {
        names: &["fetch-pack"],
        short: "",
        long: &["upload-pack", "exec"],
        short_values: "",
    },
    GitSub {
        names: &["rebase"],
        short: "x",
        long: &["exec"],
        short_values: "xsXC",
    },
    GitSub {
        names: &["difftool"],
        short: "x",
        long: &["extcmd"],
        short_values: "xt",
    },
    GitSub {
        names: &["grep"],
        short: "O",
        long: &["open-files-in-pager"],
        short_values: "efABCm",
    },
    GitSub {
        names: &["send-email"],
        short: "",
        long: &[
            "sendmail-cmd",
            "smtp-server",
            "to-cmd",
            "cc-cmd",
            "header-cmd",
        ],
        short_values: "",
    },
];

/// Subcommands that run code as a whole.
const GIT_RISKY_SUBS: &[&str] = &["filter-branch", "instaweb"];

/// Options of any git subcommand that write files.
const GIT_OUTPUT: &[&str] = &["output", "output-directory"];

/// Options whose value is the next word, in most subcommands (a dynamic value after them is
/// not an option).
const GIT_VALUES: &[&str] = &[
    "-m",
    "--message",
    "-F",
    "--file",
    "--author",
    "--date",
    "-b",
    "-B",
    "--branch",
    "--onto",
    "--grep",
    "-n",
    "--depth",
    "-e",
    "-S",
    "-G",
    "--since",
    "--until",
    "--reference",
    "--origin",
    "-X",
    "-s",
    "--strategy",
    "--format",
    "--pretty",
    "--shallow-since",
    "-t",
];

fn git(words: &[Word]) -> Vec<Risky> {
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
    const WRITES: &[&str] = &[
        "--add",
        "--unset",
        "--unset-all",
        "--replace-all",
        "--rename-section",
        "--remove-section",
        "--edit",
        "-e",
    ];
    const READS: &[&str] = &[
        "--get",
        "--get-all",
        "--get-regexp",
        "--get-urlmatch",
        "--get-color",
        "--get-colorbool",
        "--list",
        "-l",
    ];
    let options: Vec<&str> = scan.options.iter().map(|o| o.name.as_str()).collect();
    if options.iter().any(|o| WRITES.contains(o)) {
        return true;
    }
    if scan
        .operands
        .iter()
        .any(|&i| words[i].dynamic || words[i].literal.is_none())
    {
        return true;
    }
    if options.iter().any(|o| READS.contains(o)) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Word> {
        line.split(' ').map(Word::literal).collect()
    }

    fn options(line: &str) -> Vec<String> {
        find(&words(line)).into_iter().map(|r| r.option).collect()
    }

    #[test]
    fn git_options() {
        assert_eq!(options("git -c alias.x=!rm x"), ["-c"]);
        assert_eq!(options("git -calias.x=!rm x"), ["-c"]);
        assert_eq!(
            options("git --config-env=core.pager=P log"),
            ["--config-env"]
        );
        assert_eq!(options("git --exec-path=/tmp log"), ["--exec-path"]);
        assert!(options("git --exec-path").is_empty());
        assert_eq!(options("git log --output=x"), ["--output"]);
        assert_eq!(options("git log --outp=x"), ["--output"]);
        assert_eq!(options("git diff --output x"), ["--output"]);
        assert_eq!(options("git format-patch -o dir"), ["-o"]);
        assert_eq!(
            options("git format-patch --output-directory dir"),
            ["--output-directory"]
        );
        assert_eq!(options("git archive -o x.tar HEAD"), ["-o"]);
        assert_eq!(options("git archive --exec=x --remote=. HEAD"), ["--exec"]);
        assert_eq!(options("git clone -u x url"), ["-u"]);
        assert_eq!(options("git clone --upload-pack=x url"), ["--upload-pack"]);
        assert_eq!(options("git clone --template=t url"), ["--template"]);
        assert_eq!(
            options("git fetch --upload-pack x origin"),
            ["--upload-pack"]
        );
        assert_eq!(options("git ls-remote -u x url"), ["-u"]);
        assert_eq!(
            options("git push --receive-pack=x origin"),
            ["--receive-pack"]
        );
        assert_eq!(options("git rebase --exec make main"), ["--exec"]);
        assert_eq!(options("git rebase -x make main"), ["-x"]);
        assert_eq!(options("git rebase -ix make main"), ["-x"]);
        assert_eq!(options("git bisect run make"), ["bisect run"]);
        assert_eq!(options("git submodule foreach ls"), ["submodule foreach"]);
        assert_eq!(
            options("git submodule --quiet foreach ls"),
            ["submodule foreach"]
        );
        assert_eq!(options("git difftool -x diff"), ["-x"]);
        assert_eq!(options("git difftool --extcmd=diff"), ["--extcmd"]);
        assert_eq!(options("git grep -Oless x"), ["-O"]);
        assert_eq!(
            options("git grep --open-files-in-pager x"),
            ["--open-files-in-pager"]
        );
        assert_eq!(
            options("git filter-branch --tree-filter x"),
            ["filter-branch"]
        );
        assert_eq!(options("git clone ext::sh%-c%x dir"), ["ext::"]);
        assert_eq!(options("git fetch fd::3"), ["fd::"]);
        assert_eq!(options("git config user.name x"), ["config (a write)"]);
        assert_eq!(
            options("git config --unset user.name"),
            ["config (a write)"]
        );
        assert_eq!(
            options("git config --global core.pager x"),
            ["config (a write)"]
        );
        for safe in [
            "git status",
            "git log --oneline -n 5",
            "git push -u origin main",
            "git add -u",
            "git grep -o x",
            "git ls-files -o",
            "git clone -o upstream url",
            "git fetch -u origin",
            "git config --get user.name",
            "git config user.name",
            "git config --list",
            "git config -l",
            "git config get user.name",
            "git -C sub status",
            "git --git-dir=.git log",
            "git --no-pager log",
            "git commit -m -c",
            "git rebase -i main",
            "git diff --no-index -- --output=x f",
        ] {
            assert!(options(safe).is_empty(), "{safe}: {:?}", options(safe));
        }
    }

    #[test]
    fn git_config_values_that_are_code() {
        let code = |line: &str| find(&words(line)).into_iter().find_map(|r| r.code);
        assert_eq!(code("git -c alias.x=!rm x"), Some("rm".to_string()));
        assert_eq!(code("git -ccore.pager=less log"), Some("less".to_string()));
        assert_eq!(
            code("git -c core.sshCommand=ssh fetch"),
            Some("ssh".to_string())
        );
        assert_eq!(code("git -c alias.x=log x"), None);
        assert_eq!(code("git -c user.name=x commit"), None);
    }

    #[test]
    fn other_programs() {
        for (line, expected) in [
            ("find . -name x -exec ls {} ;", vec!["-exec"]),
            ("find . -delete", vec!["-delete"]),
            ("find . -fprint out", vec!["-fprint"]),
            (
                "find . -execdir a ; -okdir b ; -ok c ; -fls x -fprintf y z -fprint0 w",
                vec!["-execdir", "-okdir", "-ok", "-fls", "-fprintf", "-fprint0"],
            ),
            ("fd -x rm", vec!["-x"]),
            ("fd x --exec-batch rm", vec!["--exec-batch"]),
            ("sed -i s/a/b/ f", vec!["-i"]),
            ("sed -ni.bak s/a/b/ f", vec!["-i"]),
            ("sed --in-place s/a/b/ f", vec!["--in-place"]),
            ("sed s/a/b/ f --in-pl", vec!["--in-place"]),
            ("sed -f script f", vec!["-f"]),
            ("sed s/a/b/w f", vec!["sed script (s///w)"]),
            ("sed -e p -e w f", vec!["sed script (w)"]),
            ("sed --expression=1e f", vec!["sed script (e)"]),
            ("sed --expr 1e 1d", vec!["sed script (e)"]),
            ("awk --so BEGIN{system(x)} 1", vec!["awk program (system)"]),
            ("sed -n 1e f", vec!["sed script (e)"]),
            ("awk {system(x)} f", vec!["awk program (system)"]),
            ("gawk -f prog.awk f", vec!["-f"]),
            ("awk -l x {}", vec!["-l"]),
            ("mawk -W exec f", vec!["-W"]),
            ("awk -F: {print>x}", vec!["awk program (>)"]),
            ("tar --to-command=sh -xf a", vec!["--to-command"]),
            ("tar --to-com=sh -xf a", vec!["--to-command"]),
            (
                "tar -x --checkpoint-action=exec=sh -f a",
                vec!["--checkpoint-action"],
            ),
            ("tar -I sh -xf a", vec!["-I"]),
            ("tar -xIsh -f a", vec!["-I"]),
            ("tar xIf sh a", vec!["-I"]),
            ("tar -F sh -cf a", vec!["-F"]),
            ("tar --info-script=x -cf a", vec!["--info-script"]),
            (
                "tar --new-volume-script x -cf a",
                vec!["--new-volume-script"],
            ),
            ("tar --rsh-command=x -cf a", vec!["--rsh-command"]),
            ("rg --pre sh x", vec!["--pre"]),
            ("rg --pre=sh x", vec!["--pre"]),
            ("sort -o out in", vec!["-o"]),
            ("sort -uo out in", vec!["-o"]),
            ("sort --output=out in", vec!["--output"]),
            ("sort --compress-program=sh in", vec!["--compress-program"]),
            ("uniq in out", vec!["the file uniq writes"]),
            ("tee out", vec!["a file tee writes"]),
            ("tee -a a b", vec!["a file tee writes", "a file tee writes"]),
            ("dd if=a of=b", vec!["of="]),
            ("curl -o out url", vec!["-o"]),
            ("curl -O url", vec!["-O"]),
            ("curl -sSLo out url", vec!["-o"]),
            ("curl --output out url", vec!["--output"]),
            ("curl -K cfg", vec!["-K"]),
            ("wget -O out url", vec!["-O"]),
            ("wget --output-document=out url", vec!["--output-document"]),
            ("wget -e robots=off url", vec!["-e"]),
            ("rsync -e sh a b", vec!["-e"]),
            ("rsync -ave sh a b", vec!["-e"]),
            ("rsync --rsync-path=x a b", vec!["--rsync-path"]),
            ("ssh -o ProxyCommand=sh host", vec!["-o ProxyCommand"]),
            ("ssh -oLocalCommand=sh host", vec!["-o LocalCommand"]),
            ("ssh -F cfg host", vec!["-F"]),
            ("scp -S sh a b", vec!["-S"]),
            ("zip -TT sh a.zip f", vec!["-TT"]),
            ("zip --unzip-command sh a.zip f", vec!["--unzip-command"]),
            ("man -P sh ls", vec!["-P"]),
            ("man --pager=sh ls", vec!["--pager"]),
            ("man -Hfirefox ls", vec!["-H"]),
        ] {
            assert_eq!(options(line), expected, "{line}");
        }
        for safe in [
            "find . -name x -print",
            "fd -e rs x",
            "sed -n 1,5p f",
            "sed -e s/a/b/ -e p f",
            "sed --sandbox s/a/b/w f",
            "awk {print $1} f",
            "awk -F: -v x=1 {print} f",
            "gawk --sandbox {system(x)}",
            "tar -xzf a.tgz",
            "tar xzf a.tgz",
            "tar -tf a",
            "rg -e --pre x",
            "rg --pretty x",
            "sort -k 2 -t o f",
            "uniq in",
            "uniq -c in",
            "tee",
            "sort -- -o",
            "dd if=a bs=1",
            "curl -sSL url",
            "curl -d x url",
            "wget -q url",
            "rsync -av a b",
            "ssh -o BatchMode=yes host ls",
            "ssh -S ctl host",
            "zip -r a.zip d",
            "man ls",
            "ls -la",
        ] {
            assert!(options(safe).is_empty(), "{safe}: {:?}", options(safe));
        }
    }

    #[test]
    fn fixed_characters_are_the_option() {
        let risky = find(&words("git -calias.x=y x"));
        assert_eq!(risky[0].fixed, vec![(1, 0..2)]);
        let risky = find(&words("sed -ni s/a/b/ f"));
        assert_eq!(risky[0].fixed, vec![(1, 0..3)]);
        let risky = find(&words("tar --to-command=sh -xf a"));
        assert_eq!(risky[0].fixed, vec![(1, 0..12)]);
        let risky = find(&words("git clone ext::sh dir"));
        assert_eq!(risky[0].fixed, vec![(2, 0..5)]);
    }
}
