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

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::BTreeMap;

use lopdf::content::Content;
use lopdf::{Dictionary, Document, Encoding, Object, ObjectId, Stream};

use super::{Budget, Output, Stop};

/// Cross-reference streams may expand to this much (5 bytes per object: millions of objects).
const MAX_XREF_BYTES: u64 = 64 << 20;

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

fn is_image(stream: &Stream) -> bool {
    stream
        .dict
        .get(b"Subtype")
        .and_then(Object::as_name)
        .is_ok_and(|name| name == b"Image")
}

/// Decodes every stream lopdf may decompress later, under the budget; those it could not
/// decode anyway stay as they are.
fn decode_streams(doc: &mut Document, budget: &Budget) -> Result<(), Stop> {
    for object in doc.objects.values_mut() {
        if let Object::Stream(stream) = object {
            budget.check()?;
            if is_image(stream) {
                stream.content = Vec::new();
            } else {
                decode_in_place(stream, budget)?;
            }
        }
    }
    Ok(())
}

/// Replaces a stream's content by its decoded bytes when all its filters are ones lopdf would
/// apply (Flate, LZW, ASCII85, ASCIIHex) and there is no predictor to undo; with a predictor the
/// size is only measured (a predictor never adds bytes). The expansion counts against `budget`.
fn decode_in_place(stream: &mut Stream, budget: &Budget) -> Result<(), Stop> {
    let Ok(filters) = stream.filters() else {
        return Ok(());
    };
    if filters.is_empty() {
        return Ok(());
    }
    let params = stream
        .dict
        .get(b"DecodeParms")
        .and_then(Object::as_dict)
        .ok();
    let early_change = params
        .and_then(|p| p.get(b"EarlyChange").ok())
        .and_then(|p| p.as_i64().ok())
        .is_none_or(|v| v != 0);
    let predictor = params
        .and_then(|p| p.get(b"Predictor").ok())
        .and_then(|p| p.as_i64().ok())
        .is_some_and(|p| p > 1);
    let Some(decoded) = decode_chain(&stream.content, &filters, early_change, budget)? else {
        return Ok(());
    };
    if !predictor {
        stream.set_plain_content(decoded.into_owned());
    }
    Ok(())
}

/// Applies `filters` in order, each output counted against the budget. `None` when a filter is
/// one lopdf does not decode (it then uses the raw bytes).
fn decode_chain<'a>(
    data: &'a [u8],
    filters: &[String],
    early_change: bool,
    budget: &Budget,
) -> Result<Option<Cow<'a, [u8]>>, Stop> {
    let mut current: Cow<'a, [u8]> = Cow::Borrowed(data);
    for filter in filters {
        let next = match filter.as_str() {
            "FlateDecode" | "Fl" => {
                if current.is_empty() {
                    Vec::new()
                } else {
                    budget.read_expanding(flate2::read::ZlibDecoder::new(&current[..]))?
                }
            }
            "LZWDecode" | "LZW" => lzw(&current, early_change, budget)?,
            "ASCII85Decode" | "A85" => ascii85(&current),
            "ASCIIHexDecode" | "AHx" => ascii_hex(&current),
            _ => return Ok(None),
        };
        current = Cow::Owned(next);
    }
    Ok(Some(current))
}

/// LZW as lopdf decodes it (MSB first, 8-bit symbols), writing at most what the budget allows.
fn lzw(data: &[u8], early_change: bool, budget: &Budget) -> Result<Vec<u8>, Stop> {
    use weezl::{decode::Decoder, BitOrder};
    let mut decoder = if early_change {
        Decoder::with_tiff_size_switch(BitOrder::Msb, 8)
    } else {
        Decoder::new(BitOrder::Msb, 8)
    };
    let mut sink = Bounded {
        data: Vec::new(),
        limit: budget.expansion_left(),
    };
    let _ = decoder.into_stream(&mut sink).decode_all(data);
    budget.expand(u64::try_from(sink.data.len()).unwrap_or(u64::MAX))?;
    Ok(sink.data)
}

/// A writer that refuses to grow past `limit` bytes (it keeps one byte more, to tell).
struct Bounded {
    data: Vec<u8>,
    limit: u64,
}

impl std::io::Write for Bounded {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let room = usize::try_from(self.limit.saturating_add(1))
            .unwrap_or(usize::MAX)
            .saturating_sub(self.data.len());
        if room == 0 {
            return Err(std::io::Error::other("over the expansion limit"));
        }
        let n = buf.len().min(room);
        self.data.extend_from_slice(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// ASCII85 as lopdf decodes it (whitespace skipped, `z` for four zeros, stops at anything else).
fn ascii85(input: &[u8]) -> Vec<u8> {
    let mut output = Vec::with_capacity(input.len());
    let (mut buffer, mut count) = (0u32, 0usize);
    for &ch in input {
        if ch == b'z' && count == 0 {
            output.extend_from_slice(&[0, 0, 0, 0]);
            continue;
        }
        if ch.is_ascii_whitespace() {
            continue;
        }
        if !(b'!'..=b'u').contains(&ch) {
            break;
        }
        buffer = buffer.wrapping_mul(85).wrapping_add(u32::from(ch - b'!'));
        count += 1;
        if count == 5 {
            output.extend_from_slice(&buffer.to_be_bytes());
            (buffer, count) = (0, 0);
        }
    }
    if count > 0 {
        for _ in count..5 {
            buffer = buffer.wrapping_mul(85).wrapping_add(84);
        }
        output.extend_from_slice(&buffer.to_be_bytes()[..count - 1]);
    }
    output
}

/// ASCIIHex: pairs of hex digits, whitespace skipped, `>` ends, a lone digit is followed by 0.
fn ascii_hex(input: &[u8]) -> Vec<u8> {
    let mut output = Vec::with_capacity(input.len() / 2);
    let mut high: Option<u8> = None;
    for &ch in input {
        let digit = match ch {
            b'>' => break,
            b'0'..=b'9' => ch - b'0',
            b'a'..=b'f' => ch - b'a' + 10,
            b'A'..=b'F' => ch - b'A' + 10,
            _ => continue,
        };
        match high.take() {
            Some(h) => output.push(h << 4 | digit),
            None => high = Some(digit),
        }
    }
    if let Some(h) = high {
        output.push(h << 4);
    }
    output
}

/// Measures every cross-reference stream before lopdf decodes it: each `/XRef` dictionary's
/// stream data is decoded here, under [`MAX_XREF_BYTES`], with the filters the dictionary names.
fn check_xref_streams(bytes: &[u8], budget: &Budget) -> Result<(), Stop> {
    let mut from = 0;
    while let Some(found) = find(&bytes[from..], b"/XRef") {
        budget.check()?;
        let at = from + found;
        from = at + 5;
        // `/XRefStm` is a trailer key, not a type.
        if bytes.get(from).is_some_and(|c| c.is_ascii_alphanumeric()) {
            continue;
        }
        let window_end = (from + 65_536).min(bytes.len());
        let Some(stream_at) = find(&bytes[from..window_end], b"stream") else {
            continue;
        };
        let keyword = from + stream_at;
        let start = (at.saturating_sub(4096)..at)
            .rev()
            .find(|&i| bytes[i..].starts_with(b"obj"))
            .unwrap_or(at.saturating_sub(4096));
        let filters = filter_names(&bytes[start..keyword]);
        let mut data_at = keyword + b"stream".len();
        if bytes.get(data_at) == Some(&b'\r') {
            data_at += 1;
        }
        if bytes.get(data_at) == Some(&b'\n') {
            data_at += 1;
        }
        let data = &bytes[data_at.min(bytes.len())..];
        let xref_budget = Budget::new(super::Limits {
            max_expanded_bytes: MAX_XREF_BYTES,
            ..budget.limits()
        });
        match decode_chain(data, &filters, true, &xref_budget) {
            Ok(_) => {}
            Err(Stop::Expands(_)) => return Err(Stop::Expands(budget.limits().max_expanded_bytes)),
            Err(stop) => return Err(stop),
        }
    }
    Ok(())
}

/// The filter names of a dictionary's text: `/Filter /Name` or `/Filter [/A /B]`.
fn filter_names(dict: &[u8]) -> Vec<String> {
    let Some(at) = find(dict, b"/Filter") else {
        return Vec::new();
    };
    let rest = &dict[at + b"/Filter".len()..];
    let rest = rest.trim_ascii_start();
    let names_part = match rest.first() {
        Some(b'[') => {
            let end = rest.iter().position(|&c| c == b']').unwrap_or(rest.len());
            &rest[1..end]
        }
        _ => {
            let end = rest
                .iter()
                .skip(1)
                .position(|c| b"/[]<>() \r\n\t".contains(c))
                .map_or(rest.len(), |p| p + 1);
            &rest[..end]
        }
    };
    names_part
        .split(|&c| c == b'/')
        .map(|name| String::from_utf8_lossy(name.trim_ascii()).into_owned())
        .filter(|name| !name.is_empty())
        .collect()
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
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
