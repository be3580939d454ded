//! DOCX raw text, as mammoth's `extractRawText` gives it (what Cline uses): the main document's
//! body, each paragraph's text followed by a blank line, tabs as tabs.
//!
//! What is read follows mammoth's reader: runs, hyperlinks, tables (row by row, cell by cell),
//! content controls, inserted and moved-to text, smart tags, and VML text boxes (their
//! paragraphs after the paragraph that holds them), with alternate content read from its
//! fallback. Deleted text, deleted table rows, field instructions, simple fields and unknown
//! elements are left out; a paragraph whose mark is deleted joins the next one.
//!
//! One deliberate difference: a line break (`w:br`, `w:cr`) is a line break, where mammoth's raw
//! text drops it and runs the words on both sides together.

use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

use super::budget::{Budget, Stop};
use super::output::Output;
use super::zipped;

/// Where the main document is when `_rels/.rels` does not say.
const DEFAULT_DOCUMENT: &str = "word/document.xml";

/// The text of a DOCX file.
pub fn extract(bytes: &[u8], budget: &Budget) -> Result<String, Stop> {
    let mut archive = zipped::open_checked(bytes, budget)?;
    let path = zipped::read_entry(&mut archive, "_rels/.rels")?
        .and_then(|rels| main_document(&rels))
        .unwrap_or_else(|| DEFAULT_DOCUMENT.to_string());
    let xml = zipped::read_entry(&mut archive, &path)?
        .ok_or_else(|| Stop::Invalid(format!("the document has no main part ({path})")))?;
    raw_text(&xml, budget)
}

/// The target of the `officeDocument` relationship, without a leading `/`.
fn main_document(rels: &[u8]) -> Option<String> {
    let mut reader = Reader::from_reader(rels);
    let mut buf = Vec::new();
    loop {
        match reader.read_event_into(&mut buf) {
            Ok(Event::Start(e) | Event::Empty(e)) if e.local_name().as_ref() == b"Relationship" => {
                let kind = attribute(&e, b"Type", reader.decoder()).unwrap_or_default();
                if kind.ends_with("/officeDocument") {
                    let target = attribute(&e, b"Target", reader.decoder())?;
                    return Some(target.trim_start_matches('/').to_string());
                }
            }
            Ok(Event::Eof) | Err(_) => return None,
            _ => {}
        }
        buf.clear();
    }
}

/// An attribute's unescaped value, by local name.
fn attribute(
    element: &BytesStart<'_>,
    name: &[u8],
    decoder: quick_xml::encoding::Decoder,
) -> Option<String> {
    element
        .attributes()
        .flatten()
        .find(|a| a.key.local_name().as_ref() == name)
        .and_then(|a| {
            a.decode_and_unescape_value(decoder)
                .ok()
                .map(|v| v.into_owned())
        })
}

/// How the walk treats an element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// A paragraph: its text, then a blank line.
    Paragraph,
    /// A table row (left out when its properties mark it deleted).
    Row,
    /// Text (`w:t`).
    Text,
    /// One character: tab, line break, hyphens.
    Char(char),
    /// Paragraph or row properties: only a deletion mark inside matters.
    Properties,
    /// Read its children.
    Container,
    /// A VML picture: its text boxes' paragraphs come after the enclosing paragraph.
    Picture,
    /// Left out with everything inside.
    Skip,
}

/// The role of an element, by its local name and the roles around it.
fn role(name: &[u8], inside_properties: bool) -> Role {
    if inside_properties {
        return Role::Properties;
    }
    match name {
        b"p" => Role::Paragraph,
        b"tr" => Role::Row,
        b"t" => Role::Text,
        b"tab" => Role::Char('\t'),
        b"br" | b"cr" => Role::Char('\n'),
        b"noBreakHyphen" => Role::Char('\u{2011}'),
        b"softHyphen" => Role::Char('\u{AD}'),
        b"pPr" | b"trPr" => Role::Properties,
        b"pict" => Role::Picture,
        b"document" | b"body" | b"r" | b"hyperlink" | b"tbl" | b"tc" | b"sdt" | b"sdtContent"
        | b"customXml" | b"ins" | b"moveTo" | b"object" | b"smartTag" | b"drawing"
        | b"roundrect" | b"shape" | b"textbox" | b"txbxContent" | b"group" | b"rect"
        | b"AlternateContent" | b"Fallback" => Role::Container,
        _ => Role::Skip,
    }
}

/// One open paragraph.
#[derive(Default)]
struct Paragraph {
    text: String,
    /// Its mark is deleted (`w:pPr/w:rPr/w:del`): the text joins the next paragraph.
    deleted: bool,
    /// Paragraphs of text boxes inside it, written after it.
    extra: String,
}

/// The walk's state.
struct Walk {
    out: Output,
    /// The open elements: local name and role.
    open: Vec<(Vec<u8>, Role)>,
    paragraphs: Vec<Paragraph>,
    /// Whether each open table row is deleted.
    rows: Vec<bool>,
    /// How many open `w:pict` elements there are.
    pictures: usize,
    /// Text of paragraphs whose mark was deleted, for the next paragraph.
    carried: String,
    in_text: bool,
}

impl Walk {
    fn start(&mut self, name: &[u8]) {
        let inside_properties = self
            .open
            .last()
            .is_some_and(|(_, r)| *r == Role::Properties);
        let role = role(name, inside_properties);
        match role {
            Role::Paragraph => self.paragraphs.push(Paragraph::default()),
            Role::Row => self.rows.push(false),
            Role::Text => self.in_text = true,
            Role::Char(c) => self.push_text(&c.to_string()),
            Role::Picture => self.pictures += 1,
            Role::Properties if name == b"del" => self.mark_deleted(),
            _ => {}
        }
        self.open.push((name.to_vec(), role));
    }

    /// A deletion mark in `w:pPr/w:rPr` or directly in `w:trPr`.
    fn mark_deleted(&mut self) {
        let names: Vec<&[u8]> = self.open.iter().map(|(n, _)| n.as_slice()).collect();
        match names.as_slice() {
            [.., b"pPr", b"rPr"] => {
                if let Some(p) = self.paragraphs.last_mut() {
                    p.deleted = true;
                }
            }
            [.., b"trPr"] => {
                if let Some(row) = self.rows.last_mut() {
                    *row = true;
                }
            }
            _ => {}
        }
    }

    /// Closes the innermost element; false once the text limit is reached.
    fn end(&mut self) -> bool {
        let Some((_, role)) = self.open.pop() else {
            return true;
        };
        match role {
            Role::Text => self.in_text = false,
            Role::Row => {
                self.rows.pop();
            }
            Role::Picture => self.pictures = self.pictures.saturating_sub(1),
            Role::Paragraph => return self.end_paragraph(),
            _ => {}
        }
        true
    }

    fn push_text(&mut self, text: &str) {
        if let Some(p) = self.paragraphs.last_mut() {
            p.text.push_str(text);
        }
    }

    fn end_paragraph(&mut self) -> bool {
        let Some(paragraph) = self.paragraphs.pop() else {
            return true;
        };
        if self.rows.iter().any(|deleted| *deleted) {
            return true;
        }
        if paragraph.deleted {
            self.carried.push_str(&paragraph.text);
            self.carried.push_str(&paragraph.extra);
            return true;
        }
        let mut text = std::mem::take(&mut self.carried);
        text.push_str(&paragraph.text);
        text.push_str("\n\n");
        text.push_str(&paragraph.extra);
        match self.paragraphs.last_mut() {
            // A text box's paragraph: after the paragraph that holds the picture.
            Some(outer) if self.pictures > 0 => {
                outer.extra.push_str(&text);
                true
            }
            Some(outer) => {
                outer.text.push_str(&text);
                true
            }
            None => self.out.push(&text),
        }
    }
}

/// Walks the main document's XML.
fn raw_text(xml: &[u8], budget: &Budget) -> Result<String, Stop> {
    let malformed =
        |e: &dyn std::fmt::Display| Stop::Invalid(format!("the document's XML is malformed ({e})"));
    let mut reader = Reader::from_reader(xml);
    let mut buf = Vec::new();
    let mut walk = Walk {
        out: Output::new(budget.limits().max_text_bytes),
        open: Vec::new(),
        paragraphs: Vec::new(),
        rows: Vec::new(),
        pictures: 0,
        carried: String::new(),
        in_text: false,
    };
    // Open elements inside a skipped one.
    let mut skip_depth = 0usize;
    let mut events = 0u64;
    loop {
        events += 1;
        if events & 0xFFF == 0 {
            budget.check()?;
        }
        let event = reader
            .read_event_into(&mut buf)
            .map_err(|e| malformed(&e))?;
        match event {
            Event::Start(e) => {
                let inside_properties = walk
                    .open
                    .last()
                    .is_some_and(|(_, r)| *r == Role::Properties);
                if skip_depth > 0 || role(e.local_name().as_ref(), inside_properties) == Role::Skip
                {
                    skip_depth += 1;
                } else {
                    walk.start(e.local_name().as_ref());
                }
            }
            Event::Empty(e) => {
                let inside_properties = walk
                    .open
                    .last()
                    .is_some_and(|(_, r)| *r == Role::Properties);
                if skip_depth == 0 && role(e.local_name().as_ref(), inside_properties) != Role::Skip
                {
                    walk.start(e.local_name().as_ref());
                    if !walk.end() {
                        break;
                    }
                }
            }
            Event::End(_) => {
                if skip_depth > 0 {
                    skip_depth -= 1;
                } else if !walk.end() {
                    break;
                }
            }
            Event::Text(t) if walk.in_text && skip_depth == 0 => {
                let text = t.decode().map_err(|e| malformed(&e))?;
                walk.push_text(&text);
            }
            Event::CData(t) if walk.in_text && skip_depth == 0 => {
                walk.push_text(&String::from_utf8_lossy(&t));
            }
            Event::GeneralRef(r) if walk.in_text && skip_depth == 0 => {
                if let Some(text) = general_ref(&r) {
                    walk.push_text(&text);
                }
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    Ok(walk.out.finish())
}

/// The text of a character or entity reference inside `w:t`.
fn general_ref(reference: &quick_xml::events::BytesRef<'_>) -> Option<String> {
    if let Ok(Some(c)) = reference.resolve_char_ref() {
        return Some(c.to_string());
    }
    let name = reference.decode().ok()?;
    quick_xml::escape::resolve_predefined_entity(&name).map(str::to_string)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::documents::Limits;

    fn text_of(body: &str) -> String {
        let xml = format!(
            r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" xmlns:v="urn:schemas-microsoft-com:vml"><w:body>{body}<w:sectPr/></w:body></w:document>"#
        );
        raw_text(xml.as_bytes(), &Budget::new(Limits::default())).unwrap()
    }

    #[test]
    fn paragraphs_end_with_a_blank_line_and_tabs_stay() {
        assert_eq!(
            text_of(
                r#"<w:p><w:pPr><w:pStyle w:val="Title"/></w:pPr><w:r><w:rPr><w:b/></w:rPr><w:t>Hello</w:t></w:r><w:r><w:t xml:space="preserve"> wide </w:t></w:r><w:r><w:tab/><w:t>world &amp; co</w:t></w:r></w:p><w:p/>"#
            ),
            "Hello wide \tworld & co\n\n\n\n"
        );
    }

    #[test]
    fn deleted_and_instruction_text_is_left_out_and_inserted_text_kept() {
        assert_eq!(
            text_of(
                r#"<w:p><w:r><w:t>keep</w:t></w:r><w:del w:id="1"><w:r><w:delText>gone</w:delText></w:r></w:del><w:ins w:id="2"><w:r><w:t> new</w:t></w:r></w:ins><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText>PAGE</w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>7</w:t></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>"#
            ),
            "keep new7\n\n"
        );
    }

    #[test]
    fn tables_read_cell_by_cell_and_deleted_rows_go() {
        assert_eq!(
            text_of(
                r#"<w:tbl><w:tblPr/><w:tr><w:tc><w:tcPr/><w:p><w:r><w:t>a</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>b</w:t></w:r></w:p></w:tc></w:tr><w:tr><w:trPr><w:del w:id="3"/></w:trPr><w:tc><w:p><w:r><w:t>old</w:t></w:r></w:p></w:tc></w:tr></w:tbl>"#
            ),
            "a\n\nb\n\n"
        );
    }

    #[test]
    fn a_deleted_paragraph_mark_joins_the_next_paragraph() {
        assert_eq!(
            text_of(
                r#"<w:p><w:pPr><w:rPr><w:del w:id="4"/></w:rPr></w:pPr><w:r><w:t>one </w:t></w:r></w:p><w:p><w:r><w:t>two</w:t></w:r></w:p>"#
            ),
            "one two\n\n"
        );
    }

    #[test]
    fn text_boxes_follow_their_paragraph_and_alternate_content_uses_the_fallback() {
        assert_eq!(
            text_of(
                r#"<w:p><w:r><w:t>before</w:t></w:r><w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><w:t>choice</w:t></w:drawing></mc:Choice><mc:Fallback><w:pict><v:shape><v:textbox><w:txbxContent><w:p><w:r><w:t>boxed</w:t></w:r></w:p></w:txbxContent></v:textbox></v:shape></w:pict></mc:Fallback></mc:AlternateContent></w:r><w:r><w:t> after</w:t></w:r></w:p>"#
            ),
            "before after\n\nboxed\n\n"
        );
    }

    #[test]
    fn line_breaks_and_hyphens() {
        assert_eq!(
            text_of(
                r#"<w:p><w:r><w:t>line</w:t><w:br/><w:t>next</w:t><w:noBreakHyphen/><w:t>x</w:t></w:r><w:fldSimple w:instr="DATE"><w:r><w:t>today</w:t></w:r></w:fldSimple></w:p>"#
            ),
            "line\nnext\u{2011}x\n\n"
        );
    }

    #[test]
    fn the_text_limit_cuts_with_a_notice() {
        let body = "<w:p><w:r><w:t>0123456789</w:t></w:r></w:p>".repeat(10);
        let xml = format!("<w:document><w:body>{body}</w:body></w:document>");
        let budget = Budget::new(Limits {
            max_text_bytes: 30,
            ..Limits::default()
        });
        assert_eq!(
            raw_text(xml.as_bytes(), &budget).unwrap(),
            format!(
                "0123456789\n\n0123456789\n\n012345\n{}",
                crate::documents::TEXT_CUT_NOTICE
            )
        );
    }
}
