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

/// The manifest of tools that ask: a `confirm` gate, and scripts that run `ferry ask`.
const ASKING: &str = r#"
[server]
name = "asking"
roots = ["root"]

[[tools]]
name = "delete"
description = "Delete a file, once the person confirms."
command = ["rm", "--", "{path}"]
confirm = "Delete {path}?"

[tools.params.path]
type = "path"

[[tools]]
name = "proceed"
description = "A script that asks before it goes on."
command = ["sh", "-c", "if ferry ask --confirm 'Proceed with keep-me-not?'; then echo went on; else echo stopped; fi"]

[[tools]]
name = "form"
description = "Ask who the person is."
command = ["sh", "-c", 'ferry ask --elicit "Who are you?" --schema "$1"', "sh", '{{"type":"object","properties":{{"name":{{"type":"string"}}}},"required":["name"]}}']

[[tools]]
name = "sample"
description = "Ask the host's model."
command = ["sh", "-c", 'ferry ask --sample "$1" --system "Answer briefly"', "sh", "{question}"]

[tools.params.question]
type = "string"

[[tools]]
name = "roots"
description = "Say the client's roots."
command = ["sh", "-c", "ferry ask --roots"]
"#;

/// Runs the talk-back battery (tests/fixtures/sdk_ask_client.py) against a fresh copy of the
/// asking manifest; returns the report and whether each file is still there.
fn ask_battery(transport: &str, mode: &str, elicitation: bool) -> (Value, bool, bool) {
    let env = Env::new();
    env.write("asking.toml", ASKING);
    env.write("root/keep-me.txt", "kept\n");
    env.write("root/keep-me-not.txt", "gone?\n");
    let manifest = env.path("asking.toml").display().to_string();
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sdk_ask_client.py");
    let served;
    let mut target: Vec<String> = Vec::new();
    if transport == "http" {
        served = Some(HttpServed::start(&env, &["--manifest", &manifest]));
        let server = served.as_ref().unwrap();
        target.push(server.url.clone());
        target.push(server.token.clone().unwrap());
    } else {
        served = None;
        for word in [FERRY, "serve", "--manifest", &manifest] {
            target.push(word.to_string());
        }
    }
    let mut command = Command::new(venv_python());
    command
        .arg(script)
        .arg(transport)
        .arg(mode)
        .args(&target)
        .current_dir(env.path("work"))
        .env("HOME", env.path("home"))
        .env("FERRY_CONFIG_DIR", env.path("config"))
        .env("FERRY_CACHE_DIR", env.path("cache"))
        .stdin(Stdio::null());
    if !elicitation {
        command.env("SDK_NO_ELICITATION", "1");
    }
    let output = command.output().unwrap();
    drop(served);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let report = stdout
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| {
            panic!(
                "{transport} {mode}: no report\n{stdout}\n{}",
                String::from_utf8_lossy(&output.stderr)
            )
        });
    (
        report,
        env.path("root/keep-me.txt").exists(),
        env.path("root/keep-me-not.txt").exists(),
    )
}

/// Commands that talk back, with the SDK as the host in both eras: a `confirm` the person
/// accepts runs the command and one declined runs nothing; a script's own confirm; a form's
/// answer, the model's answer and the client's roots reach the command.
#[test]
fn commands_ask_the_python_sdk_in_both_eras() {
    for (transport, mode, era) in [
        ("stdio", "auto", "2026-07-28"),
        ("stdio", "legacy", "2025-11-25"),
        ("http", "auto", "2026-07-28"),
        ("http", "legacy", "2025-11-25"),
    ] {
        let (report, kept, unkept) = ask_battery(transport, mode, true);
        let at = format!("{transport} {mode}");
        assert_eq!(report["protocol_version"], era, "{at}");
        let call = |name: &str, arguments: &str| report[format!("{name} {arguments}")].clone();
        assert_eq!(
            call("delete", "{'path': 'keep-me-not.txt'}"),
            // (An empty text block reads as its type: rm prints nothing.)
            json!({"is_error": false, "text": ["text"]}),
            "{at}"
        );
        assert!(!unkept, "{at}: the confirmed delete ran");
        assert_eq!(
            call("delete", "{'path': 'keep-me.txt'}"),
            json!({"is_error": true, "text": ["delete was not confirmed (not confirmed): nothing was run"]}),
            "{at}"
        );
        assert!(kept, "{at}: the declined delete ran nothing");
        assert_eq!(
            call("proceed", "{}"),
            json!({"is_error": false, "text": ["went on\n"]}),
            "{at}"
        );
        assert_eq!(
            call("form", "{}"),
            json!({"is_error": false, "text": ["{\"name\":\"Ada\"}\n"]}),
            "{at}"
        );
        assert_eq!(
            call("sample", "{'question': 'What is the capital of France?'}"),
            json!({"is_error": false, "text": ["Paris, said the model\n"]}),
            "{at}"
        );
        assert_eq!(
            call("roots", "{}"),
            json!({"is_error": false, "text": ["/work/a project\n"]}),
            "{at}"
        );
        let asked: Vec<String> = serde_json::from_value(report["asked"].clone()).unwrap();
        assert_eq!(asked.len(), 5, "{at}: {asked:?}");
        assert!(
            asked[0].starts_with("Delete /") && asked[0].ends_with("/root/keep-me-not.txt?"),
            "{at}: {asked:?}"
        );
        assert_eq!(
            asked[2..],
            [
                "Proceed with keep-me-not?",
                "Who are you?",
                "What is the capital of France?"
            ],
            "{at}"
        );
    }
}

/// A client that cannot ask the person: a `confirm` fails closed (nothing runs), and a
/// script's `ferry ask` hears exit 3.
#[test]
fn a_client_without_elicitation_runs_nothing_that_must_be_confirmed() {
    for mode in ["auto", "legacy"] {
        let (report, kept, unkept) = ask_battery("stdio", mode, false);
        let call = |name: &str, arguments: &str| report[format!("{name} {arguments}")].clone();
        assert_eq!(
            call("delete", "{'path': 'keep-me-not.txt'}"),
            json!({"is_error": true, "text": ["delete asks the person to confirm first, and the client did not declare the elicitation capability, so it cannot answer: nothing was run"]}),
            "{mode}"
        );
        assert!(kept && unkept, "{mode}: nothing was deleted");
        // The script went on (exit 0); what `ferry ask` said on stderr reaches the model too.
        assert_eq!(
            call("proceed", "{}"),
            json!({"is_error": false, "text": ["stopped\n", "stderr (last lines):\nerror: the client did not declare the elicitation capability, so it cannot answer\nhint: ask only what the client can answer; ferry ask works inside a command ferry serve runs"]}),
            "{mode}"
        );
        assert_eq!(call("form", "{}")["is_error"], json!(true), "{mode}");
        assert_eq!(
            call("sample", "{'question': 'What is the capital of France?'}")["text"],
            json!(["Paris, said the model\n"]),
            "{mode}"
        );
    }
}
