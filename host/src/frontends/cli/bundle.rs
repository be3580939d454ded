//! `toolhost bundle`: keys, signing, verification and inspection of curated bundles; the
//! bundles themselves are [`crate::plugins::bundle`].

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Subcommand;
use serde_json::Value;

use crate::frontends::FrontendError;
use crate::plugins::bundle::{generate_keys, inspect, read_public_key, read_secret_key, sign};

/// `toolhost bundle ...`
#[derive(Debug, Subcommand)]
pub enum BundleCommand {
    /// Writes a new Ed25519 key pair: PREFIX.key (secret) and PREFIX.pub, as hex.
    Keygen {
        /// Path prefix of the two key files.
        #[arg(long, value_name = "PREFIX")]
        out: PathBuf,
    },
    /// Signs DIR/bundle.toml into DIR/bundle.toml.sig.
    Sign {
        /// The bundle directory.
        dir: PathBuf,
        /// The secret key file.
        #[arg(long, value_name = "KEY")]
        key: PathBuf,
    },
    /// Checks the signature (needs --trusted-key), every library's SHA-256 and that no
    /// unlisted library is present. Exit 0 when everything verifies, 1 otherwise.
    Verify {
        /// The bundle directory.
        dir: PathBuf,
    },
    /// Shows what a bundle holds and what of it verifies (with --trusted-key).
    Inspect {
        /// The bundle directory.
        dir: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Runs a `toolhost bundle` subcommand; `Err` is a usage error (exit 2).
pub fn run_command(
    command: BundleCommand,
    trusted_key: Option<&Path>,
) -> Result<ExitCode, FrontendError> {
    match command {
        BundleCommand::Keygen { out } => {
            let (secret, public) = generate_keys(&out)?;
            println!(
                "secret key: {}\npublic key: {}",
                secret.display(),
                public.display()
            );
            Ok(ExitCode::SUCCESS)
        }
        BundleCommand::Sign { dir, key } => {
            let out = sign(&dir, &read_secret_key(&key)?)?;
            println!("signed: {}", out.display());
            Ok(ExitCode::SUCCESS)
        }
        BundleCommand::Verify { dir } => {
            let key = trusted_key.ok_or(FrontendError::VerifyNeedsKey)?;
            let report = inspect(&dir, Some(&read_public_key(key)?));
            let problems = report["problems"].as_array().cloned().unwrap_or_default();
            if problems.is_empty() {
                println!("{}: verified", dir.display());
                Ok(ExitCode::SUCCESS)
            } else {
                for problem in problems {
                    println!("{}", problem.as_str().unwrap_or_default());
                }
                Ok(ExitCode::from(1))
            }
        }
        BundleCommand::Inspect { dir, json } => {
            let key = trusted_key.map(read_public_key).transpose()?;
            let report = inspect(&dir, key.as_ref());
            if json {
                println!("{report}");
            } else {
                print!("{}", inspect_text(&report));
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn inspect_text(report: &Value) -> String {
    let mut out = String::new();
    let bundle = &report["bundle"];
    out.push_str(&format!(
        "bundle {} {} in {}\nsignature: {}{}\n",
        bundle["name"].as_str().unwrap_or("?"),
        bundle["version"].as_str().unwrap_or("?"),
        report["dir"].as_str().unwrap_or("?"),
        report["signature"].as_str().unwrap_or("?"),
        report["signature_error"]
            .as_str()
            .map(|e| format!(" ({e})"))
            .unwrap_or_default()
    ));
    for plugin in report["plugins"].as_array().into_iter().flatten() {
        out.push_str(&format!(
            "plugin {} {} sha256 {}\n",
            plugin["library"].as_str().unwrap_or("?"),
            plugin["version"].as_str().unwrap_or("?"),
            if plugin["ok"] == true {
                "ok"
            } else {
                "MISMATCH"
            }
        ));
    }
    for extra in report["extra_libraries"].as_array().into_iter().flatten() {
        out.push_str(&format!(
            "unlisted library {}\n",
            extra.as_str().unwrap_or("?")
        ));
    }
    out.push_str(&format!("policy: {}\n", report["policy"]));
    for problem in report["problems"].as_array().into_iter().flatten() {
        out.push_str(&format!("problem: {}\n", problem.as_str().unwrap_or("?")));
    }
    out
}
