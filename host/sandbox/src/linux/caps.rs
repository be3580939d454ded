//! Dropping every capability before the command runs: inside its user namespace the supervisor
//! holds them all (it could undo the mounts), and a command running as root would get them
//! back at exec unless the bounding set is empty.

/// Empties the bounding, ambient, inheritable, permitted and effective sets. Errors are
/// ignored: a process without privileges has none to drop, and exec gives it none.
pub fn drop_all(last_cap: u32) {
    for cap in 0..=last_cap {
        // SAFETY: PR_CAPBSET_DROP takes a capability number; no memory is touched.
        unsafe { libc::prctl(libc::PR_CAPBSET_DROP, libc::c_ulong::from(cap), 0, 0, 0) };
    }
    // SAFETY: as above, with constants only.
    unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0,
            0,
            0,
        )
    };
    #[repr(C)]
    struct Header {
        version: u32,
        pid: libc::c_int,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    let mut header = Header {
        version: 0x2008_0522, // _LINUX_CAPABILITY_VERSION_3
        pid: 0,
    };
    let data = [Data {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: capset reads a version 3 header and two data words, which live for the call.
    unsafe { libc::syscall(libc::SYS_capset, &raw mut header, data.as_ptr()) };
}

/// The highest capability number of this kernel.
pub fn last_cap() -> u32 {
    std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(63)
}
