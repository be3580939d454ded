//! A file's new text from its placed chunks (Cline's `applyChunks`).

use crate::error::PatchError;
use crate::parser::Chunk;

/// Applies `chunks` (in file order) to `content`. A file that ended with a newline still does.
pub fn apply_chunks(content: &str, chunks: &[Chunk], path: &str) -> Result<String, PatchError> {
    if chunks.is_empty() {
        return Ok(content.to_string());
    }
    let ends_with_newline = content.ends_with('\n');
    let lines: Vec<&str> = content.split('\n').collect();
    let mut result: Vec<&str> = Vec::with_capacity(lines.len());
    let mut current = 0;
    for chunk in chunks {
        if chunk.orig_index > lines.len() {
            return Err(PatchError::new(format!(
                "{path}: chunk.origIndex {} > lines.length {}",
                chunk.orig_index,
                lines.len()
            )));
        }
        if current > chunk.orig_index {
            return Err(PatchError::new(format!(
                "{path}: currentIndex {current} > chunk.origIndex {}",
                chunk.orig_index
            )));
        }
        result.extend(&lines[current..chunk.orig_index]);
        result.extend(chunk.ins_lines.iter().map(String::as_str));
        // JavaScript's slice clamps; so does this.
        current = (chunk.orig_index + chunk.del_lines.len()).min(lines.len());
    }
    result.extend(&lines[current..]);
    let joined = result.join("\n");
    Ok(if ends_with_newline && !joined.ends_with('\n') {
        joined + "\n"
    } else {
        joined
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(orig_index: usize, del: &[&str], ins: &[&str]) -> Chunk {
        Chunk {
            orig_index,
            del_lines: del.iter().map(|s| s.to_string()).collect(),
            ins_lines: ins.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn apply(content: &str, chunks: &[Chunk]) -> Result<String, String> {
        apply_chunks(content, chunks, "f").map_err(|e| e.0)
    }

    #[test]
    fn chunks_replace_lines_and_keep_the_final_newline() {
        assert_eq!(
            apply("a\nb\nc\n", &[chunk(1, &["b"], &["B", "B2"])]),
            Ok("a\nB\nB2\nc\n".to_string())
        );
        assert_eq!(
            apply("a\nb", &[chunk(1, &["b"], &["B"])]),
            Ok("a\nB".to_string())
        );
        // Deleting the last line before the final newline leaves the newline.
        assert_eq!(
            apply("a\nb\n", &[chunk(1, &["b"], &[])]),
            Ok("a\n".to_string())
        );
        assert_eq!(apply("a\n", &[chunk(0, &["a"], &[])]), Ok("\n".to_string()));
        assert_eq!(apply("a", &[chunk(0, &["a"], &[])]), Ok(String::new()));
        assert_eq!(apply("a\n", &[]), Ok("a\n".to_string()));
    }

    #[test]
    fn overlapping_or_out_of_range_chunks_are_errors() {
        assert_eq!(
            apply(
                "a\nb\n",
                &[chunk(0, &["a", "b"], &[]), chunk(1, &["b"], &[])]
            ),
            Err("f: currentIndex 2 > chunk.origIndex 1".to_string())
        );
        assert_eq!(
            apply("a", &[chunk(5, &[], &["x"])]),
            Err("f: chunk.origIndex 5 > lines.length 1".to_string())
        );
    }
}
