//! The supervisor's signals: the ones it waits for are blocked and taken with
//! `sigtimedwait`, with a handler installed (a PID namespace's first process gets signals only
//! when it handles them; a blocked signal with the default action would be dropped). The
//! command gets an empty mask back before it runs (handlers go back to the default by exec).

use std::time::Duration;

use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, SigmaskHow, Signal};

/// The signals the supervisor waits for.
pub const WAITED: [Signal; 5] = [
    Signal::SIGCHLD,
    Signal::SIGTERM,
    Signal::SIGINT,
    Signal::SIGHUP,
    Signal::SIGQUIT,
];

extern "C" fn nothing(_: libc::c_int) {}

fn waited_set() -> SigSet {
    let mut set = SigSet::empty();
    for signal in WAITED {
        set.add(signal);
    }
    set
}

/// Installs the handlers and blocks the waited signals.
pub fn prepare() -> std::io::Result<()> {
    let action = SigAction::new(
        SigHandler::Handler(nothing),
        SaFlags::SA_RESTART,
        SigSet::empty(),
    );
    for signal in WAITED {
        // SAFETY: the handler does nothing, so it is async-signal-safe.
        unsafe { sigaction(signal, &action) }?;
    }
    nix::sys::signal::sigprocmask(SigmaskHow::SIG_BLOCK, Some(&waited_set()), None)?;
    Ok(())
}

/// Unblocks every signal (in the command's process, before exec).
pub fn unblock_all() {
    let _ = nix::sys::signal::sigprocmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::empty()), None);
}

/// Waits up to `timeout` for one of the waited signals.
pub fn wait(timeout: Duration) -> Option<Signal> {
    let set = waited_set();
    let spec = libc::timespec {
        tv_sec: libc::time_t::try_from(timeout.as_secs()).unwrap_or(libc::time_t::MAX),
        // Below 10^9, so it fits a c_long everywhere.
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: the set and the timespec are valid for the call; no siginfo is asked for.
    let signal = unsafe { libc::sigtimedwait(set.as_ref(), std::ptr::null_mut(), &spec) };
    Signal::try_from(signal).ok()
}

/// Ends the process with `signal`, as the command was ended (no core file).
pub fn die_by(signal: Signal) {
    let _ = nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_CORE, 0, 0);
    let default = SigAction::new(SigHandler::SigDfl, SaFlags::empty(), SigSet::empty());
    // SAFETY: restoring the default action is always sound.
    let _ = unsafe { sigaction(signal, &default) };
    let mut set = SigSet::empty();
    set.add(signal);
    let _ = nix::sys::signal::sigprocmask(SigmaskHow::SIG_UNBLOCK, Some(&set), None);
    let _ = nix::sys::signal::raise(signal);
}
