//! The flow of one call: check the input, ask for approval (launch only), run the action on
//! the task's session, and close the browser on every failure, cancellation or panic.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::time::Duration;

use futures_util::FutureExt as _;
use tool_api::sdk::prelude::*;

use crate::action::{Action, BadInput};
use crate::registry;
use crate::session::{BrowserSession, Capture, Step, SCROLL_STEP};
use crate::settings::BrowserSettings;
use crate::texts;

/// How often a waiting call looks at the host's cancellation flag.
const CANCEL_POLL: Duration = Duration::from_millis(50);

/// Runs a complete `browser_action` call.
pub fn execute(call: &Call, ctx: &Ctx<'_>) -> ToolResult {
    let action = Action::parse(&call.params);
    let slot = registry::slot(&call.task.task_id);
    let ran = tool_api::sdk::runtime::block_on(async {
        let Some(mut held) = until_cancelled(ctx, slot.lock()).await else {
            return Err(cancelled());
        };
        let work = AssertUnwindSafe(run(action, &mut held, ctx)).catch_unwind();
        match until_cancelled(ctx, work).await {
            Some(Ok(result)) => result,
            Some(Err(panic)) => {
                close(&mut held, false).await;
                std::panic::resume_unwind(panic)
            }
            None => {
                close(&mut held, false).await;
                Err(cancelled())
            }
        }
    });
    ran.map_err(|e| {
        ToolError::new(
            ToolErrorKind::INTERNAL,
            format!("cannot start the plugin's runtime: {e}"),
        )
    })?
}

async fn run(
    action: Result<Action, BadInput>,
    held: &mut Option<BrowserSession>,
    ctx: &Ctx<'_>,
) -> ToolResult {
    let action = match action {
        Ok(action) => action,
        Err(bad) => {
            close(held, true).await;
            if let BadInput::Missing(param) = bad {
                ctx.say(
                    "error",
                    &tool_api::texts::missing_param_notice("browser_action", param, None),
                );
            }
            return Err(bad.to_error());
        }
    };
    let step = match action {
        Action::Launch { url } => {
            approve(ctx, &url)?;
            ctx.say("browser_action_result", "");
            close(held, true).await;
            let mut settings = BrowserSettings::from_host(ctx)?;
            settings.route_through_egress(ctx)?;
            let session = BrowserSession::open(&settings, |message| ctx.log_warn(message))
                .await
                .map_err(failed)?;
            *held = Some(session);
            Step::Navigate(url)
        }
        Action::Close => {
            ctx.say("browser_action", &action.ui_payload());
            close(held, true).await;
            return Ok(ToolContent::text(texts::CLOSED));
        }
        Action::Click {
            x,
            y,
            ref coordinate,
        } => {
            let step = Step::Click(x, y, coordinate.clone());
            announce(held, ctx, &action)?;
            step
        }
        Action::Type { ref text } => {
            let step = Step::Type(text.clone());
            announce(held, ctx, &action)?;
            step
        }
        Action::ScrollDown | Action::ScrollUp => {
            let dy = if action == Action::ScrollDown {
                SCROLL_STEP
            } else {
                -SCROLL_STEP
            };
            announce(held, ctx, &action)?;
            Step::Scroll(dy)
        }
    };
    let Some(session) = held.as_mut() else {
        return Err(failed(texts::NOT_LAUNCHED.to_string()));
    };
    match session.act(step).await {
        Ok(capture) => {
            ctx.say("browser_action_result", &capture.ui_payload());
            Ok(result(capture))
        }
        Err(message) => {
            close(held, true).await;
            Err(failed(message))
        }
    }
}

/// The checks before an action on an open page, and its UI event.
fn announce(
    held: &Option<BrowserSession>,
    ctx: &Ctx<'_>,
    action: &Action,
) -> Result<(), ToolError> {
    if held.is_none() {
        return Err(failed(texts::NOT_LAUNCHED.to_string()));
    }
    ctx.say("browser_action", &action.ui_payload());
    Ok(())
}

/// Only `launch` asks, as in Cline: with the URL as the message.
fn approve(ctx: &Ctx<'_>, url: &str) -> Result<(), ToolError> {
    ctx.approve(
        &ApprovalRequest {
            tool: "browser_action".to_string(),
            category: ApprovalCategory::Browser,
            path: None,
            message: url.to_string(),
        },
        tool_api::texts::TOOL_DENIED,
    )
}

/// The text the model reads and the screenshot.
fn result(capture: Capture) -> ToolContent {
    ToolContent::blocks(vec![
        ContentBlock::Text {
            text: texts::action_result(&capture.logs),
        },
        ContentBlock::Image {
            media_type: capture.media_type,
            data: capture.data,
        },
    ])
}

async fn close(held: &mut Option<BrowserSession>, graceful: bool) {
    if let Some(session) = held.take() {
        session.close(graceful).await;
    }
}

fn failed(message: String) -> ToolError {
    ToolError::new(ToolErrorKind::FAILED, texts::execution_error(&message))
}

fn cancelled() -> ToolError {
    ToolError::new(
        ToolErrorKind::CANCELLED,
        texts::execution_error("The action was cancelled; the browser was closed."),
    )
}

/// Runs `work` until it ends or the host cancels the call (`None`). The flag is polled: the
/// host's cancellation is a synchronous service.
async fn until_cancelled<F: Future>(ctx: &Ctx<'_>, work: F) -> Option<F::Output> {
    let watch = async {
        while !ctx.is_cancelled() {
            tokio::time::sleep(CANCEL_POLL).await;
        }
    };
    tokio::select! {
        output = work => Some(output),
        () = watch => None,
    }
}
