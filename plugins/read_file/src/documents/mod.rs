//! Text from documents, as Cline extracts it: PDF text (pdf-parse), DOCX raw text (mammoth),
//! XLSX sheets (ExcelJS, in Cline's layout).
//!
//! A document is untrusted input whose compressed parts can expand a thousandfold, so every
//! extraction runs within [`Limits`]: the file's size, how many bytes its compressed parts may
//! expand to (checked before a parser decompresses them), how much text comes out, and a time
//! budget. The extraction runs on a thread of its own; when the budget runs out the call gets an
//! error at once and the thread is left to finish (our own loops stop at the deadline; a parser
//! crate's cannot be interrupted). At most [`MAX_RUNNING`] such threads exist at a time.

mod budget;
mod docx;
mod output;
mod pdf;
mod xlsx;
mod zipped;

pub use budget::{Budget, Limits, Stop};
pub use output::TEXT_CUT_NOTICE;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// The document types with text extraction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `.pdf`
    Pdf,
    /// `.docx`
    Docx,
    /// `.xlsx`
    Xlsx,
}

impl Kind {
    /// The kind of a lower-cased file extension, if it is a document.
    pub fn from_extension(extension: &str) -> Option<Self> {
        match extension {
            "pdf" => Some(Self::Pdf),
            "docx" => Some(Self::Docx),
            "xlsx" => Some(Self::Xlsx),
            _ => None,
        }
    }

    /// How errors name the format (Cline's `Failed to extract text from Excel: …`).
    fn label(self) -> &'static str {
        match self {
            Self::Pdf => "PDF",
            Self::Docx => "DOCX",
            Self::Xlsx => "Excel",
        }
    }
}

/// At most this many extraction threads run at once (a timed-out one counts until it ends).
pub const MAX_RUNNING: usize = 2;

static RUNNING: AtomicUsize = AtomicUsize::new(0);

/// Extracts the text of a document whose bytes are `bytes`, within `limits`; `cancelled` is
/// polled while waiting. The error is the message after "Error reading file: ".
pub fn extract(
    kind: Kind,
    bytes: Vec<u8>,
    limits: Limits,
    cancelled: &dyn Fn() -> bool,
) -> Result<String, String> {
    let failed = |why: &str| format!("Failed to extract text from {}: {why}", kind.label());
    if RUNNING.fetch_add(1, Ordering::SeqCst) >= MAX_RUNNING {
        RUNNING.fetch_sub(1, Ordering::SeqCst);
        return Err(failed(
            "other documents are still being extracted; try again in a moment",
        ));
    }
    let budget = Budget::new(limits);
    let worker_budget = budget.clone();
    let (send, receive) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("read_file-document".to_string())
        .spawn(move || {
            let result = std::panic::catch_unwind(|| run(kind, &bytes, &worker_budget));
            RUNNING.fetch_sub(1, Ordering::SeqCst);
            let _ = send.send(result);
        });
    if let Err(e) = spawned {
        RUNNING.fetch_sub(1, Ordering::SeqCst);
        return Err(failed(&format!("cannot start the extraction: {e}")));
    }
    loop {
        match receive.recv_timeout(Duration::from_millis(50)) {
            Ok(Ok(Ok(text))) => return Ok(text),
            Ok(Ok(Err(stop))) => return Err(failed(&stop.to_string())),
            Ok(Err(_panic)) => return Err(failed("the document could not be parsed")),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(failed("the document could not be parsed"))
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if cancelled() {
                    budget.abandon();
                    return Err(failed("the read was cancelled"));
                }
                if budget.out_of_time() {
                    budget.abandon();
                    return Err(failed(&Stop::Time(limits.time).to_string()));
                }
            }
        }
    }
}

/// The extraction itself, on the worker thread.
fn run(kind: Kind, bytes: &[u8], budget: &Budget) -> Result<String, Stop> {
    match kind {
        Kind::Pdf => pdf::extract(bytes, budget),
        Kind::Docx => docx::extract(bytes, budget),
        Kind::Xlsx => xlsx::extract(bytes, budget),
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod office_tests;
