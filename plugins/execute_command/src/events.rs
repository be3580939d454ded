//! The run's surroundings in the host: output goes to the user as `command_output` events,
//! cancellation comes from the host, and a command still running after a while is a
//! `notification` event (once), as Cline's desktop notification.

use std::time::{Duration, Instant};

use tool_api::sdk::prelude::*;

use crate::messages;
use crate::process::Events;

/// When to tell the user that the command is still running, as Cline does: only for a
/// command the settings (or yolo mode) approved, not a subagent's, with
/// `auto_approve.enable_notifications` on; after `execute_command.notify_after_secs` (30).
fn still_running_notice(
    call: &Call,
    ctx: &Ctx<'_>,
    category: ApprovalCategory,
) -> Option<(Instant, Duration)> {
    let enabled = ctx
        .setting::<bool>("auto_approve.enable_notifications")
        .unwrap_or(false);
    let auto_approved = call.task.yolo || ctx.auto_approves(category, true);
    if !enabled || !auto_approved || call.task.is_subagent {
        return None;
    }
    let after = ctx
        .setting::<u64>("execute_command.notify_after_secs")
        .unwrap_or(NOTIFY_AFTER_SECS);
    Some((Instant::now(), Duration::from_secs(after)))
}

/// Cline's delay before the still-running notification.
const NOTIFY_AFTER_SECS: u64 = 30;

/// Output goes to the user as `command_output` events; cancellation comes from the host; a
/// command still running after a while is a `notification` event (once).
pub struct CtxEvents<'c, 'h> {
    ctx: &'c Ctx<'h>,
    /// When the run started and after how long to notify, until notified.
    still_running: Option<(Instant, Duration)>,
}

impl<'c, 'h> CtxEvents<'c, 'h> {
    /// The events of `call`, approved in `category`.
    pub fn new(call: &Call, ctx: &'c Ctx<'h>, category: ApprovalCategory) -> Self {
        Self {
            ctx,
            still_running: still_running_notice(call, ctx, category),
        }
    }
}

impl Events for CtxEvents<'_, '_> {
    fn output(&mut self, chunk: &str) {
        self.ctx.say("command_output", chunk);
    }

    /// Asked on every tick while the command runs, so the notification's time is checked here.
    fn cancelled(&mut self) -> bool {
        if let Some((started, after)) = self.still_running {
            if started.elapsed() >= after {
                self.ctx
                    .say("notification", &messages::still_running_notice(after));
                self.still_running = None;
            }
        }
        self.ctx.is_cancelled()
    }
}
