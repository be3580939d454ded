//! [`probe`]: Landlock's ABI, seccomp, and which namespaces this user can create (tried in a
//! short-lived child, so the caller may have threads).

use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};

use crate::support::{is_simulated_missing, Feature, Support};

const USER: u8 = 1;
const MOUNT: u8 = 2;
const PID: u8 = 4;
const NET: u8 = 8;

/// What this kernel offers this process.
pub fn probe() -> Support {
    let privileged = nix::unistd::geteuid().is_root();
    let bits = namespaces();
    let mut support = Support {
        landlock_abi: landlock_abi(),
        user_namespaces: bits & USER != 0,
        mount_namespaces: bits & MOUNT != 0,
        pid_namespaces: bits & PID != 0,
        network_namespace: bits & NET != 0,
        seccomp: seccomp(),
        privileged,
        pid_max_per_namespace: kernel_at_least(6, 14),
        memory_cgroup: !is_simulated_missing(Feature::MemoryCgroup)
            && super::cgroup::Cgroup::available(),
    };
    if is_simulated_missing(Feature::Landlock) {
        support.landlock_abi = None;
    }
    if is_simulated_missing(Feature::UserNamespaces) {
        support.user_namespaces = false;
    }
    if is_simulated_missing(Feature::MountNamespaces) {
        support.mount_namespaces = false;
    }
    if is_simulated_missing(Feature::PidNamespaces) {
        support.pid_namespaces = false;
    }
    if is_simulated_missing(Feature::NetworkNamespaces) {
        support.network_namespace = false;
    }
    if is_simulated_missing(Feature::Seccomp) {
        support.seccomp = false;
    }
    if is_simulated_missing(Feature::ProcessLimit) {
        support.pid_max_per_namespace = false;
        support.privileged = true;
    }
    support
}

/// The Landlock ABI version, `None` when Landlock is not enabled.
pub fn landlock_abi() -> Option<u32> {
    // SAFETY: landlock_create_ruleset with a null attribute, size 0 and the VERSION flag only
    // returns the ABI version (or an error); it touches no memory.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            1u32, // LANDLOCK_CREATE_RULESET_VERSION
        )
    };
    u32::try_from(version).ok().filter(|v| *v > 0)
}

fn seccomp() -> bool {
    // SAFETY: PR_GET_SECCOMP takes no pointer; it answers 0 (or 2) when seccomp is built in.
    unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 }
}

/// Whether the running kernel's version is at least `major.minor`.
pub fn kernel_at_least(major: u32, minor: u32) -> bool {
    let Ok(uts) = nix::sys::utsname::uname() else {
        return false;
    };
    let release = uts.release().to_string_lossy().into_owned();
    let mut parts = release.split(|c: char| !c.is_ascii_digit());
    let found_major: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    let found_minor: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    (found_major, found_minor) >= (major, minor)
}

/// Which namespaces a child of this process can create, as bits.
fn namespaces() -> u8 {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into the array it is given.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return 0;
    }
    // SAFETY: both descriptors were just created and are owned here alone.
    let (reader, writer) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let root = c"/";
    // SAFETY: the child only makes system calls (unshare, mount, write, _exit), which are
    // async-signal-safe, so forking a process with other threads is sound.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let mut bits: u8 = 0;
        // SAFETY: plain system calls on constants and the pipe's descriptor, then _exit.
        unsafe {
            if libc::unshare(libc::CLONE_NEWUSER) == 0 {
                bits |= USER;
            }
            if libc::unshare(libc::CLONE_NEWNS) == 0
                && libc::mount(
                    std::ptr::null(),
                    root.as_ptr(),
                    std::ptr::null(),
                    libc::MS_REC | libc::MS_PRIVATE,
                    std::ptr::null(),
                ) == 0
            {
                bits |= MOUNT;
            }
            if libc::unshare(libc::CLONE_NEWPID) == 0 {
                bits |= PID;
            }
            if libc::unshare(libc::CLONE_NEWNET) == 0 {
                bits |= NET;
            }
            libc::write(
                std::os::fd::AsRawFd::as_raw_fd(&writer),
                (&raw const bits).cast(),
                1,
            );
            libc::_exit(0);
        }
    }
    drop(writer);
    if pid < 0 {
        return 0;
    }
    let mut byte = [0u8; 1];
    let got = std::fs::File::from(reader).read(&mut byte).unwrap_or(0);
    let mut status = 0;
    // SAFETY: waits for the child forked above.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    if got == 1 {
        byte[0]
    } else {
        0
    }
}
