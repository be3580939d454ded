//! Documents made in the test (lopdf writes the PDFs, a ZIP writer the DOCX and XLSX files),
//! read back through [`extract`] and compared with the exact text.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::time::Duration;

use lopdf::content::{Content, Operation};
use lopdf::{dictionary, Document, Object, Stream, StringFormat};

use super::*;

pub(super) fn never() -> bool {
    false
}

pub(super) fn text(kind: Kind, bytes: Vec<u8>) -> Result<String, String> {
    extract(kind, bytes, Limits::default(), &never)
}

/// A PDF whose pages draw these operations with Helvetica (WinAnsi) as `/F1`; content streams
/// are Flate-compressed when `compress` is set.
pub fn pdf(pages: &[Vec<Operation>], compress: bool) -> Vec<u8> {
    let mut doc = Document::with_version("1.5");
    let pages_id = doc.new_object_id();
    let font_id = doc.add_object(dictionary! {
        "Type" => "Font",
        "Subtype" => "Type1",
        "BaseFont" => "Helvetica",
        "Encoding" => "WinAnsiEncoding",
    });
    let resources_id = doc.add_object(dictionary! {
        "Font" => dictionary! { "F1" => font_id },
    });
    let mut kids = Vec::new();
    for operations in pages {
        let content = Content {
            operations: operations.clone(),
        };
        let mut stream = Stream::new(dictionary! {}, content.encode().unwrap());
        if compress {
            stream.compress().unwrap();
        }
        let content_id = doc.add_object(stream);
        let page_id = doc.add_object(dictionary! {
            "Type" => "Page",
            "Parent" => pages_id,
            "Contents" => content_id,
            "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
        });
        kids.push(Object::Reference(page_id));
    }
    let count = i64::try_from(kids.len()).unwrap();
    doc.objects.insert(
        pages_id,
        Object::Dictionary(dictionary! {
            "Type" => "Pages",
            "Kids" => kids,
            "Count" => count,
            "Resources" => resources_id,
        }),
    );
    let catalog_id = doc.add_object(dictionary! {
        "Type" => "Catalog",
        "Pages" => pages_id,
    });
    doc.trailer.set("Root", catalog_id);
    let mut bytes = Vec::new();
    doc.save_to(&mut bytes).unwrap();
    bytes
}

fn op(operator: &str, operands: Vec<Object>) -> Operation {
    Operation::new(operator, operands)
}

fn string(text: &str) -> Object {
    Object::String(text.as_bytes().to_vec(), StringFormat::Literal)
}

/// `BT /F1 12 Tf x y Td (line) Tj … ET`, one `Td` line per text, 14 points apart.
fn lines(texts: &[&str]) -> Vec<Operation> {
    let mut ops = vec![
        op("BT", vec![]),
        op("Tf", vec!["F1".into(), 12.into()]),
        op("Td", vec![72.into(), 800.into()]),
    ];
    for (i, text) in texts.iter().enumerate() {
        if i > 0 {
            ops.push(op("Td", vec![0.into(), (-14).into()]));
        }
        ops.push(op("Tj", vec![string(text)]));
    }
    ops.push(op("ET", vec![]));
    ops
}

#[test]
fn pdf_pages_come_after_a_blank_line_each_and_lines_follow_the_baseline() {
    let page_one = lines(&["Hello, PDF!", "Second line"]);
    let mut page_two = lines(&["Page two"]);
    // Same baseline: joined; a TJ gap wider than a tenth of an em is a space, kerning is not.
    page_two.splice(
        page_two.len() - 1..page_two.len() - 1,
        [
            op("Tj", vec![string(" and more")]),
            op(
                "TJ",
                vec![Object::Array(vec![
                    string("; ke"),
                    Object::Integer(-20),
                    string("rned"),
                    Object::Integer(-250),
                    string("spaced"),
                ])],
            ),
            op("T*", vec![]),
        ],
    );
    for compress in [false, true] {
        let bytes = pdf(&[page_one.clone(), page_two.clone()], compress);
        assert_eq!(
            text(Kind::Pdf, bytes).unwrap(),
            "\n\nHello, PDF!\nSecond line\n\nPage two and more; kerned spaced",
            "compressed: {compress}"
        );
    }
}

#[test]
fn pdf_text_matrices_and_quote_operators_start_lines() {
    let ops = vec![
        op("BT", vec![]),
        op("Tf", vec!["F1".into(), 10.into()]),
        op("TL", vec![12.into()]),
        op(
            "Tm",
            vec![
                1.into(),
                0.into(),
                0.into(),
                1.into(),
                50.into(),
                700.into(),
            ],
        ),
        op("Tj", vec![string("caf\u{e9}")]),
        op("'", vec![string("next")]),
        op(
            "Tm",
            vec![
                1.into(),
                0.into(),
                0.into(),
                1.into(),
                300.into(),
                688.into(),
            ],
        ),
        op("Tj", vec![string(" same line")]),
        op("ET", vec![]),
    ];
    // WinAnsi: the byte E9 is é.
    let mut ops = ops;
    ops[4] = op(
        "Tj",
        vec![Object::String(b"caf\xe9".to_vec(), StringFormat::Literal)],
    );
    assert_eq!(
        text(Kind::Pdf, pdf(&[ops], true)).unwrap(),
        "\n\ncafé\nnext same line"
    );
}

#[test]
fn a_pdf_that_inflates_beyond_the_budget_is_refused() {
    // 4 MB of spaces inside a text string compress to a few kilobytes.
    let big = " ".repeat(4 << 20);
    let bytes = pdf(&[lines(&[big.as_str()])], true);
    assert!(bytes.len() < 64 << 10, "{}", bytes.len());
    let limits = Limits {
        max_expanded_bytes: 1 << 20,
        ..Limits::default()
    };
    assert_eq!(
        extract(Kind::Pdf, bytes, limits, &never),
        Err("Failed to extract text from PDF: its compressed content expands to more than 1 MB, too much to read into context".to_string())
    );
}

#[test]
fn a_cross_reference_stream_bomb_is_measured_before_it_is_parsed() {
    let mut zeros = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    zeros
        .write_all(&vec![0u8; (MAX_XREF_BYTES_FOR_TEST as usize) + 1])
        .unwrap();
    let data = zeros.finish().unwrap();
    let mut bytes =
        b"%PDF-1.5\n1 0 obj\n<< /Type /XRef /Size 1 /W [1 2 1] /Filter /FlateDecode >>\nstream\n"
            .to_vec();
    bytes.extend_from_slice(&data);
    bytes.extend_from_slice(b"\nendstream\nendobj\nstartxref\n9\n%%EOF\n");
    let error = text(Kind::Pdf, bytes).unwrap_err();
    assert!(error.contains("expands to more than 256 MB"), "{error}");
}

/// The cross-reference limit of [`pdf`] (64 MiB).
const MAX_XREF_BYTES_FOR_TEST: u64 = 64 << 20;

#[test]
fn malformed_pdfs_are_an_error() {
    assert_eq!(
        text(Kind::Pdf, b"%PDF-1.4\nnot really".to_vec())
            .map_err(|e| e.starts_with("Failed to extract text from PDF: not a readable PDF")),
        Err(true)
    );
}

#[test]
fn the_time_budget_stops_an_extraction() {
    let limits = Limits {
        time: Duration::ZERO,
        ..Limits::default()
    };
    let bytes = pdf(&[lines(&["slow"])], true);
    assert_eq!(
        extract(Kind::Pdf, bytes, limits, &never),
        Err(
            "Failed to extract text from PDF: extracting its text took longer than 0 seconds and was stopped"
                .to_string()
        )
    );
    let cancelled = || true;
    let slow = Limits {
        time: Duration::from_secs(30),
        ..Limits::default()
    };
    // A cancelled call stops waiting (the worker may finish first, then its text is returned).
    let result = extract(Kind::Pdf, pdf(&[lines(&["x"])], false), slow, &cancelled);
    assert!(
        result == Ok("\n\nx".to_string())
            || result == Err("Failed to extract text from PDF: the read was cancelled".to_string()),
        "{result:?}"
    );
}

/// A PDF with a classic cross-reference table whose objects are `bodies` (numbered from 1).
fn pdf_from_objects(bodies: &[Vec<u8>]) -> Vec<u8> {
    let mut bytes = b"%PDF-1.5\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in bodies.iter().enumerate() {
        offsets.push(bytes.len());
        bytes.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        bytes.extend_from_slice(body);
        bytes.extend_from_slice(b"\nendobj\n");
    }
    let xref = bytes.len();
    bytes.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", bodies.len() + 1).as_bytes(),
    );
    for offset in offsets {
        bytes.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    bytes.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            bodies.len() + 1
        )
        .as_bytes(),
    );
    bytes
}

#[test]
fn an_object_stream_bomb_is_measured_before_it_is_unpacked() {
    let mut zeros = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    zeros.write_all(&vec![b' '; 8 << 20]).unwrap();
    let data = zeros.finish().unwrap();
    let mut object_stream = format!(
        "<< /Type /ObjStm /N 1 /First 4 /Filter /FlateDecode /Length {} >>\nstream\n",
        data.len()
    )
    .into_bytes();
    object_stream.extend_from_slice(&data);
    object_stream.extend_from_slice(b"\nendstream");
    let bytes = pdf_from_objects(&[
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [] /Count 0 >>".to_vec(),
        object_stream,
    ]);
    let limits = Limits {
        max_expanded_bytes: 1 << 20,
        ..Limits::default()
    };
    assert_eq!(
        extract(Kind::Pdf, bytes.clone(), limits, &never),
        Err("Failed to extract text from PDF: its compressed content expands to more than 1 MB, too much to read into context".to_string())
    );
    // Within the default budget the same file opens (it has no pages, so no text).
    assert_eq!(text(Kind::Pdf, bytes), Ok(String::new()));
}
