//! The task that owns a browser connection: it polls chromiumoxide's `Handler` (every call
//! hangs otherwise), creates the page, and closes the browser.
//!
//! A launched browser's process and profile are a [`Local`], owned by the keeper task. Owning
//! them inside a task of the plugin's runtime is what makes a stopped runtime safe: when the
//! runtime shuts down, the task is dropped, and `Local`'s drop kills Chromium, waits for it and
//! removes the profile. A graceful close goes through [`Keeper::close`] instead.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::time::Duration;

use chromiumoxide::{Browser, Handler, Page};
use futures_util::StreamExt;
use tokio::process::Child;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

/// How long Chromium gets to exit after `Browser.close` before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(5);
/// How long the keeper gets to finish a close before the caller stops waiting for it.
const CLOSE_LIMIT: Duration = Duration::from_secs(12);
/// Removing a profile (and waiting for a killed process) is retried this often…
const RETRIES: u32 = 20;
/// …at this interval: Chromium's helper processes may write into the profile for a moment
/// after the browser process has gone.
const RETRY_PAUSE: Duration = Duration::from_millis(100);

/// Profile directories are named `toolhost-browser-XXXXXX`.
pub const PROFILE_PREFIX: &str = "toolhost-browser-";
/// The file inside a profile naming the process that owns it.
const OWNER_FILE: &str = "toolhost-owner.pid";

/// A fresh user-data directory, removed when the session ends.
#[derive(Debug)]
pub struct Profile {
    dir: Option<tempfile::TempDir>,
}

impl Profile {
    /// Creates `toolhost-browser-XXXXXX` under `root`, marked with this process's id.
    pub fn create(root: &Path) -> std::io::Result<Self> {
        let dir = tempfile::Builder::new()
            .prefix(PROFILE_PREFIX)
            .tempdir_in(root)?;
        std::fs::write(dir.path().join(OWNER_FILE), std::process::id().to_string())?;
        Ok(Self { dir: Some(dir) })
    }

    /// The directory.
    pub fn path(&self) -> PathBuf {
        self.dir
            .as_ref()
            .map(|d| d.path().to_path_buf())
            .unwrap_or_default()
    }

    /// Removes the profiles under `root` whose owning process is gone: a host that was killed,
    /// or that exited with a browser open, cannot remove its own (its Chromium dies with it).
    pub fn remove_stale(root: &Path) {
        let Ok(entries) = std::fs::read_dir(root) else {
            return;
        };
        for entry in entries.filter_map(Result::ok) {
            let is_profile = entry
                .file_name()
                .to_str()
                .is_some_and(|name| name.starts_with(PROFILE_PREFIX));
            // A profile without its owner file is still being created: leave it.
            let owner = std::fs::read_to_string(entry.path().join(OWNER_FILE))
                .ok()
                .and_then(|pid| pid.trim().parse::<u32>().ok());
            if let (true, Some(pid)) = (is_profile, owner) {
                if !Path::new(&format!("/proc/{pid}")).exists() {
                    let _ = std::fs::remove_dir_all(entry.path());
                }
            }
        }
    }

    async fn remove(mut self) {
        let Some(path) = self.dir.take().map(tempfile::TempDir::keep) else {
            return;
        };
        for _ in 0..RETRIES {
            if removed(&path) {
                return;
            }
            tokio::time::sleep(RETRY_PAUSE).await;
        }
    }

    /// [`Self::remove`] for drop paths, where nothing can be awaited.
    fn remove_blocking(mut self) {
        let Some(path) = self.dir.take().map(tempfile::TempDir::keep) else {
            return;
        };
        for _ in 0..RETRIES {
            if removed(&path) {
                return;
            }
            std::thread::sleep(RETRY_PAUSE);
        }
    }
}

fn removed(path: &Path) -> bool {
    match std::fs::remove_dir_all(path) {
        Ok(()) => true,
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    }
}

/// A launched browser's process and profile; empty for a remote browser, which belongs to the
/// user and is never closed or killed.
///
/// Dropped without [`Local::finish`] (the runtime stopped, a launch failed half-way, a stuck
/// close was aborted), it kills the process, waits for it and removes the profile, blocking
/// briefly: a profile removed while Chromium still writes into it would be left half there.
#[derive(Debug, Default)]
pub struct Local {
    /// The Chromium process.
    pub child: Option<Child>,
    /// Its profile.
    pub profile: Option<Profile>,
}

impl Local {
    /// The clean end: waits for the process to exit (kills it when `graceful` is false or it
    /// does not exit in time), then removes the profile.
    async fn finish(mut self, graceful: bool) {
        if let Some(mut child) = self.child.take() {
            let exited = graceful
                && matches!(
                    tokio::time::timeout(EXIT_GRACE, child.wait()).await,
                    Ok(Ok(_))
                );
            if !exited {
                // `kill` also reaps the process.
                let _ = child.kill().await;
            }
        }
        if let Some(profile) = self.profile.take() {
            profile.remove().await;
        }
    }
}

impl Drop for Local {
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut() {
            let _ = child.start_kill();
            for _ in 0..RETRIES {
                if !matches!(child.try_wait(), Ok(None)) {
                    break;
                }
                std::thread::sleep(RETRY_PAUSE);
            }
        }
        if let Some(profile) = self.profile.take() {
            profile.remove_blocking();
        }
    }
}

enum Request {
    NewPage(oneshot::Sender<Result<Page, String>>),
    Close {
        graceful: bool,
        done: oneshot::Sender<()>,
    },
}

/// The handle of a keeper task.
#[derive(Debug)]
pub struct Keeper {
    requests: mpsc::Sender<Request>,
    task: JoinHandle<()>,
}

impl Keeper {
    /// Starts the task for a connected browser and what it owns locally.
    pub fn spawn(browser: Browser, handler: Handler, local: Local) -> Self {
        let (requests, receiver) = mpsc::channel(4);
        let task = tokio::spawn(keep(browser, handler, local, receiver));
        Self { requests, task }
    }

    /// Opens a new page (tab).
    pub async fn new_page(&self) -> Result<Page, String> {
        let (reply, answer) = oneshot::channel();
        self.requests
            .send(Request::NewPage(reply))
            .await
            .map_err(|_| CONNECTION_CLOSED.to_string())?;
        answer.await.map_err(|_| CONNECTION_CLOSED.to_string())?
    }

    /// Closes the browser (a launched one gracefully, then by force; `graceful = false` kills
    /// it at once; a remote one is only disconnected), removes the profile and waits for all
    /// of it, within a bounded time.
    pub async fn close(self, graceful: bool) {
        let (done, finished) = oneshot::channel();
        let sent = self
            .requests
            .send(Request::Close { graceful, done })
            .await
            .is_ok();
        if sent && tokio::time::timeout(CLOSE_LIMIT, finished).await.is_ok() {
            return;
        }
        // The task is gone or stuck: dropping it drops its `Local`, which cleans up.
        self.task.abort();
        let _ = self.task.await;
    }
}

const CONNECTION_CLOSED: &str = "the browser connection is closed";

async fn keep(
    browser: Browser,
    mut handler: Handler,
    local: Local,
    mut requests: mpsc::Receiver<Request>,
) {
    let mut connected = true;
    let ending = loop {
        tokio::select! {
            event = handler.next(), if connected => {
                // The stream ends (or fails) when the connection does: the browser crashed,
                // was closed, or the remote end went away. Pages then fail their commands.
                if !matches!(event, Some(Ok(()))) {
                    connected = false;
                }
            }
            request = requests.recv() => match request {
                Some(Request::NewPage(reply)) => {
                    let page = if connected {
                        drive(&mut handler, browser.new_page("about:blank"))
                            .await
                            .unwrap_or(Err(chromiumoxide::error::CdpError::NoResponse))
                            .map_err(|e| e.to_string())
                    } else {
                        Err(CONNECTION_CLOSED.to_string())
                    };
                    let _ = reply.send(page);
                }
                Some(Request::Close { graceful, done }) => break (graceful, Some(done)),
                // The session was dropped without a close: close by force.
                None => break (false, None),
            },
        }
    };
    let (graceful, done) = ending;
    // Only a launched browser is asked to quit: `Browser.close` would end a user's browser.
    let launched = local.child.is_some();
    let graceful = graceful && connected && launched;
    if graceful {
        let mut browser = browser;
        let _ = tokio::time::timeout(EXIT_GRACE, drive(&mut handler, browser.close())).await;
    }
    // Dropping the handler ends the connection (all a remote browser gets).
    drop(handler);
    local.finish(graceful).await;
    if let Some(done) = done {
        let _ = done.send(());
    }
}

/// Runs `future` while polling the handler; `None` when the connection ended first.
async fn drive<F: Future>(handler: &mut Handler, future: F) -> Option<F::Output> {
    tokio::pin!(future);
    loop {
        tokio::select! {
            output = &mut future => return Some(output),
            event = handler.next() => {
                if !matches!(event, Some(Ok(()))) {
                    return None;
                }
            }
        }
    }
}
