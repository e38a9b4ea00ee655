//! `ferry serve --servers`: configured MCP servers behind find, describe and call, driven by
//! the official Python SDK over stdio (both of its modes) and HTTP, with server-everything,
//! server-filesystem and a server replaying a corpus snapshot as backends.

mod support;

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use support::*;

fn script() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/proxy_client.py")
        .display()
        .to_string()
}

fn replay_server() -> String {
    Path::new(FERRY)
        .parent()
        .unwrap()
        .join("examples/replay_server")
        .display()
        .to_string()
}

/// Three backends, listed once (so their tools are cached), the corpus one counted.
fn backends(env: &Env) -> std::path::PathBuf {
    let snapshot = corpus_snapshots()
        .into_iter()
        .find(|(name, _)| name == "github")
        .map(|(_, path)| path)
        .expect("the github snapshot in tests/corpus");
    let (corpus, counter) = env.counted(&format!("{} {}", replay_server(), snapshot.display()));
    std::fs::write(env.path("work/note.txt"), "a note\n").unwrap();
    let config = serde_json::json!({"mcpServers": {
        "ev": {"command": "sh", "args": ["-c", everything()]},
        "fs": {"command": "sh", "args": ["-c", filesystem(&env.path("work"))]},
        "corpus": {"command": "sh", "args": ["-c", corpus.trim_start_matches("sh -c ").trim_matches('\'')]},
    }});
    env.write("config/servers.json", &config.to_string());
    for name in ["ev", "fs", "corpus"] {
        let listed = env.run(&[name]);
        assert_eq!(listed.code, 0, "{name}: {}", listed.stderr);
    }
    counter
}

fn battery(env: &Env, transport: &str, mode: &str, target: &[&str]) -> Value {
    let output = Command::new(venv_python())
        .arg(script())
        .arg(transport)
        .arg(mode)
        .args(target)
        .current_dir(env.path("work"))
        .env("HOME", env.path("home"))
        .env("FERRY_CONFIG_DIR", env.path("config"))
        .env("FERRY_CACHE_DIR", env.path("cache"))
        .env("FERRY_NO_DAEMON", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    stdout
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| {
            panic!(
                "{transport} {mode}: no report\n{stdout}\n{}",
                String::from_utf8_lossy(&output.stderr)
            )
        })
}

fn texts(value: &Value) -> String {
    value
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

fn check(report: &Value) {
    assert_eq!(
        report["tools"],
        serde_json::json!(["find", "describe", "call"])
    );
    for meta in report["meta"].as_array().unwrap() {
        assert_eq!(meta["anthropic/alwaysLoad"], true, "{meta}");
    }
    assert_eq!(report["stable"], true);
    let instructions = report["instructions"].as_str().unwrap();
    assert!(instructions.contains("\n- ev (13 tools)"), "{instructions}");
    assert!(instructions.contains("\n- fs ("), "{instructions}");
    assert!(
        instructions.contains("\n- corpus (26 tools)"),
        "{instructions}"
    );
    let find = texts(&report["find"]);
    let first = find.lines().next().unwrap();
    assert!(first.starts_with("fs/read_"), "{find}");
    // The top hit's help follows its line, for JSON arguments (no dashes).
    assert!(
        find.lines().nth(2).unwrap().starts_with("  path str"),
        "{find}"
    );
    assert_eq!(
        texts(&report["describe"]),
        "ev/get-sum\nReturns the sum of two numbers\na num required: First number\nb num required: Second number\n"
    );
    assert_eq!(report["echo"]["text"][0], "Echo: through");
    assert_eq!(report["echo"]["is_error"], false);
    assert_eq!(report["echo_text_args"][0], "Echo: as text");
    assert_eq!(
        report["sum_beside"]["is_error"], false,
        "{}",
        report["sum_beside"]
    );
    assert!(texts(&report["sum_beside"]["text"]).contains('5'));
    assert_eq!(report["both"]["is_error"], true);
    assert!(texts(&report["both"]["text"]).contains("inside \"arguments\""));
    assert_eq!(
        report["image"],
        serde_json::json!([["text", null], ["image", "image/png"], ["text", null]])
    );
    assert!(report["structured"].is_object(), "{}", report["structured"]);
    assert_eq!(report["invalid"]["is_error"], true);
    let invalid = texts(&report["invalid"]["text"]);
    assert!(
        invalid.starts_with("Invalid arguments for ev/get-sum: "),
        "{invalid}"
    );
    assert!(
        invalid.contains("a num required: First number"),
        "{invalid}"
    );
    assert_eq!(report["unknown"]["is_error"], true);
    assert!(texts(&report["unknown"]["text"]).contains("Did you mean ev/get-sum?"));
    assert_eq!(
        report["replayed"][0],
        "called create_issue with {\"owner\":\"o\",\"repo\":\"r\",\"title\":\"t\"}"
    );
    assert!(
        !report["progress"]["steps"].as_array().unwrap().is_empty(),
        "{}",
        report["progress"]
    );
}

#[test]
fn the_python_sdk_finds_describes_and_calls_through_the_proxy() {
    let env = Env::new();
    let counter = backends(&env);
    assert_eq!(spawns(&counter), 1);
    let report = battery(&env, "stdio", "auto", &[FERRY, "serve", "--servers"]);
    check(&report);
    // find and describe start nothing; the calls share one warm backend.
    assert_eq!(spawns(&counter), 2);
    check(&battery(
        &env,
        "stdio",
        "legacy",
        &[FERRY, "serve", "--servers", "ev", "fs", "corpus"],
    ));
    let server = HttpServed::start(&env, &["--servers"]);
    let token = server.token.clone().expect("a token for the run");
    check(&battery(&env, "http", "auto", &[&server.url, &token]));
}

#[test]
fn expose_all_lists_every_tool_and_bad_names_are_refused_at_start() {
    let env = Env::new();
    backends(&env);
    let mut served = Served::start(&env, &["--servers", "ev", "--expose", "all"]);
    let listed = served.call(1, "tools/list", serde_json::json!({}), &mut Vec::new());
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names.len(), 13);
    assert!(names.contains(&"ev__echo"), "{names:?}");
    let echo = served.call(
        2,
        "tools/call",
        serde_json::json!({"name": "ev__echo", "arguments": {"message": "all"}}),
        &mut Vec::new(),
    );
    assert_eq!(Served::text(&echo), "Echo: all");
    drop(served);
    let unknown = env.run(&["serve", "--servers", "nope"]);
    assert_eq!(unknown.code, 2);
    assert!(
        unknown.stderr.starts_with("error: unknown server \"nope\""),
        "{}",
        unknown.stderr
    );
}

#[test]
fn a_server_never_listed_is_listed_once_in_the_background() {
    let env = Env::new();
    env.write(
        "config/servers.json",
        &serde_json::json!({"mcpServers": {"ev": {"command": "sh", "args": ["-c", everything()]}}})
            .to_string(),
    );
    let mut served = Served::start(&env, &["--servers"]);
    let mut found = String::new();
    for id in 0..100 {
        let result = served.call(
            id,
            "tools/call",
            serde_json::json!({"name": "find", "arguments": {"query": "echo a message"}}),
            &mut Vec::new(),
        );
        found = Served::text(&result);
        if found.starts_with("ev/echo") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(found.starts_with("ev/echo(message)"), "{found}");
    // The listing went to the cache: the CLI sees it too, without starting the server.
    let listing = env.run(&["ev"]);
    assert!(
        listing.stdout.starts_with("echo(message) - "),
        "{}",
        listing.stdout
    );
}
