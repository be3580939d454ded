//! Curated bundles: a signed manifest decides which libraries load and which policy applies.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use toolhost::sha256_file;
use toolhost_tests::{library, run, toolhost, workdir, PluginDir, Run};

const READ_FILE: &str = "libread_file.so";
const LIST_FILES: &str = "liblist_files.so";

/// A bundle directory with read_file and list_files, a key pair beside it, and the manifest's
/// parts so that tests can write variations.
struct Bundle {
    root: tempfile::TempDir,
    version: String,
}

impl Bundle {
    /// Copies the two libraries in; the manifest is written (and signed) by `write`.
    fn new() -> Self {
        let root = workdir();
        std::fs::create_dir(root.path().join("bundle")).unwrap();
        for name in ["read_file", "list_files"] {
            let source = library(name);
            std::fs::copy(
                &source,
                root.path().join("bundle").join(source.file_name().unwrap()),
            )
            .unwrap();
        }
        let keygen = run(toolhost()
            .args(["bundle", "keygen", "--out"])
            .arg(root.path().join("org")));
        assert_eq!(keygen.code, 0, "{}", keygen.stderr);
        let version = plugin_version("read_file");
        Self { root, version }
    }

    fn dir(&self) -> PathBuf {
        self.root.path().join("bundle")
    }

    fn public_key(&self) -> PathBuf {
        self.root.path().join("org.pub")
    }

    fn sha(&self, library: &str) -> String {
        sha256_file(&self.dir().join(library)).unwrap()
    }

    /// The manifest: both libraries pinned to their hash, `requirement` on read_file's version,
    /// and `policy` appended.
    fn manifest(&self, requirement: &str, policy: &str) -> String {
        format!(
            "[bundle]\nname = \"acme\"\nversion = \"1.0.0\"\n\n\
             [[plugins]]\nlibrary = \"{READ_FILE}\"\nversion = \"{requirement}\"\nsha256 = \"{}\"\n\n\
             [[plugins]]\nlibrary = \"{LIST_FILES}\"\nversion = \"={}\"\nsha256 = \"{}\"\n\n{policy}",
            self.sha(READ_FILE),
            self.version,
            self.sha(LIST_FILES),
        )
    }

    /// Writes and signs a manifest.
    fn write(&self, manifest: &str) {
        std::fs::write(self.dir().join("bundle.toml"), manifest).unwrap();
        let sign = run(toolhost()
            .args(["bundle", "sign"])
            .arg(self.dir())
            .arg("--key")
            .arg(self.root.path().join("org.key")));
        assert_eq!(sign.code, 0, "{}", sign.stderr);
    }

    /// The default: read_file pinned exactly, no policy.
    fn standard(self) -> Self {
        let manifest = self.manifest(&format!("={}", self.version), "");
        self.write(&manifest);
        self
    }

    /// `toolhost --bundle DIR --trusted-key PUB ARGS`.
    fn toolhost(&self, key: &Path, args: &[&str]) -> Run {
        run(toolhost()
            .arg("--bundle")
            .arg(self.dir())
            .arg("--trusted-key")
            .arg(key)
            .args(args))
    }

    /// Tool names and warnings (file name, message) of `tools --json` under the bundle.
    fn listing(&self, key: &Path) -> (Vec<String>, Vec<(String, String)>) {
        let listing = self.toolhost(key, &["tools", "--json"]);
        assert_eq!(listing.code, 0, "{}", listing.stderr);
        let json = listing.json();
        let tools = json["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect();
        let warnings = json["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| {
                let file = Path::new(w["file"].as_str().unwrap());
                let name = file.file_name().unwrap().to_string_lossy().into_owned();
                (name, w["message"].as_str().unwrap().to_string())
            })
            .collect();
        (tools, warnings)
    }
}

/// The version a real plugin reports, as loaded from a plain plugin directory.
fn plugin_version(name: &str) -> String {
    let dir = PluginDir::empty();
    dir.add_library(name);
    let listing = run(toolhost()
        .arg("--plugins")
        .arg(dir.path())
        .args(["tools", "--json"]));
    listing.json()["tools"][0]["plugin_version"]
        .as_str()
        .unwrap()
        .to_string()
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(ToString::to_string).collect()
}

#[test]
fn a_signed_bundle_loads_and_its_tools_work_as_from_a_plugin_directory() {
    let bundle = Bundle::new().standard();
    let (tools, warnings) = bundle.listing(&bundle.public_key());
    assert_eq!(tools, names(&["list_files", "read_file"]));
    assert_eq!(warnings, vec![]);

    let ws = workdir();
    std::fs::write(ws.path().join("a.txt"), "one\ntwo\n").unwrap();
    let args = |prefix: &mut std::process::Command| -> Run {
        run(prefix
            .args([
                "call",
                "read_file",
                r#"{"path":"a.txt"}"#,
                "--json",
                "--cwd",
            ])
            .arg(ws.path()))
    };
    let from_bundle = args(
        toolhost()
            .arg("--bundle")
            .arg(bundle.dir())
            .arg("--trusted-key")
            .arg(bundle.public_key()),
    );
    let plain = PluginDir::empty();
    plain.add_library("read_file");
    let from_dir = args(toolhost().arg("--plugins").arg(plain.path()));
    assert_eq!(from_bundle.code, 0, "{}", from_bundle.stderr);
    assert_eq!(from_bundle.json()["is_error"], json!(false));
    assert_eq!(from_bundle.json(), from_dir.json());
}

#[test]
fn an_extra_library_dropped_in_is_refused_by_name() {
    let bundle = Bundle::new().standard();
    let extra = library("write_to_file");
    std::fs::copy(&extra, bundle.dir().join("libwrite_to_file.so")).unwrap();
    let (tools, warnings) = bundle.listing(&bundle.public_key());
    assert_eq!(tools, names(&["list_files", "read_file"]));
    assert_eq!(
        warnings,
        vec![(
            "libwrite_to_file.so".to_string(),
            "not listed in the signed bundle manifest; not loaded".to_string()
        )]
    );
    // The text listing says it on stderr too.
    let text = bundle.toolhost(&bundle.public_key(), &["tools"]);
    assert!(
        text.stderr
            .contains("libwrite_to_file.so: not listed in the signed bundle manifest"),
        "{}",
        text.stderr
    );
}

#[test]
fn a_library_whose_bytes_changed_is_refused() {
    let bundle = Bundle::new().standard();
    let signed_sha = bundle.sha(LIST_FILES);
    let path = bundle.dir().join(LIST_FILES);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(b"tampered");
    std::fs::write(&path, bytes).unwrap();
    let actual = bundle.sha(LIST_FILES);
    let (tools, warnings) = bundle.listing(&bundle.public_key());
    assert_eq!(tools, names(&["read_file"]));
    assert_eq!(
        warnings,
        vec![(
            LIST_FILES.to_string(),
            format!("its SHA-256 is {actual}, the signed manifest says {signed_sha}; not loaded")
        )]
    );
}

#[test]
fn a_manifest_edited_after_signing_loads_nothing_and_says_why() {
    let bundle = Bundle::new().standard();
    let manifest = bundle.dir().join("bundle.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        text.replace("name = \"acme\"", "name = \"acme2\""),
    )
    .unwrap();
    let (tools, warnings) = bundle.listing(&bundle.public_key());
    assert_eq!(tools, Vec::<String>::new());
    assert_eq!(
        warnings,
        vec![(
            "bundle.toml".to_string(),
            "the signature does not verify with the trusted key (the manifest was changed after \
             signing, or signed with another key); nothing from this bundle is loaded"
                .to_string()
        )]
    );
    let verify = run(toolhost()
        .args(["bundle", "verify"])
        .arg(bundle.dir())
        .arg("--trusted-key")
        .arg(bundle.public_key()));
    assert_eq!(verify.code, 1);
    assert!(
        verify.stdout.contains("the signature does not verify"),
        "{}",
        verify.stdout
    );
}

#[test]
fn a_version_outside_the_range_is_refused() {
    let bundle = Bundle::new();
    let requirement = format!(">{}", bundle.version);
    bundle.write(&bundle.manifest(&requirement, ""));
    let (tools, warnings) = bundle.listing(&bundle.public_key());
    assert_eq!(tools, names(&["list_files"]));
    assert_eq!(
        warnings,
        vec![(
            READ_FILE.to_string(),
            format!(
                "plugin 'read_file' {} is outside the bundle's requirement '{requirement}'; not loaded",
                bundle.version
            )
        )]
    );
}

#[test]
fn only_enabled_tools_register_and_the_bundle_approvals_apply() {
    let bundle = Bundle::new();
    let policy =
        "[policy]\nenabled_tools = [\"list_files\"]\n\n[policy.auto_approve]\nread_files = false\n";
    bundle.write(&bundle.manifest(&format!("={}", bundle.version), policy));
    let (tools, warnings) = bundle.listing(&bundle.public_key());
    assert_eq!(tools, names(&["list_files"]));
    assert_eq!(warnings, vec![]);

    // With read_files no longer auto-approved and no terminal, a listing is denied.
    let ws = workdir();
    let call = bundle.toolhost(
        &bundle.public_key(),
        &[
            "call",
            "list_files",
            r#"{"path":"."}"#,
            "--json",
            "--cwd",
            ws.path().to_str().unwrap(),
        ],
    );
    assert_eq!(
        call.json()["text"],
        json!(toolhost_tests::nobody_to_ask("list_files", &["read_files"]))
    );
}

#[test]
fn the_bundles_command_permissions_apply() {
    let bundle = Bundle::new();
    let policy = "[policy]\ncommand_permissions = '{\"allow\": [\"git *\"]}'\n";
    bundle.write(&bundle.manifest(&format!("={}", bundle.version), policy));
    let check = bundle.toolhost(
        &bundle.public_key(),
        &["policy", "check-command", "--json", "ls"],
    );
    // check-command exits 1 for a refused command (and prints JSON with --json).
    assert_eq!(check.code, 1, "{}", check.stderr);
    assert_eq!(check.json()["allowed"], json!(false));
    assert_eq!(check.json()["reason"], json!("no_match_deny_default"));
}

#[test]
fn verify_exits_0_when_everything_verifies_and_1_otherwise() {
    let bundle = Bundle::new().standard();
    let verify = || {
        run(toolhost()
            .args(["bundle", "verify"])
            .arg(bundle.dir())
            .arg("--trusted-key")
            .arg(bundle.public_key()))
    };
    let good = verify();
    assert_eq!(
        (good.code, good.stdout.clone()),
        (0, format!("{}: verified\n", bundle.dir().display()))
    );
    std::fs::write(bundle.dir().join("libextra.so"), b"not vetted").unwrap();
    let bad = verify();
    assert_eq!(bad.code, 1);
    assert_eq!(
        bad.stdout,
        format!(
            "{}: not listed in the signed bundle manifest; not loaded\n",
            bundle.dir().join("libextra.so").display()
        )
    );
}

#[test]
fn inspect_json_shows_content_and_what_verified() {
    let bundle = Bundle::new();
    let policy = "[policy]\nenabled_tools = [\"read_file\"]\n";
    bundle.write(&bundle.manifest(&format!("={}", bundle.version), policy));
    let inspect = run(toolhost()
        .args(["bundle", "inspect", "--json"])
        .arg(bundle.dir())
        .arg("--trusted-key")
        .arg(bundle.public_key()));
    assert_eq!(inspect.code, 0, "{}", inspect.stderr);
    let plugin = |library: &str, version: String| {
        let sha = bundle.sha(library);
        json!({"library": library, "version": version, "sha256": sha, "actual_sha256": sha, "ok": true})
    };
    let expected = json!({
        "dir": bundle.dir(),
        "signature": "verified",
        "signature_error": null,
        "bundle": {"name": "acme", "version": "1.0.0"},
        "plugins": [
            plugin(READ_FILE, format!("={}", bundle.version)),
            plugin(LIST_FILES, format!("={}", bundle.version)),
        ],
        "extra_libraries": [],
        "policy": {"enabled_tools": ["read_file"], "auto_approve": null, "command_permissions": null},
        "problems": [],
    });
    assert_eq!(inspect.json(), expected);

    // Without a key nothing is claimed about the signature.
    let unchecked = run(toolhost()
        .args(["bundle", "inspect", "--json"])
        .arg(bundle.dir()));
    assert_eq!(unchecked.json()["signature"], json!("unchecked"));
}

#[test]
fn a_wrong_trusted_key_loads_nothing() {
    let bundle = Bundle::new().standard();
    let other = workdir();
    let keygen = run(toolhost()
        .args(["bundle", "keygen", "--out"])
        .arg(other.path().join("other")));
    assert_eq!(keygen.code, 0, "{}", keygen.stderr);
    let wrong = other.path().join("other.pub");
    let (tools, warnings) = bundle.listing(&wrong);
    assert_eq!(tools, Vec::<String>::new());
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].1.starts_with("the signature does not verify"),
        "{warnings:?}"
    );
    let inspect = run(toolhost()
        .args(["bundle", "inspect", "--json"])
        .arg(bundle.dir())
        .arg("--trusted-key")
        .arg(&wrong));
    let json: Value = inspect.json();
    assert_eq!(json["signature"], json!("invalid"));
}

#[test]
fn a_bundle_needs_a_trusted_key() {
    let bundle = Bundle::new().standard();
    let run = run(toolhost().arg("--bundle").arg(bundle.dir()).arg("tools"));
    assert_eq!(
        (run.code, run.stderr),
        (
            2,
            "toolhost: --bundle needs --trusted-key PUB\n".to_string()
        )
    );
}

#[test]
fn a_bundle_can_require_isolation_and_set_its_grants() {
    let bundle = Bundle::new();
    // The whole bundle isolated, whatever --isolation says (the test command passes
    // `--isolation in-process`).
    bundle.write(&bundle.manifest(
        &format!("={}", bundle.version),
        "[policy]\nisolation = \"process\"\n",
    ));
    let listing = bundle.toolhost(&bundle.public_key(), &["tools", "--json"]);
    let modes: Vec<Value> = listing.json()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["isolation"].clone())
        .collect();
    assert_eq!(
        modes,
        [json!("process"), json!("process")],
        "{}",
        listing.stdout
    );

    // One plugin isolated, granted no file system: it cannot read the workspace.
    let manifest = format!(
        "[bundle]\nname = \"acme\"\nversion = \"1.0.0\"\n\n\
         [[plugins]]\nlibrary = \"{READ_FILE}\"\nversion = \"={v}\"\nsha256 = \"{}\"\n\
         isolation = \"process\"\ngrants = {{ fs = \"none\" }}\n\n\
         [[plugins]]\nlibrary = \"{LIST_FILES}\"\nversion = \"={v}\"\nsha256 = \"{}\"\n",
        bundle.sha(READ_FILE),
        bundle.sha(LIST_FILES),
        v = bundle.version,
    );
    bundle.write(&manifest);
    let ws = workdir();
    std::fs::write(ws.path().join("a.txt"), "inside\n").unwrap();
    let cwd = ws.path().to_str().unwrap();
    let read = bundle.toolhost(
        &bundle.public_key(),
        &[
            "call",
            "read_file",
            r#"{"path":"a.txt"}"#,
            "--json",
            "--cwd",
            cwd,
        ],
    );
    assert_eq!(read.json()["is_error"], json!(true), "{}", read.stdout);
    assert!(!read.stdout.contains("inside"), "{}", read.stdout);
    let listed = bundle.toolhost(
        &bundle.public_key(),
        &[
            "call",
            "list_files",
            r#"{"path":"."}"#,
            "--json",
            "--cwd",
            cwd,
        ],
    );
    assert_eq!(listed.json()["text"], json!("a.txt"), "{}", listed.stdout);
}
