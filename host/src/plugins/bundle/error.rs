//! What can go wrong with a bundle, its keys or its signature.

use std::path::{Path, PathBuf};

/// What went wrong with a bundle, its keys or its signature.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    /// A file that must be read cannot be.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file that must be written cannot be.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A key file holds no key.
    #[error("{} is not a key (expected 64 hex digits or 32 bytes)", .0.display())]
    NotAKey(PathBuf),
    /// A public key file holds bytes that are no Ed25519 public key.
    #[error("{} is not a valid public key: {source}", path.display())]
    NotAPublicKey {
        /// The file.
        path: PathBuf,
        /// Why.
        source: ed25519_dalek::SignatureError,
    },
    /// The signature file holds no signature.
    #[error("{} is not an Ed25519 signature", .0.display())]
    NotASignature(PathBuf),
    /// The signature does not verify.
    #[error("the signature does not verify with the trusted key (the manifest was changed after signing, or signed with another key)")]
    Unverified,
    /// The manifest does not parse or breaks a rule.
    #[error("{}: {source}", path.display())]
    Manifest {
        /// The manifest file.
        path: PathBuf,
        /// What is wrong.
        source: ManifestError,
    },
    /// A listed library's plugin has a version outside the manifest's requirement for it.
    #[error("plugin '{plugin}' {version} is outside the bundle's requirement '{requirement}'; not loaded")]
    OutsideRequirement {
        /// The plugin's name.
        plugin: String,
        /// The plugin's version.
        version: semver::Version,
        /// The manifest's requirement.
        requirement: String,
    },
}

/// What is wrong with the text of a `bundle.toml`.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    /// Not valid TOML, or not the manifest's sections and keys.
    #[error(transparent)]
    Toml(#[from] toml::de::Error),
    /// A library's name is a path, not a file name inside the bundle directory.
    #[error("library '{library}' must be a file name inside the bundle directory")]
    LibraryPath {
        /// The name given.
        library: String,
    },
    /// A library's version requirement is no semver requirement.
    #[error("library '{library}': version requirement '{requirement}': {source}")]
    VersionRequirement {
        /// The library.
        library: String,
        /// The requirement given.
        requirement: String,
        /// Why it does not parse.
        source: semver::Error,
    },
}

pub(super) fn read_error(path: &Path, source: std::io::Error) -> BundleError {
    BundleError::Read {
        path: path.to_path_buf(),
        source,
    }
}

pub(super) fn write_error(path: &Path, source: std::io::Error) -> BundleError {
    BundleError::Write {
        path: path.to_path_buf(),
        source,
    }
}
