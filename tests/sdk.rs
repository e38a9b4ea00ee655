//! The official Python SDK client (`mcp`, pinned in tests/fixtures/requirements.txt) drives
//! `ferry serve` over stdio and Streamable HTTP, in its default mode (which probes
//! `server/discover`, so the 2026-07-28 era) and in legacy mode (the initialize handshake):
//! every parameter kind, refusals, errors, a timeout, a cancellation, progress, resources,
//! templates, prompts and completion (tests/fixtures/sdk_client.py runs the battery).

mod support;

use serde_json::{json, Value};
use std::process::{Command, Stdio};
use support::*;

fn script() -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/sdk_client.py")
        .display()
        .to_string()
}

/// Runs the battery; returns the report.
fn battery(env: &Env, transport: &str, mode: &str, target: &[&str], sleep: &str) -> Value {
    let marker = serve_root().join(format!("sdk-outlived-{}-{sleep}", std::process::id()));
    let output = Command::new(venv_python())
        .arg(script())
        .arg(transport)
        .arg(mode)
        .args(target)
        .current_dir(env.path("work"))
        .env("HOME", env.path("home"))
        .env("FERRY_CONFIG_DIR", env.path("config"))
        .env("FERRY_CACHE_DIR", env.path("cache"))
        .env("SDK_MARKER", &marker)
        .env("SDK_SLEEP", sleep)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let report = stdout
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok());
    let made = marker.exists();
    let _ = std::fs::remove_file(&marker);
    assert!(!made, "the timed-out command's grandchild ran");
    report.unwrap_or_else(|| {
        panic!(
            "{transport} {mode}: no report\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// What the battery must see, in either era over either transport.
fn check(report: &Value, era: &str) {
    assert_eq!(report["protocol_version"], era);
    assert_eq!(report["instructions"], "Test tools for ferry serve.");
    // The schemas the client sees are exactly what the manifest compiles to.
    let manifest = ferry::manifest::load(std::path::Path::new(&serve_manifest())).unwrap();
    for tool in manifest.tools() {
        assert_eq!(
            report["tools"][&tool.name], tool.input_schema,
            "{}",
            tool.name
        );
    }
    let root = serve_root().display().to_string();
    assert_eq!(
        report["kinds"],
        json!({"is_error": false, "text": [format!("[hi there]\n[3]\n[1.5]\n[--flag]\n[--opt]\n[o]\n[--mode=b]\n[{root}/new.txt]\n[x]\n[y z]\n")]})
    );
    assert_eq!(
        report["refused"],
        json!({"is_error": true, "text": ["Refused: items may not start with '-' (it would be read as an option)"]})
    );
    assert_eq!(report["invalid"]["is_error"], true);
    assert!(report["invalid"]["text"][0]
        .as_str()
        .unwrap()
        .starts_with("Invalid arguments for kinds: count expects a value >= 1, not 0\n"));
    assert_eq!(
        report["fail"],
        json!({"is_error": true, "text": ["partial\nfail failed: exit code 3\nstderr (last lines):\nwent wrong"]})
    );
    assert_eq!(
        report["json_out"]["structured"],
        json!({"sum": 41, "ok": true})
    );
    assert_eq!(report["image_out"], json!([["image", "image/png"]]));
    assert_eq!(
        report["progress"],
        json!({"steps": [[1.0, 3.0], [2.0, 3.0], [3.0, 3.0]], "text": ["finished\n"]})
    );
    assert_eq!(
        report["timeout"],
        json!({"is_error": true, "text": ["outlive timed out after 1s and was stopped (with everything it started)"]})
    );
    assert_eq!(
        report["cancelled_left_running"],
        json!([]),
        "the cancelled command was stopped"
    );
    assert_eq!(report["after_cancel"], json!(["nothing found\n"]));
    assert_eq!(
        report["resources"],
        json!(["test://readme", "test://pixel", "test://year"])
    );
    assert_eq!(
        report["readme"],
        "Test data for ferry serve.\nSecond line.\n"
    );
    assert_eq!(report["pixel"], json!(["image/png", 92]));
    assert_eq!(report["templates"], json!(["test://file/{name}"]));
    assert_eq!(report["template_read"], "one\ntwo\nthree\n");
    assert_eq!(report["prompts"], json!(["review"]));
    assert_eq!(report["prompt"], json!(["text", "resource", "image"]));
    assert_eq!(
        report["prompt_text"],
        "Review README.txt for bugs, {carefully}."
    );
    assert_eq!(report["completion"], json!(["sub/three.txt"]));
}

#[test]
fn the_python_sdk_over_stdio_in_both_eras() {
    let env = Env::new();
    let manifest = serve_manifest();
    let args = [FERRY, "serve", "--manifest", &manifest];
    check(
        &battery(&env, "stdio", "auto", &args, "51.125"),
        "2026-07-28",
    );
    check(
        &battery(&env, "stdio", "legacy", &args, "51.375"),
        "2025-11-25",
    );
}

#[test]
fn the_python_sdk_over_streamable_http_in_both_eras() {
    let env = Env::new();
    let server = HttpServed::start(&env, &["--manifest", &serve_manifest()]);
    let token = server.token.clone().expect("a token for the run");
    check(
        &battery(&env, "http", "auto", &[&server.url, &token], "52.125"),
        "2026-07-28",
    );
    check(
        &battery(&env, "http", "legacy", &[&server.url, &token], "52.375"),
        "2025-11-25",
    );
}
