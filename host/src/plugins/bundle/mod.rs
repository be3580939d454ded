//! Curated plugin bundles: a directory of plugin libraries whose signed manifest says which
//! libraries an organisation vetted (pinned by SHA-256 and a version requirement) and which
//! policy comes with them.
//!
//! The manifest, `bundle.toml`:
//!
//! ```toml
//! [bundle]
//! name = "acme-tools"
//! version = "1.0.0"
//!
//! [[plugins]]
//! library = "libread_file.so"
//! version = ">=0.1, <0.2"          # a semver requirement on the plugin's own version
//! sha256 = "9f86d081884c7d65..."   # of the library file, hex
//!
//! [policy]
//! enabled_tools = ["read_file"]    # absent: every tool of the bundle's plugins
//! command_permissions = '{"allow": ["git *"]}'   # CLINE_COMMAND_PERMISSIONS, as JSON text
//!
//! [policy.auto_approve]            # the keys of the settings file's [auto_approve]
//! read_files = true
//! ```
//!
//! `bundle.toml.sig` holds the Ed25519 signature of the manifest file's exact bytes, as hex.
//! Keys are files of hex text too (64 hex digits: the 32-byte secret key in `PREFIX.key`, the
//! 32-byte public key in `PREFIX.pub`), so they can be pasted and diffed; a raw 32-byte file is
//! accepted when reading.
//!
//! Loading ([`Opened::load`]) admits only what the signed manifest lists, whose bytes hash as
//! listed and whose version meets the requirement; everything else costs one warning. A manifest
//! whose signature does not verify loads nothing. The version is only known once the library
//! is loaded: a plugin outside the range is dropped after loading (libraries are never unloaded
//! anyway), so its code has run its initialisation, but none of its tools register.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use serde_json::{json, Value};

use crate::plugins::discovery::library_files;
use crate::plugins::isolation::{Placement, Required};
use crate::plugins::{LoadWarning, Registry};
use crate::settings::{Isolation, PluginOptions, Settings};

mod error;
mod manifest;

pub use error::BundleError;
use error::{read_error, write_error};
#[cfg(test)]
use manifest::BundleInfo;
pub use manifest::{Manifest, PluginEntry, Policy};

/// The manifest's file name inside a bundle directory.
pub const MANIFEST_FILE: &str = "bundle.toml";
/// The signature's file name inside a bundle directory.
pub const SIGNATURE_FILE: &str = "bundle.toml.sig";

/// SHA-256 of a file, lowercase hex.
pub fn sha256_file(path: &Path) -> Result<String, BundleError> {
    crate::plugins::sealed::sha256_file(path).map_err(|e| read_error(path, e))
}

/// Writes a new key pair to `PREFIX.key` (secret, mode 0600 on Unix) and `PREFIX.pub`.
pub fn generate_keys(prefix: &Path) -> Result<(PathBuf, PathBuf), BundleError> {
    let key = SigningKey::generate(&mut rand_core::OsRng);
    let secret = with_suffix(prefix, "key");
    let public = with_suffix(prefix, "pub");
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&secret).map_err(|e| write_error(&secret, e))?;
    std::io::Write::write_all(
        &mut file,
        format!("{}\n", hex::encode(key.to_bytes())).as_bytes(),
    )
    .map_err(|e| write_error(&secret, e))?;
    let public_hex = format!("{}\n", hex::encode(key.verifying_key().to_bytes()));
    std::fs::write(&public, public_hex).map_err(|e| write_error(&public, e))?;
    Ok((secret, public))
}

fn with_suffix(prefix: &Path, suffix: &str) -> PathBuf {
    let mut name = prefix.as_os_str().to_owned();
    name.push(".");
    name.push(suffix);
    PathBuf::from(name)
}

/// Reads a 32-byte key file: 64 hex digits (whitespace around them ignored) or raw bytes.
fn read_key_bytes(path: &Path) -> Result<[u8; 32], BundleError> {
    let bytes = std::fs::read(path).map_err(|e| read_error(path, e))?;
    let decoded = std::str::from_utf8(&bytes)
        .ok()
        .and_then(|text| hex::decode(text.trim()).ok());
    let key = match decoded {
        Some(key) => key,
        None => bytes,
    };
    key.try_into()
        .map_err(|_| BundleError::NotAKey(path.to_path_buf()))
}

/// Reads a secret key file.
pub fn read_secret_key(path: &Path) -> Result<SigningKey, BundleError> {
    read_key_bytes(path).map(|bytes| SigningKey::from_bytes(&bytes))
}

/// Reads a public key file.
pub fn read_public_key(path: &Path) -> Result<VerifyingKey, BundleError> {
    let bytes = read_key_bytes(path)?;
    VerifyingKey::from_bytes(&bytes).map_err(|source| BundleError::NotAPublicKey {
        path: path.to_path_buf(),
        source,
    })
}

/// Signs `DIR/bundle.toml` (its exact bytes) into `DIR/bundle.toml.sig`.
pub fn sign(dir: &Path, key: &SigningKey) -> Result<PathBuf, BundleError> {
    let manifest = dir.join(MANIFEST_FILE);
    let bytes = std::fs::read(&manifest).map_err(|e| read_error(&manifest, e))?;
    Manifest::parse(&String::from_utf8_lossy(&bytes)).map_err(|source| BundleError::Manifest {
        path: manifest.clone(),
        source,
    })?;
    let signature = key.sign(&bytes);
    let out = dir.join(SIGNATURE_FILE);
    std::fs::write(&out, format!("{}\n", hex::encode(signature.to_bytes())))
        .map_err(|e| write_error(&out, e))?;
    Ok(out)
}

/// Checks the signature of `DIR/bundle.toml` and parses it. `Err` says why nothing of the
/// bundle may be trusted.
pub fn verified_manifest(dir: &Path, key: &VerifyingKey) -> Result<Manifest, BundleError> {
    let path = dir.join(MANIFEST_FILE);
    let bytes = std::fs::read(&path).map_err(|e| read_error(&path, e))?;
    let sig_path = dir.join(SIGNATURE_FILE);
    let sig_text = std::fs::read_to_string(&sig_path).map_err(|e| read_error(&sig_path, e))?;
    let signature = hex::decode(sig_text.trim())
        .ok()
        .and_then(|bytes| Signature::from_slice(&bytes).ok())
        .ok_or_else(|| BundleError::NotASignature(sig_path.clone()))?;
    key.verify(&bytes, &signature)
        .map_err(|_| BundleError::Unverified)?;
    Manifest::parse(&String::from_utf8_lossy(&bytes))
        .map_err(|source| BundleError::Manifest { path, source })
}

/// A bundle directory whose signature was checked: the manifest, or why it is not trusted.
#[derive(Debug)]
pub struct Opened {
    dir: PathBuf,
    manifest: Result<Manifest, BundleError>,
}

impl Opened {
    /// Checks `dir`'s manifest against the trusted public key file.
    pub fn open(dir: &Path, trusted_key: &Path) -> Result<Self, BundleError> {
        let key = read_public_key(trusted_key)?;
        Ok(Self {
            dir: dir.to_path_buf(),
            manifest: verified_manifest(dir, &key),
        })
    }

    /// The verified policy, if the manifest verified.
    pub fn policy(&self) -> Option<&Policy> {
        self.manifest.as_ref().ok().map(|m| &m.policy)
    }

    /// The bundle's command permissions, when its policy sets them (they replace
    /// `CLINE_COMMAND_PERMISSIONS` of the environment).
    pub fn command_permissions(&self) -> Option<crate::permissions::CommandPermissions> {
        let value = self.policy()?.command_permissions.as_deref()?;
        let env = crate::permissions::commands::ENV_VAR;
        if std::env::var(env).is_ok_and(|current| current != value) {
            tracing::warn!("{env} from the environment is replaced by the bundle's");
        }
        Some(crate::permissions::CommandPermissions::from_value(Some(
            value,
        )))
    }

    /// Replaces the settings' approval defaults by the bundle's, when it ships them.
    pub fn apply_approvals(&self, settings: &mut Settings) {
        if let Some(auto_approve) = self.policy().and_then(|p| p.auto_approve.clone()) {
            settings.auto_approve = auto_approve;
        }
    }

    /// Which of the bundle's plugins must run isolated (`isolation = "process"` in `[policy]`
    /// or in their `[[plugins]]` entry; `in_process` requires nothing).
    pub fn required_isolation(&self) -> Required {
        let Some(manifest) = self.manifest.as_ref().ok() else {
            return Required::Nothing;
        };
        if manifest.policy.isolation == Some(Isolation::Process) {
            return Required::All;
        }
        let libraries: Vec<String> = manifest
            .plugins
            .iter()
            .filter(|p| p.isolation == Some(Isolation::Process))
            .map(|p| p.library.clone())
            .collect();
        if libraries.is_empty() {
            Required::Nothing
        } else {
            Required::Libraries(libraries)
        }
    }

    /// The grants of the bundle's plugins, by library file name.
    pub fn grants(&self) -> BTreeMap<String, PluginOptions> {
        let Some(manifest) = self.manifest.as_ref().ok() else {
            return BTreeMap::new();
        };
        manifest
            .plugins
            .iter()
            .filter_map(|p| Some((p.library.clone(), p.grants.clone()?)))
            .collect()
    }

    /// Loads what the verified manifest admits, where `placement` says; every refusal is a
    /// warning of the registry.
    pub fn load(&self, placement: &Placement) -> Registry {
        let manifest = match &self.manifest {
            Ok(manifest) => manifest,
            Err(why) => {
                let warning = LoadWarning {
                    file: self.dir.join(MANIFEST_FILE),
                    message: format!("{why}; nothing from this bundle is loaded"),
                };
                return Registry::load_files(
                    &[],
                    placement,
                    vec![warning],
                    |_, _| Ok::<(), BundleError>(()),
                    |_| false,
                );
            }
        };
        let check = check_files(&self.dir, manifest);
        let mut requirements = BTreeMap::new();
        let mut files = Vec::new();
        for plugin in &check.plugins {
            if plugin.problem.is_none() {
                let path = self.dir.join(&plugin.entry.library);
                requirements.insert(path.clone(), plugin.entry.version.clone());
                files.push(path);
            }
        }
        let enabled = manifest.policy.enabled_tools.clone();
        Registry::load_files(
            &files,
            placement,
            check.warnings(&self.dir),
            |file, info| {
                let text = requirements.get(file).map(String::as_str).unwrap_or("");
                match semver::VersionReq::parse(text) {
                    Ok(req) if req.matches(&info.version) => Ok(()),
                    _ => Err(BundleError::OutsideRequirement {
                        plugin: info.name.clone(),
                        version: info.version.clone(),
                        requirement: text.to_string(),
                    }),
                }
            },
            |name| {
                enabled
                    .as_ref()
                    .is_none_or(|list| list.iter().any(|t| t == name))
            },
        )
    }
}

/// What the files of a bundle directory look like next to its manifest.
struct FileCheck<'a> {
    plugins: Vec<PluginCheck<'a>>,
    extra: Vec<PathBuf>,
}

struct PluginCheck<'a> {
    entry: &'a PluginEntry,
    sha256: Option<String>,
    problem: Option<String>,
}

impl FileCheck<'_> {
    fn warnings(&self, dir: &Path) -> Vec<LoadWarning> {
        let listed = self.plugins.iter().filter_map(|p| {
            p.problem.as_ref().map(|message| LoadWarning {
                file: dir.join(&p.entry.library),
                message: format!("{message}; not loaded"),
            })
        });
        let extra = self.extra.iter().map(|file| LoadWarning {
            file: file.clone(),
            message: "not listed in the signed bundle manifest; not loaded".to_string(),
        });
        listed.chain(extra).collect()
    }

    fn problems(&self) -> Vec<String> {
        self.warnings(Path::new(""))
            .iter()
            .map(ToString::to_string)
            .collect()
    }
}

fn check_files<'a>(dir: &Path, manifest: &'a Manifest) -> FileCheck<'a> {
    let plugins = manifest
        .plugins
        .iter()
        .map(|entry| {
            let path = dir.join(&entry.library);
            match sha256_file(&path) {
                Ok(sha256) => {
                    let problem = (!sha256.eq_ignore_ascii_case(entry.sha256.trim())).then(|| {
                        format!(
                            "its SHA-256 is {sha256}, the signed manifest says {}",
                            entry.sha256
                        )
                    });
                    PluginCheck {
                        entry,
                        sha256: Some(sha256),
                        problem,
                    }
                }
                Err(e) => PluginCheck {
                    entry,
                    sha256: None,
                    problem: Some(e.to_string()),
                },
            }
        })
        .collect();
    let extra = library_files(dir)
        .unwrap_or_default()
        .into_iter()
        .filter(|file| {
            !manifest
                .plugins
                .iter()
                .any(|p| file.file_name() == Some(p.library.as_ref()))
        })
        .collect();
    FileCheck { plugins, extra }
}

/// What a bundle holds and what of it verifies, as JSON: `dir`, `signature` (`verified`,
/// `unchecked` without a key, `invalid`), `signature_error`, `bundle`, `plugins` (`library`,
/// `version`, `sha256`, `actual_sha256`, `ok`), `extra_libraries`, `policy`, `problems`.
pub fn inspect(dir: &Path, key: Option<&VerifyingKey>) -> Value {
    let (signature, signature_error, manifest) = match key {
        Some(key) => match verified_manifest(dir, key) {
            Ok(manifest) => ("verified", None, Ok(manifest)),
            Err(e) => ("invalid", Some(e), unverified_manifest(dir)),
        },
        None => ("unchecked", None, unverified_manifest(dir)),
    };
    let signature_error = signature_error.map(|e: BundleError| e.to_string());
    let mut problems: Vec<String> = signature_error.iter().cloned().collect();
    let manifest = match manifest {
        Ok(manifest) => manifest,
        Err(e) => {
            problems.push(e.to_string());
            return json!({"dir": dir, "signature": signature, "signature_error": signature_error,
                          "bundle": null, "plugins": [], "extra_libraries": [], "policy": null,
                          "problems": problems});
        }
    };
    let check = check_files(dir, &manifest);
    problems.extend(check.problems());
    let plugins: Vec<Value> = check
        .plugins
        .iter()
        .map(|p| {
            json!({"library": p.entry.library, "version": p.entry.version,
                   "sha256": p.entry.sha256, "actual_sha256": p.sha256, "ok": p.problem.is_none()})
        })
        .collect();
    let extra: Vec<String> = check
        .extra
        .iter()
        .filter_map(|f| f.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    json!({
        "dir": dir,
        "signature": signature,
        "signature_error": signature_error,
        "bundle": manifest.bundle,
        "plugins": plugins,
        "extra_libraries": extra,
        "policy": manifest.policy,
        "problems": problems,
    })
}

fn unverified_manifest(dir: &Path) -> Result<Manifest, BundleError> {
    let path = dir.join(MANIFEST_FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| read_error(&path, e))?;
    Manifest::parse(&text).map_err(|source| BundleError::Manifest { path, source })
}

#[cfg(test)]
mod tests {
    use super::error::ManifestError;
    use super::*;

    #[test]
    fn a_signature_covers_the_exact_bytes() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let (secret, public) = generate_keys(&dir.path().join("org"))?;
        let manifest = "[bundle]\nname = \"b\"\nversion = \"1.0.0\"\n";
        let path = dir.path().join(MANIFEST_FILE);
        std::fs::write(&path, manifest)?;
        sign(dir.path(), &read_secret_key(&secret)?)?;
        let key = read_public_key(&public)?;
        assert_eq!(
            verified_manifest(dir.path(), &key).ok().map(|m| m.bundle),
            Some(BundleInfo {
                name: "b".into(),
                version: "1.0.0".into()
            })
        );
        std::fs::write(&path, format!("{manifest}\n"))?;
        assert!(matches!(
            verified_manifest(dir.path(), &key),
            Err(BundleError::Unverified)
        ));
        Ok(())
    }

    #[test]
    fn hashes_are_sha256_hex() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("abc");
        std::fs::write(&path, "abc")?;
        assert_eq!(
            sha256_file(&path)?,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        Ok(())
    }

    #[test]
    fn library_names_must_stay_inside_the_bundle() {
        let text = "[bundle]\nname = \"b\"\nversion = \"1\"\n[[plugins]]\nlibrary = \"../x.so\"\nversion = \"*\"\nsha256 = \"\"\n";
        let error = Manifest::parse(text).err();
        assert!(
            matches!(&error, Some(ManifestError::LibraryPath { library }) if library == "../x.so"),
            "{error:?}"
        );
        assert_eq!(
            error.map(|e| e.to_string()).as_deref(),
            Some("library '../x.so' must be a file name inside the bundle directory")
        );
    }
}
