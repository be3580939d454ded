//! Turning a file into text (or an image) for the model.

use std::path::Path;

use base64::Engine;
use tool_api::workspace::{FsError, OpenedFile};

use crate::documents;
use crate::limits::{MAX_FILE_BYTES, MAX_IMAGE_SIDE};

/// What a file yields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Extracted {
    /// Text, whole (one read shows a range of it, see [`crate::format_numbered`]).
    Text(String),
    /// An image, base64.
    Image {
        /// MIME type.
        media_type: String,
        /// Base64 data.
        data: String,
    },
}

/// Reads an opened file for the model (`path` gives its extension); `cancelled` is polled while
/// a document's text is extracted. The error is the message after "Error reading file: ".
///
/// The size is checked before anything is read, images and documents included: a file larger
/// than [`MAX_FILE_BYTES`] is refused (Cline reads any image or document whole). PDF, DOCX and
/// XLSX text comes from [`crate::documents`], within its limits.
pub fn extract(
    file: &mut OpenedFile,
    path: &Path,
    supports_images: bool,
    cancelled: &dyn Fn() -> bool,
) -> Result<Extracted, String> {
    let extension = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if let Some(media_type) = image_media_type(&extension) {
        return read_image(file, media_type, supports_images);
    }
    if let Some(kind) = documents::Kind::from_extension(&extension) {
        let bytes = read_capped(file)?;
        let text = documents::extract(kind, bytes, documents::Limits::default(), cancelled)?;
        return Ok(Extracted::Text(text));
    }
    let bytes = read_capped(file)?;
    let text = decode(&bytes, &extension)?;
    let text = if extension == "ipynb" {
        tool_api::sdk::files::strip_notebook_outputs(&text)
    } else {
        text
    };
    Ok(Extracted::Text(text))
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

#[cfg(test)]
mod tests {
    use super::*;

    // The 400 KiB cap moved to the read of a range (`format`): a whole file's text is no
    // longer cut here; `format`'s tests check the cap and its notice.

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
