//! Opening and reading files for the searcher with as few system calls as possible.
//!
//! A search is mostly the kernel copying file contents out of the page cache; what is left to
//! gain is in the calls around it. Two differences from what `grep-searcher` does by itself:
//!
//! - A file is opened relative to its directory's handle, which is kept open while the thread
//!   works through that directory's files (the walk hands a directory's files to one thread in a
//!   row). Both the directory and the file are opened beneath the searched directory's handle
//!   with no symbolic link allowed on the way (the workspace capability), so what is read is
//!   always the file the walk named, inside the searched tree.
//! - A file is read whole into a buffer the thread reuses, and searched as one slice. The
//!   searcher's own reader first reads three bytes to look for a byte-order mark, an extra call
//!   per file. Files whose result could differ between the two ways (a byte-order mark, a NUL
//!   byte, more than [`WHOLE_FILE_LIMIT`] bytes) go through the searcher's reader over the bytes
//!   already read, so they are decoded and detected as binary exactly as ripgrep does.

use std::fs::File;
use std::io::{ErrorKind, Read};
use std::path::{Path, PathBuf};

use grep_regex::RegexMatcher;
use grep_searcher::Searcher;
use tool_api::workspace::{Dir, FsError, OpenedFile};

use crate::sink::FileSink;

/// Files up to this size are read whole; larger ones are streamed.
pub const WHOLE_FILE_LIMIT: usize = 8 << 20;

/// The buffer's first size: most source files fit.
const INITIAL_BUFFER: usize = 256 << 10;

/// Byte-order marks the searcher recognises (UTF-8, UTF-16LE, UTF-16BE).
const BOMS: [&[u8]; 3] = [b"\xEF\xBB\xBF", b"\xFF\xFE", b"\xFE\xFF"];

/// One thread's open directory and read buffer.
#[derive(Debug, Default)]
pub struct FileReader<'w> {
    dir: Option<(PathBuf, Dir<'w>)>,
    buffer: Vec<u8>,
}

impl<'w> FileReader<'w> {
    /// Searches the file at `relative` below `anchor` into `sink`.
    pub fn search(
        &mut self,
        searcher: &mut Searcher,
        matcher: &RegexMatcher,
        anchor: &Dir<'w>,
        relative: &Path,
        sink: &mut FileSink,
    ) -> Result<(), FsError> {
        let mut file = self.open(anchor, relative)?;
        self.search_file(searcher, matcher, &mut file, sink)
            .map_err(FsError::Io)
    }

    /// Searches an opened file into `sink`.
    pub fn search_file(
        &mut self,
        searcher: &mut Searcher,
        matcher: &RegexMatcher,
        file: &mut OpenedFile,
        sink: &mut FileSink,
    ) -> std::io::Result<()> {
        let file = file.file();
        let (len, complete) = self.read(file)?;
        let data = &self.buffer[..len];
        let plain = !BOMS.iter().any(|bom| data.starts_with(bom));
        if complete && plain && memchr::memchr(0, data).is_none() {
            searcher.search_slice(matcher, data, sink)
        } else {
            searcher.search_reader(matcher, data.chain(file), sink)
        }
    }

    /// Opens `relative` below `anchor`, relative to its directory, which stays open for the
    /// next file.
    fn open(&mut self, anchor: &Dir<'w>, relative: &Path) -> Result<OpenedFile, FsError> {
        let (Some(parent), Some(name)) = (relative.parent(), relative.file_name()) else {
            return anchor.open_file(relative);
        };
        if parent.as_os_str().is_empty() {
            return anchor.open_file(name);
        }
        if !matches!(&self.dir, Some((open, _)) if open == parent) {
            self.dir = Some((parent.to_path_buf(), anchor.subdir(parent)?));
        }
        match &self.dir {
            Some((_, dir)) => dir.open_file(name),
            None => anchor.open_file(relative),
        }
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
        std::fs::write(dir.path().join("f"), content).unwrap();
        let workspace = tool_api::workspace::Workspace::new(dir.path()).unwrap();
        let anchor = workspace.open_dir(&workspace.verdict(".")).unwrap();
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
            .search(&mut searcher, &matcher, &anchor, Path::new("f"), &mut sink)
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
