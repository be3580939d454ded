//! The system calls the workspace capability is made of, in one place.
//!
//! Every path is resolved by `openat2(2)` (Linux 5.6+): beneath a root's directory handle with
//! `RESOLVE_BENEATH` (no `..`, absolute path or symbolic link leaves it, whatever happens to the
//! tree meanwhile), elsewhere from the process's root; always with `RESOLVE_NO_MAGICLINKS`
//! (`/proc/*/root`, `/proc/*/cwd`, `/proc/*/fd/*` and `/dev/fd/*` are refused by the kernel).
//! Objects are first opened with `O_PATH`, which has no side effect on any kind of file (a FIFO
//! does not block, a device is not opened), and only reopened for reading once they are known
//! to be regular files. Where an opened object really is comes from the kernel
//! (`/proc/self/fd/N`), not from the path that was asked for.

use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags, ResolveFlags, Stat};

/// `SYSFS_MAGIC` of `statfs(2)`: sysfs files report a size that is not their content's.
const SYSFS_MAGIC: u64 = 0x6265_6572;

/// How a path is resolved below its starting directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolve {
    /// Symbolic links are followed, but never out of the starting directory.
    Beneath,
    /// No symbolic link at all (walks, which never follow one), and never out.
    BeneathNoLinks,
    /// From the process's root: anything but magic links.
    Anywhere,
    /// From the process's root, no symbolic link at all (a real path, as the kernel named it).
    AnywhereNoLinks,
}

impl Resolve {
    fn flags(self) -> ResolveFlags {
        match self {
            Self::Beneath => ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
            Self::BeneathNoLinks => ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS,
            Self::Anywhere => ResolveFlags::NO_MAGICLINKS,
            Self::AnywhereNoLinks => ResolveFlags::NO_SYMLINKS,
        }
    }
}

/// `openat2(dir, path, O_PATH | extra, resolve)`; `dir` `None` is the current directory (the
/// path is then absolute). An empty path opens `dir` itself.
pub fn open_path(
    dir: Option<BorrowedFd<'_>>,
    path: &Path,
    extra: OFlags,
    resolve: Resolve,
) -> io::Result<OwnedFd> {
    let path = if path.as_os_str().is_empty() {
        Path::new(".")
    } else {
        path
    };
    let flags = OFlags::PATH | OFlags::CLOEXEC | extra;
    let open = || match dir {
        Some(dir) => rfs::openat2(dir, path, flags, Mode::empty(), resolve.flags()),
        None => rfs::openat2(rfs::CWD, path, flags, Mode::empty(), resolve.flags()),
    };
    // `EAGAIN`: a rename or mount elsewhere raced the confined lookup, which the kernel then
    // refuses rather than risk an escape; openat2(2) asks the caller to try again.
    let mut fd = open();
    for _ in 0..8 {
        if !matches!(fd, Err(rustix::io::Errno::AGAIN)) {
            break;
        }
        fd = open();
    }
    fd.map_err(|e| {
        if e == rustix::io::Errno::NOSYS {
            io::Error::new(
                io::ErrorKind::Unsupported,
                "this kernel has no openat2 (Linux 5.6 or later is needed for confined file access)",
            )
        } else {
            io::Error::from(e)
        }
    })
}

/// Opens a regular file for reading, relative to `dir`, without following a symbolic link and
/// without blocking on a FIFO (`O_NONBLOCK`) or taking a terminal (`O_NOCTTY`).
pub fn open_read_nofollow(dir: BorrowedFd<'_>, path: &Path) -> io::Result<OwnedFd> {
    let flags =
        OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY;
    rfs::openat2(
        dir,
        path,
        flags,
        Mode::empty(),
        Resolve::BeneathNoLinks.flags(),
    )
    .map_err(io::Error::from)
}

/// Reopens an `O_PATH` handle of a regular file for reading. The handle, not a path, decides
/// which file this is.
pub fn reopen_for_reading(fd: &OwnedFd) -> io::Result<OwnedFd> {
    let proc_path = format!("/proc/self/fd/{}", fd.as_raw_fd());
    rfs::open(
        proc_path.as_str(),
        OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NONBLOCK,
        Mode::empty(),
    )
    .map_err(io::Error::from)
}

/// Where an open handle really is: the kernel's name for it.
pub fn real_path(fd: BorrowedFd<'_>) -> io::Result<PathBuf> {
    let proc_path = format!("/proc/self/fd/{}", fd.as_raw_fd());
    let target = rfs::readlinkat(rfs::CWD, proc_path.as_str(), Vec::new())?;
    let bytes = target.as_bytes();
    if !bytes.starts_with(b"/") {
        return Err(io::Error::other("the kernel gives no path for this file"));
    }
    if bytes.ends_with(b" (deleted)") {
        return Err(io::Error::from(io::ErrorKind::NotFound));
    }
    Ok(PathBuf::from(OsStr::from_bytes(bytes)))
}

/// `fstat(2)`.
pub fn stat(fd: BorrowedFd<'_>) -> io::Result<Stat> {
    rfs::fstat(fd).map_err(io::Error::from)
}

/// What identifies a file while it exists: its device and inode.
pub fn identity(stat: &Stat) -> (u64, u64) {
    // The stat fields' types differ between architectures.
    #[allow(clippy::unnecessary_cast)]
    (stat.st_dev as u64, stat.st_ino as u64)
}

/// `fstatat(dir, name, AT_SYMLINK_NOFOLLOW)`: the entry itself, a symbolic link as a link.
pub fn stat_entry(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<Stat> {
    rfs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).map_err(io::Error::from)
}

/// The kind of file a `stat` describes.
pub fn file_type(stat: &Stat) -> FileType {
    FileType::from_raw_mode(stat.st_mode)
}

/// Whether the handle is on procfs or sysfs, whose files are not what their size says.
pub fn is_pseudo_fs(fd: BorrowedFd<'_>) -> io::Result<bool> {
    let fs = rfs::fstatfs(fd)?;
    #[allow(clippy::unnecessary_cast)]
    let magic = fs.f_type as u64;
    Ok(magic == rfs::PROC_SUPER_MAGIC as u64 || magic == SYSFS_MAGIC)
}

/// A directory's entries, read through its handle: `(name, type)`; the type comes from the
/// directory itself (a symbolic link is a link), or from `fstatat` where it does not say.
pub fn read_entries(dir: BorrowedFd<'_>) -> io::Result<Vec<(std::ffi::OsString, FileType)>> {
    // The handle may be `O_PATH`, which cannot be read: a readable one for the same directory.
    let readable = rfs::openat(
        dir,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let mut reader = rfs::Dir::new(readable)?;
    let mut entries = Vec::new();
    while let Some(entry) = reader.read() {
        let entry = entry?;
        let name = entry.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        let name = OsStr::from_bytes(name).to_os_string();
        let kind = match entry.file_type() {
            FileType::Unknown => match stat_entry(dir, &name) {
                Ok(stat) => file_type(&stat),
                Err(_) => continue,
            },
            known => known,
        };
        entries.push((name, kind));
    }
    Ok(entries)
}

/// `mkdirat(dir, name, 0777)` (less the umask).
pub fn make_dir(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<()> {
    rfs::mkdirat(dir, name, Mode::from_raw_mode(0o777)).map_err(io::Error::from)
}

/// Creates a new file `name` in `dir` for writing (`O_EXCL`: never an existing file or link).
pub fn create_new(dir: BorrowedFd<'_>, name: &OsStr, mode: u32) -> io::Result<OwnedFd> {
    rfs::openat(
        dir,
        name,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(mode),
    )
    .map_err(io::Error::from)
}

/// `fchmod(2)`.
pub fn set_mode(fd: BorrowedFd<'_>, mode: u32) -> io::Result<()> {
    rfs::fchmod(fd, Mode::from_raw_mode(mode)).map_err(io::Error::from)
}

/// `renameat(dir, from, dir, to)`: both names in one directory.
pub fn rename(dir: BorrowedFd<'_>, from: &OsStr, to: &OsStr) -> io::Result<()> {
    rfs::renameat(dir, from, dir, to).map_err(io::Error::from)
}

/// `unlinkat(dir, name, 0)`.
pub fn remove_file(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<()> {
    rfs::unlinkat(dir, name, AtFlags::empty()).map_err(io::Error::from)
}

/// `unlinkat(dir, name, AT_REMOVEDIR)`: only an empty directory goes.
pub fn remove_dir(dir: BorrowedFd<'_>, name: &OsStr) -> io::Result<()> {
    rfs::unlinkat(dir, name, AtFlags::REMOVEDIR).map_err(io::Error::from)
}

/// Makes the renames in a directory durable. Best effort: not every file system supports it.
pub fn sync_dir(dir: BorrowedFd<'_>) {
    if let Ok(readable) = rfs::openat(
        dir,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        let _ = rfs::fsync(readable.as_fd());
    }
}

/// `fsync(2)`.
pub fn sync(fd: BorrowedFd<'_>) -> io::Result<()> {
    rfs::fsync(fd).map_err(io::Error::from)
}

/// Whether an error says that resolution would have left the starting directory.
pub fn is_escape(error: &io::Error) -> bool {
    error.raw_os_error() == Some(rustix::io::Errno::XDEV.raw_os_error())
}

/// Whether an error says that a symbolic link (or a magic link, or a loop) was in the way.
pub fn is_link_refused(error: &io::Error) -> bool {
    error.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error())
}

/// Whether an error says that a component does not exist (or is not a directory).
pub fn is_missing(error: &io::Error) -> bool {
    error.kind() == io::ErrorKind::NotFound
        || error.raw_os_error() == Some(rustix::io::Errno::NOTDIR.raw_os_error())
}
