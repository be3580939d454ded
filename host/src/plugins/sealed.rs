//! A plugin library's private copy, sealed in memory ([`SealedLibrary`]): a `memfd` that
//! nobody can write once sealed, loaded through `/proc/self/fd/N`.
//!
//! Every generation of a library is loaded from a copy of its own (the dynamic loader hands
//! back the image already mapped for a path or inode). A copy on disk could be rewritten
//! between its check and its loading, or between two workers' starts, by anything that can
//! write where it lives, another toolhost instance's sandboxed commands included. A sealed
//! memfd has no path anyone else can reach, and its seals (no write, grow or shrink, no
//! further seal changes) hold against its own creator. Its SHA-256 is taken as it is filled;
//! an isolated plugin's worker receives the descriptor over its channel (`SCM_RIGHTS`) and
//! refuses a copy whose hash is not that one.

use std::fs::File;
use std::io::{IoSlice, IoSliceMut, Read, Write};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::fs::FileExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use sha2::{Digest, Sha256};

use super::error::LoadError;

/// SHA-256 of a file, lowercase hex (a library's identity: bundles pin it, grants name it).
pub fn sha256_file(path: &Path) -> std::io::Result<String> {
    let bytes = std::fs::read(path)?;
    Ok(hex::encode(Sha256::digest(&bytes)))
}

/// A sealed in-memory copy of a library file.
pub struct SealedLibrary {
    file: File,
    sha256: String,
}

impl SealedLibrary {
    /// Copies `library` into a new memfd and seals it.
    pub fn copy(library: &Path) -> Result<Self, LoadError> {
        let failed = |what: &str, e: &dyn std::fmt::Display| {
            LoadError::Open(format!("cannot {what} {}: {e}", library.display()))
        };
        let mut source = File::open(library).map_err(|e| failed("open", &e))?;
        let name = library
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let fd = rustix::fs::memfd_create(
            name.as_str(),
            rustix::fs::MemfdFlags::CLOEXEC | rustix::fs::MemfdFlags::ALLOW_SEALING,
        )
        .map_err(|e| failed("make a sealed copy of", &e))?;
        let mut file = File::from(fd);
        let mut hasher = Sha256::new();
        let mut buffer = vec![0u8; 256 * 1024];
        loop {
            let read = source.read(&mut buffer).map_err(|e| failed("read", &e))?;
            if read == 0 {
                break;
            }
            hasher.update(&buffer[..read]);
            file.write_all(&buffer[..read])
                .map_err(|e| failed("copy", &e))?;
        }
        rustix::fs::fcntl_add_seals(
            &file,
            rustix::fs::SealFlags::WRITE
                | rustix::fs::SealFlags::GROW
                | rustix::fs::SealFlags::SHRINK
                | rustix::fs::SealFlags::SEAL,
        )
        .map_err(|e| failed("seal the copy of", &e))?;
        Ok(Self {
            file,
            sha256: hex::encode(hasher.finalize()),
        })
    }

    /// The copy's SHA-256, as hex text.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    /// The path the dynamic loader opens the copy by (valid while `self` lives).
    pub fn path(&self) -> PathBuf {
        fd_path(&self.file)
    }

    /// Keeps the copy open for the rest of the process, once the dynamic loader has (or may
    /// have) mapped it: the loader knows a loaded library by the name it was opened by, so a
    /// later copy opened as `/proc/self/fd/N` with `N` reused would be handed the earlier,
    /// still mapped image. Library images are never unloaded, so neither are their names.
    pub fn keep_loaded(self) {
        static LOADED: Mutex<Vec<File>> = Mutex::new(Vec::new());
        LOADED
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(self.file);
    }

    /// Sends the copy's descriptor over `channel` (one byte, the descriptor attached).
    pub fn send(&self, channel: &UnixStream) -> std::io::Result<()> {
        let fds = [self.file.as_fd()];
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
        let mut control = rustix::net::SendAncillaryBuffer::new(&mut space);
        control.push(rustix::net::SendAncillaryMessage::ScmRights(&fds));
        rustix::net::sendmsg(
            channel,
            &[IoSlice::new(&[1])],
            &mut control,
            rustix::net::SendFlags::empty(),
        )?;
        Ok(())
    }
}

/// Two copies are the same when they hold the same bytes.
impl PartialEq for SealedLibrary {
    fn eq(&self, other: &Self) -> bool {
        self.sha256 == other.sha256
    }
}

impl Eq for SealedLibrary {}

impl std::fmt::Debug for SealedLibrary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SealedLibrary")
            .field("sha256", &self.sha256)
            .finish_non_exhaustive()
    }
}

/// A copy received over a worker's channel, checked against the hash the host took.
pub struct ReceivedLibrary {
    file: File,
}

impl ReceivedLibrary {
    /// Receives the descriptor [`SealedLibrary::send`] sent, and checks that it is sealed
    /// against writes and holds exactly the bytes whose SHA-256 is `expected`.
    pub fn receive(channel: &UnixStream, expected: &str) -> Result<Self, LoadError> {
        let refused = |why: String| LoadError::Worker(format!("the library copy: {why}"));
        let mut byte = [0u8; 1];
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
        let mut control = rustix::net::RecvAncillaryBuffer::new(&mut space);
        rustix::net::recvmsg(
            channel,
            &mut [IoSliceMut::new(&mut byte)],
            &mut control,
            rustix::net::RecvFlags::CMSG_CLOEXEC,
        )
        .map_err(|e| refused(format!("not received: {e}")))?;
        let mut received: Option<OwnedFd> = None;
        for message in control.drain() {
            if let rustix::net::RecvAncillaryMessage::ScmRights(fds) = message {
                for fd in fds {
                    received.get_or_insert(fd);
                }
            }
        }
        let file = File::from(received.ok_or_else(|| refused("not received".into()))?);
        let seals = rustix::fs::fcntl_get_seals(&file)
            .map_err(|e| refused(format!("its seals cannot be read: {e}")))?;
        if !seals.contains(rustix::fs::SealFlags::WRITE | rustix::fs::SealFlags::SEAL) {
            return Err(refused("it is not sealed against writes".into()));
        }
        // Read by offset: the descriptor shares its position with the host's and the other
        // workers' copies of it.
        let mut hasher = Sha256::new();
        let mut buffer = vec![0u8; 256 * 1024];
        let mut offset = 0u64;
        loop {
            let read = file
                .read_at(&mut buffer, offset)
                .map_err(|e| refused(format!("it cannot be read: {e}")))?;
            if read == 0 {
                break;
            }
            hasher.update(&buffer[..read]);
            offset += read as u64;
        }
        let found = hex::encode(hasher.finalize());
        if found != expected {
            return Err(refused(format!(
                "its SHA-256 is {found}, not {expected}, the one the host checked; it is not \
                 loaded"
            )));
        }
        Ok(Self { file })
    }

    /// The path the dynamic loader opens the copy by (valid while `self` lives).
    pub fn path(&self) -> PathBuf {
        fd_path(&self.file)
    }
}

fn fd_path(file: &File) -> PathBuf {
    PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_is_sealed_sent_and_checked() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("libx.so");
        std::fs::write(&path, b"not really a library").unwrap_or_else(|e| panic!("{e}"));
        let sealed = SealedLibrary::copy(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            std::fs::read(sealed.path()).unwrap_or_default(),
            b"not really a library"
        );
        // Nobody writes it, its maker included.
        assert!(std::fs::OpenOptions::new()
            .write(true)
            .open(sealed.path())
            .and_then(|mut f| f.write_all(b"evil"))
            .is_err());
        let (host, worker) = UnixStream::pair().unwrap_or_else(|e| panic!("{e}"));
        sealed.send(&host).unwrap_or_else(|e| panic!("{e}"));
        let received =
            ReceivedLibrary::receive(&worker, sealed.sha256()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            std::fs::read(received.path()).unwrap_or_default(),
            b"not really a library"
        );
        sealed.send(&host).unwrap_or_else(|e| panic!("{e}"));
        let refused = ReceivedLibrary::receive(&worker, &"0".repeat(64)).err();
        assert!(
            refused.is_some_and(|e| e.to_string().contains("not loaded")),
            "a wrong hash is refused"
        );
    }
}
