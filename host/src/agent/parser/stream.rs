//! The parser fed chunk by chunk: each chunk is scanned once, and the blocks of the text so far
//! are exactly what [`XmlParser::parse`] gives for that text.
//!
//! Closed blocks never change once closed, so they are kept; only the last block may still be
//! open, and it is built on demand ([`StreamParser::open_block`]), at the cost of its length.

use std::sync::Arc;

use super::xml::{Scan, XmlParser};
use super::Block;

/// An assistant message parsed as it streams in.
///
/// ```
/// use std::sync::Arc;
/// use toolhost::{StreamParser, XmlParser};
///
/// let parser = Arc::new(XmlParser::cline());
/// let mut stream = StreamParser::new(parser.clone());
/// for chunk in ["Look.\n<read_", "file>\n<path>a.t", "xt</path>\n</read_file>"] {
///     stream.push(chunk);
///     assert_eq!(stream.blocks(), parser.parse(stream.text()));
/// }
/// assert_eq!(stream.closed_blocks().len(), 2);
/// ```
#[derive(Debug, Clone)]
pub struct StreamParser {
    parser: Arc<XmlParser>,
    text: String,
    scan: Scan,
}

impl StreamParser {
    /// An empty message, parsed with `parser`.
    pub fn new(parser: Arc<XmlParser>) -> Self {
        Self {
            parser,
            text: String::new(),
            scan: Scan::default(),
        }
    }

    /// Appends a chunk and parses it (the cost of the chunk, and of the tags it ends).
    pub fn push(&mut self, chunk: &str) {
        self.text.push_str(chunk);
        self.scan.advance(&self.parser, &self.text);
    }

    /// The text so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The blocks closed so far, in order: every block of [`Self::blocks`] but a still-open
    /// last one. A closed block never changes.
    pub fn closed_blocks(&self) -> &[Block] {
        self.scan.closed()
    }

    /// The still-open last block, partial, if there is one. Costs the length of the open part
    /// of the text ([`Self::open_len`]).
    pub fn open_block(&self) -> Option<Block> {
        self.scan.open_block(&self.text)
    }

    /// How many bytes of the text the open part spans: from the opening tag of a tool still
    /// open, or from the end of the last closed block.
    pub fn open_len(&self) -> usize {
        self.text.len() - self.scan.open_start().min(self.text.len())
    }

    /// Every block of the text so far, as [`XmlParser::parse`] gives it.
    pub fn blocks(&self) -> Vec<Block> {
        let mut blocks = self.closed_blocks().to_vec();
        blocks.extend(self.open_block());
        blocks
    }
}
