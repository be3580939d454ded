//! Turning a file into text (or an image) for the model.

use std::path::Path;

use base64::Engine;
use tool_api::workspace::{FsError, OpenedFile};

/// Files larger than this are refused (Cline's 20 × 1000 × 1024 bytes).
pub const MAX_FILE_BYTES: u64 = 20 * 1000 * 1024;

/// Text beyond this many UTF-16 code units (JavaScript string length) is cut.
pub const MAX_TEXT_UNITS: usize = 400 * 1024;

/// Images wider or taller than this are refused.
pub const MAX_IMAGE_SIDE: usize = 7500;

/// What a file yields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Extracted {
    /// Text (possibly with the size-cap notice appended).
    Text(String),
    /// An image, base64.
    Image {
        /// MIME type.
        media_type: String,
        /// Base64 data.
        data: String,
    },
}

/// Reads an opened file for the model (`path` gives its extension). The error is the message
/// after "Error reading file: ".
///
/// The size is checked before anything is read, images included: an image larger than
/// [`MAX_FILE_BYTES`] is refused too (Cline reads any image whole).
pub fn extract(
    file: &mut OpenedFile,
    path: &Path,
    supports_images: bool,
) -> Result<Extracted, String> {
    let extension = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if let Some(media_type) = image_media_type(&extension) {
        return read_image(file, media_type, supports_images);
    }
    match extension.as_str() {
        "pdf" | "docx" | "xlsx" => {
            return Err(format!("Cannot read text for file type: .{extension}"));
        }
        _ => {}
    }
    let bytes = read_capped(file)?;
    let text = decode(&bytes, &extension)?;
    let text = if extension == "ipynb" {
        tool_api::sdk::files::strip_notebook_outputs(&text)
    } else {
        text
    };
    Ok(Extracted::Text(cap_text(text)))
}

/// The file's bytes, at most [`MAX_FILE_BYTES`].
fn read_capped(file: &mut OpenedFile) -> Result<Vec<u8>, String> {
    match file.read_all(MAX_FILE_BYTES) {
        Ok(bytes) => Ok(bytes),
        Err(FsError::TooLarge { .. }) => Err("File is too large to read into context.".to_string()),
        Err(e) => Err(e.to_string()),
    }
}

fn image_media_type(extension: &str) -> Option<&'static str> {
    match extension {
        "png" => Some("image/png"),
        "jpg" | "jpeg" => Some("image/jpeg"),
        "webp" => Some("image/webp"),
        _ => None,
    }
}

fn read_image(
    file: &mut OpenedFile,
    media_type: &str,
    supports_images: bool,
) -> Result<Extracted, String> {
    if !supports_images {
        return Err("Current model does not support image input".to_string());
    }
    let bytes = read_capped(file)?;
    let size = imagesize::blob_size(&bytes).map_err(|_| {
        "Could not determine image dimensions, so image could not be read".to_string()
    })?;
    if size.width > MAX_IMAGE_SIDE || size.height > MAX_IMAGE_SIDE {
        return Err(format!(
            "Image dimensions exceed {MAX_IMAGE_SIDE}px limit ({}x{}), so image could not be read",
            size.width, size.height
        ));
    }
    Ok(Extracted::Image {
        media_type: media_type.to_string(),
        data: base64::engine::general_purpose::STANDARD.encode(bytes),
    })
}

/// Decodes bytes: UTF-8 (a BOM is dropped), else the encoding a detector guesses. A file with an
/// extension whose bytes look binary is refused.
fn decode(bytes: &[u8], extension: &str) -> Result<String, String> {
    let looks_binary = content_inspector::inspect(bytes).is_binary();
    if looks_binary && !extension.is_empty() {
        return Err(format!("Cannot read text for file type: .{extension}"));
    }
    let without_bom = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if let Ok(text) = std::str::from_utf8(without_bom) {
        return Ok(text.to_string());
    }
    let mut detector = chardetng::EncodingDetector::new();
    detector.feed(bytes, true);
    let encoding = detector.guess(None, true);
    let (text, _, _) = encoding.decode(bytes);
    Ok(text.into_owned())
}

/// Cuts text longer than [`MAX_TEXT_UNITS`] UTF-16 code units and appends the notice.
fn cap_text(text: String) -> String {
    tool_api::texts::truncate_with_notice(text, MAX_TEXT_UNITS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_is_capped_with_a_notice() {
        let text = "x".repeat(MAX_TEXT_UNITS + 2048);
        let capped = cap_text(text);
        assert!(capped.starts_with(&"x".repeat(MAX_TEXT_UNITS)));
        assert!(capped.ends_with("targeted reading.]"));
        assert!(capped.contains(
            "This content is 402.0 KB but only the first 400.0 KB is shown (2.0 KB truncated)"
        ));
    }

    #[test]
    fn notebooks_lose_their_outputs() {
        let nb = r#"{"cells":[{"cell_type":"code","source":["1+1"],"outputs":[{"data":"2"}]}]}"#;
        let stripped = tool_api::sdk::files::strip_notebook_outputs(nb);
        assert!(stripped.contains("\"outputs\": []"), "{stripped}");
        assert!(!stripped.contains("\"data\""));
    }

    #[test]
    fn latin1_text_is_decoded() {
        let decoded = decode(b"caf\xe9 au lait, tr\xe8s bien", "txt");
        assert_eq!(decoded.as_deref(), Ok("café au lait, très bien"));
    }
}
