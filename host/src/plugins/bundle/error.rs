//! What can go wrong with a bundle, its keys or its signature.

use std::path::{Path, PathBuf};

/// What went wrong with a bundle, its keys or its signature.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BundleError {
    /// A file that must be read cannot be.
    #[error("cannot read {}: {message}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// A file that must be written cannot be.
    #[error("cannot write {}: {message}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// A key file holds no key.
    #[error("{} is not a key (expected 64 hex digits or 32 bytes)", .0.display())]
    NotAKey(PathBuf),
    /// A public key file holds bytes that are no Ed25519 public key.
    #[error("{} is not a valid public key: {message}", path.display())]
    NotAPublicKey {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// The signature file holds no signature.
    #[error("{} is not an Ed25519 signature", .0.display())]
    NotASignature(PathBuf),
    /// The signature does not verify.
    #[error("the signature does not verify with the trusted key (the manifest was changed after signing, or signed with another key)")]
    Unverified,
    /// The manifest does not parse or breaks a rule.
    #[error("{}: {message}", path.display())]
    Manifest {
        /// The manifest file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

pub(super) fn read_error(path: &Path, e: &std::io::Error) -> BundleError {
    BundleError::Read {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

pub(super) fn write_error(path: &Path, e: &std::io::Error) -> BundleError {
    BundleError::Write {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}
