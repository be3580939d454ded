//! The supervisor ([`run`]): two processes between the caller and the command.
//!
//! - The **outer** supervisor (the process the caller started) dies with its parent (its
//!   death signal is SIGTERM, which it handles), looks through the git repositories it
//!   guards, makes the memory cgroup, enters the namespaces, forks the inner one and waits for
//!   it; on SIGTERM/SIGINT/SIGHUP/SIGQUIT it passes SIGTERM on and kills the inner one a
//!   second later if it is still there. When the command has ended it sets aside what the
//!   command made in the repositories, says when the memory limit killed it, and takes the
//!   command's ending as its own (an exit code, or the same signal).
//! - The **inner** supervisor is the first process of the PID namespace (without one, a child
//!   subreaper). It dies with the outer one (SIGKILL; a PID namespace ends with its first
//!   process), enters the memory cgroup, mounts, limits, confines itself (Landlock, seccomp)
//!   and forks the command, which drops every capability and runs with the policy's
//!   variables removed from its environment. When the command ends it kills everything that is left
//!   and reports the command's wait status to the outer supervisor through a pipe.
//!
//! Two processes because a process cannot enter a PID namespace itself: only its children
//! are in it.

use std::ffi::{CString, OsString};
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::time::{Duration, Instant};

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::prctl;
use nix::sys::signal::{kill, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::{fork, ForkResult, Pid};

use super::cgroup::Cgroup;
use super::egress_link;
use super::namespaces::Entered;
use super::{caps, landlock_rules, limits, mounts, namespaces, net_filter, probe, reap, signals};
use crate::error::{SandboxError, MESSAGE_PREFIX, SETUP_FAILED};
use crate::git_guard::Repositories;
use crate::policy::{env_removed, FilesystemMode, SandboxPolicy};
use crate::support::{is_simulated_missing, Feature};

/// How long the command gets between SIGTERM and SIGKILL when the supervisor is told to stop
/// (less than the two seconds execute_command waits before it kills the supervisor itself).
const GRACE: Duration = Duration::from_millis(1000);

/// How often the supervisors look around when no signal comes.
const TICK: Duration = Duration::from_millis(100);

/// Runs `argv` under `policy`; see the module documentation.
pub fn run(policy: &SandboxPolicy, argv: &[OsString]) -> i32 {
    match outer(policy, argv) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("{MESSAGE_PREFIX}{e}");
            SETUP_FAILED
        }
    }
}

fn outer(policy: &SandboxPolicy, argv: &[OsString]) -> Result<i32, SandboxError> {
    let argv = to_cstrings(argv)?;
    let parent = nix::unistd::getppid();
    if policy.die_with_parent {
        prctl::set_pdeathsig(Signal::SIGTERM)
            .map_err(|e| SandboxError::setup("set the death signal", e))?;
        // The parent may have died before the signal was set.
        if nix::unistd::getppid() != parent {
            return Ok(SETUP_FAILED);
        }
    }
    signals::prepare().map_err(|e| SandboxError::setup("prepare the signals", e))?;
    // Orphans of the inner supervisor (if it is killed without a PID namespace) come here.
    prctl::set_child_subreaper(true)
        .map_err(|e| SandboxError::setup("become a child subreaper", e))?;
    let mut policy = policy.clone();
    let repositories = guard_repositories(&mut policy)?;
    let policy = &policy;
    let cgroup = policy.limits.max_memory_bytes.and_then(Cgroup::create);
    // The proxy's socket is reached from the caller's namespaces, before entering new ones.
    let connected = match (&policy.egress, policy.network) {
        (Some(link), false) => Some(egress_link::connect(link)?),
        _ => None,
    };
    let mut entered = namespaces::enter(policy)?;
    let proxy_port = match connected {
        Some(connected) if entered.net => Some(connected.listen()?.start_forwarder()?),
        Some(_) => {
            eprintln!(
                "{MESSAGE_PREFIX}no network namespace could be made, so the command has no \
                 network at all (the egress proxy reaches commands only through one)"
            );
            None
        }
        None => None,
    };
    namespaces::enter_pid(&mut entered);
    // Without a PID namespace the command sees this process too (the user and group maps,
    // written above, need it dumpable).
    prctl::set_dumpable(false).map_err(|e| SandboxError::setup("become undumpable", e))?;
    let (alive_reader, alive_writer) = pipe()?;
    let (status_reader, status_writer) = pipe()?;
    // SAFETY: the supervisor has a single thread (run_sandboxed's contract), so the child
    // may do anything after the fork.
    match unsafe { fork() }.map_err(|e| SandboxError::setup("fork", e))? {
        ForkResult::Child => {
            drop(alive_writer);
            drop(status_reader);
            let code = match inner(
                policy,
                &argv,
                Inner {
                    entered,
                    cgroup: cgroup.as_ref(),
                    proxy_port,
                },
                &alive_reader,
                status_writer,
            ) {
                Ok(code) => code,
                Err(e) => {
                    eprintln!("{MESSAGE_PREFIX}{e}");
                    SETUP_FAILED
                }
            };
            std::process::exit(code);
        }
        ForkResult::Parent { child } => {
            drop(alive_reader);
            drop(status_writer);
            let ending = wait_inner(child, status_reader);
            drop(alive_writer);
            // Whatever the inner supervisor left (it was killed, without a PID namespace).
            reap::kill_descendants(GRACE);
            if let Some(repositories) = repositories {
                for set_aside in repositories.set_aside_new() {
                    eprintln!("{MESSAGE_PREFIX}{}", set_aside.message());
                }
            }
            if let Some(cgroup) = cgroup {
                if cgroup.oom_killed() {
                    let limit = policy.limits.max_memory_bytes.unwrap_or_default();
                    eprintln!(
                        "{MESSAGE_PREFIX}{MEMORY_LIMIT_REACHED} ({} MiB): the kernel killed the \
                         command or a process it started",
                        limit >> 20
                    );
                }
                cgroup.remove();
            }
            Ok(finish(ending))
        }
    }
}

/// The start of the supervisor's line when the memory cgroup's limit killed a process.
pub const MEMORY_LIMIT_REACHED: &str = "the memory limit was reached";

/// Looks through the repositories below the policy's guarded roots and adds the mounts that
/// protect what exists of them to the policy.
fn guard_repositories(policy: &mut SandboxPolicy) -> Result<Option<Repositories>, SandboxError> {
    if policy.git_guarded_roots.is_empty() {
        return Ok(None);
    }
    let repositories = Repositories::find(&policy.git_guarded_roots).map_err(|e| {
        SandboxError::Refused(format!(
            "{e}; narrow the writable roots, or turn the guard off with the sandbox setting \
             git_guard = false"
        ))
    })?;
    let protected = repositories.protected();
    policy.pinned_paths.extend(protected.pinned);
    policy.read_only_paths.extend(protected.read_only);
    Ok(Some(repositories))
}

/// How the command ended, as the inner supervisor reported it.
#[derive(Debug, Clone, Copy)]
enum Ending {
    Exited(i32),
    Signaled(Signal),
}

fn finish(ending: Ending) -> i32 {
    match ending {
        Ending::Exited(code) => code,
        Ending::Signaled(signal) => {
            signals::die_by(signal);
            128 + signal as i32
        }
    }
}

fn decode(status: i32) -> Ending {
    if libc::WIFSIGNALED(status) {
        Signal::try_from(libc::WTERMSIG(status))
            .map(Ending::Signaled)
            .unwrap_or(Ending::Exited(128 + libc::WTERMSIG(status)))
    } else {
        Ending::Exited(libc::WEXITSTATUS(status))
    }
}

/// Waits for the inner supervisor, passing stop signals on; returns the command's ending.
fn wait_inner(inner: Pid, status: OwnedFd) -> Ending {
    let mut stop_sent: Option<Instant> = None;
    let exit = loop {
        let signal = signals::wait(TICK);
        if let Some(Signal::SIGTERM | Signal::SIGINT | Signal::SIGHUP | Signal::SIGQUIT) = signal {
            if stop_sent.is_none() {
                let _ = kill(inner, Signal::SIGTERM);
                stop_sent = Some(Instant::now());
            }
        }
        if stop_sent.is_some_and(|sent| sent.elapsed() >= GRACE) {
            let _ = kill(inner, Signal::SIGKILL);
        }
        let mut found = None;
        for (pid, status) in reap::reap_ended() {
            if pid == inner {
                found = Some(status);
            }
        }
        if let Some(status) = found {
            break status;
        }
    };
    let mut word = [0u8; 4];
    let mut reader = std::fs::File::from(status);
    if reader.read_exact(&mut word).is_ok() {
        return decode(i32::from_ne_bytes(word));
    }
    // No report: the inner supervisor failed or was killed; its own ending stands.
    match exit {
        WaitStatus::Exited(_, code) => Ending::Exited(code),
        WaitStatus::Signaled(_, signal, _) => Ending::Signaled(signal),
        _ => Ending::Exited(SETUP_FAILED),
    }
}

/// What the outer supervisor made for the inner one.
struct Inner<'a> {
    /// The namespaces entered.
    entered: Entered,
    /// The memory cgroup, if one could be made.
    cgroup: Option<&'a Cgroup>,
    /// The egress proxy's port on the namespace's loopback, when the command has one.
    proxy_port: Option<u16>,
}

fn inner(
    policy: &SandboxPolicy,
    argv: &[CString],
    made: Inner<'_>,
    alive: &OwnedFd,
    status: OwnedFd,
) -> Result<i32, SandboxError> {
    let Inner {
        entered,
        cgroup,
        proxy_port,
    } = made;
    // In a PID namespace everything ends with this process, so it may die by SIGKILL;
    // without one it must first kill what the command left, so it takes SIGTERM.
    let death = if entered.pid {
        Signal::SIGKILL
    } else {
        Signal::SIGTERM
    };
    prctl::set_pdeathsig(death).map_err(|e| SandboxError::setup("set the death signal", e))?;
    // The command shares this process's PID namespace: it must not read this process's
    // environment (the caller's, whose variables the policy may remove from the command's) or
    // memory. (`execve` makes the command dumpable again.)
    prctl::set_dumpable(false).map_err(|e| SandboxError::setup("become undumpable", e))?;
    if outer_gone(alive) {
        return Ok(SETUP_FAILED);
    }
    if !entered.pid {
        prctl::set_child_subreaper(true)
            .map_err(|e| SandboxError::setup("become a child subreaper", e))?;
    }
    // Without the cgroup the limit is each process's own (RLIMIT_DATA).
    let in_cgroup = cgroup.is_some_and(|cgroup| cgroup.enter().is_ok());
    if entered.mount {
        mounts::apply(policy, entered.pid)?;
        // The working directory was looked up before the mounts: a directory mounted back
        // into a private temporary directory is another mount of it, and the masks and
        // read-only paths are on that one. Looked up again, it is the mounted one.
        let cwd = std::env::current_dir()
            .map_err(|e| SandboxError::setup("find the working directory", e))?;
        std::env::set_current_dir(&cwd)
            .map_err(|e| SandboxError::setup(format!("enter {}", cwd.display()), e))?;
    }
    limits::apply(&policy.limits, entered.pid, entered.user, in_cgroup)?;
    prctl::set_no_new_privs().map_err(|e| SandboxError::setup("set no_new_privs", e))?;
    let proxy_variables = proxy_port
        .map(egress_link::proxy_variables)
        .unwrap_or_default();
    if proxy_port.is_some() {
        // The namespace has only a loopback, whose one way out is the proxy: the command's
        // sockets need no filter.
        confine(&SandboxPolicy {
            network: true,
            ..policy.clone()
        })?;
    } else {
        confine(policy)?;
    }
    let last_cap = caps::last_cap();
    // Nothing below needs a privilege (signals and waits within the sandbox), and a command
    // must not find a privileged process to trace or signal.
    caps::drop_all(last_cap);
    // SAFETY: this process has a single thread (a child of the single-threaded outer
    // supervisor).
    let command = match unsafe { fork() }.map_err(|e| SandboxError::setup("fork", e))? {
        ForkResult::Child => {
            signals::unblock_all();
            caps::drop_all(last_cap);
            exec(argv, policy, &proxy_variables)
        }
        ForkResult::Parent { child } => child,
    };
    let raw = wait_command(command, entered.pid);
    let mut writer = std::fs::File::from(status);
    let _ = writer.write_all(&raw.to_ne_bytes());
    Ok(match decode(raw) {
        Ending::Exited(code) => code,
        Ending::Signaled(signal) => 128 + signal as i32,
    })
}

/// Landlock and the network filter, as the policy asks; both apply to this process and
/// everything it starts.
fn confine(policy: &SandboxPolicy) -> Result<(), SandboxError> {
    let needs_landlock = policy.filesystem != FilesystemMode::Off || !policy.network;
    let abi = if is_simulated_missing(Feature::Landlock) {
        None
    } else {
        probe::landlock_abi()
    };
    match abi {
        Some(abi) if needs_landlock || abi >= 6 => {
            landlock_rules::restrict(policy, abi)?;
        }
        None if policy.filesystem != FilesystemMode::Off => {
            return Err(SandboxError::unsupported(
                Feature::Landlock,
                format!(
                    "cannot confine the file system ({}): Landlock is not available",
                    policy.filesystem.as_str()
                ),
            ));
        }
        _ => {}
    }
    if !policy.network {
        if is_simulated_missing(Feature::Seccomp) {
            return Err(SandboxError::unsupported(
                Feature::Seccomp,
                "cannot filter the network: seccomp is not available",
            ));
        }
        net_filter::install(false, true, false)?;
    }
    Ok(())
}

/// Runs the command (in the forked child) with the variables `policy` removes taken out of
/// its environment and `set` set in it; never returns.
fn exec(argv: &[CString], policy: &SandboxPolicy, set: &[(String, String)]) -> ! {
    let replaced = |name: &str| set.iter().any(|(set_name, _)| set_name == name);
    let env: Vec<CString> = std::env::vars_os()
        .filter(|(name, _)| {
            let name = name.to_string_lossy();
            !env_removed(&name, policy) && !replaced(&name)
        })
        .map(|(name, value)| (name.into_vec(), value.into_vec()))
        .chain(
            set.iter()
                .map(|(name, value)| (name.clone().into_bytes(), value.clone().into_bytes())),
        )
        .filter_map(|(name, value)| {
            let mut pair = name;
            pair.push(b'=');
            pair.extend(value);
            CString::new(pair).ok()
        })
        .collect();
    let error = match nix::unistd::execvpe(&argv[0], argv, &env) {
        Err(e) => e,
        Ok(never) => match never {},
    };
    let _ = writeln!(
        std::io::stderr(),
        "{MESSAGE_PREFIX}cannot run {}: {error}",
        argv[0].to_string_lossy()
    );
    let code = if error == nix::errno::Errno::ENOENT {
        127
    } else {
        126
    };
    // SAFETY: ends the forked child without running the parent's exit handlers.
    unsafe { libc::_exit(code) }
}

/// Waits for the command, reaping every other process that ends meanwhile; on a stop signal
/// passes SIGTERM to everything in the sandbox and SIGKILL after [`GRACE`]. When the command
/// has ended, kills what is left. Returns the command's raw wait status.
fn wait_command(command: Pid, pid_namespace: bool) -> i32 {
    let everything = |signal: Signal| {
        if pid_namespace {
            // -1 in a PID namespace: every process of the namespace but this one.
            let _ = kill(Pid::from_raw(-1), signal);
        } else {
            reap::signal_children(signal);
        }
    };
    let mut stop_sent: Option<Instant> = None;
    let raw = loop {
        let signal = signals::wait(TICK);
        if let Some(Signal::SIGTERM | Signal::SIGINT | Signal::SIGHUP | Signal::SIGQUIT) = signal {
            if stop_sent.is_none() {
                everything(Signal::SIGTERM);
                stop_sent = Some(Instant::now());
            }
        }
        if stop_sent.is_some_and(|sent| sent.elapsed() >= GRACE) {
            everything(Signal::SIGKILL);
        }
        let mut found = None;
        for (pid, status) in reap::reap_ended() {
            if pid == command {
                found = Some(status);
            }
        }
        match found {
            Some(WaitStatus::Exited(_, code)) => break code << 8,
            Some(WaitStatus::Signaled(_, signal, _)) => break signal as i32,
            Some(_) | None => {}
        }
    };
    if pid_namespace {
        everything(Signal::SIGKILL);
        // The namespace's processes are reaped by the kernel when this process exits.
        while waitpid(None::<Pid>, Some(WaitPidFlag::__WALL)).is_ok() {}
    } else {
        reap::kill_descendants(Duration::from_secs(5));
    }
    raw
}

/// Whether the outer supervisor is gone (the pipe it holds has no writer left).
fn outer_gone(alive: &OwnedFd) -> bool {
    let mut fds = [PollFd::new(alive.as_fd(), PollFlags::POLLIN)];
    match poll(&mut fds, PollTimeout::ZERO) {
        Ok(0) => false,
        Ok(_) => fds[0]
            .revents()
            .is_some_and(|r| r.intersects(PollFlags::POLLHUP | PollFlags::POLLIN)),
        Err(_) => false,
    }
}

fn pipe() -> Result<(OwnedFd, OwnedFd), SandboxError> {
    nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).map_err(|e| SandboxError::setup("pipe", e))
}

fn to_cstrings(argv: &[OsString]) -> Result<Vec<CString>, SandboxError> {
    if argv.is_empty() {
        return Err(SandboxError::Policy("no command".into()));
    }
    argv.iter()
        .map(|arg| {
            CString::new(arg.as_bytes())
                .map_err(|_| SandboxError::Policy("an argument holds a NUL byte".into()))
        })
        .collect()
}
