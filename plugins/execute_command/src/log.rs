//! One command's log: its output as it came, byte for byte, in at most
//! `execute_command.output_log_limit_mb`. Longer output keeps its first half and its last
//! half, with a line where the middle was cut saying how much and by which setting. The end is
//! written to an unnamed file beside the log as it comes (as a ring of half the limit) and
//! copied after the cut when the run ends, so memory holds none of it.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::logs;

/// A log being written.
#[derive(Debug)]
pub struct Log {
    path: PathBuf,
    file: File,
    /// The limit in MiB (`None`: none), as the setting says it.
    limit_mb: Option<u64>,
    /// Bytes written at the start of the log.
    head: u64,
    /// The end of the output, once the first half of the limit is written.
    ring: Option<Ring>,
    /// Bytes of output in all.
    total: u64,
    /// A write failed: the log is dropped at the end.
    broken: bool,
}

impl Log {
    /// A new log of `task`'s, holding at most `limit_mb` MiB.
    pub fn create(task: &str, limit_mb: Option<u64>) -> Result<Self, String> {
        let (path, file) = logs::create(task)?;
        Ok(Self {
            path,
            file,
            limit_mb,
            head: 0,
            ring: None,
            total: 0,
            broken: false,
        })
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn limit(&self) -> Option<u64> {
        self.limit_mb.map(|mb| mb.saturating_mul(1024 * 1024))
    }

    /// Adds output.
    pub fn write(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        if self.broken {
            return;
        }
        let room = self
            .limit()
            .map_or(u64::MAX, |limit| limit / 2 - self.head.min(limit / 2));
        let (start, end) =
            bytes.split_at(usize::try_from(room).unwrap_or(usize::MAX).min(bytes.len()));
        let mut result = self.file.write_all(start);
        self.head += start.len() as u64;
        if !end.is_empty() {
            result = result.and_then(|()| self.ring_write(end));
        }
        if result.is_err() {
            self.broken = true;
        }
    }

    fn ring_write(&mut self, bytes: &[u8]) -> io::Result<()> {
        if self.ring.is_none() {
            let capacity = self.limit().unwrap_or(0) - self.head;
            self.ring = Some(Ring {
                file: logs::scratch()?,
                capacity: capacity.max(1),
                written: 0,
            });
        }
        match &mut self.ring {
            Some(ring) => ring.write(bytes),
            None => Ok(()),
        }
    }

    /// Completes the log: the cut notice and the end of the output after the start. Its path
    /// while it is kept (not when it could not be written, nor when its task already ended).
    pub fn finish(mut self, total_limit: Option<u64>) -> Option<PathBuf> {
        let completed = self.complete();
        match completed {
            Ok(bytes) if logs::finished(&self.path, bytes, total_limit) => Some(self.path),
            Ok(_) => None,
            Err(_) => {
                logs::discard(&self.path);
                None
            }
        }
    }

    /// Writes the rest; the log's size.
    fn complete(&mut self) -> io::Result<u64> {
        if self.broken {
            return Err(io::Error::other("a write failed"));
        }
        let (Some(ring), Some(limit)) = (&self.ring, self.limit()) else {
            return Ok(self.head);
        };
        let available = ring.written.min(ring.capacity);
        let room = limit - self.head;
        let mut tail = available.min(room);
        if self.total - self.head - tail > 0 {
            // The notice's length depends on the number it holds: a few rounds settle both.
            for _ in 0..4 {
                let fits = room.saturating_sub(self.notice(tail).len() as u64);
                if available.min(fits) == tail {
                    break;
                }
                tail = available.min(fits);
            }
            let notice = self.notice(tail);
            self.file.write_all(notice.as_bytes())?;
            ring.copy_last(tail, &mut self.file)?;
            return Ok(self.head + notice.len() as u64 + tail);
        }
        ring.copy_last(tail, &mut self.file)?;
        Ok(self.head + tail)
    }

    /// The line in place of what was cut when `tail` bytes of the end are kept.
    fn notice(&self, tail: u64) -> String {
        format!(
            "\n... ({} bytes of output cut here, beyond execute_command.output_log_limit_mb = {}) \
             ...\n",
            self.total - self.head - tail,
            self.limit_mb.unwrap_or(0)
        )
    }
}

/// The end of the output: the last `capacity` bytes, written round an unnamed file.
#[derive(Debug)]
struct Ring {
    file: File,
    capacity: u64,
    /// Bytes written in all (the position modulo the capacity).
    written: u64,
}

impl Ring {
    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        // Only the last `capacity` bytes of a longer write would stay.
        let skip = bytes
            .len()
            .saturating_sub(usize::try_from(self.capacity).unwrap_or(usize::MAX));
        self.written += skip as u64;
        let mut rest = &bytes[skip..];
        while !rest.is_empty() {
            let at = self.written % self.capacity;
            let n = rest
                .len()
                .min(usize::try_from(self.capacity - at).unwrap_or(usize::MAX));
            self.file.write_all_at(&rest[..n], at)?;
            self.written += n as u64;
            rest = &rest[n..];
        }
        Ok(())
    }

    /// Appends the last `n` bytes written (at most the capacity) to `out`, in order.
    fn copy_last(&self, n: u64, out: &mut File) -> io::Result<()> {
        let mut position = self.written - n;
        let mut left = n;
        while left > 0 {
            let at = position % self.capacity;
            let len = left.min(self.capacity - at);
            let mut reader = &self.file;
            reader.seek(SeekFrom::Start(at))?;
            io::copy(&mut reader.take(len), out)?;
            position += len;
            left -= len;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(task: &str, limit_mb: Option<u64>, chunks: &[Vec<u8>]) -> (PathBuf, Vec<u8>) {
        let mut log = Log::create(task, limit_mb).unwrap_or_else(|e| panic!("{e}"));
        for chunk in chunks {
            log.write(chunk);
        }
        let path = log.finish(None).unwrap_or_default();
        let bytes = std::fs::read(&path).unwrap_or_default();
        (path, bytes)
    }

    #[test]
    fn a_log_within_its_limit_is_the_output() {
        let chunks: Vec<Vec<u8>> = (0..100u32).map(|n| format!("{n}\n").into_bytes()).collect();
        let (path, bytes) = written("log-unit-1", Some(1), &chunks);
        assert_eq!(bytes, chunks.concat());
        // Over half the limit: the end goes round the ring, and back without a cut.
        let chunk = vec![b'a'; 300 * 1024];
        let (_, bytes) = written("log-unit-1", Some(1), &[chunk.clone(), chunk.clone()]);
        assert_eq!(bytes, [chunk.clone(), chunk].concat());
        logs::task_ended("log-unit-1");
        assert!(!path.exists());
    }

    #[test]
    fn a_longer_output_keeps_both_ends_and_says_where_it_was_cut() {
        let chunks: Vec<Vec<u8>> = (0..200_000u32)
            .map(|n| format!("line {n:06}\n").into_bytes())
            .collect();
        let output = chunks.concat();
        let chunked: Vec<Vec<u8>> = output.chunks(65_536).map(<[u8]>::to_vec).collect();
        let (_, bytes) = written("log-unit-2", Some(1), &chunked);
        logs::task_ended("log-unit-2");
        assert_eq!(bytes.len(), 1024 * 1024);
        let text = String::from_utf8_lossy(&bytes);
        let (start, rest) = text.split_once("\n... (").unwrap_or_default();
        let (cut, end) = rest
            .split_once(
                " bytes of output cut here, beyond execute_command.output_log_limit_mb = 1) ...\n",
            )
            .unwrap_or_default();
        assert_eq!(start.as_bytes(), &output[..512 * 1024]);
        assert!(output.ends_with(end.as_bytes()));
        let cut: usize = cut.parse().unwrap_or(0);
        assert_eq!(start.len() + cut + end.len(), output.len());
    }

    #[test]
    fn without_a_limit_everything_is_kept() {
        let chunk = vec![b'b'; 700 * 1024];
        let (_, bytes) = written("log-unit-3", None, &[chunk.clone(), chunk.clone()]);
        logs::task_ended("log-unit-3");
        assert_eq!(bytes.len(), 1400 * 1024);
    }
}
