//! The `read_files` tool of Cline's SDK tool set (`cline-sdk`): several files in one call, each
//! whole or as an inclusive one-based line range, answered as an array of operation results in
//! the order asked (`{"query", "result", "success"}`, or `"error"` for a file that could not be
//! read; one file failing does not fail the others).
//!
//! Each path gets the host's verdict: `.clineignore` and magic links refuse it, and each read
//! is approved in the `read` category as read_file's are (a file outside the workspace by the
//! user). Files are read through the workspace capability.
//!
//! Deliberate differences from Cline's SDK executor:
//! - A relative path is the workspace's (Cline's is the process's working directory), and the
//!   policies above apply (Cline's SDK tool checks none).
//! - A file larger than 100 MB is refused before it is read (Cline streams up to that size).

mod request;
mod window;

use base64::Engine as _;
use serde_json::{json, Value};
use tool_api::model::{ContentBlock, PathVerdict};
use tool_api::sdk::operation::OperationResult;
use tool_api::sdk::prelude::*;
use tool_api::workspace::FsError;

pub use request::{requests, Request, INVALID_INPUT};
pub use window::window;

/// The largest text file read (Cline's `MAX_TEXT_STREAM_BYTES`).
const MAX_TEXT_BYTES: u64 = 100_000_000;

/// The largest image read (Cline's `maxFileSizeBytes`).
const MAX_IMAGE_BYTES: u64 = 10_000_000;

const DESCRIPTION: &str = "Read the content of text or image files at the provided absolute paths, or return only an inclusive one-based line range when start_line/end_line are provided on the same file entry as its path. When you already know multiple files you need, read them together in one call, and call this tool in the same response as other independent tool calls. Each read returns at most 2000 lines / ~47k characters; longer files report their total line count, page through them with start_line/end_line on that file's entry. Binary files that are not image and large files are not supported. Returns file contents or error messages for each path. ";

/// The tool's input schema, as Cline's SDK shows it to the model.
fn input_schema() -> Value {
    let bound = |description: &str| {
        json!({
            "description": description,
            "anyOf": [
                {"type": "integer", "exclusiveMinimum": 0, "maximum": 9007199254740991_i64},
                {"type": "null"}
            ]
        })
    };
    json!({
        "type": "object",
        "properties": {
            "files": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "path": {
                            "type": "string",
                            "description": "The absolute path of a text file to read content from"
                        },
                        "start_line": bound("Optional one-based starting line number to read from; use null or omit for the start of the file"),
                        "end_line": bound("Optional one-based ending line number to read through; use null or omit to read to the end of the file or the read cap, whichever comes first")
                    },
                    "required": ["path"],
                    "additionalProperties": false,
                    "description": "A file read request with optional inclusive one-based line bounds. Always include path; start_line/end_line must be on the same object as the path they apply to, never in a separate array element"
                },
                "description": "Array of file read requests; each element is one file and must include path. Omit start_line/end_line or set them to null to read from the start; provide integers on the same object as the path to return only that inclusive one-based line range — never emit a range as its own array element. Reads are capped, so page through long files with start_line/end_line. Prefer this tool over running terminal command to get file content for better performance and reliability."
            }
        },
        "required": ["files"],
        "additionalProperties": false
    })
}

/// The read_files tool.
#[derive(Debug, Default)]
pub struct ReadFiles;

impl Tool for ReadFiles {
    fn specs(&self) -> Vec<ToolSpec> {
        let mut spec = ToolSpec::simple("read_files", DESCRIPTION, &[])
            .read_only()
            .idempotent()
            .title("Read files")
            .checks_own_params();
        spec.input_schema = input_schema();
        vec![spec]
    }

    fn describe(&self, call: &Call) -> String {
        let asked = requests(call.params.as_map()).unwrap_or_default();
        let paths: Vec<String> = asked.iter().map(Request::query).collect();
        format!("[read_files for {}]", paths.join(", "))
    }

    fn execute(&self, call: &Call, ctx: &Ctx<'_>) -> ToolResult {
        let asked = requests(call.params.as_map())
            .map_err(|why| ToolError::new(ToolErrorKind::INVALID_PARAMS, why))?;
        let supports_images = ctx.setting::<bool>("model.supports_images").unwrap_or(true);
        let mut images = Vec::new();
        let results: Vec<OperationResult> = asked
            .iter()
            .map(|request| {
                let query = request.query();
                if let Some(error) = request.range_error() {
                    return OperationResult::failure(query, error);
                }
                match read(request, ctx, supports_images) {
                    Ok(Read::Text(text)) => OperationResult::success(query, text),
                    Ok(Read::Image { media_type, data }) => {
                        images.push(ContentBlock::Image { media_type, data });
                        OperationResult::success(query, json!(["Successfully read image"]))
                    }
                    Err(why) => {
                        OperationResult::failure(query, format!("Error reading file: {why}"))
                    }
                }
            })
            .collect();
        // As Cline's provider layer does: the images go out as image blocks, after the text.
        let mut content = ToolContent::text(OperationResult::to_json(&results));
        content.content.extend(images);
        Ok(content)
    }
}

/// What one read gave.
enum Read {
    /// The numbered lines.
    Text(String),
    /// An image.
    Image {
        /// Its MIME type.
        media_type: String,
        /// Its bytes, base64-encoded.
        data: String,
    },
}

/// The image types, by extension.
fn image_type(path: &str) -> Option<&'static str> {
    let extension = path.rsplit_once('.')?.1.to_ascii_lowercase();
    Some(match extension.as_str() {
        "gif" => "image/gif",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "webp" => "image/webp",
        _ => return None,
    })
}

/// Reads one request's file, after the policies: the error is the reason.
fn read(request: &Request, ctx: &Ctx<'_>, supports_images: bool) -> Result<Read, String> {
    let verdict = ctx
        .check_path(&request.path)
        .map_err(|e| e.message.to_string())?;
    allowed(&verdict, ctx)?;
    let shown = &verdict.absolute;
    let mut file = ctx.workspace().open_file(&verdict).map_err(|e| match e {
        FsError::NotFound => format!("ENOENT: no such file or directory, stat '{shown}'"),
        FsError::IsADirectory | FsError::NotRegular(_) => format!("Path is not a file: {shown}"),
        other => other.to_string(),
    })?;
    if let Some(media_type) = image_type(shown) {
        let bytes = file.read_all(MAX_IMAGE_BYTES).map_err(|e| match e {
            FsError::TooLarge { size, limit } => {
                format!("Image file too large: {size} bytes (max: {limit} bytes).")
            }
            other => other.to_string(),
        })?;
        if !supports_images {
            return Err("Current model does not support image input".to_string());
        }
        return Ok(Read::Image {
            media_type: media_type.to_string(),
            data: base64::engine::general_purpose::STANDARD.encode(bytes),
        });
    }
    let bytes = file.read_all(MAX_TEXT_BYTES).map_err(|e| match e {
        FsError::TooLarge { size, limit } => format!(
            "Text file too large to stream safely: {size} bytes (max: {limit} bytes). Use a \
             targeted command such as sed, grep, head, or tail to inspect specific sections."
        ),
        other => other.to_string(),
    })?;
    let text = String::from_utf8_lossy(&bytes);
    Ok(Read::Text(window(
        &text,
        request.start_line,
        request.end_line,
    )))
}

/// Whether the policies let the file be read: not through a magic link, not `.clineignore`d,
/// and approved (as read_file's reads are: inside the workspace by the `read` auto-approval
/// when it is on, else by the user; outside it by the user).
fn allowed(verdict: &PathVerdict, ctx: &Ctx<'_>) -> Result<(), String> {
    if verdict.refused {
        return Err(FsError::Refused {
            path: verdict.path.clone(),
        }
        .to_string());
    }
    if verdict.ignored {
        ctx.say("clineignore_error", &verdict.path);
        return Err(tool_api::texts::clineignore_error(&verdict.path));
    }
    let message = json!({
        "tool": "readFile",
        "path": verdict.display,
        "content": verdict.absolute,
        "operationIsLocatedInWorkspace": verdict.inside_workspace,
    });
    ctx.approve(
        &ApprovalRequest {
            tool: "read_files".to_string(),
            category: ApprovalCategory::Read,
            path: Some(verdict.path.clone()),
            message: message.to_string(),
        },
        tool_api::texts::TOOL_DENIED,
    )
    .map_err(|denied| denied.message.to_string())
}

tool_api::submit_tool!(ReadFiles);
tool_api::export_plugin!(
    capabilities: [
        tool_api::model::access::FS_FULL,
        "toolset:cline-sdk@act",
        "toolset:cline-sdk@plan",
        "toolset:cline-sdk@search",
        "toolset:cline-sdk@yolo",
        "toolset:cline-sdk@default",
    ]
);
