//! The status of every subagent of one call, its `subagent` UI event and the summary the main
//! agent reads.

use std::sync::Mutex;

use serde_json::{json, Value};

use agent_support::conversation::Usage;
use agent_support::cut;

/// Characters of a subagent's result or error kept in the summary (Cline's 1200).
pub const DETAIL_CHARS: usize = 1200;

/// Where one subagent is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Not started.
    Pending,
    /// Running.
    Running,
    /// Finished with attempt_completion.
    Completed,
    /// Ended without a result (error, turn limit, cancellation).
    Failed,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Running => "running",
            Status::Completed => "completed",
            Status::Failed => "failed",
        }
    }
}

/// One subagent's entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// Its prompt.
    pub prompt: String,
    /// Where it is.
    pub status: Status,
    /// Tool calls made.
    pub tool_calls: u64,
    /// Input tokens over all requests (cache reads and writes included).
    pub input_tokens: u64,
    /// Output tokens over all requests.
    pub output_tokens: u64,
    /// The context size of the latest request.
    pub context_tokens: u64,
    /// The preview of the latest tool call.
    pub latest_tool_call: Option<String>,
    /// The result, once completed.
    pub result: Option<String>,
    /// The reason, once failed.
    pub error: Option<String>,
}

/// Token sums for the `subagent_usage` event.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// Sums of every request's usage.
    pub usage: Usage,
}

/// The shared status board; every change is reported through `emit` while the lock is held, so
/// events leave in the order the changes happened.
pub struct Board<'a> {
    items: Mutex<(Vec<Item>, Totals)>,
    context_window: Option<u64>,
    emit: Box<dyn Fn(&str) + Send + Sync + 'a>,
}

impl<'a> Board<'a> {
    /// A board with one pending entry per prompt.
    pub fn new(
        prompts: &[String],
        context_window: Option<u64>,
        emit: impl Fn(&str) + Send + Sync + 'a,
    ) -> Self {
        let items = prompts
            .iter()
            .map(|prompt| Item {
                prompt: prompt.clone(),
                status: Status::Pending,
                tool_calls: 0,
                input_tokens: 0,
                output_tokens: 0,
                context_tokens: 0,
                latest_tool_call: None,
                result: None,
                error: None,
            })
            .collect();
        Self {
            items: Mutex::new((items, Totals::default())),
            context_window,
            emit: Box::new(emit),
        }
    }

    /// Changes entry `index` (0-based) and reports the new state.
    pub fn update(&self, index: usize, change: impl FnOnce(&mut Item)) {
        let mut guard = self.items.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(item) = guard.0.get_mut(index) {
            change(item);
        }
        (self.emit)(&self.aggregate(&guard.0).to_string());
    }

    /// Adds one request's usage to entry `index`.
    pub fn add_usage(&self, index: usize, usage: Usage) {
        {
            let mut guard = self.items.lock().unwrap_or_else(|e| e.into_inner());
            let totals = &mut guard.1.usage;
            totals.input += usage.input;
            totals.output += usage.output;
            totals.cache_write += usage.cache_write;
            totals.cache_read += usage.cache_read;
        }
        self.update(index, |item| {
            item.input_tokens += usage.input + usage.cache_write + usage.cache_read;
            item.output_tokens += usage.output;
            item.context_tokens = usage.total();
        });
    }

    /// The entries and the token sums as they are now.
    pub fn snapshot(&self) -> (Vec<Item>, Totals) {
        self.items.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The aggregate status, the payload of the `subagent` UI event.
    pub fn aggregate(&self, items: &[Item]) -> Value {
        let done = |s: Status| items.iter().filter(|i| i.status == s).count();
        let (successes, failures) = (done(Status::Completed), done(Status::Failed));
        let completed = successes + failures;
        let status = if completed < items.len() {
            "running"
        } else if failures > 0 {
            "failed"
        } else {
            "completed"
        };
        let peak = items.iter().map(|i| i.context_tokens).max().unwrap_or(0);
        let window = self.context_window.unwrap_or(0);
        let entries: Vec<Value> = items
            .iter()
            .enumerate()
            .map(|(n, item)| {
                let mut entry = json!({
                    "index": n + 1,
                    "prompt": item.prompt,
                    "status": item.status.as_str(),
                    "toolCalls": item.tool_calls,
                    "inputTokens": item.input_tokens,
                    "outputTokens": item.output_tokens,
                    "totalCost": 0,
                    "contextTokens": item.context_tokens,
                    "contextWindow": window,
                    "contextUsagePercentage": percentage(item.context_tokens, window),
                });
                for (key, value) in [
                    ("latestToolCall", &item.latest_tool_call),
                    ("result", &item.result),
                    ("error", &item.error),
                ] {
                    if let Some(value) = value {
                        entry[key] = json!(value);
                    }
                }
                entry
            })
            .collect();
        json!({
            "status": status,
            "total": items.len(),
            "completed": completed,
            "successes": successes,
            "failures": failures,
            "toolCalls": items.iter().map(|i| i.tool_calls).sum::<u64>(),
            "inputTokens": items.iter().map(|i| i.input_tokens).sum::<u64>(),
            "outputTokens": items.iter().map(|i| i.output_tokens).sum::<u64>(),
            "contextWindow": window,
            "maxContextTokens": peak,
            "maxContextUsagePercentage": percentage(peak, window),
            "items": entries,
        })
    }
}

fn percentage(tokens: u64, window: u64) -> f64 {
    if window == 0 {
        return 0.0;
    }
    // Token counts stay far below 2^52, where f64 stops being exact.
    #[allow(clippy::cast_precision_loss)]
    let ratio = tokens as f64 / window as f64;
    ratio * 100.0
}

/// The `subagent_usage` event: the sums over every request.
pub fn usage_event(totals: &Totals) -> Value {
    let usage = totals.usage;
    json!({
        "source": "subagents",
        "tokensIn": usage.input,
        "tokensOut": usage.output,
        "cacheWrites": usage.cache_write,
        "cacheReads": usage.cache_read,
        "cost": 0,
    })
}

/// The text the main agent reads (Cline's format). The peak-context line needs the model's
/// context window (`llm.context_window`) and is left out without it.
pub fn summary(items: &[Item], context_window: Option<u64>) -> String {
    let successes = items
        .iter()
        .filter(|i| i.status == Status::Completed)
        .count();
    let mut lines = vec![
        "Subagent results:".to_string(),
        format!("Total: {}", items.len()),
        format!("Succeeded: {successes}"),
        format!("Failed: {}", items.len() - successes),
        format!(
            "Tool calls: {}",
            thousands(items.iter().map(|i| i.tool_calls).sum())
        ),
    ];
    if let Some(window) = context_window {
        let peak = items.iter().map(|i| i.context_tokens).max().unwrap_or(0);
        lines.push(format!(
            "Peak context usage: {} / {} ({:.1}%)",
            thousands(peak),
            thousands(window),
            // Rounded half up on the tenth (Cline's `Math.round(x * 10) / 10`), not `{:.1}`'s
            // rounding of the binary value: 20.65 must read 20.7.
            (percentage(peak, window) * 10.0).round() / 10.0
        ));
    }
    lines.push(String::new());
    for (n, item) in items.iter().enumerate() {
        let label = if item.status == Status::Completed {
            "COMPLETED"
        } else {
            "FAILED"
        };
        lines.push(format!("[{}] {label} - {}", n + 1, item.prompt));
        let detail = if item.status == Status::Completed {
            item.result.as_deref()
        } else {
            item.error.as_deref()
        };
        let detail = detail.map(str::trim).unwrap_or_default();
        if !detail.is_empty() {
            lines.push(cut(detail, DETAIL_CHARS));
        }
    }
    lines.join("\n")
}

/// A count with en-US thousands separators (`41,300`).
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let head = match digits.len() % 3 {
        0 => 3,
        rest => rest,
    };
    let mut out = digits[..head.min(digits.len())].to_string();
    for group in digits.as_bytes()[head.min(digits.len())..].chunks(3) {
        out.push(',');
        out.push_str(&String::from_utf8_lossy(group));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(prompt: &str, status: Status, detail: Option<&str>, calls: u64, ctx: u64) -> Item {
        Item {
            prompt: prompt.to_string(),
            status,
            tool_calls: calls,
            input_tokens: 0,
            output_tokens: 0,
            context_tokens: ctx,
            latest_tool_call: None,
            result: detail
                .filter(|_| status == Status::Completed)
                .map(Into::into),
            error: detail
                .filter(|_| status != Status::Completed)
                .map(Into::into),
        }
    }

    #[test]
    fn the_summary_follows_clines_format() {
        let items = vec![
            item(
                "Find where HTTP routes are registered",
                Status::Completed,
                Some("Routes live in src/http/router.rs ...\nRelevant file paths\nsrc/http/router.rs\n"),
                9,
                41_300,
            ),
            item(
                "Trace the auth middleware",
                Status::Failed,
                Some("Subagent did not call attempt_completion."),
                5,
                12_000,
            ),
        ];
        assert_eq!(
            summary(&items, Some(200_000)),
            "Subagent results:\nTotal: 2\nSucceeded: 1\nFailed: 1\nTool calls: 14\n\
             Peak context usage: 41,300 / 200,000 (20.7%)\n\n\
             [1] COMPLETED - Find where HTTP routes are registered\n\
             Routes live in src/http/router.rs ...\nRelevant file paths\nsrc/http/router.rs\n\
             [2] FAILED - Trace the auth middleware\nSubagent did not call attempt_completion."
        );
    }

    #[test]
    fn long_details_are_cut_and_empty_ones_left_out() {
        let long = "y".repeat(1300);
        let items = vec![
            item("a", Status::Completed, Some(&long), 0, 0),
            item("b", Status::Failed, None, 0, 0),
        ];
        assert_eq!(
            summary(&items, None),
            format!(
                "Subagent results:\nTotal: 2\nSucceeded: 1\nFailed: 1\nTool calls: 0\n\n[1] COMPLETED - a\n{}...\n[2] FAILED - b",
                "y".repeat(1200)
            )
        );
    }

    #[test]
    fn thousands_are_separated() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
