//! Streams decoded under the budget: compressed streams expand only as far as the budget
//! allows, cross-reference streams are measured before lopdf reads them, and image data is
//! dropped unread.

use std::borrow::Cow;

use lopdf::{Document, Object, Stream};

use super::super::budget::{Budget, Limits, Stop};

/// Cross-reference streams may expand to this much (5 bytes per object: millions of objects).
const MAX_XREF_BYTES: u64 = 64 << 20;

pub(super) fn is_image(stream: &Stream) -> bool {
    stream
        .dict
        .get(b"Subtype")
        .and_then(Object::as_name)
        .is_ok_and(|name| name == b"Image")
}

/// Decodes every stream lopdf may decompress later, under the budget; those it could not
/// decode anyway stay as they are.
pub(super) fn decode_streams(doc: &mut Document, budget: &Budget) -> Result<(), Stop> {
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
pub(super) fn decode_in_place(stream: &mut Stream, budget: &Budget) -> Result<(), Stop> {
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
pub(super) fn check_xref_streams(bytes: &[u8], budget: &Budget) -> Result<(), Stop> {
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
        let xref_budget = Budget::new(Limits {
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
