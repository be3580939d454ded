//! A command's output, as Cline shapes it: split into lines, trimmed at the end, a trailing
//! prompt character removed from the last line ([`LineSplitter`]); at most `limit` lines (half
//! from the start, half from the end) for the model ([`process_output`]). And, beyond Cline, at
//! most a number of bytes ([`cut_to_bytes`]), whatever the shape of the output: a line longer
//! than [`MAX_LINE_BYTES`] is cut into pieces, so that no line is held whole.

/// Lines seen before the output counts as large (Cline: then it is written to a file).
pub const SPILL_LINES: usize = 1000;
/// Bytes seen before the output counts as large.
pub const SPILL_BYTES: u64 = 512 * 1024;
/// Lines kept from the start and from the end of large output.
pub const KEPT_LINES: usize = 100;
/// The default number of lines the model sees (Cline's `terminalOutputLineLimit`).
pub const DEFAULT_LINE_LIMIT: usize = 500;
/// The default number of bytes of output the model sees.
pub const DEFAULT_BYTE_LIMIT: usize = 64 * 1024;
/// A line longer than this is cut into pieces, so that output without newlines cannot exhaust
/// memory.
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// Splits a byte stream into lines.
#[derive(Debug, Default)]
pub struct LineSplitter {
    partial: Vec<u8>,
}

impl LineSplitter {
    /// Adds bytes; returns the lines they complete, each trimmed at the end, and the pieces of
    /// [`MAX_LINE_BYTES`] of a line that has no end yet.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<String> {
        let mut lines = Vec::new();
        let mut rest = bytes;
        while !rest.is_empty() {
            let room = MAX_LINE_BYTES - self.partial.len();
            match memchr::memchr(b'\n', rest) {
                Some(end) if end < room => {
                    self.partial.extend_from_slice(&rest[..end]);
                    let line = decode(&std::mem::take(&mut self.partial));
                    push_pieces(&mut lines, line.trim_end().to_string());
                    rest = &rest[end + 1..];
                }
                _ => {
                    let taken = rest.len().min(room);
                    self.partial.extend_from_slice(&rest[..taken]);
                    rest = &rest[taken..];
                    if self.partial.len() >= MAX_LINE_BYTES {
                        let piece = self.piece();
                        push_pieces(&mut lines, piece);
                    }
                }
            }
        }
        lines
    }

    /// The full partial line as a piece, but for the start of a character it ends with (kept
    /// for the next piece, so that no character is cut in two).
    fn piece(&mut self) -> String {
        let len = self.partial.len();
        let mut cut = len;
        for back in 1..=len.min(3) {
            let byte = self.partial[len - back];
            if byte & 0xC0 == 0x80 {
                continue;
            }
            let needs = match byte {
                0xF0..=0xF4 => 4,
                0xE0..=0xEF => 3,
                0xC2..=0xDF => 2,
                _ => 1,
            };
            if needs > back {
                cut = len - back;
            }
            break;
        }
        let rest = self.partial.split_off(cut);
        decode(&std::mem::replace(&mut self.partial, rest))
    }

    /// The unfinished last line, if any: trimmed, and without a trailing prompt character
    /// (`%`, `$`, `#`, `>`), as Cline cleans it.
    pub fn finish(&mut self) -> Option<String> {
        let rest = decode(&std::mem::take(&mut self.partial));
        let mut lines: Vec<&str> = rest.trim_end().split('\n').collect();
        if let Some(last) = lines.last_mut() {
            let trimmed = last.trim_end();
            *last = match trimmed.chars().last() {
                Some('%' | '$' | '#' | '>') => &trimmed[..trimmed.len() - 1],
                _ => last,
            };
        }
        let cleaned = lines.join("\n").trim_end().to_string();
        (!cleaned.is_empty()).then_some(cleaned)
    }
}

fn decode(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Adds `line` to `lines`, in pieces of at most [`MAX_LINE_BYTES`]: decoding may have made it
/// longer than its bytes (each invalid byte is a three-byte U+FFFD).
fn push_pieces(lines: &mut Vec<String>, mut line: String) {
    while line.len() > MAX_LINE_BYTES {
        let mut cut = MAX_LINE_BYTES;
        while !line.is_char_boundary(cut) {
            cut -= 1;
        }
        let rest = line.split_off(cut);
        lines.push(std::mem::replace(&mut line, rest));
    }
    lines.push(line);
}

/// Cline's `processOutput`: more than `limit` lines keep the first and last `limit / 2` around
/// a `... (output truncated) ...` line; the result is trimmed.
pub fn process_output(lines: &[String], limit: usize) -> String {
    if lines.len() > limit {
        let half = limit / 2;
        let start = lines[..half].join("\n");
        let end = lines[lines.len() - half..].join("\n");
        format!("{start}\n... (output truncated) ...\n{end}")
            .trim()
            .to_string()
    } else {
        lines.join("\n").trim().to_string()
    }
}

/// The notice in place of the bytes [`cut_to_bytes`] took out.
fn cut_notice(bytes: usize) -> String {
    format!("\n... ({bytes} bytes truncated) ...\n")
}

/// `text` in at most `limit` bytes, notice included (`None`: it fits): its start and its end
/// around a `... (N bytes truncated) ...` line, cut at line ends where one is near, and never
/// inside a character.
pub fn cut_to_bytes(text: &str, limit: usize) -> Option<String> {
    if text.len() <= limit {
        return None;
    }
    // The notice is sized for the most that could be cut, so that the real one fits.
    let budget = limit.saturating_sub(cut_notice(text.len()).len());
    let (head, tail) = (budget / 2, budget - budget / 2);
    let mut start = head;
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    if let Some(newline) = text[..start].rfind('\n').filter(|&i| i >= start * 3 / 4) {
        start = newline;
    }
    let mut end = text.len() - tail;
    while !text.is_char_boundary(end) {
        end += 1;
    }
    if let Some(newline) = text[end..].find('\n').filter(|&i| i <= tail / 4) {
        end += newline + 1;
    }
    let cut = cut_notice(end - start);
    Some(
        format!("{}{cut}{}", &text[..start], &text[end..])
            .trim()
            .to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(lines: &[&str]) -> Vec<String> {
        lines.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn lines_are_split_and_cleaned() {
        let mut splitter = LineSplitter::default();
        assert_eq!(splitter.push(b"a  \r\nb"), ["a"]);
        assert_eq!(splitter.push(b"c\n\nd $ "), ["bc", ""]);
        assert_eq!(splitter.finish().as_deref(), Some("d"));
        assert_eq!(splitter.finish(), None);
        let mut splitter = LineSplitter::default();
        assert_eq!(
            splitter.push("é".as_bytes()[..1].as_ref()),
            Vec::<String>::new()
        );
        assert_eq!(splitter.push(&"é\n".as_bytes()[1..]), ["é"]);
    }

    #[test]
    fn long_lines_are_cut_between_characters() {
        let mut splitter = LineSplitter::default();
        let lines = splitter.push(&vec![b'x'; MAX_LINE_BYTES + 5]);
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].len(), MAX_LINE_BYTES);
        assert_eq!(splitter.finish().map(|l| l.len()), Some(5));
        // A three-byte character across the piece's end goes whole into the next piece.
        let mut text = "x".repeat(MAX_LINE_BYTES - 1);
        text.push_str("€€\nz");
        let lines = splitter.push(text.as_bytes());
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0], "x".repeat(MAX_LINE_BYTES - 1));
        assert_eq!(lines[1], "€€");
        // Bytes that are not UTF-8 grow when decoded: the pieces are cut again.
        let lines = LineSplitter::default().push(&[0xFF; MAX_LINE_BYTES + 1]);
        assert_eq!(lines.len(), 4);
        assert!(lines.iter().all(|l| l.len() <= MAX_LINE_BYTES));
        // A line exactly as long as a piece ends with an empty one, as before.
        let mut splitter = LineSplitter::default();
        let mut bytes = vec![b'y'; MAX_LINE_BYTES];
        bytes.push(b'\n');
        assert_eq!(splitter.push(&bytes).len(), 2);
    }

    #[test]
    fn the_line_limit_keeps_both_ends() {
        let lines: Vec<String> = (1..=7).map(|n| n.to_string()).collect();
        assert_eq!(process_output(&lines, 10), "1\n2\n3\n4\n5\n6\n7");
        assert_eq!(
            process_output(&lines, 4),
            "1\n2\n... (output truncated) ...\n6\n7"
        );
        assert_eq!(process_output(&lines, 0), "... (output truncated) ...");
        assert_eq!(process_output(&strings(&["", " a", ""]), 10), "a");
    }

    #[test]
    fn the_byte_limit_keeps_both_ends() {
        assert_eq!(cut_to_bytes("short", 5), None);
        let text = "y".repeat(1000);
        let cut = cut_to_bytes(&text, 100).unwrap_or_default();
        assert!(cut.len() <= 100, "{cut}");
        assert_eq!(
            cut,
            format!(
                "{}\n... (932 bytes truncated) ...\n{}",
                "y".repeat(34),
                "y".repeat(34)
            )
        );
        // Near a line's end, the cut is there; never inside a character.
        let lines: String = (0..100).map(|n| format!("line {n:03} €\n")).collect();
        let cut = cut_to_bytes(&lines, 200).unwrap_or_default();
        assert!(cut.len() <= 200);
        assert!(
            cut.starts_with("line 000 €\n") && cut.ends_with("line 099 €"),
            "{cut}"
        );
        let notice = cut
            .lines()
            .find(|l| l.starts_with("... ("))
            .unwrap_or_default();
        let cut_bytes: usize = notice
            .strip_prefix("... (")
            .and_then(|rest| rest.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        // Kept, cut and the notice's own newlines (the last line's newline trimmed) add up.
        let kept = cut.len() + 1 - notice.len() - 2;
        assert_eq!(kept + cut_bytes, lines.len(), "{cut}");
    }
}
