//! `stream_bench`: an assistant message that writes a large file, streamed in 64-byte chunks
//! through a session (the partial handlers included), against one parse of the whole message.
//!
//! For each size of write_to_file content (`--sizes`, in bytes), the message is fed to a
//! [`Conversation`] of a host that loaded the real plugins in process and approves everything,
//! as `toolhost replay --yes` runs it: every chunk is parsed, the open block is shown to the
//! write_to_file plugin's partial handler when due, and the complete block writes the file. The
//! figures are medians over `--rounds` rounds:
//! - `session`: the whole streamed run, the file written included;
//! - `stream_parse`: the same chunks through a [`StreamParser`] alone;
//! - `parse`: [`XmlParser::parse`] of the whole message once, the baseline.
//!
//! The ratios `session / parse` should stay roughly constant across the sizes (linear work).
//! Prints one JSON object on stdout, for `cargo xtask bench stream`; timings never go into
//! tests.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tool_api::model::AskReply;
use toolhost::{
    parser_for, ApprovalMode, CommandPermissions, Conversation, Host, HostConfig, Isolation,
    Placement, SessionEvent, Settings, StreamParser, Ui, Workspace,
};

/// The chunk size of the issue: 64 bytes, as a model's stream delivers them.
const CHUNK_BYTES: usize = 64;

/// Counts the partial UI events (what the partial handlers said).
#[derive(Default)]
struct CountingUi {
    partial: Arc<AtomicUsize>,
}

impl Ui for CountingUi {
    fn say(&self, _kind: &str, _text: &str, partial: bool) {
        if partial {
            self.partial.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn ask(&self, _kind: &str, _text: &str) -> Option<AskReply> {
        None
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(report) => {
            println!("{report}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("stream_bench: {message}");
            ExitCode::FAILURE
        }
    }
}

/// `--plugins DIR --sizes N,N,... --rounds N`.
fn run() -> Result<Value, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let plugins = PathBuf::from(value("--plugins").ok_or("--plugins DIR is required")?);
    let sizes: Vec<usize> = value("--sizes")
        .unwrap_or_else(|| "100000,1000000,10000000".to_string())
        .split(',')
        .map(|s| s.trim().parse().map_err(|e| format!("--sizes: {e}")))
        .collect::<Result<_, _>>()?;
    let rounds: usize = value("--rounds")
        .unwrap_or_else(|| "3".to_string())
        .parse()
        .map_err(|e| format!("--rounds: {e}"))?;
    let workspace = tempfile::tempdir().map_err(|e| e.to_string())?;
    let ui = CountingUi::default();
    let partial_says = ui.partial.clone();
    let host = Host::new(HostConfig {
        plugin_dirs: vec![plugins],
        workspace: Workspace::new(workspace.path()).map_err(|e| e.to_string())?,
        settings: Settings::default(),
        approval: ApprovalMode::ApproveAll,
        command_permissions: CommandPermissions::default(),
        ui: Box::new(ui),
        task_id: "stream-bench".to_string(),
        placement: Placement {
            default: Some(Isolation::InProcess),
            ..Placement::default()
        },
    });
    if let Some(warning) = host.registry().warnings().first() {
        return Err(format!("a plugin did not load: {warning}"));
    }
    let mut results = Vec::new();
    for size in sizes {
        let message = message(size);
        let mut session = Vec::new();
        let mut stream_parse = Vec::new();
        let mut parse = Vec::new();
        let mut streamed = (0, 0);
        for _ in 0..rounds.max(1) {
            let _ = std::fs::remove_file(workspace.path().join("big.txt"));
            let says_before = partial_says.load(Ordering::Relaxed);
            let (took, updates) = run_session(&host, &message)?;
            session.push(took);
            streamed = (updates, partial_says.load(Ordering::Relaxed) - says_before);
            check_written(workspace.path(), size)?;
            stream_parse.push(run_stream_parse(&host, &message));
            parse.push(run_parse(&host, &message));
        }
        let (session, stream_parse, parse) = (median(session), median(stream_parse), median(parse));
        results.push(json!({
            "content_bytes": size,
            "message_bytes": message.len(),
            "chunks": message.len().div_ceil(CHUNK_BYTES),
            "session_ms": ms(session),
            "stream_parse_ms": ms(stream_parse),
            "parse_ms": ms(parse),
            "session_ratio": session.as_secs_f64() / parse.as_secs_f64(),
            "stream_parse_ratio": stream_parse.as_secs_f64() / parse.as_secs_f64(),
            "partial_updates": streamed.0,
            "partial_handler_says": streamed.1,
        }));
    }
    host.registry().shutdown();
    Ok(json!({ "chunk_bytes": CHUNK_BYTES, "rounds": rounds, "sizes": results }))
}

/// A message writing `size` bytes of code-like content (with `<` and `>`, as code has), whole
/// lines, the first and the last one such that Cline's trims take nothing off (the last one has no
/// newline: the trims would take it).
fn message(size: usize) -> String {
    let line = "    if a > b && v.len() < 3 { out.push_str(\"<p>done</p>\"); }\n";
    let header = "// generated\n";
    let mut content = format!(
        "{header}{}",
        line.repeat(size.saturating_sub(header.len()) / line.len())
    );
    let rest = size - content.len();
    content.push_str(&"x".repeat(rest));
    format!(
        "I'll write the generated file.\n\n<write_to_file>\n<path>big.txt</path>\n<content>\n{content}\n</content>\n</write_to_file>\n"
    )
}

/// The message through a session in 64-byte chunks; the time and the partial updates shown.
fn run_session(host: &Arc<Host>, message: &str) -> Result<(Duration, usize), String> {
    let mut updates = 0;
    let mut results = Vec::new();
    let start = Instant::now();
    let mut conversation = Conversation::new(host.clone());
    let mut run = conversation.message();
    let mut sink = |event: SessionEvent| match event {
        SessionEvent::ToolStreaming { .. } => updates += 1,
        SessionEvent::ToolResult { is_error, text, .. } => results.push((is_error, text)),
        _ => {}
    };
    for chunk in chunks(message) {
        run.push(chunk, &mut sink);
    }
    run.finish(&mut sink);
    let took = start.elapsed();
    match results.as_slice() {
        [(false, _)] => Ok((took, updates)),
        other => Err(format!(
            "the write did not succeed once: {:?}",
            other
                .iter()
                .map(|(e, t)| (e, t.chars().take(300).collect::<String>()))
                .collect::<Vec<_>>()
        )),
    }
}

fn run_stream_parse(host: &Arc<Host>, message: &str) -> Duration {
    let parser = Arc::new(parser_for(&host.registry()));
    let start = Instant::now();
    let mut stream = StreamParser::new(parser);
    for chunk in chunks(message) {
        stream.push(chunk);
        std::hint::black_box(stream.closed_blocks().len());
    }
    std::hint::black_box(stream.blocks());
    start.elapsed()
}

fn run_parse(host: &Arc<Host>, message: &str) -> Duration {
    let parser = parser_for(&host.registry());
    let start = Instant::now();
    std::hint::black_box(parser.parse(message));
    start.elapsed()
}

/// The message in 64-byte chunks (the text is ASCII).
fn chunks(message: &str) -> impl Iterator<Item = &str> {
    message
        .as_bytes()
        .chunks(CHUNK_BYTES)
        .map(|c| std::str::from_utf8(c).unwrap_or_default())
}

fn check_written(workspace: &Path, size: usize) -> Result<(), String> {
    let written = std::fs::metadata(workspace.join("big.txt"))
        .map_err(|e| format!("big.txt was not written: {e}"))?
        .len() as usize;
    if written != size {
        return Err(format!("big.txt has {written} bytes, not {size}"));
    }
    Ok(())
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}
