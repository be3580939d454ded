//! DOCX and XLSX extraction tests (PDF in `tests.rs`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Cursor, Write};

use super::tests::{never, text};
use super::*;

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
