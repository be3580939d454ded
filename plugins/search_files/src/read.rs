//! Opening and reading files for the searcher with as few system calls as possible.
//!
//! A search is mostly the kernel copying file contents out of the page cache; what is left to
//! gain is in the calls around it. Two differences from what `grep-searcher` does by itself:
//!
//! - A file is opened relative to its directory (`openat`), which is kept open while the thread
//!   works through that directory's files (the walk hands a directory's files to one thread in a
//!   row), instead of resolving its full absolute path component by component each time.
//! - A file is read whole into a buffer the thread reuses, and searched as one slice. The
//!   searcher's own reader first reads three bytes to look for a byte-order mark, an extra call
//!   per file. Files whose result could differ between the two ways (a byte-order mark, a NUL
//!   byte, more than [`WHOLE_FILE_LIMIT`] bytes) go through the searcher's reader over the bytes
//!   already read, so they are decoded and detected as binary exactly as ripgrep does.

use std::fs::File;
use std::io::{ErrorKind, Read};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use grep_regex::RegexMatcher;
use grep_searcher::Searcher;
use rustix::fs::{Mode, OFlags};

use crate::sink::FileSink;

/// Files up to this size are read whole; larger ones are streamed.
pub const WHOLE_FILE_LIMIT: usize = 8 << 20;

/// The buffer's first size: most source files fit.
const INITIAL_BUFFER: usize = 256 << 10;

/// Byte-order marks the searcher recognises (UTF-8, UTF-16LE, UTF-16BE).
const BOMS: [&[u8]; 3] = [b"\xEF\xBB\xBF", b"\xFF\xFE", b"\xFE\xFF"];

/// One thread's open directory and read buffer.
#[derive(Debug, Default)]
pub struct FileReader {
    dir: Option<(PathBuf, OwnedFd)>,
    buffer: Vec<u8>,
}

impl FileReader {
    /// Searches the file at `path` into `sink`.
    pub fn search(
        &mut self,
        searcher: &mut Searcher,
        matcher: &RegexMatcher,
        path: &Path,
        sink: &mut FileSink,
    ) -> std::io::Result<()> {
        let mut file = self.open(path)?;
        let (len, complete) = self.read(&mut file)?;
        let data = &self.buffer[..len];
        let plain = !BOMS.iter().any(|bom| data.starts_with(bom));
        if complete && plain && memchr::memchr(0, data).is_none() {
            searcher.search_slice(matcher, data, sink)
        } else {
            searcher.search_reader(matcher, data.chain(file), sink)
        }
    }

    /// Opens `path` relative to its directory, which stays open for the next file.
    fn open(&mut self, path: &Path) -> std::io::Result<File> {
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
            return File::open(path);
        };
        if !matches!(&self.dir, Some((open, _)) if open == parent) {
            let fd = rustix::fs::open(
                parent,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )?;
            self.dir = Some((parent.to_path_buf(), fd));
        }
        let Some((_, dir)) = &self.dir else {
            return File::open(path);
        };
        let fd = rustix::fs::openat(dir, name, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())?;
        Ok(File::from(fd))
    }

    /// Reads `file` into the buffer, up to [`WHOLE_FILE_LIMIT`] bytes; returns how many bytes
    /// were read and whether that is the whole file.
    fn read(&mut self, file: &mut File) -> std::io::Result<(usize, bool)> {
        let mut len = 0;
        loop {
            if len == self.buffer.len() {
                if len >= WHOLE_FILE_LIMIT {
                    return Ok((len, false));
                }
                let grown = (len * 2).clamp(INITIAL_BUFFER, WHOLE_FILE_LIMIT);
                self.buffer.resize(grown, 0);
            }
            match file.read(&mut self.buffer[len..]) {
                Ok(0) => return Ok((len, true)),
                Ok(n) => len += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use grep_regex::RegexMatcherBuilder;
    use grep_searcher::{BinaryDetection, SearcherBuilder};

    fn lines(content: &[u8]) -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, content).unwrap();
        let matcher = RegexMatcherBuilder::new()
            .multi_line(true)
            .line_terminator(Some(b'\n'))
            .build("x")
            .unwrap();
        let mut searcher = SearcherBuilder::new()
            .binary_detection(BinaryDetection::quit(0))
            .build();
        let mut sink = FileSink::default();
        FileReader::default()
            .search(&mut searcher, &matcher, &path, &mut sink)
            .unwrap();
        sink.into_hits()
            .iter()
            .map(|h| String::from_utf8_lossy(&h.line).into_owned())
            .collect()
    }

    #[test]
    fn plain_files_are_searched_whole() {
        assert_eq!(lines(b"ax\nb\ncx"), ["ax\n", "cx"]);
    }

    #[test]
    fn utf16_with_a_bom_is_decoded() {
        let mut content = vec![0xFF, 0xFE];
        for unit in "ax\nb\n".encode_utf16() {
            content.extend(unit.to_le_bytes());
        }
        assert_eq!(lines(&content), ["ax\n"]);
    }

    #[test]
    fn a_nul_byte_in_the_first_block_makes_a_file_binary() {
        assert_eq!(lines(b"aaaax\n\0\n"), Vec::<String>::new());
        // As in ripgrep: the byte-order-mark check reads three bytes first, and a match within
        // them is reported before the NUL byte is seen.
        assert_eq!(lines(b"ax\n\0\n"), ["ax\n"]);
    }

    #[test]
    fn files_larger_than_the_limit_are_searched_to_the_end() {
        let mut content = vec![b'.'; WHOLE_FILE_LIMIT + 10];
        content.extend(b"\nlast x\n");
        assert_eq!(lines(&content), ["last x\n"]);
    }
}
