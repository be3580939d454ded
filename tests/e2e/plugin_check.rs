//! `toolhost plugin check LIB`: every bundled plugin and every sound fixture passes; each
//! broken fixture fails with its own reason.

use toolhost_tests::{library, real_plugins, run, toolhost_as_installed, Run};

fn check(crate_name: &str) -> Run {
    run(toolhost_as_installed()
        .args(["plugin", "check"])
        .arg(library(crate_name)))
}

#[test]
fn the_bundled_plugins_and_the_sound_fixtures_pass() {
    let sound = [
        "fixture_noop_tool",
        "fixture_duplicate",
        "fixture_access",
        "fixture_faulty",
    ];
    let mut failed = Vec::new();
    for name in real_plugins().iter().map(String::as_str).chain(sound) {
        let checked = check(name);
        if checked.code != 0 || !checked.stdout.contains("a host would load it") {
            failed.push(format!("{name}: {checked:?}"));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[test]
fn each_broken_fixture_fails_with_its_reason() {
    for (name, reason) in [
        ("fixture_not_a_plugin", "not a toolhost plugin"),
        (
            "fixture_wrong_abi_version",
            "incompatible ABI version: built against tool-api 2.0.0, this host uses tool-api \
             1.0.0: it needs a toolhost built against tool-api 2.x",
        ),
        ("fixture_wrong_layout", "incompatible ABI layout"),
        ("fixture_needs_newer_host", "needs a newer host"),
    ] {
        let checked = check(name);
        assert_eq!(checked.code, 1, "{name}: {checked:?}");
        assert!(
            checked.stdout.contains(reason) && checked.stdout.contains("a host would not load it"),
            "{name} should fail with '{reason}': {checked:?}"
        );
    }
}

#[test]
fn the_spec_is_held_to_the_model_apis_limits() {
    let checked = check("fixture_access");
    for line in [
        "declares its access: fs=workspace-write",
        "tool access_write: name, description and schema fit OpenAI (strict mode too) and Anthropic",
        "a sample call of access_connect",
    ] {
        assert!(checked.stdout.contains(line), "{line}: {checked:?}");
    }
}
