//! One version of a workspace hook script: read once, hashed, and run from a private copy of
//! exactly the bytes that were hashed.
//!
//! Why a copy: the trust check and the run must see the same content. Running the workspace file
//! by its path would let anything that rewrites it between the check and the exec (a tool call
//! in parallel, a `git checkout`, a hostile script racing us) run unapproved code. The bytes are
//! therefore read once, hashed, and written to a new file with mode 0700 in a new directory
//! with mode 0700 (so no other user can replace it), which is what runs.
//!
//! Why not a memfd run as `/proc/self/fd/N`: a script's interpreter opens that path after the
//! exec, so the descriptor would have to stay open across exec; without an unsafe `pre_exec`
//! it would leak into every process the host starts meanwhile (MCP servers, commands), and it is
//! Linux-only. The copy costs one small file per run and works on any Unix; its one visible
//! difference is `$0`, which names the copy (with the same file name) instead of the workspace
//! file. The copy lives in the temporary directory (`$TMPDIR`), which must allow executables.

use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// A hook script as read at one moment: what is hashed is what runs.
#[derive(Debug, Clone)]
pub struct ScriptVersion {
    /// The script's canonical path (symlinks resolved): the key of its trust.
    pub path: PathBuf,
    /// Its content.
    pub bytes: Vec<u8>,
    /// The SHA-256 of `bytes`, as hex.
    pub sha256: String,
}

impl ScriptVersion {
    /// Reads the script at `path` once.
    pub fn read(path: &Path) -> std::io::Result<Self> {
        let path = path.canonicalize()?;
        let bytes = std::fs::read(&path)?;
        let sha256 = hex::encode(Sha256::digest(&bytes));
        Ok(Self {
            path,
            bytes,
            sha256,
        })
    }

    /// A private executable copy of these bytes, under the script's file name; removed when
    /// dropped (which must wait until the script has exited: an interpreter opens it by name).
    pub fn private_copy(&self) -> std::io::Result<PrivateCopy> {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        // A new directory with a random name, created with mode 0700 (not after the fact: tempfile
        // otherwise leaves it to the umask).
        let dir = tempfile::Builder::new()
            .prefix("toolhost-hook-")
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir()?;
        let name = self.path.file_name().unwrap_or("hook".as_ref());
        let path = dir.path().join(name);
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o700)
            .open(&path)?;
        file.write_all(&self.bytes)?;
        // Closed before anything runs it: an executable still open for writing cannot be run.
        drop(file);
        Ok(PrivateCopy { _dir: dir, path })
    }

    /// What a user should see of the script before trusting it: its first lines, with control
    /// characters escaped (a script could otherwise hide lines from a terminal with escape
    /// sequences), or a note that it is binary.
    pub fn preview(&self, max_lines: usize) -> String {
        let head = &self.bytes[..self.bytes.len().min(8192)];
        if head.contains(&0) {
            return format!("  (binary, {} bytes)", self.bytes.len());
        }
        let text = String::from_utf8_lossy(&self.bytes);
        let lines: Vec<&str> = text.lines().collect();
        let mut out: Vec<String> = lines
            .iter()
            .take(max_lines)
            .map(|line| format!("  | {}", escape_controls(line, 160)))
            .collect();
        if lines.len() > max_lines {
            out.push(format!("  | … ({} more lines)", lines.len() - max_lines));
        }
        out.join("\n")
    }
}

/// A private copy of a script (see [`ScriptVersion::private_copy`]).
#[derive(Debug)]
pub struct PrivateCopy {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl PrivateCopy {
    /// The copy's path, to run.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// `line` with control characters other than tab written as `\u{…}`, cut after `max` chars.
fn escape_controls(line: &str, max: usize) -> String {
    let mut out = String::new();
    for (i, c) in line.chars().enumerate() {
        if i == max {
            out.push('…');
            break;
        }
        if c.is_control() && c != '\t' {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_preview_escapes_what_a_terminal_would_obey() {
        let version = ScriptVersion {
            path: PathBuf::from("/x/PreToolUse"),
            bytes: b"#!/bin/sh\n\x1b[1A\x1b[2Kecho hidden\nthree\n".to_vec(),
            sha256: String::new(),
        };
        assert_eq!(
            version.preview(2),
            "  | #!/bin/sh\n  | \\u{1b}[1A\\u{1b}[2Kecho hidden\n  | … (1 more lines)"
        );
        let binary = ScriptVersion {
            bytes: b"\x7fELF\0\0".to_vec(),
            ..version
        };
        assert_eq!(binary.preview(5), "  (binary, 6 bytes)");
    }

    #[test]
    fn the_copy_holds_the_bytes_read_even_after_the_file_changed() -> std::io::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir()?;
        let script = dir.path().join("PreToolUse");
        std::fs::write(&script, "#!/bin/sh\necho first\n")?;
        let version = ScriptVersion::read(&script)?;
        std::fs::write(&script, "#!/bin/sh\necho second\n")?;
        let copy = version.private_copy()?;
        assert_eq!(copy.path().file_name(), script.file_name());
        assert_eq!(std::fs::read(copy.path())?, b"#!/bin/sh\necho first\n");
        let mode = std::fs::metadata(copy.path())?.permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        let parent = copy
            .path()
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let dir_mode = std::fs::metadata(&parent)?.permissions().mode();
        assert_eq!(dir_mode & 0o777, 0o700);
        assert_eq!(
            version.sha256,
            hex::encode(Sha256::digest(b"#!/bin/sh\necho first\n"))
        );
        drop(copy);
        assert!(!parent.exists());
        Ok(())
    }
}
