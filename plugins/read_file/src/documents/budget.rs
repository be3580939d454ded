//! What one document extraction may use ([`Limits`]), and what it may still use ([`Budget`]).

use std::io::Read;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::limits::MAX_FILE_BYTES;

/// What one extraction may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The bytes all compressed parts together may expand to.
    pub max_expanded_bytes: u64,
    /// The text extracted, in bytes; beyond it the text ends with
    /// [`TEXT_CUT_NOTICE`](super::TEXT_CUT_NOTICE).
    pub max_text_bytes: usize,
    /// How long the extraction may run.
    pub time: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_expanded_bytes: 256 << 20,
            max_text_bytes: MAX_FILE_BYTES as usize,
            time: Duration::from_secs(30),
        }
    }
}

/// Why an extraction stopped early; shown after `Failed to extract text from …: `.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// The compressed parts expand beyond the limit (in bytes).
    Expands(u64),
    /// The time budget ran out.
    Time(Duration),
    /// The caller gave up on the extraction.
    Abandoned,
    /// The document is malformed or uses something unsupported.
    Invalid(String),
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Expands(limit) => write!(
                f,
                "its compressed content expands to more than {} MB, too much to read into context",
                limit >> 20
            ),
            Self::Time(time) => write!(
                f,
                "extracting its text took longer than {} seconds and was stopped",
                time.as_secs()
            ),
            Self::Abandoned => write!(f, "the extraction was stopped"),
            Self::Invalid(message) => write!(f, "{message}"),
        }
    }
}

/// The budget of one extraction, shared by the waiting call and the worker thread.
#[derive(Debug, Clone)]
pub struct Budget {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    limits: Limits,
    deadline: Instant,
    expanded: AtomicU64,
    abandoned: AtomicBool,
}

impl Budget {
    /// A fresh budget of `limits`, its time counted from now.
    pub fn new(limits: Limits) -> Self {
        Self {
            inner: Arc::new(Inner {
                limits,
                deadline: Instant::now() + limits.time,
                expanded: AtomicU64::new(0),
                abandoned: AtomicBool::new(false),
            }),
        }
    }

    /// The limits.
    pub fn limits(&self) -> Limits {
        self.inner.limits
    }

    /// Whether the time is up.
    pub fn out_of_time(&self) -> bool {
        Instant::now() >= self.inner.deadline
    }

    /// Marks the extraction as given up on: the worker stops at its next [`Budget::check`].
    pub fn abandon(&self) {
        self.inner.abandoned.store(true, Ordering::SeqCst);
    }

    /// Fails when the extraction should stop (abandoned or out of time).
    pub fn check(&self) -> Result<(), Stop> {
        if self.inner.abandoned.load(Ordering::Relaxed) {
            return Err(Stop::Abandoned);
        }
        if self.out_of_time() {
            return Err(Stop::Time(self.inner.limits.time));
        }
        Ok(())
    }

    /// The expansion bytes still available.
    pub fn expansion_left(&self) -> u64 {
        self.inner
            .limits
            .max_expanded_bytes
            .saturating_sub(self.inner.expanded.load(Ordering::Relaxed))
    }

    /// Counts `bytes` of expanded content; fails when the total passes the limit.
    pub fn expand(&self, bytes: u64) -> Result<(), Stop> {
        let total = self.inner.expanded.fetch_add(bytes, Ordering::Relaxed) + bytes;
        if total > self.inner.limits.max_expanded_bytes {
            return Err(Stop::Expands(self.inner.limits.max_expanded_bytes));
        }
        Ok(())
    }

    /// Reads `reader` to its end, counting what it yields against the expansion limit: at most
    /// what is left of it is ever held. Read errors end the data (what came before is kept).
    pub fn read_expanding(&self, reader: impl Read) -> Result<Vec<u8>, Stop> {
        let left = self.expansion_left();
        let mut data = Vec::new();
        let _ = reader.take(left.saturating_add(1)).read_to_end(&mut data);
        self.expand(u64::try_from(data.len()).unwrap_or(u64::MAX))?;
        Ok(data)
    }
}
