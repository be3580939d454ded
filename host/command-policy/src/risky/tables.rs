//! The tables of options that run code or write files: one entry per program (with how it
//! reads its options), per git subcommand, and the lists of find's primaries, ssh's keys and
//! git's configuration. The logic that reads a command with them is in [`super`]; these are
//! data only, and the one place that lists the options (the README shows them as a table).

/// How a program's operands are checked, besides its options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Operands {
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
pub(super) struct Entry {
    /// The program's names (without a directory).
    pub(super) names: &'static [&'static str],
    /// Short options that run code or write files.
    pub(super) short: &'static str,
    /// Long options (without dashes) that run code or write files.
    pub(super) long: &'static [&'static str],
    /// Short options that take a value (attached or as the next word).
    pub(super) short_values: &'static str,
    /// Long options that take the next word as their value when given without `=`.
    pub(super) long_values: &'static [&'static str],
    /// How the operands are checked.
    pub(super) operands: Operands,
}

pub(super) const NONE: Entry = Entry {
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
pub(super) const GIT: Entry = Entry {
    names: &["git"],
    short: "c",
    long: &["config-env", "exec-path"],
    operands: Operands::Git,
    ..NONE
};

/// find: `-exec`, `-execdir`, `-ok`, `-okdir` (the command they run is checked too),
/// `-fprint`, `-fprint0`, `-fprintf`, `-fls` (write files) and `-delete`.
pub(super) const FIND: Entry = Entry {
    names: &["find"],
    operands: Operands::Find,
    ..NONE
};

/// fd: `-x`/`--exec`, `-X`/`--exec-batch` (the command they run is checked too).
pub(super) const FD: Entry = Entry {
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
pub(super) const SED: Entry = Entry {
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
pub(super) const AWK: Entry = Entry {
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
pub(super) const TAR: Entry = Entry {
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
pub(super) const RG: Entry = Entry {
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
pub(super) const SORT: Entry = Entry {
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
pub(super) const UNIQ: Entry = Entry {
    names: &["uniq"],
    short_values: "fsw",
    long_values: &["skip-fields", "skip-chars", "check-chars"],
    operands: Operands::Uniq,
    ..NONE
};

/// tee: every file operand is a file it writes: a pattern must name the file.
pub(super) const TEE: Entry = Entry {
    names: &["tee"],
    operands: Operands::Tee,
    ..NONE
};

/// dd: `of=FILE`.
pub(super) const DD: Entry = Entry {
    names: &["dd"],
    operands: Operands::Dd,
    ..NONE
};

/// curl: `-o`/`--output`, `-O`/`--remote-name`, `--remote-name-all`, `--output-dir`,
/// `-D`/`--dump-header`, `-c`/`--cookie-jar`, `--trace`, `--trace-ascii`, `--stderr`,
/// `--libcurl`, `--etag-save`, `--hsts`, `--alt-svc` (write files), `-K`/`--config`
/// (a file of further options).
pub(super) const CURL: Entry = Entry {
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
pub(super) const WGET: Entry = Entry {
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
pub(super) const RSYNC: Entry = Entry {
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
pub(super) const SSH: Entry = Entry {
    names: &["ssh"],
    short: "F",
    short_values: "bBcDEeFIiJLlmOopQRSWw",
    operands: Operands::Ssh,
    ..NONE
};

/// scp, sftp: as ssh, and `-S PROGRAM` (the ssh program to run); sftp's `-D PROGRAM`
/// (a local sftp server to run).
pub(super) const SCP: Entry = Entry {
    names: &["scp", "sftp"],
    short: "FSD",
    short_values: "BbcDFiJlloPRSs",
    operands: Operands::Ssh,
    ..NONE
};

/// zip: `-TT`/`--unzip-command COMMAND` (runs it to test the archive).
pub(super) const ZIP: Entry = Entry {
    names: &["zip"],
    long: &["unzip-command"],
    long_values: &["unzip-command"],
    operands: Operands::Zip,
    ..NONE
};

/// man: `-P`/`--pager PAGER`, `-H`/`--html[=BROWSER]` (run them).
pub(super) const MAN: Entry = Entry {
    names: &["man"],
    short: "PH",
    long: &["pager", "html"],
    short_values: "CMPSsmLepERr",
    long_values: &["pager", "config-file", "manpath", "sections", "locale"],
    ..NONE
};

/// Every program with risky options.
pub(super) const TABLE: &[Entry] = &[
    GIT, FIND, FD, SED, AWK, TAR, RG, SORT, UNIQ, TEE, DD, CURL, WGET, RSYNC, SSH, SCP, ZIP, MAN,
];

/// git's global options that take the next word as their value.
pub(super) const GIT_GLOBAL_VALUES: &[&str] = &[
    "-C",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--super-prefix",
    "--list-cmds",
    "--attr-source",
];

/// Configuration keys whose value is a shell command git runs (deny rules see it).
pub(super) const GIT_COMMAND_KEYS: &[&str] = &[
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
pub(super) struct GitSub {
    pub(super) names: &'static [&'static str],
    pub(super) short: &'static str,
    pub(super) long: &'static [&'static str],
    pub(super) short_values: &'static str,
}

pub(super) const GIT_SUBS: &[GitSub] = &[
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
pub(super) const GIT_RISKY_SUBS: &[&str] = &["filter-branch", "instaweb"];

/// Options of any git subcommand that write files.
pub(super) const GIT_OUTPUT: &[&str] = &["output", "output-directory"];

/// Options whose value is the next word, in most subcommands (a dynamic value after them is
/// not an option).
pub(super) const GIT_VALUES: &[&str] = &[
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

/// find's primaries that run commands or write files.
pub(super) const FIND_RISKY: &[&str] = &[
    "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls", "-delete",
];
/// find's primaries whose command ends at `;` or `+`.
pub(super) const FIND_EXEC: &[&str] = &["-exec", "-execdir", "-ok", "-okdir"];
/// find's primaries whose value is the next word.
pub(super) const FIND_VALUES: &[&str] = &[
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

/// ssh's `-o` keys that run local commands (compared in lower case).
pub(super) const SSH_COMMAND_KEYS: &[&str] = &[
    "proxycommand",
    "localcommand",
    "permitlocalcommand",
    "knownhostscommand",
    "match",
];

/// `git config` options that write (or edit) the configuration.
pub(super) const GIT_CONFIG_WRITES: &[&str] = &[
    "--add",
    "--unset",
    "--unset-all",
    "--replace-all",
    "--rename-section",
    "--remove-section",
    "--edit",
    "-e",
];
/// `git config` options that only read it.
pub(super) const GIT_CONFIG_READS: &[&str] = &[
    "--get",
    "--get-all",
    "--get-regexp",
    "--get-urlmatch",
    "--get-color",
    "--get-colorbool",
    "--list",
    "-l",
];
