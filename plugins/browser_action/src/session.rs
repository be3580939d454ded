//! [`BrowserSession`]: one browser and its page, and the actions on it (Cline's
//! `BrowserSession`).

use std::time::Duration;

use base64::Engine as _;
use chromiumoxide::cdp::browser_protocol::input::{
    DispatchKeyEventParams, DispatchKeyEventType, InsertTextParams,
};
use chromiumoxide::cdp::browser_protocol::network::EventRequestWillBeSent;
use chromiumoxide::cdp::browser_protocol::page::CaptureScreenshotFormat;
use chromiumoxide::error::CdpError;
use chromiumoxide::layout::Point;
use chromiumoxide::page::ScreenshotParams;
use chromiumoxide::Page;
use futures_util::FutureExt as _;
use serde_json::{json, Value};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::console::ConsoleLog;
use crate::keeper::Keeper;
use crate::launch;
use crate::settings::BrowserSettings;
use crate::texts;

/// How long a navigation may take before the action goes on with what has loaded (Cline: 7 s).
pub const NAVIGATION_TIMEOUT: Duration = Duration::from_secs(7);
/// How long to wait after a click before deciding whether it started a navigation (Cline: any
/// network request within 100 ms).
pub const CLICK_SETTLE: Duration = Duration::from_millis(100);
/// How far one scroll moves (Cline scrolls a fixed 600 px, whatever the viewport).
pub const SCROLL_STEP: i32 = 600;
/// How long to let a scroll settle (Cline: 300 ms).
pub const SCROLL_SETTLE: Duration = Duration::from_millis(300);
/// The "HTML stopped changing" poll: interval, number of checks, equal sizes needed.
pub const STABLE_INTERVAL: Duration = Duration::from_millis(500);
/// At most this many checks (Cline: a 5000 ms budget at 500 ms intervals).
pub const STABLE_MAX_CHECKS: u32 = 10;
/// Equal consecutive sizes that count as stable (Cline: 3).
pub const STABLE_ITERATIONS: u32 = 3;

/// What an action produced: what the model sees and what the UI shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Capture {
    /// The screenshot's MIME type (`image/webp` or `image/png`).
    pub media_type: String,
    /// The screenshot, base64.
    pub data: String,
    /// The console lines, joined by newlines (empty when there were none).
    pub logs: String,
    /// The page's URL after the action.
    pub current_url: Option<String>,
    /// The last clicked coordinate, as given.
    pub mouse_position: Option<String>,
}

impl Capture {
    /// Cline's `BrowserActionResult` JSON, the payload of the `browser_action_result` UI event.
    pub fn ui_payload(&self) -> String {
        let mut payload = json!({
            "screenshot": format!("data:{};base64,{}", self.media_type, self.data),
            "logs": self.logs,
        });
        if let Some(url) = &self.current_url {
            payload["currentUrl"] = Value::String(url.clone());
        }
        if let Some(position) = &self.mouse_position {
            payload["currentMousePosition"] = Value::String(position.clone());
        }
        payload.to_string()
    }
}

/// Why an action step failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepError {
    /// The action cannot go on: the tool fails and the browser is closed.
    Fatal(String),
    /// Cline's rule for everything else: the error becomes an `[Error] …` log line next to a
    /// screenshot, and the action succeeds.
    Logged(String),
}

fn logged(error: CdpError) -> StepError {
    StepError::Logged(error.to_string())
}

/// The page-changing step of an action.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Open a URL.
    Navigate(String),
    /// Click a point; the coordinate as given becomes the mouse position.
    Click(f64, f64, String),
    /// Type text.
    Type(String),
    /// Scroll by this many pixels (negative: up).
    Scroll(i32),
}

/// A browser with one page, and the state Cline keeps beside it.
#[derive(Debug)]
pub struct BrowserSession {
    page: Page,
    keeper: Keeper,
    console: ConsoleLog,
    listeners: Vec<JoinHandle<()>>,
    mouse_position: Option<String>,
    remote: bool,
    use_webp: bool,
}

impl BrowserSession {
    /// Connects to the configured remote browser, or launches a local one when there is none or
    /// it cannot be reached; `warn` hears why a remote browser was not used.
    pub async fn open(settings: &BrowserSettings, warn: impl Fn(&str)) -> Result<Self, String> {
        let mut opened = None;
        if let Some(endpoint) = &settings.remote_endpoint {
            match launch::connect_remote(endpoint, settings.viewport).await {
                Ok(keeper) => opened = Some((keeper, true)),
                Err(e) => warn(&format!(
                    "{} ({endpoint}: {e}); launching a local browser instead",
                    texts::REMOTE_UNREACHABLE
                )),
            }
        }
        let (keeper, remote) = match opened {
            Some(opened) => opened,
            None => (launch::launch_local(settings).await?, false),
        };
        match Self::with_page(keeper, remote, settings.use_webp).await {
            Ok(session) => Ok(session),
            Err((keeper, e)) => {
                keeper.close(false).await;
                Err(e)
            }
        }
    }

    async fn with_page(
        keeper: Keeper,
        remote: bool,
        use_webp: bool,
    ) -> Result<Self, (Keeper, String)> {
        let page = match keeper.new_page().await {
            Ok(page) => page,
            Err(e) => return Err((keeper, format!("Could not open a page: {e}"))),
        };
        let (console, listeners) = match ConsoleLog::attach(&page).await {
            Ok(attached) => attached,
            Err(e) => return Err((keeper, format!("Could not listen to the console: {e}"))),
        };
        Ok(Self {
            page,
            keeper,
            console,
            listeners,
            mouse_position: None,
            remote,
            use_webp,
        })
    }

    /// Cline's `doAction`: clears the logs, runs the step, waits for the console to go quiet,
    /// takes the screenshot. Only a fatal step error or a failed screenshot fails the action.
    pub async fn act(&mut self, step: Step) -> Result<Capture, String> {
        self.console.begin();
        let started = Instant::now();
        let outcome = match step {
            Step::Navigate(url) => self.navigate(&url).await,
            Step::Click(x, y, coordinate) => self.click(x, y, coordinate).await,
            Step::Type(text) => self.type_text(&text).await,
            Step::Scroll(dy) => self.scroll(dy).await,
        };
        match outcome {
            Ok(()) => {}
            Err(StepError::Fatal(message)) => return Err(message),
            Err(StepError::Logged(message)) => self.console.push(format!("[Error] {message}")),
        }
        self.console.wait_quiet(started).await;
        let (media_type, data) = self.screenshot().await?;
        Ok(Capture {
            media_type,
            data,
            logs: self.console.take(),
            current_url: self.page.url().await.ok().flatten(),
            mouse_position: self.mouse_position.clone(),
        })
    }

    /// Cline's `navigateToUrl`: load (within [`NAVIGATION_TIMEOUT`]), then wait until the HTML
    /// stops changing. A URL that does not load fails the action (Cline would only log it).
    async fn navigate(&mut self, url: &str) -> Result<(), StepError> {
        match tokio::time::timeout(NAVIGATION_TIMEOUT, self.page.goto(url)).await {
            // A slow page is not an error: the screenshot shows what has loaded.
            Err(_elapsed) => {}
            Ok(Ok(_)) => {}
            Ok(Err(e)) => {
                return Err(StepError::Fatal(format!(
                    "{} at {url}",
                    navigation_error(&e)
                )));
            }
        }
        wait_till_html_stable(&self.page).await;
        Ok(())
    }

    /// Cline's `click`: a click at the point; if the page sent any request within
    /// [`CLICK_SETTLE`], the click is taken to navigate and the navigation is waited for.
    async fn click(&mut self, x: f64, y: f64, coordinate: String) -> Result<(), StepError> {
        let mut requests = self
            .page
            .event_listener::<EventRequestWillBeSent>()
            .await
            .map_err(logged)?;
        self.page.click(Point::new(x, y)).await.map_err(logged)?;
        self.mouse_position = Some(coordinate);
        tokio::time::sleep(CLICK_SETTLE).await;
        let navigated = futures_util::StreamExt::next(&mut requests)
            .now_or_never()
            .flatten()
            .is_some();
        drop(requests);
        if navigated {
            // Errors and timeouts are ignored, as in Cline: the screenshot tells the story.
            let _ = tokio::time::timeout(NAVIGATION_TIMEOUT, self.page.wait_for_navigation()).await;
            wait_till_html_stable(&self.page).await;
        }
        Ok(())
    }

    /// Types into the focused element. Text goes in with `Input.insertText` (no page-level
    /// "type" command exists); line breaks and tabs are key presses, as puppeteer's
    /// `keyboard.type` makes them, so that Enter submits forms.
    async fn type_text(&mut self, text: &str) -> Result<(), StepError> {
        let mut chunk = String::new();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            let key = match c {
                '\r' => {
                    // "\r\n" is one Enter.
                    if chars.peek() == Some(&'\n') {
                        chars.next();
                    }
                    Some(Key::ENTER)
                }
                '\n' => Some(Key::ENTER),
                '\t' => Some(Key::TAB),
                _ => None,
            };
            match key {
                Some(key) => {
                    self.insert_text(&std::mem::take(&mut chunk)).await?;
                    self.press(key).await?;
                }
                None => chunk.push(c),
            }
        }
        self.insert_text(&chunk).await
    }

    async fn insert_text(&self, text: &str) -> Result<(), StepError> {
        if text.is_empty() {
            return Ok(());
        }
        self.page
            .execute(InsertTextParams::new(text))
            .await
            .map_err(logged)?;
        Ok(())
    }

    async fn press(&self, key: Key) -> Result<(), StepError> {
        let down_type = if key.text.is_some() {
            DispatchKeyEventType::KeyDown
        } else {
            DispatchKeyEventType::RawKeyDown
        };
        for (kind, text) in [(down_type, key.text), (DispatchKeyEventType::KeyUp, None)] {
            let mut event = DispatchKeyEventParams::builder()
                .r#type(kind)
                .key(key.key)
                .code(key.key)
                .windows_virtual_key_code(key.code)
                .native_virtual_key_code(key.code);
            if let Some(text) = text {
                event = event.text(text);
            }
            let event = event.build().map_err(StepError::Logged)?;
            self.page.execute(event).await.map_err(logged)?;
        }
        Ok(())
    }

    /// Cline's `scrollDown`/`scrollUp`: a fixed step, then a short pause.
    async fn scroll(&mut self, dy: i32) -> Result<(), StepError> {
        self.page
            .evaluate(format!("window.scrollBy({{top: {dy}, behavior: 'auto'}})"))
            .await
            .map_err(logged)?;
        tokio::time::sleep(SCROLL_SETTLE).await;
        Ok(())
    }

    /// The viewport as WebP (unless the model rejects it) or PNG; an empty or failed WebP
    /// capture is retried once as PNG.
    async fn screenshot(&self) -> Result<(String, String), String> {
        let formats: &[(CaptureScreenshotFormat, &str)] = if self.use_webp {
            &[
                (CaptureScreenshotFormat::Webp, "image/webp"),
                (CaptureScreenshotFormat::Png, "image/png"),
            ]
        } else {
            &[(CaptureScreenshotFormat::Png, "image/png")]
        };
        for (format, media_type) in formats {
            let params = ScreenshotParams::builder().format(format.clone()).build();
            if let Ok(bytes) = self.page.screenshot(params).await {
                if !bytes.is_empty() {
                    let data = base64::engine::general_purpose::STANDARD.encode(bytes);
                    return Ok(((*media_type).to_string(), data));
                }
            }
        }
        Err(texts::SCREENSHOT_FAILED.to_string())
    }

    /// Cline's `closeBrowser`: a remote browser loses its tab and the connection; a local one
    /// is closed (killed when `graceful` is false or it does not exit) and its profile removed.
    pub async fn close(self, graceful: bool) {
        for listener in &self.listeners {
            listener.abort();
        }
        if self.remote {
            let _ = tokio::time::timeout(Duration::from_secs(2), self.page.close()).await;
        }
        self.keeper.close(graceful).await;
    }
}

/// A key pressed while typing.
#[derive(Debug, Clone, Copy)]
struct Key {
    key: &'static str,
    code: i64,
    text: Option<&'static str>,
}

impl Key {
    const ENTER: Self = Self {
        key: "Enter",
        code: 13,
        text: Some("\r"),
    };
    const TAB: Self = Self {
        key: "Tab",
        code: 9,
        text: None,
    };
}

/// The error text of a navigation, without chromiumoxide's decoration where Chromium gave one
/// (`net::ERR_CONNECTION_REFUSED`, as puppeteer reports it).
fn navigation_error(error: &CdpError) -> String {
    match error {
        CdpError::ChromeMessage(message) => message.clone(),
        CdpError::Chrome(e) => e.message.clone(),
        other => other.to_string(),
    }
}

/// Cline's `waitTillHTMLStable`: every [`STABLE_INTERVAL`], compare the page's HTML size with
/// the last one; stop after [`STABLE_ITERATIONS`] equal sizes in a row or
/// [`STABLE_MAX_CHECKS`] checks. A page that cannot be read (mid-navigation) counts as
/// changing.
pub async fn wait_till_html_stable(page: &Page) {
    let mut last_size = 0usize;
    let mut stable = 0u32;
    for _ in 0..STABLE_MAX_CHECKS {
        let size = page.content().await.map_or(0, |html| html.len());
        if last_size != 0 && size == last_size {
            stable += 1;
        } else {
            stable = 0;
        }
        if stable >= STABLE_ITERATIONS {
            return;
        }
        last_size = size;
        tokio::time::sleep(STABLE_INTERVAL).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ui_payload_is_clines_action_result() {
        let capture = Capture {
            media_type: "image/webp".to_string(),
            data: "AAAA".to_string(),
            logs: "hello".to_string(),
            current_url: Some("http://127.0.0.1:8080/".to_string()),
            mouse_position: None,
        };
        assert_eq!(
            capture.ui_payload(),
            r#"{"screenshot":"data:image/webp;base64,AAAA","logs":"hello","currentUrl":"http://127.0.0.1:8080/"}"#
        );
        let clicked = Capture {
            mouse_position: Some("450,300".to_string()),
            ..capture
        };
        assert!(clicked
            .ui_payload()
            .ends_with(r#""currentMousePosition":"450,300"}"#));
    }
}
