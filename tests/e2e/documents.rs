//! read_file's document text (PDF, DOCX, XLSX) through `call`, `serve` and `mcp`: real files
//! written here (ZIP containers, a PDF with its cross-reference table), read by the real
//! plugin.

use std::io::{Cursor, Write};
use std::path::Path;

use serde_json::json;
use toolhost_tests::session::{Frontend, Session};
use toolhost_tests::{call_json, toolhost, workdir, PluginDir};

/// A ZIP container of `(name, content)` entries, deflated.
fn zip(entries: &[(&str, String)]) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, content) in entries {
        writer.start_file(*name, options).unwrap();
        writer.write_all(content.as_bytes()).unwrap();
    }
    writer.finish().unwrap().into_inner()
}

const RELS: &str = "http://schemas.openxmlformats.org/package/2006/relationships";
const DOC_REL: &str =
    "http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument";

fn content_types() -> String {
    r#"<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/></Types>"#.to_string()
}

fn docx() -> Vec<u8> {
    let w = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";
    zip(&[
        ("[Content_Types].xml", content_types()),
        (
            "_rels/.rels",
            format!(
                r#"<Relationships xmlns="{RELS}"><Relationship Id="rId1" Type="{DOC_REL}" Target="word/document.xml"/></Relationships>"#
            ),
        ),
        (
            "word/document.xml",
            format!(
                r#"<w:document xmlns:w="{w}"><w:body><w:p><w:r><w:t>Quarterly report</w:t></w:r></w:p><w:p><w:r><w:t>Sales grew.</w:t></w:r></w:p></w:body></w:document>"#
            ),
        ),
    ])
}

fn xlsx() -> Vec<u8> {
    let main = "http://schemas.openxmlformats.org/spreadsheetml/2006/main";
    let r = "http://schemas.openxmlformats.org/officeDocument/2006/relationships";
    zip(&[
        ("[Content_Types].xml", content_types()),
        (
            "_rels/.rels",
            format!(
                r#"<Relationships xmlns="{RELS}"><Relationship Id="rId1" Type="{DOC_REL}" Target="xl/workbook.xml"/></Relationships>"#
            ),
        ),
        (
            "xl/workbook.xml",
            format!(
                r#"<workbook xmlns="{main}" xmlns:r="{r}"><sheets><sheet name="Prices" sheetId="1" r:id="rId1"/></sheets></workbook>"#
            ),
        ),
        (
            "xl/_rels/workbook.xml.rels",
            format!(
                r#"<Relationships xmlns="{RELS}"><Relationship Id="rId1" Type="{r}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>"#
            ),
        ),
        (
            "xl/worksheets/sheet1.xml",
            format!(
                r#"<worksheet xmlns="{main}"><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>Item</t></is></c><c r="B1" t="inlineStr"><is><t>Price</t></is></c></row><row r="2"><c r="A2" t="inlineStr"><is><t>Tea</t></is></c><c r="B2"><v>2.5</v></c></row></sheetData></worksheet>"#
            ),
        ),
    ])
}

/// A one-page PDF showing two lines of text, with a correct cross-reference table.
fn pdf() -> Vec<u8> {
    let stream = "BT /F1 12 Tf 72 720 Td (Hello from a PDF) Tj 0 -20 Td (Second line) Tj ET";
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_string(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>".to_string(),
        format!("<< /Length {} >>\nstream\n{stream}\nendstream", stream.len()),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_string(),
    ];
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n{body}\nendobj\n", i + 1).as_bytes());
    }
    let xref = out.len();
    out.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for offset in offsets {
        out.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

fn write_documents(ws: &Path) {
    std::fs::write(ws.join("report.docx"), docx()).unwrap();
    std::fs::write(ws.join("prices.xlsx"), xlsx()).unwrap();
    std::fs::write(ws.join("letter.pdf"), pdf()).unwrap();
}

/// What read_file answers for each document.
fn expected() -> [(&'static str, &'static str); 3] {
    [
        (
            "report.docx",
            "1 | Quarterly report\n2 | \n3 | Sales grew.\n4 | \n\n(File has 4 lines total.)",
        ),
        (
            "prices.xlsx",
            "1 | --- Sheet: Prices ---\n2 | Item\tPrice\n3 | Tea\t2.5\n\n(File has 3 lines total.)",
        ),
        // pdf-parse's text, as Cline reads it: each page after a blank line.
        (
            "letter.pdf",
            "1 | \n2 | \n3 | Hello from a PDF\n4 | Second line\n\n(File has 4 lines total.)",
        ),
    ]
}

#[test]
fn documents_are_read_as_text_through_call_serve_and_mcp() {
    let plugins = PluginDir::empty();
    plugins.add_library("read_file");
    let ws = workdir();
    write_documents(ws.path());
    for (file, text) in expected() {
        let (run, json) = call_json(
            plugins.path(),
            ws.path(),
            "read_file",
            &json!({"path": file}),
            &[],
        );
        assert_eq!(json["is_error"], false, "{file}: {run:?}");
        assert_eq!(json["text"], text, "call: {file}");
    }
    for frontend in [Frontend::Serve, Frontend::Mcp] {
        let ws = workdir();
        write_documents(ws.path());
        let mut command = toolhost();
        command.arg("--plugins").arg(plugins.path());
        let cwd = ws.path().to_str().unwrap();
        let mut session = Session::start(command, frontend, &["--cwd", cwd]);
        for (file, text) in expected() {
            let (is_error, got) = session.call("read_file", json!({"path": file}));
            assert!(!is_error, "{frontend:?} {file}: {got}");
            assert_eq!(got, text, "{frontend:?}: {file}");
        }
    }
}
