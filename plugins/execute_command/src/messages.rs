//! The texts the model reads: the permission refusal and the result of a run.

use std::path::Path;
use std::time::Duration;

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The command exited with this code.
    Exited(i32),
    /// The command was ended by this signal (not ours).
    Signaled(i32),
    /// The command ended, but how is not known.
    Unknown,
    /// The timeout passed and the command was stopped.
    TimedOut(Duration),
    /// The call was cancelled and the command was stopped.
    Cancelled,
}

/// Cline's `permissionDeniedError`, around the permission check's message.
pub fn permission_denied_error(message: &str) -> String {
    format!(
        "Command execution blocked by CLINE_COMMAND_PERMISSIONS: {message}. You must try a \
         different approach or ask the user to update the permission settings."
    )
}

/// Cline's system notification for an auto-approved command still running after `after`
/// (its subtitle, then its message; Cline's delay is always 30 s).
pub fn still_running_notice(after: Duration) -> String {
    format!(
        "Command is still running: An auto-approved command has been running for {}s, and may \
         need your attention.",
        after.as_secs()
    )
}

/// The result of a run (Cline's texts; a timeout stops the command instead of leaving it
/// running in the background).
pub fn result_text(ending: Ending, output: &str, spill: Option<&Path>) -> String {
    let (head, output_label) = match ending {
        Ending::Exited(0) => (
            "Command executed successfully (exit code 0).".to_string(),
            "Output:",
        ),
        Ending::Exited(code) => (format!("Command failed with exit code {code}."), "Output:"),
        Ending::Signaled(signal) => (
            format!("Command terminated by signal {}.", signal_name(signal)),
            "Output:",
        ),
        Ending::Unknown => ("Command executed.".to_string(), "Output:"),
        Ending::TimedOut(after) => (
            format!(
                "Command timed out after {} seconds and was stopped.",
                after.as_secs()
            ),
            "Output so far:",
        ),
        Ending::Cancelled => (
            "Command was cancelled by the user.".to_string(),
            "Output captured before cancellation:",
        ),
    };
    let mut text = head;
    if !output.is_empty() {
        text.push_str(&format!("\n{output_label}\n{output}"));
    }
    if let Some(path) = spill {
        text.push_str(&format!("\nFull output saved to: {}", path.display()));
    }
    text
}

/// A signal's name as Node reports it (`SIGTERM`). The table is Linux's numbering, the only
/// platform the host runs commands on; other numbers are shown as they are.
fn signal_name(signal: i32) -> String {
    const NAMES: [&str; 31] = [
        "SIGHUP",
        "SIGINT",
        "SIGQUIT",
        "SIGILL",
        "SIGTRAP",
        "SIGABRT",
        "SIGBUS",
        "SIGFPE",
        "SIGKILL",
        "SIGUSR1",
        "SIGSEGV",
        "SIGUSR2",
        "SIGPIPE",
        "SIGALRM",
        "SIGTERM",
        "SIGSTKFLT",
        "SIGCHLD",
        "SIGCONT",
        "SIGSTOP",
        "SIGTSTP",
        "SIGTTIN",
        "SIGTTOU",
        "SIGURG",
        "SIGXCPU",
        "SIGXFSZ",
        "SIGVTALRM",
        "SIGPROF",
        "SIGWINCH",
        "SIGIO",
        "SIGPWR",
        "SIGSYS",
    ];
    usize::try_from(signal - 1)
        .ok()
        .and_then(|i| NAMES.get(i))
        .map_or_else(|| signal.to_string(), |name| (*name).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_follow_cline() {
        assert_eq!(
            result_text(Ending::Exited(0), "", None),
            "Command executed successfully (exit code 0)."
        );
        assert_eq!(
            result_text(Ending::Exited(2), "boom", Some(Path::new("/tmp/o.log"))),
            "Command failed with exit code 2.\nOutput:\nboom\nFull output saved to: /tmp/o.log"
        );
        assert_eq!(
            result_text(Ending::Signaled(9), "", None),
            "Command terminated by signal SIGKILL."
        );
        assert_eq!(
            result_text(Ending::TimedOut(Duration::from_secs(3)), "started", None),
            "Command timed out after 3 seconds and was stopped.\nOutput so far:\nstarted"
        );
        assert_eq!(
            result_text(Ending::Cancelled, "x", None),
            "Command was cancelled by the user.\nOutput captured before cancellation:\nx"
        );
        assert_eq!(signal_name(64), "64");
    }

    #[test]
    fn the_refusal_wraps_the_message() {
        assert_eq!(
            permission_denied_error(
                "Command \"x\" was denied by CLINE_COMMAND_PERMISSIONS. Reason: denied"
            ),
            "Command execution blocked by CLINE_COMMAND_PERMISSIONS: Command \"x\" was denied by \
             CLINE_COMMAND_PERMISSIONS. Reason: denied. You must try a different approach or ask \
             the user to update the permission settings."
        );
    }
}
