//! PDF text, laid out as Cline's pdf-parse lays out pdf.js's text items: every page adds a blank
//! line and then its text, where a piece of text starts a new line when its baseline differs
//! from the previous piece's and is joined to it otherwise.
//!
//! lopdf parses the file and decodes the strings through each font's encoding or `ToUnicode`
//! map; the content streams are walked here (text and graphics matrices, form XObjects).
//! Compressed streams expand only under the budget: cross-reference streams are measured
//! before lopdf reads them, object streams before lopdf unpacks them, and every other stream is
//! decoded here, under the budget, before anything reads it. Image data is dropped unread.
//!
//! Differences from pdf.js: spaces inside a line come only from the text itself and from gaps
//! of more than a tenth of an em in a `TJ` array (pdf.js measures glyphs and also spaces pieces
//! drawn apart); fonts that lopdf cannot map to Unicode (no `ToUnicode` map and an encoding with
//! `Differences`) may decode wrongly; an encrypted file is read only when its user password is
//! empty (as pdf.js reads it) and it uses RC4 encryption (lopdf 0.34 has no AES).

use std::cell::RefCell;
use std::collections::BTreeMap;

use lopdf::content::Content;
use lopdf::{Dictionary, Document, Encoding, Object, ObjectId};

mod streams;

use super::budget::{Budget, Stop};
use super::output::Output;
use streams::{check_xref_streams, decode_in_place, decode_streams, is_image};

/// How deeply form XObjects may nest.
const MAX_FORM_DEPTH: usize = 8;

/// The text of a PDF file.
pub fn extract(bytes: &[u8], budget: &Budget) -> Result<String, Stop> {
    check_xref_streams(bytes, budget)?;
    let mut doc = load(bytes, budget)?;
    if doc.is_encrypted() {
        doc.decrypt("")
            .map_err(|_| Stop::Invalid("the PDF is encrypted with a password".to_string()))?;
    }
    decode_streams(&mut doc, budget)?;
    let mut out = Output::new(budget.limits().max_text_bytes);
    for page_id in doc.get_pages().into_values() {
        budget.check()?;
        // As pdf-parse: a page that cannot be read adds no text.
        let text = match page_text(&doc, page_id, budget) {
            Ok(text) => text,
            Err(stop @ (Stop::Time(_) | Stop::Abandoned)) => return Err(stop),
            Err(_) => String::new(),
        };
        if !out.push("\n\n") || !out.push(&text) {
            break;
        }
    }
    Ok(out.finish())
}

thread_local! {
    /// The budget the load filter counts object streams against, and why it stopped.
    static LOADING: RefCell<Option<(Budget, Option<Stop>)>> = const { RefCell::new(None) };
}

/// Parses the file. Object streams are measured before lopdf unpacks them; image data is dropped.
fn load(bytes: &[u8], budget: &Budget) -> Result<Document, Stop> {
    LOADING.with(|state| *state.borrow_mut() = Some((budget.clone(), None)));
    let reader = lopdf::Reader {
        buffer: bytes,
        document: Document::new(),
    };
    let loaded = reader.read(Some(load_filter));
    let stopped = LOADING.with(|state| state.borrow_mut().take().and_then(|(_, stop)| stop));
    if let Some(stop) = stopped {
        return Err(stop);
    }
    budget.check()?;
    loaded.map_err(|e| Stop::Invalid(format!("not a readable PDF ({e})")))
}

/// lopdf's load filter (a plain function, so its state is thread-local). lopdf keeps the object
/// it passes for a top-level object and the returned one for an object inside an object
/// stream (never a stream itself).
fn load_filter(id: ObjectId, object: &mut Object) -> Option<(ObjectId, Object)> {
    let Object::Stream(stream) = object else {
        return Some((id, object.clone()));
    };
    if is_image(stream) {
        stream.content = Vec::new();
    } else if stream.dict.type_is(b"ObjStm") {
        LOADING.with(|state| {
            let mut state = state.borrow_mut();
            let Some((budget, stop)) = state.as_mut() else {
                return;
            };
            if stop.is_some() {
                stream.content = Vec::new();
                return;
            }
            if let Err(e) = budget
                .check()
                .and_then(|()| decode_in_place(stream, budget))
            {
                *stop = Some(e);
                stream.content = Vec::new();
            }
        });
    }
    // A top-level stream: lopdf keeps `object` itself.
    Some((id, Object::Null))
}

/// A 2D affine matrix `[a b c d e f]`.
type Matrix = [f64; 6];

const IDENTITY: Matrix = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0];

/// `m × n` (apply `m`, then `n`).
fn multiply(m: &Matrix, n: &Matrix) -> Matrix {
    [
        m[0] * n[0] + m[1] * n[2],
        m[0] * n[1] + m[1] * n[3],
        m[2] * n[0] + m[3] * n[2],
        m[2] * n[1] + m[3] * n[3],
        m[4] * n[0] + m[5] * n[2] + n[4],
        m[4] * n[1] + m[5] * n[3] + n[5],
    ]
}

/// One page's text.
fn page_text(doc: &Document, page_id: ObjectId, budget: &Budget) -> Result<String, Stop> {
    let data = doc
        .get_page_content(page_id)
        .map_err(|e| Stop::Invalid(e.to_string()))?;
    let fonts = doc
        .get_page_fonts(page_id)
        .map_err(|e| Stop::Invalid(e.to_string()))?;
    let encodings = encodings(doc, fonts);
    let resources = page_resources(doc, page_id);
    let mut walker = Walker {
        doc,
        budget,
        text: String::new(),
        last_y: None,
        ops: 0,
    };
    walker.run(&data, &encodings, resources, IDENTITY, 0)?;
    Ok(walker.text)
}

/// The encodings of a resource dictionary's fonts, by font name; fonts lopdf cannot decode
/// are left out (their text is skipped, as lopdf's own extraction skips it).
fn encodings<'d>(
    doc: &'d Document,
    fonts: BTreeMap<Vec<u8>, &'d Dictionary>,
) -> BTreeMap<Vec<u8>, Encoding<'d>> {
    fonts
        .into_iter()
        .filter_map(|(name, font)| font.get_font_encoding(doc).ok().map(|e| (name, e)))
        .collect()
}

/// The page's own resource dictionary (inherited ones hold its fonts through `get_page_fonts`).
fn page_resources(doc: &Document, page_id: ObjectId) -> Option<&Dictionary> {
    let page = doc.get_dictionary(page_id).ok()?;
    deref_dict(doc, page.get(b"Resources").ok()?)
}

fn deref_dict<'d>(doc: &'d Document, object: &'d Object) -> Option<&'d Dictionary> {
    match object {
        Object::Dictionary(dict) => Some(dict),
        Object::Reference(id) => doc.get_dictionary(*id).ok(),
        _ => None,
    }
}

/// The walk over content streams.
struct Walker<'d, 'b> {
    doc: &'d Document,
    budget: &'b Budget,
    text: String,
    /// The baseline of the previous piece of text (pdf-parse's `lastY`).
    last_y: Option<f64>,
    ops: u64,
}

/// The graphics and text state the walk tracks.
#[derive(Clone)]
struct State {
    ctm: Matrix,
    tm: Matrix,
    tlm: Matrix,
    leading: f64,
    font: Vec<u8>,
}

impl<'d> Walker<'d, '_> {
    fn run(
        &mut self,
        data: &[u8],
        encodings: &BTreeMap<Vec<u8>, Encoding<'d>>,
        resources: Option<&'d Dictionary>,
        ctm: Matrix,
        depth: usize,
    ) -> Result<(), Stop> {
        let content = Content::decode(data).map_err(|e| Stop::Invalid(e.to_string()))?;
        let mut state = State {
            ctm,
            tm: IDENTITY,
            tlm: IDENTITY,
            leading: 0.0,
            font: Vec::new(),
        };
        let mut saved: Vec<State> = Vec::new();
        for op in &content.operations {
            self.ops += 1;
            if self.ops & 0xFFF == 0 {
                self.budget.check()?;
            }
            let numbers: Vec<f64> = op
                .operands
                .iter()
                .filter_map(|o| o.as_float().ok().map(f64::from))
                .collect();
            let matrix = || -> Option<Matrix> {
                (numbers.len() == 6).then(|| {
                    [
                        numbers[0], numbers[1], numbers[2], numbers[3], numbers[4], numbers[5],
                    ]
                })
            };
            match op.operator.as_str() {
                "q" => saved.push(state.clone()),
                "Q" => {
                    if let Some(previous) = saved.pop() {
                        state = previous;
                    }
                }
                "cm" => {
                    if let Some(m) = matrix() {
                        state.ctm = multiply(&m, &state.ctm);
                    }
                }
                "BT" => {
                    state.tm = IDENTITY;
                    state.tlm = IDENTITY;
                }
                "Tf" => {
                    if let Some(Ok(name)) = op.operands.first().map(Object::as_name) {
                        state.font = name.to_vec();
                    }
                }
                "TL" => {
                    if let Some(&leading) = numbers.first() {
                        state.leading = leading;
                    }
                }
                "Td" | "TD" => {
                    if let [tx, ty] = numbers[..] {
                        if op.operator == "TD" {
                            state.leading = -ty;
                        }
                        state.tlm = multiply(&[1.0, 0.0, 0.0, 1.0, tx, ty], &state.tlm);
                        state.tm = state.tlm;
                    }
                }
                "Tm" => {
                    if let Some(m) = matrix() {
                        state.tlm = m;
                        state.tm = m;
                    }
                }
                "T*" => next_line(&mut state),
                "Tj" => self.show(&state, encodings, &op.operands),
                "'" => {
                    next_line(&mut state);
                    self.show(&state, encodings, &op.operands);
                }
                "\"" => {
                    next_line(&mut state);
                    self.show(&state, encodings, op.operands.get(2..).unwrap_or_default());
                }
                "TJ" => {
                    if let Some(Ok(items)) = op.operands.first().map(Object::as_array) {
                        self.show(&state, encodings, items);
                    }
                }
                "Do" if depth < MAX_FORM_DEPTH => {
                    if let Some(Ok(name)) = op.operands.first().map(Object::as_name) {
                        self.form(name, resources, &state, depth)?;
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// A form XObject: its content with its own resources (or the caller's) and matrix.
    fn form(
        &mut self,
        name: &[u8],
        resources: Option<&'d Dictionary>,
        state: &State,
        depth: usize,
    ) -> Result<(), Stop> {
        let doc = self.doc;
        let Some(xobjects) = resources
            .and_then(|r| r.get(b"XObject").ok())
            .and_then(|x| deref_dict(doc, x))
        else {
            return Ok(());
        };
        let Ok(Object::Reference(id)) = xobjects.get(name) else {
            return Ok(());
        };
        let Ok(stream) = doc.get_object(*id).and_then(Object::as_stream) else {
            return Ok(());
        };
        if stream.dict.get(b"Subtype").and_then(Object::as_name).ok() != Some(b"Form".as_slice()) {
            return Ok(());
        }
        let matrix = stream
            .dict
            .get(b"Matrix")
            .and_then(Object::as_array)
            .ok()
            .and_then(|a| {
                let n: Vec<f64> = a
                    .iter()
                    .filter_map(|o| o.as_float().ok().map(f64::from))
                    .collect();
                (n.len() == 6).then(|| [n[0], n[1], n[2], n[3], n[4], n[5]])
            })
            .unwrap_or(IDENTITY);
        let own = stream
            .dict
            .get(b"Resources")
            .ok()
            .and_then(|r| deref_dict(doc, r));
        let form_resources = own.or(resources);
        let fonts: BTreeMap<Vec<u8>, &Dictionary> = form_resources
            .and_then(|r| r.get(b"Font").ok())
            .and_then(|f| deref_dict(doc, f))
            .map(|fonts| {
                fonts
                    .iter()
                    .filter_map(|(name, font)| deref_dict(doc, font).map(|d| (name.clone(), d)))
                    .collect()
            })
            .unwrap_or_default();
        let encodings = encodings(doc, fonts);
        let data = stream.content.clone();
        self.run(
            &data,
            &encodings,
            form_resources,
            multiply(&matrix, &state.ctm),
            depth + 1,
        )
    }

    /// Shows strings (and, in a `TJ` array, spacing numbers) at the current position.
    fn show(
        &mut self,
        state: &State,
        encodings: &BTreeMap<Vec<u8>, Encoding<'d>>,
        items: &[Object],
    ) {
        let Some(encoding) = encodings.get(&state.font) else {
            return;
        };
        let mut piece = String::new();
        for item in items {
            match item {
                Object::String(bytes, _) => {
                    if let Ok(text) = Document::decode_text(encoding, bytes) {
                        piece.push_str(&text);
                    }
                }
                // A gap wider than a tenth of an em is a space.
                Object::Integer(_) | Object::Real(_)
                    if item.as_float().is_ok_and(|n| n < -100.0)
                        && !piece.is_empty()
                        && !piece.ends_with(' ') =>
                {
                    piece.push(' ');
                }
                _ => {}
            }
        }
        if piece.is_empty() {
            return;
        }
        let y = multiply(&state.tm, &state.ctm)[5];
        // pdf-parse: `if (lastY == y || !lastY) text += str; else text += "\n" + str`.
        match self.last_y {
            Some(last) if last != y && last != 0.0 => {
                self.text.push('\n');
            }
            _ => {}
        }
        self.text.push_str(&piece);
        self.last_y = Some(y);
    }
}

/// `T*`: to the start of the next line.
fn next_line(state: &mut State) {
    state.tlm = multiply(&[1.0, 0.0, 0.0, 1.0, 0.0, -state.leading], &state.tlm);
    state.tm = state.tlm;
}
