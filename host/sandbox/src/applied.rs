//! What a process that confined itself has in place: [`Applied`].

/// What [`crate::apply_to_current_process`] put in place.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Applied {
    /// `no_new_privs` is set.
    pub no_new_privs: bool,
    /// The Landlock ABI the file system rules were made for (`None`: no file system rules).
    pub landlock_abi: Option<u32>,
    /// The network filter (seccomp, and Landlock's TCP rules where the ABI has them) is in
    /// place.
    pub network_filter: bool,
    /// Starting programs is refused (seccomp).
    pub spawn_filter: bool,
    /// Masks, read-only and pinned paths are mounted (a user and mount namespace of its own).
    pub mounts: bool,
}
