//! The streaming parser, differential: for any text and any split into chunks, every prefix
//! parses without a panic, the incremental parser's blocks equal the one-shot parse of the
//! text so far after every chunk, and its final blocks equal the one-shot parse of the whole.
//!
//! Input: one byte choosing the split, then the text (lossy UTF-8).
#![no_main]

use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use toolhost::{StreamParser, XmlParser};

fn parser() -> Arc<XmlParser> {
    static PARSER: OnceLock<Arc<XmlParser>> = OnceLock::new();
    PARSER
        .get_or_init(|| Arc::new(XmlParser::cline().with_raw_params("write_to_file", ["content"])))
        .clone()
}

/// Chunk lengths from a seed: 1 to 64 bytes, moved to the next character boundary.
fn chunks(text: &str, seed: u8) -> Vec<&str> {
    let mut state = u32::from(seed) | 0x9e37_0000;
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        let mut end = (start + 1 + (state % 64) as usize).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[start..end]);
        start = end;
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&seed, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let parser = parser();
    let mut stream = StreamParser::new(parser.clone());
    let mut so_far = 0;
    for chunk in chunks(&text, seed) {
        stream.push(chunk);
        so_far += chunk.len();
        assert_eq!(
            stream.blocks(),
            parser.parse(&text[..so_far]),
            "after {so_far} bytes"
        );
    }
    assert_eq!(stream.blocks(), parser.parse(&text));
});
