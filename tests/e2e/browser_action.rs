//! browser_action through the real plugin and a real Chromium (`/usr/bin/chromium`), on pages
//! served on 127.0.0.1 by the test.
//!
//! Every test gives the plugin a profile directory of its own (`browser.profile_root`) and
//! counts, by a /proc scan, the processes whose command line names it: some while a session is
//! open, none after it, and the directory must be empty again, which proves that no Chromium
//! outlives its session. (Counting every browser on the machine would not do: other test runs
//! may drive browsers at the same time.) The tests take turns on one lock: two browsers at once
//! would overload a 2-core machine.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{json, Map, Value};
use tool_api::texts;
use toolhost::ErrorKind;
use toolhost::Settings;
use toolhost::{CallOutcome, Host};
use toolhost_tests::{run, toolhost, workdir, PluginDir};

use crate::in_process::{self, RecordingUi};

static ONE_BROWSER_AT_A_TIME: Mutex<()> = Mutex::new(());

fn one_at_a_time() -> MutexGuard<'static, ()> {
    ONE_BROWSER_AT_A_TIME
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

/// Cline's result text around the logs.
fn result_text(logs: &str) -> String {
    format!(
        "The browser action has been executed. The console logs and screenshot have been captured for your analysis.\n\nConsole logs:\n{logs}\n\n(REMEMBER: if you need to proceed to using non-`browser_action` tools or launch a new browser, you MUST first close this browser. For example, if after analyzing the logs and screenshot you need to edit a file, you must first close the browser before you can use the write_to_file tool.)"
    )
}

const CLOSED: &str = "The browser has been closed. You may now proceed to using other tools.";

fn error_text(message: &str) -> String {
    texts::tool_error(&format!("Error executing browser_action: {message}"))
}

const NOT_LAUNCHED: &str = "Browser is not launched. This may occur if the browser was automatically closed by a non-`browser_action` tool.";

// ---------------------------------------------------------------------------------------------
// The pages.

const BUTTON_PAGE: &str = r#"<!doctype html><html><head><style>
body { margin: 0; background: rgb(255, 255, 255); }
#b { position: absolute; left: 20px; top: 20px; width: 200px; height: 60px; }
</style></head><body>
<button id="b" onclick="this.textContent = 'clicked!'; document.body.style.background = 'rgb(0, 128, 0)'; console.log('clicked', 42)">press</button>
<script>console.log('page loaded'); console.warn('a warning');</script>
</body></html>"#;

const INPUT_PAGE: &str = r#"<!doctype html><html><body style="margin: 0">
<input id="i" style="position: absolute; left: 20px; top: 20px; width: 300px; height: 40px">
<div id="echo" style="position: absolute; left: 20px; top: 100px"></div>
<script>
const input = document.getElementById('i');
input.addEventListener('input', () => {
  document.getElementById('echo').textContent = input.value;
  console.log('value:', input.value);
});
input.addEventListener('keydown', (e) => {
  if (e.key === 'Enter') console.log('enter pressed with', input.value);
});
</script></body></html>"#;

const LINK_PAGE: &str = r#"<!doctype html><html><body style="margin: 0">
<a href="/target.html" style="position: absolute; left: 20px; top: 20px; width: 200px; height: 40px; display: block; font-size: 30px">go</a>
</body></html>"#;

const TARGET_PAGE: &str = r#"<!doctype html><html><body><h1>Target</h1>
<script>console.log('target loaded');</script></body></html>"#;

const LONG_PAGE: &str = r#"<!doctype html><html><body style="margin: 0">
<div style="height: 5000px; background: linear-gradient(white, black)">top</div>
<script>window.addEventListener('scroll', () => console.log('scrollY=' + window.scrollY));</script>
</body></html>"#;

const THROWING_PAGE: &str = r#"<!doctype html><html><body><p>throws</p>
<script>console.log('before'); throw new Error('boom');</script></body></html>"#;

/// The test pages on 127.0.0.1; `/slow.html` answers after 20 s.
struct Pages {
    base: String,
    server: Arc<tiny_http::Server>,
}

impl Pages {
    fn serve() -> Self {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").unwrap());
        let port = server.server_addr().to_ip().unwrap().port();
        let incoming = server.clone();
        std::thread::spawn(move || {
            for request in incoming.incoming_requests() {
                // One thread per request, so that the slow page blocks nothing else.
                std::thread::spawn(move || respond(request));
            }
        });
        Self {
            base: format!("http://127.0.0.1:{port}"),
            server,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

impl Drop for Pages {
    fn drop(&mut self) {
        self.server.unblock();
    }
}

fn respond(request: tiny_http::Request) {
    let body = match request.url() {
        "/button.html" => BUTTON_PAGE,
        "/input.html" => INPUT_PAGE,
        "/link.html" => LINK_PAGE,
        "/target.html" => TARGET_PAGE,
        "/long.html" => LONG_PAGE,
        "/throws.html" => THROWING_PAGE,
        "/slow.html" => {
            std::thread::sleep(Duration::from_secs(20));
            "<p>late</p>"
        }
        _ => {
            let _ = request.respond(tiny_http::Response::empty(404));
            return;
        }
    };
    let header = tiny_http::Header::from_bytes("Content-Type", "text/html; charset=utf-8").unwrap();
    let _ = request.respond(tiny_http::Response::from_string(body).with_header(header));
}

/// A port on 127.0.0.1 where nothing listens.
fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

// ---------------------------------------------------------------------------------------------
// Processes.

/// The processes whose command line contains `needle`.
fn processes_with(needle: &str) -> Vec<u32> {
    let me = std::process::id();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != me)
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|cmdline| String::from_utf8_lossy(&cmdline).contains(needle))
        })
        .collect()
}

/// Waits (bounded) until no process of `profile_root` is left; returns how many are.
fn settle(profile_root: &Path) -> usize {
    let needle = format!("--user-data-dir={}/", profile_root.display());
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let left = processes_with(&needle).len();
        if left == 0 || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn running(profile_root: &Path) -> usize {
    processes_with(&format!("--user-data-dir={}/", profile_root.display())).len()
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut list: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    list.sort();
    list
}

/// Waits (bounded) until `dir` is empty; returns what is left.
fn settle_dir(dir: &Path) -> Vec<PathBuf> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left = entries(dir);
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

// ---------------------------------------------------------------------------------------------
// The host.

/// One test's world: pages, a host with the plugin, its own profile directory.
struct World {
    pages: Pages,
    host: Option<Arc<Host>>,
    ui: RecordingUi,
    profiles: tempfile::TempDir,
    _plugins: PluginDir,
    _cwd: tempfile::TempDir,
}

impl World {
    fn new() -> Self {
        Self::build(true, "", "")
    }

    /// `browser` goes into the `[browser]` table; `other` holds further tables.
    fn build(auto_approve: bool, browser: &str, other: &str) -> Self {
        let plugins = PluginDir::empty();
        plugins.add_library("browser_action");
        let cwd = workdir();
        let profiles = workdir();
        let settings = format!(
            // Straight to the test's loopback pages: the egress policy has tests of its own.
            "[auto_approve]\nuse_browser = {auto_approve}\n{other}\n[web]\negress = false\n[browser]\nprofile_root = \"{}\"\n{browser}\n",
            profiles.path().display()
        );
        let settings = Settings::from_toml(&settings).unwrap();
        let (host, ui) = in_process::host_with(plugins.path(), cwd.path(), settings);
        Self {
            pages: Pages::serve(),
            host: Some(host),
            ui,
            profiles,
            _plugins: plugins,
            _cwd: cwd,
        }
    }

    fn call(&self, params: Value) -> CallOutcome {
        self.host
            .as_ref()
            .unwrap()
            .call("browser_action", &params.to_string())
    }

    fn launch(&self, path: &str) -> CallOutcome {
        self.call(json!({"action": "launch", "url": self.pages.url(path)}))
    }

    fn running(&self) -> usize {
        running(self.profiles.path())
    }

    /// The last `browser_action_result` UI payload.
    fn last_result(&self) -> Value {
        let payloads = self.ui.of_kind("browser_action_result");
        serde_json::from_str(payloads.last().unwrap()).unwrap()
    }

    /// Closes the browser and proves that nothing is left: no process, no profile.
    fn close_and_check(&self) {
        let closed = self.call(json!({"action": "close"}));
        assert_eq!(closed.model_text(), CLOSED);
        self.check_nothing_left();
    }

    fn check_nothing_left(&self) {
        assert_eq!(settle(self.profiles.path()), 0, "Chromium processes left");
        assert_eq!(
            settle_dir(self.profiles.path()),
            Vec::<PathBuf>::new(),
            "profiles left"
        );
    }
}

/// The screenshot of a result: its MIME type and decoded size.
fn screenshot(outcome: &CallOutcome) -> image::DynamicImage {
    let images = outcome.images();
    assert_eq!(images.len(), 1, "{}", outcome.model_text());
    assert_eq!(images[0].media_type, "image/webp");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&images[0].data)
        .unwrap();
    image::load_from_memory_with_format(&bytes, image::ImageFormat::WebP).unwrap()
}

fn pixel(image: &image::DynamicImage, x: u32, y: u32) -> [u8; 3] {
    let rgb = image.to_rgb8();
    rgb.get_pixel(x, y).0
}

fn close_to(actual: [u8; 3], expected: [u8; 3]) -> bool {
    actual
        .iter()
        .zip(expected)
        .all(|(a, e)| a.abs_diff(e) <= 24)
}

// ---------------------------------------------------------------------------------------------
// The tests.

#[test]
fn a_click_runs_the_pages_handler_and_its_console_output_is_returned() {
    let _turn = one_at_a_time();
    let world = World::new();

    let launched = world.launch("/button.html");
    assert_eq!(
        launched.model_text(),
        result_text("page loaded\n[warn] a warning")
    );
    let before = screenshot(&launched);
    assert_eq!((before.width(), before.height()), (900, 600));
    assert!(close_to(pixel(&before, 800, 500), [255, 255, 255]));
    assert!(world.running() > 0, "a local Chromium runs for the session");
    assert_eq!(
        world.last_result()["currentUrl"],
        json!(world.pages.url("/button.html"))
    );
    assert_eq!(world.last_result().get("currentMousePosition"), None);

    let clicked = world.call(json!({"action": "click", "coordinate": "120,50"}));
    assert_eq!(clicked.model_text(), result_text("clicked 42"));
    let after = screenshot(&clicked);
    assert_eq!((after.width(), after.height()), (900, 600));
    assert!(
        close_to(pixel(&after, 800, 500), [0, 128, 0]),
        "{:?}",
        pixel(&after, 800, 500)
    );
    let result = world.last_result();
    assert_eq!(result["currentMousePosition"], json!("120,50"));
    assert_eq!(result["logs"], json!("clicked 42"));
    assert!(result["screenshot"]
        .as_str()
        .unwrap()
        .starts_with("data:image/webp;base64,"));
    assert_eq!(
        world.ui.of_kind("browser_action"),
        vec![r#"{"action":"click","coordinate":"120,50"}"#]
    );

    // A click on nothing logs nothing.
    let nothing = world.call(json!({"action": "click", "coordinate": "700,400"}));
    assert_eq!(nothing.model_text(), result_text("(No new logs)"));

    world.close_and_check();
}

#[test]
fn typed_text_reaches_the_focused_input_and_a_line_break_presses_enter() {
    let _turn = one_at_a_time();
    let world = World::new();

    assert_eq!(
        world.launch("/input.html").model_text(),
        result_text("(No new logs)")
    );
    let focused = world.call(json!({"action": "click", "coordinate": "170,40"}));
    assert_eq!(focused.model_text(), result_text("(No new logs)"));

    let typed = world.call(json!({"action": "type", "text": "hello world\n"}));
    assert_eq!(
        typed.model_text(),
        result_text("value: hello world\nenter pressed with hello world")
    );
    screenshot(&typed);
    assert_eq!(
        world.ui.of_kind("browser_action").last().unwrap(),
        r#"{"action":"type","text":"hello world\n"}"#
    );
    world.close_and_check();
}

#[test]
fn a_click_on_a_link_waits_for_the_new_page() {
    let _turn = one_at_a_time();
    let world = World::new();

    assert_eq!(
        world.launch("/link.html").model_text(),
        result_text("(No new logs)")
    );
    let followed = world.call(json!({"action": "click", "coordinate": "60,40"}));
    assert_eq!(followed.model_text(), result_text("target loaded"));
    screenshot(&followed);
    let result = world.last_result();
    assert_eq!(result["currentUrl"], json!(world.pages.url("/target.html")));
    assert_eq!(result["currentMousePosition"], json!("60,40"));
    world.close_and_check();
}

#[test]
fn scrolling_moves_six_hundred_pixels_in_a_configured_viewport() {
    let _turn = one_at_a_time();
    let world = World::build(true, "viewport = \"360x640\"", "");

    let launched = world.launch("/long.html");
    assert_eq!(launched.model_text(), result_text("(No new logs)"));
    let shot = screenshot(&launched);
    assert_eq!((shot.width(), shot.height()), (360, 640));

    let down = world.call(json!({"action": "scroll_down"}));
    assert_eq!(down.model_text(), result_text("scrollY=600"));
    let down = world.call(json!({"action": "scroll_down"}));
    assert_eq!(down.model_text(), result_text("scrollY=1200"));
    let up = world.call(json!({"action": "scroll_up"}));
    assert_eq!(up.model_text(), result_text("scrollY=600"));
    let shot = screenshot(&up);
    assert_eq!((shot.width(), shot.height()), (360, 640));
    assert_eq!(
        world.ui.of_kind("browser_action"),
        vec![
            r#"{"action":"scroll_down"}"#,
            r#"{"action":"scroll_down"}"#,
            r#"{"action":"scroll_up"}"#
        ]
    );
    world.close_and_check();
}

#[test]
fn an_uncaught_error_is_reported_as_a_page_error() {
    let _turn = one_at_a_time();
    let world = World::new();

    let launched = world.launch("/throws.html");
    assert_eq!(
        launched.model_text(),
        result_text("before\n[Page Error] Error: boom")
    );
    screenshot(&launched);
    world.close_and_check();
}

#[test]
fn a_second_launch_replaces_the_first_browser() {
    let _turn = one_at_a_time();
    let world = World::new();

    world.launch("/button.html");
    let first = entries(world.profiles.path());
    assert_eq!(first.len(), 1);
    let again = world.launch("/target.html");
    assert_eq!(again.model_text(), result_text("target loaded"));
    let second = entries(world.profiles.path());
    assert_eq!(second.len(), 1, "the first profile is gone");
    assert_ne!(first, second);
    world.close_and_check();
}

#[test]
fn bad_input_is_a_tool_error_and_closes_the_browser() {
    let _turn = one_at_a_time();
    let world = World::new();
    let missing = |param: &str| texts::tool_error(&texts::missing_param_error(param));

    // Nothing open yet.
    let no_action = world.call(json!({"action": "hover"}));
    assert_eq!(no_action.model_text(), missing("action"));
    assert_eq!(
        no_action.result.as_ref().unwrap_err().kind,
        ErrorKind::InvalidParams
    );
    assert_eq!(
        world.call(json!({"action": "launch"})).model_text(),
        missing("url")
    );
    assert_eq!(
        world
            .call(json!({"action": "click", "coordinate": "1,1"}))
            .model_text(),
        error_text(NOT_LAUNCHED)
    );
    assert_eq!(
        world.ui.of_kind("error"),
        vec![
            "Cline tried to use browser_action without value for required parameter 'action'. Retrying...",
            "Cline tried to use browser_action without value for required parameter 'url'. Retrying...",
        ]
    );

    // Each of these closes the open browser.
    let closes: [(Value, String); 4] = [
        (
            json!({"action": "click", "coordinate": "left,top"}),
            error_text("Invalid coordinate 'left,top': expected two numbers as \"x,y\", for example 450,300."),
        ),
        (json!({"action": "click"}), missing("coordinate")),
        (json!({"action": "type", "text": ""}), missing("text")),
        (json!({"action": "zoom"}), missing("action")),
    ];
    for (params, expected) in closes {
        let launched = world.launch("/button.html");
        assert!(!launched.is_error(), "{}", launched.model_text());
        assert!(world.running() > 0);
        let failed = world.call(params.clone());
        assert_eq!(failed.model_text(), expected, "{params}");
        world.check_nothing_left();
        assert_eq!(
            world.call(json!({"action": "scroll_down"})).model_text(),
            error_text(NOT_LAUNCHED),
            "{params}"
        );
    }
}

#[test]
fn a_url_that_does_not_load_is_a_tool_error_and_closes_the_browser() {
    let _turn = one_at_a_time();
    let world = World::new();

    let url = format!("http://127.0.0.1:{}/", closed_port());
    let failed = world.call(json!({"action": "launch", "url": url}));
    assert_eq!(
        failed.model_text(),
        error_text(&format!("net::ERR_CONNECTION_REFUSED at {url}"))
    );
    assert_eq!(failed.result.as_ref().unwrap_err().kind, ErrorKind::Failed);
    world.check_nothing_left();
    assert_eq!(
        world
            .call(json!({"action": "type", "text": "x"}))
            .model_text(),
        error_text(NOT_LAUNCHED)
    );
}

#[test]
fn launch_asks_for_approval_and_a_denial_starts_nothing() {
    let _turn = one_at_a_time();
    let world = World::build(false, "", "");

    let denied = world.launch("/button.html");
    assert_eq!(
        denied.model_text(),
        toolhost_tests::nobody_to_ask("browser_action", &["use_browser"])
    );
    assert_eq!(world.running(), 0);
    assert_eq!(entries(world.profiles.path()), Vec::<PathBuf>::new());
    let asked = world.ui.of_kind("approval");
    assert_eq!(asked.len(), 1);
    assert!(
        asked[0].starts_with(&world.pages.url("/button.html")),
        "{asked:?}"
    );
}

#[test]
fn a_timed_out_call_kills_its_browser() {
    let _turn = one_at_a_time();
    let world = World::build(true, "", "[limits]\ncall_timeout_secs = 2\n");

    let timed_out = world.launch("/slow.html");
    assert_eq!(
        timed_out.result.as_ref().unwrap_err().kind,
        ErrorKind::Timeout
    );
    world.check_nothing_left();
    // The task has no browser any more.
    assert_eq!(
        world.call(json!({"action": "scroll_up"})).model_text(),
        error_text(NOT_LAUNCHED)
    );
}

#[test]
fn stopping_the_plugin_kills_an_open_browser() {
    let _turn = one_at_a_time();
    let mut world = World::new();

    assert!(!world.launch("/button.html").is_error());
    assert!(world.running() > 0);
    // The last reference to the plugin goes: the host calls its `shutdown`.
    world.host = None;
    assert_eq!(settle(world.profiles.path()), 0, "Chromium processes left");
    assert_eq!(settle_dir(world.profiles.path()), Vec::<PathBuf>::new());
}

#[test]
fn a_host_that_exits_with_the_browser_open_leaves_no_chromium_running() {
    let _turn = one_at_a_time();
    let pages = Pages::serve();
    let plugins = PluginDir::empty();
    plugins.add_library("browser_action");
    let cwd = workdir();
    let profiles = workdir();
    let settings = cwd.path().join("settings.toml");
    std::fs::write(
        &settings,
        format!(
            "[auto_approve]\nuse_browser = true\n[web]\negress = false\n[browser]\nprofile_root = \"{}\"\n",
            profiles.path().display()
        ),
    )
    .unwrap();
    // `toolhost call` runs one call and exits: the browser is still open then.
    let launch = || {
        let params = json!({"action": "launch", "url": pages.url("/button.html")});
        let ran = run(toolhost()
            .arg("--plugins")
            .arg(plugins.path())
            .arg("--settings")
            .arg(&settings)
            .args([
                "call",
                "browser_action",
                &params.to_string(),
                "--json",
                "--cwd",
            ])
            .arg(cwd.path()));
        assert_eq!(
            ran.json()["text"],
            json!(result_text("page loaded\n[warn] a warning"))
        );
    };

    launch();
    assert_eq!(settle(profiles.path()), 0, "Chromium died with the host");
    // The exiting host tells the plugin its task ended: the browser closes and its profile goes.
    assert_eq!(
        entries(profiles.path()).len(),
        0,
        "the exited host left its profile behind"
    );
    launch();
    assert_eq!(settle(profiles.path()), 0);
    assert_eq!(entries(profiles.path()).len(), 0);
}

#[test]
fn an_unreachable_remote_browser_falls_back_to_a_local_one() {
    let _turn = one_at_a_time();
    let endpoint = format!("127.0.0.1:{}", closed_port());
    let world = World::build(true, &format!("remote_endpoint = \"{endpoint}\""), "");

    let launched = world.launch("/button.html");
    assert_eq!(
        launched.model_text(),
        result_text("page loaded\n[warn] a warning")
    );
    assert!(world.running() > 0, "launched locally");
    world.close_and_check();
}

/// A Chromium started by the test with a DevTools port, as a user would start one.
struct RemoteChromium {
    child: Child,
    profile: tempfile::TempDir,
    port: u16,
    ws_url: String,
}

impl RemoteChromium {
    fn start() -> Self {
        let profile = workdir();
        let child = Command::new("/usr/bin/chromium")
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Chromium writes the port it chose, and the browser's WebSocket path, into this file.
        let active = profile.path().join("DevToolsActivePort");
        let deadline = Instant::now() + Duration::from_secs(30);
        let text = loop {
            let text = std::fs::read_to_string(&active).unwrap_or_default();
            if text.lines().count() >= 2 {
                break text;
            }
            assert!(Instant::now() < deadline, "no DevToolsActivePort");
            std::thread::sleep(Duration::from_millis(50));
        };
        let mut lines = text.lines();
        let port: u16 = lines.next().unwrap().trim().parse().unwrap();
        let ws_url = format!("ws://127.0.0.1:{port}{}", lines.next().unwrap().trim());
        Self {
            child,
            profile,
            port,
            ws_url,
        }
    }

    /// The URLs of the open tabs (`/json/list`).
    fn tab_urls(&self) -> Vec<String> {
        // A single GET on the loopback: a hand-written request is simpler than an HTTP
        // client crate for this one test.
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        write!(
            stream,
            "GET /json/list HTTP/1.1\r\nHost: 127.0.0.1:{}\r\n\r\n",
            self.port
        )
        .unwrap();
        // The DevTools server keeps the connection open: read the headers, then exactly
        // Content-Length bytes.
        let mut response = Vec::new();
        let mut chunk = [0u8; 8192];
        let body = loop {
            let read = stream.read(&mut chunk).unwrap();
            assert!(read > 0, "the DevTools server closed the connection early");
            response.extend_from_slice(&chunk[..read]);
            let text = String::from_utf8_lossy(&response).into_owned();
            let Some((head, body)) = text.split_once("\r\n\r\n") else {
                continue;
            };
            let length: usize = head
                .lines()
                .find_map(|line| {
                    let (name, value) = line.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse().ok())?
                })
                .unwrap();
            if body.len() >= length {
                break body[..length].to_string();
            }
        };
        let tabs: Vec<Map<String, Value>> = serde_json::from_str(&body).unwrap();
        tabs.iter()
            .filter_map(|tab| tab.get("url")?.as_str().map(str::to_string))
            .collect()
    }

    fn is_running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }
}

impl Drop for RemoteChromium {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let needle = format!("--user-data-dir={}", self.profile.path().display());
        let deadline = Instant::now() + Duration::from_secs(10);
        while !processes_with(&needle).is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

#[test]
fn a_remote_browser_is_used_and_left_running() {
    let _turn = one_at_a_time();
    let mut remote = RemoteChromium::start();

    for endpoint in [format!("127.0.0.1:{}", remote.port), remote.ws_url.clone()] {
        let world = World::build(true, &format!("remote_endpoint = \"{endpoint}\""), "");
        let url = world.pages.url("/button.html");
        let launched = world.launch("/button.html");
        assert_eq!(
            launched.model_text(),
            result_text("page loaded\n[warn] a warning"),
            "{endpoint}"
        );
        let shot = screenshot(&launched);
        assert_eq!((shot.width(), shot.height()), (900, 600));
        assert_eq!(world.running(), 0, "no local browser for {endpoint}");
        assert!(remote.tab_urls().contains(&url), "{endpoint}");

        let clicked = world.call(json!({"action": "click", "coordinate": "120,50"}));
        assert_eq!(clicked.model_text(), result_text("clicked 42"));

        world.close_and_check();
        assert!(remote.is_running(), "the user's browser stays open");
        // Chromium drops a closed tab from its list a moment after the close returns.
        let deadline = Instant::now() + Duration::from_secs(10);
        while remote.tab_urls().contains(&url) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(
            !remote.tab_urls().contains(&url),
            "the session's tab is closed ({endpoint})"
        );
    }
}

#[test]
fn streaming_calls_only_update_the_ui() {
    let _turn = one_at_a_time();
    let world = World::new();
    let host = world.host.as_ref().unwrap();
    let partial = |params: Value| {
        host.call_partial("browser_action", params.as_object().unwrap());
    };
    partial(json!({"action": "launch", "url": "http://localhost:3000</ur"}));
    partial(json!({"action": "click", "coordinate": "450,3"}));
    partial(json!({"action": "cli"}));
    let said: Vec<(String, String, bool)> = world
        .ui
        .said
        .lock()
        .unwrap()
        .iter()
        .map(|s| (s.kind.clone(), s.text.clone(), s.partial))
        .collect();
    assert_eq!(
        said,
        vec![
            (
                "browser_action_launch".to_string(),
                "http://localhost:3000".to_string(),
                true
            ),
            (
                "browser_action".to_string(),
                r#"{"action":"click","coordinate":"450,3"}"#.to_string(),
                true
            ),
        ]
    );
    assert_eq!(world.running(), 0);
}

#[test]
fn models_that_reject_webp_get_png_screenshots() {
    let _turn = one_at_a_time();
    let world = World::build(true, "", "[model]\nid = \"x-ai/grok-4\"\n");

    let launched = world.launch("/button.html");
    let images = launched.images();
    assert_eq!(images.len(), 1, "{}", launched.model_text());
    assert_eq!(images[0].media_type, "image/png");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&images[0].data)
        .unwrap();
    let shot = image::load_from_memory_with_format(&bytes, image::ImageFormat::Png).unwrap();
    assert_eq!((shot.width(), shot.height()), (900, 600));
    world.close_and_check();
}
