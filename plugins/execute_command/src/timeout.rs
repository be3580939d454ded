//! How long a command may run: the `timeout` parameter when it is a positive number of seconds,
//! otherwise 300 seconds for commands that look long-running (installs, builds, test suites,
//! training) and 30 seconds for the rest, as in Cline's managed-timeout mode.

use std::sync::LazyLock;
use std::time::Duration;

use regex::Regex;

/// The timeout for commands that look long-running.
pub const LONG_RUNNING: Duration = Duration::from_secs(300);
/// The timeout for other commands.
pub const DEFAULT: Duration = Duration::from_secs(30);

/// Cline's patterns for long-running commands, matched without case on the command with its
/// white space collapsed.
static LONG_RUNNING_PATTERNS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        r"\b(npm|pnpm|yarn|bun)\s+(install|ci|build|test)\b",
        r"\b(npm|pnpm|yarn|bun)\s+run\s+(build|test|lint|typecheck|check)\b",
        r"\b(pip|pip3|uv)\s+install\b",
        r"\b(poetry|pipenv)\s+install\b",
        r"\b(cargo|go|mvn|gradle|gradlew)\s+(build|test|check|install)\b",
        r"\b(make|cmake|ctest)\b",
        r"\b(pytest|tox|nox|jest|vitest|mocha)\b",
        r"\b(docker|podman)\s+build\b",
        r"\b(torchrun|deepspeed|accelerate\s+launch)\b",
        r"\bffmpeg\b",
        r"\bpython(?:\d+(?:\.\d+)?)?\s+.*\b(train|finetune)\b",
    ]
    .iter()
    .filter_map(|p| {
        // JavaScript's `\b` and `\s` are ASCII-only; so are these.
        let ascii = p
            .replace(r"\b", r"(?-u:\b)")
            .replace(r"\s", r"[ \t\n\x0B\x0C\r]");
        Regex::new(&format!("(?i){ascii}")).ok()
    })
    .collect()
});

/// Whether a command looks like it takes long (an install, a build, a test run…).
pub fn is_long_running(command: &str) -> bool {
    let collapsed = command.split_whitespace().collect::<Vec<_>>().join(" ");
    LONG_RUNNING_PATTERNS
        .iter()
        .any(|re| re.is_match(&collapsed))
}

/// The timeout for a call: `requested` (the `timeout` parameter) when positive, otherwise by
/// the kind of command.
pub fn resolve(requested: Option<i64>, command: &str) -> Duration {
    match requested {
        Some(secs) if secs > 0 => Duration::from_secs(secs.unsigned_abs()),
        _ if is_long_running(command) => LONG_RUNNING,
        _ => DEFAULT,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_running_commands_get_longer() {
        for command in [
            "npm install",
            "cd app &&   pnpm   run build",
            "cargo test -p x",
            "make",
            "python3.11 scripts/run.py --mode train",
            "PYTEST_ADDOPTS=-q pytest",
            "Docker Build .",
        ] {
            assert_eq!(resolve(None, command), LONG_RUNNING, "{command}");
        }
        for command in [
            "ls -la",
            "npm start",
            "cargo fmt",
            "makefile-lint",
            "echo pytestx",
        ] {
            assert_eq!(resolve(None, command), DEFAULT, "{command}");
        }
    }

    #[test]
    fn every_pattern_compiles() {
        assert_eq!(LONG_RUNNING_PATTERNS.len(), 11);
    }

    #[test]
    fn a_positive_parameter_wins() {
        assert_eq!(resolve(Some(5), "npm install"), Duration::from_secs(5));
        assert_eq!(resolve(Some(0), "ls"), DEFAULT);
        assert_eq!(resolve(Some(-3), "make"), LONG_RUNNING);
    }
}
