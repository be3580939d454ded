//! The tables of commands that run commands: shells by syntax, and one entry per wrapper
//! with how its `getopt` reads its arguments. The logic that reads a command with them is in
//! [`super`]; these are data only.

/// Shells whose syntax is the POSIX/bash syntax the parser understands.
pub(super) const POSIX_SHELLS: &[&str] = &[
    "sh", "bash", "rbash", "dash", "zsh", "ksh", "ksh93", "mksh", "pdksh", "ash", "posh", "yash",
];
/// Shells with a syntax of their own: their code cannot be checked.
pub(super) const OTHER_SHELLS: &[&str] = &[
    "fish",
    "csh",
    "tcsh",
    "pwsh",
    "powershell",
    "nu",
    "elvish",
    "xonsh",
    "ion",
    "rc",
    "es",
];

/// How a wrapper's arguments are read.
pub(super) struct Spec {
    pub(super) names: &'static [&'static str],
    /// Short options that take a value (`-u USER` or `-uUSER`).
    pub(super) short_values: &'static str,
    /// Long options that take a value (`--user USER` or `--user=USER`), without dashes.
    pub(super) long_values: &'static [&'static str],
    /// Options whose value is shell code.
    pub(super) short_code: &'static str,
    pub(super) long_code: &'static [&'static str],
    /// Options after which the remaining words run through a shell.
    pub(super) short_shell: &'static str,
    pub(super) long_shell: &'static [&'static str],
    /// Options after which the remaining words are run directly (watch's `-x`).
    pub(super) short_direct: &'static str,
    pub(super) long_direct: &'static [&'static str],
    /// Options whose effect cannot be followed.
    pub(super) short_opaque: &'static str,
    pub(super) long_opaque: &'static [&'static str],
    /// Options with which no command runs (`sudo -e` edits files, `command -v` looks up).
    pub(super) short_none: &'static str,
    pub(super) long_none: &'static [&'static str],
    /// Operands before the command (timeout's DURATION, chroot's NEWROOT).
    pub(super) operands: usize,
    /// `NAME=VALUE` words before the command are assignments.
    pub(super) assignments: bool,
    /// Arguments are added at run time.
    pub(super) appends: bool,
    /// The remaining words are joined into shell code unless a direct option says otherwise.
    pub(super) shell_by_default: bool,
    /// The code option comes after the operands (`flock FILE -c CODE`).
    pub(super) code_after_operands: bool,
    /// Options may follow operands, and operands are not a command (`su USER -c CODE`).
    pub(super) permute: bool,
}

pub(super) const PLAIN: Spec = Spec {
    names: &[],
    short_values: "",
    long_values: &[],
    short_code: "",
    long_code: &[],
    short_shell: "",
    long_shell: &[],
    short_direct: "",
    long_direct: &[],
    short_opaque: "",
    long_opaque: &[],
    short_none: "",
    long_none: &[],
    operands: 0,
    assignments: false,
    appends: false,
    shell_by_default: false,
    code_after_operands: false,
    permute: false,
};

pub(super) const WRAPPERS: &[Spec] = &[
    Spec {
        names: &["env"],
        short_values: "Cu",
        long_values: &["unset", "chdir"],
        short_opaque: "S",
        long_opaque: &["split-string"],
        assignments: true,
        ..PLAIN
    },
    Spec {
        names: &["command"],
        short_none: "vV",
        ..PLAIN
    },
    Spec {
        names: &[
            "builtin", "nohup", "coproc", "busybox", "setsid", "unbuffer",
        ],
        ..PLAIN
    },
    Spec {
        names: &["exec"],
        short_values: "a",
        ..PLAIN
    },
    Spec {
        names: &["nice"],
        short_values: "n",
        long_values: &["adjustment"],
        ..PLAIN
    },
    Spec {
        names: &["time"],
        short_values: "fo",
        long_values: &["format", "output"],
        ..PLAIN
    },
    Spec {
        names: &["timeout"],
        short_values: "sk",
        long_values: &["signal", "kill-after"],
        operands: 1,
        ..PLAIN
    },
    Spec {
        names: &["stdbuf"],
        short_values: "ioe",
        long_values: &["input", "output", "error"],
        ..PLAIN
    },
    Spec {
        names: &["ionice"],
        short_values: "cnpPu",
        long_values: &["class", "classdata", "pid", "pgid", "uid"],
        ..PLAIN
    },
    Spec {
        names: &["taskset"],
        operands: 1,
        ..PLAIN
    },
    Spec {
        names: &["chroot"],
        long_values: &["userspec", "groups"],
        operands: 1,
        ..PLAIN
    },
    Spec {
        names: &["sudo"],
        short_values: "aCcDgpRrTtUu",
        long_values: &[
            "close-from",
            "login-class",
            "chdir",
            "group",
            "prompt",
            "chroot",
            "role",
            "type",
            "command-timeout",
            "other-user",
            "user",
        ],
        short_shell: "is",
        long_shell: &["login", "shell"],
        short_none: "eKVv",
        long_none: &["edit", "remove-timestamp", "version", "validate"],
        assignments: true,
        ..PLAIN
    },
    Spec {
        names: &["doas"],
        short_values: "aCu",
        short_none: "sL",
        ..PLAIN
    },
    Spec {
        names: &["xargs"],
        short_values: "aEdILnPs",
        long_values: &[
            "arg-file",
            "delimiter",
            "max-args",
            "max-procs",
            "max-chars",
            "process-slot-var",
        ],
        appends: true,
        ..PLAIN
    },
    Spec {
        names: &["flock"],
        short_values: "wE",
        long_values: &["timeout", "conflict-exit-code"],
        short_code: "c",
        long_code: &["command"],
        operands: 1,
        code_after_operands: true,
        ..PLAIN
    },
    Spec {
        names: &["watch"],
        short_values: "n",
        long_values: &["interval"],
        short_direct: "x",
        long_direct: &["exec"],
        shell_by_default: true,
        ..PLAIN
    },
    Spec {
        names: &["su", "script"],
        short_values: "gGsw",
        long_values: &["group", "supp-group", "shell", "whitelist-environment"],
        short_code: "c",
        long_code: &["command", "session-command"],
        permute: true,
        ..PLAIN
    },
];
