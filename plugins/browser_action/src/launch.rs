//! Getting a browser: launching Chromium locally, or connecting to a running one.
//!
//! The local process is spawned here rather than by chromiumoxide's `Browser::launch`, which
//! gives no way to tie Chromium's life to ours: a host that exits with a browser open (the CLI
//! after one call) or crashes would leave it running, and tool-api's `shutdown` has no hook to
//! close sessions first. Here Chromium gets `PR_SET_PDEATHSIG`, set from a worker thread of the
//! plugin's runtime, so it is killed when that runtime stops or the host process dies.
//! chromiumoxide then connects to it as to any running browser.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use chromiumoxide::handler::viewport::Viewport;
use chromiumoxide::handler::HandlerConfig;
use chromiumoxide::{Browser, Handler};
use tokio::io::AsyncBufReadExt as _;
use tokio::process::{Child, Command};
use tokio::sync::oneshot;
use tokio::time::Instant;

use crate::keeper::{Keeper, Local, Profile};
use crate::settings::{BrowserSettings, ViewportSize};

/// The flags of a local launch, for a machine without network and running as root: headless
/// (new), no sandbox, no GPU, nothing that phones home or updates itself; plus chromiumoxide's
/// defaults that matter here (a small `/dev/shm` in containers, no keyring prompts).
pub const LOCAL_FLAGS: [&str; 20] = [
    "--headless=new",
    "--no-sandbox",
    "--disable-setuid-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-quic",
    "--disable-dev-shm-usage",
    "--disable-extensions",
    "--disable-default-apps",
    "--disable-breakpad",
    "--disable-client-side-phishing-detection",
    "--disable-background-timer-throttling",
    "--disable-renderer-backgrounding",
    "--password-store=basic",
    "--use-mock-keychain",
    "--hide-scrollbars",
    "--mute-audio",
];

/// The user agent Cline gives its local browser (a desktop Chrome, so that sites serve their
/// desktop layout rather than a "headless" variant).
pub const USER_AGENT: &str = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/128.0.0.0 Safari/537.36";

/// How long a local Chromium may take to print its DevTools address.
const LAUNCH_TIMEOUT: Duration = Duration::from_secs(30);
/// How long connecting to a browser may take (a remote one then falls back to a local one).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a remote browser's WebSocket address is reused without asking again (Cline: 1 h).
const WS_CACHE_FOR: Duration = Duration::from_secs(3600);
/// Chromium's stderr lines kept to explain a failed start.
const STDERR_LINES: usize = 20;

/// The last WebSocket address found for a remote endpoint: `(endpoint, address, when)`.
static WS_CACHE: Mutex<Option<(String, String, Instant)>> = Mutex::new(None);

fn viewport(size: ViewportSize) -> Viewport {
    Viewport {
        width: size.width,
        height: size.height,
        // Screenshots are exactly the viewport's size in pixels.
        device_scale_factor: Some(1.0),
        emulating_mobile: false,
        is_landscape: false,
        has_touch: false,
    }
}

/// The command line of a local launch: [`LOCAL_FLAGS`], the profile, the window, Cline's user
/// agent, then the configured extra arguments (which may override the defaults).
pub fn local_args(settings: &BrowserSettings, profile: &Path) -> Vec<String> {
    let mut args: Vec<String> = LOCAL_FLAGS.iter().map(|flag| flag.to_string()).collect();
    args.extend([
        format!("--user-data-dir={}", profile.display()),
        // Port 0: Chromium picks a free port and prints the address on stderr.
        "--remote-debugging-port=0".to_string(),
        format!(
            "--window-size={},{}",
            settings.viewport.width, settings.viewport.height
        ),
        format!("--user-agent={USER_AGENT}"),
    ]);
    if let Some(proxy) = &settings.egress_proxy {
        // Every request through the proxy, loopback included (`<-loopback>` takes away
        // Chromium's implicit bypass of it).
        args.push(format!("--proxy-server={proxy}"));
        args.push("--proxy-bypass-list=<-loopback>".to_string());
    }
    args.extend(settings.custom_args.iter().cloned());
    args.push("about:blank".to_string());
    args
}

/// Launches Chromium with a fresh profile and returns its keeper.
pub async fn launch_local(settings: &BrowserSettings) -> Result<Keeper, String> {
    Profile::remove_stale(&settings.profile_root);
    let profile = Profile::create(&settings.profile_root).map_err(|e| {
        format!(
            "Could not create a browser profile in {}: {e}",
            settings.profile_root.display()
        )
    })?;
    let args = local_args(settings, &profile.path());
    // From here on, dropping `local` (on any error below) kills Chromium and removes the
    // profile.
    let mut local = Local {
        child: None,
        profile: Some(profile),
    };
    let executable = settings.executable.clone();
    let cannot_launch = |e: &dyn std::fmt::Display| {
        format!(
            "Could not launch the browser {}: {e}",
            settings.executable.display()
        )
    };
    // Spawned from a runtime worker: the parent-death signal follows the thread that spawned
    // the process, and the workers live exactly as long as the runtime.
    let child = tokio::spawn(async move { spawn_tied(&executable, &args) })
        .await
        .map_err(|e| cannot_launch(&e))?
        .map_err(|e| cannot_launch(&e))?;
    let child = local.child.insert(child);
    let address = devtools_address(child)
        .await
        .map_err(|e| cannot_launch(&e))?;
    let (browser, handler) = connect(&address, settings.viewport)
        .await
        .map_err(|e| cannot_launch(&e))?;
    Ok(Keeper::spawn(browser, handler, local))
}

/// Spawns `executable` so that it receives SIGKILL when the spawning thread ends.
fn spawn_tied(executable: &PathBuf, args: &[String]) -> std::io::Result<Child> {
    let mut command = Command::new(executable);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    // SAFETY: the closure runs in the child between fork and exec, where only
    // async-signal-safe work is allowed: it makes one raw `prctl` system call (rustix's
    // linux_raw backend: no allocation, no locks).
    unsafe {
        command.pre_exec(|| {
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))
                .map_err(std::io::Error::from)
        });
    }
    command.spawn()
}

/// Reads Chromium's stderr until it prints `DevTools listening on ws://…`. The rest of the
/// output is drained (and dropped) until Chromium exits, so that it never blocks on a full
/// pipe.
async fn devtools_address(child: &mut Child) -> Result<String, String> {
    let stderr = child
        .stderr
        .take()
        .ok_or_else(|| "its stderr is not readable".to_string())?;
    let (found, address) = oneshot::channel();
    tokio::spawn(async move {
        let mut reader = tokio::io::BufReader::new(stderr);
        let mut found = Some(found);
        let mut seen = Vec::new();
        let mut line = Vec::new();
        loop {
            line.clear();
            match reader.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            if found.is_none() {
                continue;
            }
            let text = String::from_utf8_lossy(&line).trim().to_string();
            match text.split_once("DevTools listening on ") {
                Some((_, ws)) => {
                    if let Some(found) = found.take() {
                        let _ = found.send(Ok(ws.trim().to_string()));
                    }
                }
                None if seen.len() < STDERR_LINES => seen.push(text),
                None => {}
            }
        }
        if let Some(found) = found {
            let _ = found.send(Err(seen.join("\n")));
        }
    });
    match tokio::time::timeout(LAUNCH_TIMEOUT, address).await {
        Ok(Ok(Ok(ws))) => Ok(ws),
        Ok(Ok(Err(stderr))) => Err(format!("it exited during start-up: {stderr}")),
        Ok(Err(_)) => Err("its output could not be read".to_string()),
        Err(_) => Err(format!(
            "it printed no DevTools address within {} seconds",
            LAUNCH_TIMEOUT.as_secs()
        )),
    }
}

/// The URL chromiumoxide connects to: `host:port` becomes `http://host:port` (whose
/// `/json/version` gives the WebSocket address); `http(s)://` and `ws(s)://` URLs are kept.
pub fn endpoint_url(endpoint: &str) -> String {
    let endpoint = endpoint.trim();
    let has_scheme = ["http://", "https://", "ws://", "wss://"]
        .iter()
        .any(|scheme| endpoint.starts_with(scheme));
    if has_scheme {
        endpoint.to_string()
    } else {
        format!("http://{endpoint}")
    }
}

/// Connects to a running browser's DevTools endpoint, reusing a recent WebSocket address.
pub async fn connect_remote(endpoint: &str, size: ViewportSize) -> Result<Keeper, String> {
    let cached = WS_CACHE
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
        .filter(|(for_endpoint, _, when)| for_endpoint == endpoint && when.elapsed() < WS_CACHE_FOR)
        .map(|(_, address, _)| address);
    if let Some(address) = cached {
        if let Ok((browser, handler)) = connect(&address, size).await {
            return Ok(Keeper::spawn(browser, handler, Local::default()));
        }
        *WS_CACHE.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }
    let (browser, handler) = connect(&endpoint_url(endpoint), size).await?;
    *WS_CACHE.lock().unwrap_or_else(PoisonError::into_inner) = Some((
        endpoint.to_string(),
        browser.websocket_address().clone(),
        Instant::now(),
    ));
    Ok(Keeper::spawn(browser, handler, Local::default()))
}

async fn connect(url: &str, size: ViewportSize) -> Result<(Browser, Handler), String> {
    let config = HandlerConfig {
        viewport: Some(viewport(size)),
        ..HandlerConfig::default()
    };
    // On its own task: chromiumoxide unwraps the peer address of the `/json/version` answer,
    // and a panic there must become a failed connection, not a failed plugin.
    let attempt = tokio::spawn(Browser::connect_with_config(url.to_string(), config));
    let abort = attempt.abort_handle();
    match tokio::time::timeout(CONNECT_TIMEOUT, attempt).await {
        Ok(Ok(Ok(connected))) => Ok(connected),
        Ok(Ok(Err(e))) => Err(e.to_string()),
        Ok(Err(_panicked)) => Err("the connection attempt failed".to_string()),
        Err(_elapsed) => {
            abort.abort();
            Err(format!(
                "no answer within {} seconds",
                CONNECT_TIMEOUT.as_secs()
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_become_urls() {
        assert_eq!(endpoint_url("localhost:9222"), "http://localhost:9222");
        assert_eq!(endpoint_url(" 127.0.0.1:9333 "), "http://127.0.0.1:9333");
        assert_eq!(endpoint_url("http://devbox:9222/"), "http://devbox:9222/");
        let ws = "ws://127.0.0.1:9222/devtools/browser/abc";
        assert_eq!(endpoint_url(ws), ws);
    }

    #[test]
    fn the_command_line_has_the_offline_flags_then_the_configured_ones() {
        let settings = BrowserSettings {
            custom_args: vec!["--lang=de".to_string()],
            ..BrowserSettings::default()
        };
        let args = local_args(&settings, Path::new("/tmp/p"));
        assert_eq!(&args[..LOCAL_FLAGS.len()], LOCAL_FLAGS);
        assert_eq!(
            &args[LOCAL_FLAGS.len()..],
            [
                "--user-data-dir=/tmp/p",
                "--remote-debugging-port=0",
                "--window-size=900,600",
                &format!("--user-agent={USER_AGENT}"),
                "--lang=de",
                "about:blank",
            ]
        );
    }
}
