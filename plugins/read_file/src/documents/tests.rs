//! Documents made in the test (lopdf writes the PDFs, a ZIP writer the DOCX and XLSX files),
//! read back through [`extract`] and compared with the exact text.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Cursor, Write};
use std::time::Duration;

use lopdf::content::{Content, Operation};
use lopdf::{dictionary, Document, Object, Stream, StringFormat};

use super::*;

fn never() -> bool {
    false
}

fn text(kind: Kind, bytes: Vec<u8>) -> Result<String, String> {
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

/// A ZIP container of `(name, content)` entries, deflated.
pub fn zip(entries: &[(&str, &str)]) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, content) in entries {
        writer.start_file(*name, options).unwrap();
        writer.write_all(content.as_bytes()).unwrap();
    }
    writer.finish().unwrap().into_inner()
}

const W: &str = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";

/// A DOCX file whose body is `body`.
pub fn docx(body: &str) -> Vec<u8> {
    let document = format!(
        r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="{W}"><w:body>{body}<w:sectPr/></w:body></w:document>"#
    );
    zip(&[
        (
            "[Content_Types].xml",
            r#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/main.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>"#,
        ),
        (
            "_rels/.rels",
            r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/main.xml"/></Relationships>"#,
        ),
        ("word/main.xml", &document),
    ])
}

#[test]
fn docx_raw_text_is_mammoths() {
    let body = r#"<w:p><w:r><w:t>Title</w:t></w:r></w:p><w:p><w:r><w:t xml:space="preserve">Hello </w:t></w:r><w:hyperlink w:anchor="x"><w:r><w:t>link</w:t></w:r></w:hyperlink><w:r><w:tab/><w:t>tabbed</w:t></w:r></w:p><w:tbl><w:tr><w:tc><w:p><w:r><w:t>A1</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>B1</w:t></w:r></w:p></w:tc></w:tr></w:tbl>"#;
    assert_eq!(
        text(Kind::Docx, docx(body)).unwrap(),
        "Title\n\nHello link\ttabbed\n\nA1\n\nB1\n\n"
    );
}

#[test]
fn a_docx_entry_larger_than_its_header_or_the_budget_is_refused() {
    let body = format!("<w:p><w:r><w:t>{}</w:t></w:r></w:p>", "a".repeat(3 << 20));
    let limits = Limits {
        max_expanded_bytes: 1 << 20,
        ..Limits::default()
    };
    assert_eq!(
        extract(Kind::Docx, docx(&body), limits, &never),
        Err("Failed to extract text from DOCX: its compressed content expands to more than 1 MB, too much to read into context".to_string())
    );
    assert!(text(Kind::Docx, b"PK not a zip".to_vec())
        .unwrap_err()
        .starts_with("Failed to extract text from DOCX: not a valid ZIP container"));
}

/// An XLSX workbook with these `(name, state, sheet XML body)` sheets; shared strings `s0…`.
pub fn xlsx(sheets: &[(&str, &str, &str)], shared: &[&str], date1904: bool) -> Vec<u8> {
    let mut workbook_sheets = String::new();
    let mut rels = String::new();
    let mut files: Vec<(String, String)> = Vec::new();
    for (i, (name, state, data)) in sheets.iter().enumerate() {
        let n = i + 1;
        let state = if state.is_empty() {
            String::new()
        } else {
            format!(r#" state="{state}""#)
        };
        workbook_sheets.push_str(&format!(
            r#"<sheet name="{name}" sheetId="{n}"{state} r:id="rId{n}"/>"#
        ));
        rels.push_str(&format!(
            r#"<Relationship Id="rId{n}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet{n}.xml"/>"#
        ));
        files.push((
            format!("xl/worksheets/sheet{n}.xml"),
            format!(
                r#"<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">{data}</worksheet>"#
            ),
        ));
    }
    let pr = if date1904 {
        r#"<workbookPr date1904="1"/>"#
    } else {
        "<workbookPr/>"
    };
    files.push((
        "xl/workbook.xml".to_string(),
        format!(
            r#"<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">{pr}<sheets>{workbook_sheets}</sheets></workbook>"#
        ),
    ));
    files.push((
        "xl/_rels/workbook.xml.rels".to_string(),
        format!(
            r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">{rels}<Relationship Id="rIdS" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/><Relationship Id="rIdT" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/></Relationships>"#
        ),
    ));
    let strings: String = shared.iter().map(|s| format!("<si>{s}</si>")).collect();
    files.push((
        "xl/sharedStrings.xml".to_string(),
        format!(
            r#"<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="{0}" uniqueCount="{0}">{strings}</sst>"#,
            shared.len()
        ),
    ));
    // Style 0: general; style 1: the built-in date format 14.
    files.push((
        "xl/styles.xml".to_string(),
        r#"<?xml version="1.0" encoding="UTF-8"?><styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><cellXfs count="2"><xf numFmtId="0"/><xf numFmtId="14" applyNumberFormat="1"/></cellXfs></styleSheet>"#.to_string(),
    ));
    files.push((
        "_rels/.rels".to_string(),
        r#"<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>"#.to_string(),
    ));
    files.push((
        "[Content_Types].xml".to_string(),
        r#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/></Types>"#.to_string(),
    ));
    let entries: Vec<(&str, &str)> = files
        .iter()
        .map(|(n, c)| (n.as_str(), c.as_str()))
        .collect();
    zip(&entries)
}

#[test]
fn xlsx_sheets_rows_and_cells_are_clines() {
    let first = concat!(
        "<sheetData>",
        r#"<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c><c r="C1" t="s"><v>2</v></c></row>"#,
        r#"<row r="2"><c r="A2" t="s"><v>3</v></c><c r="B2"><v>1.5</v></c><c r="C2" s="1"><v>45306</v></c></row>"#,
        // An empty row, a whitespace-only row, then a row starting in column B.
        r#"<row r="3"></row><row r="4"><c r="A4" t="inlineStr"><is><t>  </t></is></c></row>"#,
        r#"<row r="5"><c r="B5" t="b"><v>1</v></c><c r="D5" t="e"><v>#DIV/0!</v></c></row>"#,
        // A formula with its cached value, and one without.
        r#"<row r="6"><c r="A6"><f>B2*2</f><v>3</v></c><c r="B6"><f>SUM(B2:B5)</f></c></row>"#,
        r#"<row r="7"><c r="A7" t="s"><v>4</v></c></row>"#,
        "</sheetData>",
        r#"<mergeCells count="1"><mergeCell ref="A7:C8"/></mergeCells>"#,
    );
    let second = r#"<sheetData><row r="1"><c r="A1"><v>1e21</v></c><c r="B1"><v>0.30000000000000004</v></c></row></sheetData>"#;
    let hidden = r#"<sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>secret</t></is></c></row></sheetData>"#;
    let bytes = xlsx(
        &[
            ("Data", "", first),
            ("Hidden", "hidden", hidden),
            ("Numbers", "", second),
        ],
        &[
            "<t>Name</t>",
            "<t>Price</t>",
            "<t>Date</t>",
            "<r><t>Wid</t></r><r><rPr><b/></rPr><t>get</t></r>",
            "<t>merged</t>",
        ],
        false,
    );
    assert_eq!(
        text(Kind::Xlsx, bytes).unwrap(),
        "--- Sheet: Data ---\nName\tPrice\tDate\nWidget\t1.5\t2024-01-15\n\ttrue\t\t[Error: #DIV/0!]\n3\t[Formula: SUM(B2:B5)]\nmerged\tmerged\tmerged\nmerged\tmerged\tmerged\n\n--- Sheet: Numbers ---\n1e+21\t0.30000000000000004"
    );
}

#[test]
fn xlsx_rows_past_50000_end_the_sheet_with_the_notice() {
    let mut rows = String::from("<sheetData>");
    for r in [1, 2, 50_000, 50_001, 50_002] {
        rows.push_str(&format!(r#"<row r="{r}"><c r="A{r}"><v>{r}</v></c></row>"#));
    }
    rows.push_str("</sheetData>");
    let bytes = xlsx(
        &[
            ("Big", "", rows.as_str()),
            (
                "Next",
                "",
                r#"<sheetData><row r="1"><c r="A1"><v>7</v></c></row></sheetData>"#,
            ),
        ],
        &[],
        true,
    );
    assert_eq!(
        text(Kind::Xlsx, bytes).unwrap(),
        "--- Sheet: Big ---\n1\n2\n50000\n[... truncated at row 50001 ...]\n\n--- Sheet: Next ---\n7"
    );
}

#[test]
fn xlsx_dates_honour_the_1904_system_and_far_apart_cells_cost_nothing() {
    // A1 and XFD1048576: a dense grid would hold 17 billion cells.
    let data = r#"<sheetData><row r="1"><c r="A1" s="1"><v>43844</v></c></row><row r="1048576"><c r="XFD1048576"><v>2</v></c></row></sheetData>"#;
    let bytes = xlsx(&[("S", "", data)], &[], true);
    assert_eq!(
        text(Kind::Xlsx, bytes).unwrap(),
        "--- Sheet: S ---\n2024-01-15\n[... truncated at row 1048576 ...]"
    );
}

#[test]
fn an_invalid_workbook_is_clines_excel_error() {
    let error = text(Kind::Xlsx, zip(&[("a.txt", "x")])).unwrap_err();
    assert!(
        error.starts_with("Failed to extract text from Excel: "),
        "{error}"
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
