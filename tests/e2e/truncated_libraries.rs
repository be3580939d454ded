//! Truncated and half-written plugin libraries: the dynamic loader would map them as they are
//! and the process would die of SIGBUS on the first page past the end of the file. At startup
//! such a library is one warning; under `--watch` a library is loaded only once it is
//! complete and has settled.

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use toolhost_tests::{library, run, toolhost, tools_json, workdir, PluginDir};

use crate::faults_in_process::{Protocol, Session};

/// A copy of a real plugin's library cut to `numerator/denominator` of its size.
fn cut(dir: &Path, name: &str, numerator: u64, denominator: u64) {
    let bytes = std::fs::read(library("read_file")).unwrap();
    let length = bytes.len() as u64 * numerator / denominator;
    std::fs::write(dir.join(name), &bytes[..length as usize]).unwrap();
}

#[test]
fn a_truncated_library_at_startup_is_a_warning_and_the_rest_work() {
    let plugins = PluginDir::empty();
    plugins
        .add_library("read_file")
        .add_library("fixture_faults");
    // Half the file: the segments may all be there (a debug build is mostly debug sections),
    // the section header table is not. An eighth: the loader's segments are cut short too.
    cut(plugins.path(), "libhalf.so", 1, 2);
    cut(plugins.path(), "libeighth.so", 1, 8);

    let json = tools_json(plugins.path());
    let mut warnings: Vec<(String, String)> = json["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            let file = w["file"].as_str().unwrap();
            let name = file.rsplit('/').next().unwrap().to_string();
            (name, w["message"].as_str().unwrap().to_string())
        })
        .collect();
    warnings.sort();
    assert_eq!(warnings.len(), 2, "{warnings:#?}");
    assert_eq!(warnings[0].0, "libeighth.so");
    assert!(
        warnings[0]
            .1
            .starts_with("not a loadable library: truncated: program header "),
        "{}",
        warnings[0].1
    );
    assert!(
        warnings[0].1.contains("(PT_LOAD) needs "),
        "{}",
        warnings[0].1
    );
    assert_eq!(warnings[1].0, "libhalf.so");
    assert!(
        warnings[1]
            .1
            .starts_with("not a loadable library: truncated: "),
        "{}",
        warnings[1].1
    );
    for (_, message) in &warnings {
        assert!(message.contains(" bytes, the file has "), "{message}");
    }
    let names: Vec<&str> = json["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"read_file") && names.contains(&"fault_ok"),
        "{names:?}"
    );

    // A call loads the same directory: the same warnings on stderr, and the tool runs.
    let ws = workdir();
    let call = run(toolhost()
        .arg("--plugins")
        .arg(plugins.path())
        .args(["call", "fault_ok", "{}", "--cwd"])
        .arg(ws.path()));
    assert_eq!(
        (call.code, call.stdout.as_str()),
        (0, "ok"),
        "{}",
        call.stderr
    );
    assert!(call
        .stderr
        .contains("libeighth.so: not a loadable library: truncated"));
    assert!(call
        .stderr
        .contains("libhalf.so: not a loadable library: truncated"));
}

/// `serve --watch` over a directory with read_file; `fault_ok` is not there yet.
fn watching_server(plugins: &Path, logs: &Path) -> Session {
    std::fs::copy(library("read_file"), plugins.join("libread_file.so")).unwrap();
    let ws = logs.join("ws");
    std::fs::create_dir(&ws).unwrap();
    std::fs::write(ws.join("a.txt"), "one\n").unwrap();
    let mut command = toolhost();
    command
        .arg("--plugins")
        .arg(plugins)
        .args(["serve", "--watch", "--cwd"])
        .arg(&ws);
    let mut session = Session::spawn(Protocol::Serve, &mut command, &logs.join("stderr.log"));
    session.assert_serves("starting");
    assert!(session.call("fault_ok").unwrap().is_error);
    session
}

/// Calls `fault_ok` until the new library serves it.
fn wait_until_served(session: &mut Session) {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let answer = session
            .call("fault_ok")
            .unwrap_or_else(|| panic!("the server died:\n{}", session.stderr()));
        if !answer.is_error {
            assert_eq!(answer.text, "ok");
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the library was never loaded:\n{}",
            session.stderr()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Nothing was said about the half-written file: it was skipped, not loaded and refused.
fn assert_no_hot_swap_warning(session: &Session) {
    let stderr = session.stderr();
    assert!(
        !stderr
            .lines()
            .any(|l| l.contains("WARN") && l.contains("hot swap")),
        "{stderr}"
    );
}

#[test]
fn watch_loads_a_library_written_in_two_halves_once_it_is_complete() {
    let root = workdir();
    let plugins = root.path().join("plugins");
    std::fs::create_dir(&plugins).unwrap();
    let mut session = watching_server(&plugins, root.path());

    // The first sixteenth, then a pause longer than the settle interval: the part settles,
    // and must not be loaded (its segments reach past its end).
    let bytes = std::fs::read(library("fixture_faults")).unwrap();
    let split = bytes.len() / 16;
    let mut file = std::fs::File::create(plugins.join("libfixture_faults.so")).unwrap();
    file.write_all(&bytes[..split]).unwrap();
    file.flush().unwrap();
    std::thread::sleep(Duration::from_millis(700));
    session.assert_serves("the first part");
    file.write_all(&bytes[split..]).unwrap();
    drop(file);

    wait_until_served(&mut session);
    session.assert_serves("the hot swap");
    assert_no_hot_swap_warning(&session);
    session.finish();
}

#[test]
fn watch_waits_for_a_library_written_in_place_to_settle() {
    use std::os::unix::fs::FileExt;

    let root = workdir();
    let plugins = root.path().join("plugins");
    std::fs::create_dir(&plugins).unwrap();
    let mut session = watching_server(&plugins, root.path());

    // The way a linker may write: the file at its full size first, then its headers, then the
    // rest out of order (here from the end backwards), a piece every 100 ms. All along the
    // headers are complete and every segment lies within the file, so the ELF check passes;
    // the pauses are longer than the watcher's debounce. Only the settling (size and
    // modification time unchanged over the interval) tells that the file is not done.
    let bytes = std::fs::read(library("fixture_faults")).unwrap();
    let file = std::fs::File::create(plugins.join("libfixture_faults.so")).unwrap();
    file.set_len(bytes.len() as u64).unwrap();
    let head = 4096;
    file.write_all_at(&bytes[..head], 0).unwrap();
    let pieces = 6;
    let piece = (bytes.len() - head).div_ceil(pieces);
    for index in (0..pieces).rev() {
        std::thread::sleep(Duration::from_millis(100));
        let start = head + index * piece;
        let end = (start + piece).min(bytes.len());
        file.write_all_at(&bytes[start..end], start as u64).unwrap();
    }
    drop(file);

    wait_until_served(&mut session);
    session.assert_serves("the hot swap");
    assert_no_hot_swap_warning(&session);
    session.finish();
}
