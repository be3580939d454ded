//! The text an extraction gathers, up to its limit ([`Output`]).

/// The line that ends a document's text cut at
/// [`Limits::max_text_bytes`](super::Limits::max_text_bytes).
pub const TEXT_CUT_NOTICE: &str =
    "[... document text truncated: only the first part was extracted ...]";

/// Text gathered under the text limit: once it is reached, [`Output::push`] refuses more and
/// the text ends with [`TEXT_CUT_NOTICE`].
#[derive(Debug)]
pub(super) struct Output {
    text: String,
    max: usize,
    full: bool,
}

impl Output {
    pub(super) fn new(max: usize) -> Self {
        Self {
            text: String::new(),
            max,
            full: false,
        }
    }

    /// Appends `piece`; false once the limit is reached (the piece is cut at a character).
    pub(super) fn push(&mut self, piece: &str) -> bool {
        if self.full {
            return false;
        }
        if self.text.len() + piece.len() <= self.max {
            self.text.push_str(piece);
            return true;
        }
        let mut end = self.max.saturating_sub(self.text.len()).min(piece.len());
        while !piece.is_char_boundary(end) {
            end -= 1;
        }
        self.text.push_str(&piece[..end]);
        self.full = true;
        false
    }

    /// The text, with the notice when it was cut.
    pub(super) fn finish(mut self) -> String {
        if self.full {
            if !self.text.ends_with('\n') {
                self.text.push('\n');
            }
            self.text.push_str(TEXT_CUT_NOTICE);
        }
        self.text
    }
}
