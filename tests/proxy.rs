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
    sdk_report(env, &script(), transport, mode, target)
}

/// Runs one of the SDK scripts against the proxy and reads the report it prints last.
fn sdk_report(env: &Env, script: &str, transport: &str, mode: &str, target: &[&str]) -> Value {
    let output = Command::new(venv_python())
        .arg(script)
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

/// Checks a battery's report; `ev_tools` is how many tools the instructions give `ev`.
fn check(report: &Value, ev_tools: usize) {
    assert_eq!(
        report["tools"],
        serde_json::json!(["find", "describe", "call"])
    );
    for meta in report["meta"].as_array().unwrap() {
        assert_eq!(meta["anthropic/alwaysLoad"], true, "{meta}");
    }
    assert_eq!(report["stable"], true);
    let instructions = report["instructions"].as_str().unwrap();
    // 13 tools as the CLI listed them; 16 once the proxy has listed them again, declaring
    // elicitation and sampling for its host (server-everything then offers three more).
    assert!(
        instructions.contains(&format!("\n- ev ({ev_tools} tools): Everything Server")),
        "{instructions}"
    );
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
    check(&report, 13);
    // find and describe start nothing; the calls share one warm backend.
    assert_eq!(spawns(&counter), 2);
    check(
        &battery(
            &env,
            "stdio",
            "legacy",
            &[FERRY, "serve", "--servers", "ev", "fs", "corpus"],
        ),
        16,
    );
    let server = HttpServed::start(&env, &["--servers"]);
    let token = server.token.clone().expect("a token for the run");
    check(&battery(&env, "http", "auto", &[&server.url, &token]), 16);
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
    // The proxy declares elicitation and sampling, so it is listed (and can call) the three
    // tools server-everything offers only to such clients: 16, where a piped call sees 13.
    assert_eq!(names.len(), 16, "{names:?}");
    assert!(names.contains(&"ev__echo"), "{names:?}");
    let echo = served.call(
        2,
        "tools/call",
        serde_json::json!({"name": "ev__echo", "arguments": {"message": "all"}}),
        &mut Vec::new(),
    );
    assert_eq!(Served::text(&echo), "Echo: all");
    drop(served);
    Test::with(env)
        .args(&["serve", "--servers", "nope"])
        .status(2)
        .stderr("error: unknown server \"nope\"\nhint: `ferry` lists the configured servers\n")
        .run();
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

/// Backends as a new user has them right after `ferry add`: nothing cached, one server slow
/// to start (its listing outlasts the proxy's start), one that cannot start at all.
fn fresh_backends(env: &Env) {
    std::fs::write(env.path("work/big.txt"), big_text()).unwrap();
    let config = serde_json::json!({"mcpServers": {
        "ev": {"command": "sh", "args": ["-c", format!("sleep 3; exec {}", everything())]},
        "fs": {"command": "sh", "args": ["-c", filesystem(&env.path("work"))], "maxTokens": 2000},
        "broken": {"command": "false"},
    }});
    env.write("config/servers.json", &config.to_string());
}

/// 200 KB of numbered lines.
fn big_text() -> String {
    (0..20_000).map(|i| format!("line {i:05}\n")).collect()
}

fn host(env: &Env, mode: &str, target: &[&str]) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/proxy_host.py");
    sdk_report(env, &script.display().to_string(), "stdio", mode, target)
}

/// The backend's questions reached the host and its answers the backend.
fn check_forwarded(report: &Value) {
    let elicited = texts(&report["elicited"]["text"]);
    assert!(elicited.contains("Ada Lovelace"), "{elicited}");
    let sampled = texts(&report["sampled"]["text"]);
    assert!(
        sampled.contains("Paris, said the host's model"),
        "{sampled}"
    );
    assert_eq!(
        report["asked"],
        serde_json::json!([
            "Please provide inputs for the following fields:",
            "Resource trigger-sampling-request context: Capital of France?"
        ])
    );
}

#[test]
fn a_new_users_first_minute_through_the_proxy_works_and_everything_passes_through() {
    let env = Env::new();
    fresh_backends(&env);
    // The stateless era (the SDK's default), where questions are input-required rounds.
    let report = host(&env, "auto", &[FERRY, "serve", "--servers"]);
    let instructions = report["instructions"].as_str().unwrap();
    // Words a model can use, never "? tools"; the server still coming says so.
    assert!(
        instructions.contains("\n- ev (tools not listed yet)"),
        "{instructions}"
    );
    assert!(!instructions.contains('?'), "{instructions}");
    // The first call waits for its server's tools instead of answering "no tool".
    assert_eq!(report["first_call"]["is_error"], false, "{report}");
    assert_eq!(report["first_call"]["text"][0], "Echo: first");
    assert_eq!(report["first_describe"]["is_error"], false, "{report}");
    assert!(texts(&report["first_find"]).starts_with("ev/echo(message)"));
    let broken = texts(&report["broken"]["text"]);
    assert_eq!(report["broken"]["is_error"], true);
    assert!(broken.contains("Listing broken's tools failed"), "{broken}");

    // Resources, templates and prompts pass through, named server/name, URIs as given.
    let resources = report["resources"].as_array().unwrap();
    assert!(!resources.is_empty(), "{report}");
    assert!(resources
        .iter()
        .all(|r| r[0].as_str().unwrap().starts_with("ev/")));
    assert!(resources
        .iter()
        .any(|r| r[1].as_str().unwrap().starts_with("demo://resource/")));
    assert!(report["templates"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t[1] == "demo://resource/dynamic/text/{resourceId}"));
    assert!(report["prompts"]
        .as_array()
        .unwrap()
        .contains(&serde_json::json!("ev/simple-prompt")));
    assert!(!report["prompt"].as_array().unwrap().is_empty());
    assert_eq!(report["read_listed"], serde_json::json!([true]));
    assert!(
        texts(&report["read_templated"]).contains('7'),
        "{}",
        report["read_templated"]
    );
    assert_eq!(report["links"], 2);
    assert_eq!(report["read_link"], 1);
    assert!(
        report["read_unknown"]
            .as_str()
            .unwrap()
            .contains("nowhere://at/all"),
        "{}",
        report["read_unknown"]
    );

    // The backend's questions are the host's to answer, in both eras.
    check_forwarded(&report);
    check_forwarded(&host(&env, "legacy", &[FERRY, "serve", "--servers"]));

    // The server's budget holds, cut as the CLI cuts.
    let big = texts(&report["big"]["text"]);
    assert!(big.starts_with("line 00000\n"), "{}", &big[..100]);
    assert!(big.contains("[ferry: cut "), "{}", big.len());
    assert!(big.contains("line 19999\n"), "{}", &big[big.len() - 200..]);
    // The structured copy of the same text would undo the cut: it is left out, and said so.
    assert!(
        big.trim_end()
            .ends_with("left out to fit the budget; the text above carries it]"),
        "{}",
        &big[big.len() - 200..]
    );
    assert!(big.len() < 12_000, "{}", big.len());
}

#[test]
fn the_catalog_fills_in_as_listings_arrive_and_a_default_budget_holds() {
    let env = Env::new();
    std::fs::write(env.path("work/big.txt"), big_text().repeat(3)).unwrap();
    let config = serde_json::json!({"mcpServers": {
        "ev": {"command": "sh", "args": ["-c", format!("sleep 3; exec {}", everything())]},
        "fs": {"command": "sh", "args": ["-c", filesystem(&env.path("work"))]},
    }});
    env.write("config/servers.json", &config.to_string());
    let mut served = Served::start(&env, &["--servers"]);
    let discover = |served: &mut Served, id| {
        let found = served.call(
            id,
            "server/discover",
            serde_json::json!({}),
            &mut Vec::new(),
        );
        found["result"]["instructions"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    assert!(discover(&mut served, 1).contains("- ev (tools not listed yet)"));
    let echo = served.call_tool(
        2,
        "call",
        serde_json::json!({"tool": "ev/echo", "arguments": {"message": "hi"}}),
    );
    assert_eq!(Served::text(&echo), "Echo: hi");
    let later = discover(&mut served, 3);
    assert!(
        later.contains("\n- ev (1") && later.contains(" tools): Everything Server"),
        "{later}"
    );
    // 600 KB is over the default budget (25,000 tokens): cut, head and tail kept.
    let path = env.path("work/big.txt").display().to_string();
    let big = served.call_tool(
        4,
        "call",
        serde_json::json!({"tool": "fs/read_text_file", "arguments": {"path": path}}),
    );
    let text = Served::text(&big);
    assert!(text.contains("[ferry: cut "), "{}", text.len());
    assert!(text.len() < 25_000 * 8, "{}", text.len());
}

#[test]
fn expose_all_names_are_one_to_one_callable_and_speak_the_hosts_names() {
    let env = Env::new();
    let tool = |name: &str| {
        serde_json::json!({"name": name, "description": format!("Tool {name}"),
            "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}})
    };
    let snapshot = |file: &str, tools: Vec<Value>| {
        let path = env.path(file);
        std::fs::write(&path, serde_json::json!({"tools": tools}).to_string()).unwrap();
        format!("{} {}", replay_server(), path.display())
    };
    let a = snapshot("a.json", vec![tool("b__c"), tool("x/y"), tool("bell\u{7}")]);
    let ab = snapshot("ab.json", vec![tool("c")]);
    let config = serde_json::json!({"mcpServers": {
        "a": {"command": "sh", "args": ["-c", a]},
        "a__b": {"command": "sh", "args": ["-c", ab]},
        "ev": {"command": "sh", "args": ["-c", everything()]},
    }});
    env.write("config/servers.json", &config.to_string());
    let mut served = Served::start(&env, &["--servers", "--expose", "all"]);
    let listed = served.call(1, "tools/list", serde_json::json!({}), &mut Vec::new());
    let names: Vec<String> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    for name in ["a__b__c", "a__x_y", "a__bell_", "a__b__c_2", "ev__get-sum"] {
        assert!(names.contains(&name.to_string()), "{name} in {names:?}");
    }
    assert!(names.iter().all(|n| n.len() <= 128
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))));
    // Each name reaches its own tool: no shadowing.
    let call = |served: &mut Served, id, name: &str| {
        Served::text(&served.call_tool(id, name, serde_json::json!({"n": 1})))
    };
    assert_eq!(
        call(&mut served, 2, "a__b__c"),
        "called b__c with {\"n\":1}"
    );
    assert_eq!(call(&mut served, 3, "a__b__c_2"), "called c with {\"n\":1}");
    assert_eq!(call(&mut served, 4, "a__x_y"), "called x/y with {\"n\":1}");
    // A misspelt name gets a did-you-mean; bad arguments name the tool as listed.
    let unknown = served.call_tool(5, "ev__get-summ", serde_json::json!({}));
    let message = unknown["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("Did you mean ev__get-sum?"), "{unknown}");
    let invalid = served.call_tool(6, "ev__get-sum", serde_json::json!({"a": "x", "b": 1}));
    assert!(Served::is_error(&invalid));
    assert!(
        Served::text(&invalid).starts_with("Invalid arguments for ev__get-sum: "),
        "{invalid}"
    );
    let discover = served.call(7, "server/discover", serde_json::json!({}), &mut Vec::new());
    let instructions = discover["result"]["instructions"].as_str().unwrap();
    assert!(!instructions.contains("find"), "{instructions}");
    assert!(
        instructions.contains("listed as server__tool"),
        "{instructions}"
    );
    assert!(
        instructions.contains("- a (3 tools)\n- a__b (1 tool)\n"),
        "{instructions}"
    );
    assert!(
        instructions.contains("## ev (its instructions)\n"),
        "{instructions}"
    );
}

#[test]
fn long_calls_pass_through_the_proxy_as_tasks_both_ways() {
    let env = Env::new();
    backends(&env);
    let mut served = Served::start(&env, &["--servers", "ev"]);
    let mut params = serde_json::json!({"name": "call", "arguments": {
        "tool": "ev/trigger-long-running-operation", "arguments": {"duration": 2, "steps": 2}}});
    params["_meta"] = modern_meta();
    params["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
        serde_json::json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    let created = served.call(1, "tools/call", params.clone(), &mut Vec::new());
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let id = created["result"]["taskId"].as_str().unwrap().to_string();
    let mut get = serde_json::json!({"taskId": id});
    get["_meta"] = params["_meta"].clone();
    let mut done = Value::Null;
    assert!(wait_until(30, || {
        done = served.call(2, "tasks/get", get.clone(), &mut Vec::new());
        done["result"]["status"] != "working"
    }));
    assert_eq!(done["result"]["status"], "completed", "{done}");
    let text = done["result"]["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("Long running operation completed"), "{done}");

    // A backend tool that must run as a task is run as one and waited for by the proxy: the
    // host, which asked for no task, gets its result as for any call.
    let research = served.call_tool(
        3,
        "call",
        serde_json::json!({"tool": "ev/simulate-research-query", "arguments": {"topic": "tides"}}),
    );
    assert!(!Served::is_error(&research), "{research}");
    assert!(Served::text(&research).contains("tides"), "{research}");
}

/// Issue 27, item 2: server-everything lists trigger-elicitation-request only to a client that
/// declares elicitation, and trigger-sampling-request only to one that declares sampling (the
/// proxy declares both). Each caller's listing shows what it can call, whoever listed last:
/// a piped `ferry ev` lists and measures the same before and after a proxy session and a
/// terminal's, and a tool only the proxy can call is not offered to it.
#[test]
fn each_caller_is_listed_what_it_can_call_whoever_listed_last() {
    let env = Env::warm();
    backends(&env);
    let piped = env.run(&["ev"]);
    let measured = env.run(&["tokens", "ev"]);
    assert_eq!(measured.code, 0, "{}", measured.stderr);
    assert!(
        !piped.stdout.contains("trigger-sampling-request"),
        "{}",
        piped.stdout
    );
    assert!(
        !piped.stdout.contains("trigger-elicitation-request"),
        "{}",
        piped.stdout
    );

    let mut served = Served::start(&env, &["--servers", "ev", "--expose", "all"]);
    let listed = served.call(1, "tools/list", serde_json::json!({}), &mut Vec::new());
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(names.contains(&"ev__trigger-sampling-request"), "{names:?}");
    assert!(
        names.contains(&"ev__trigger-elicitation-request"),
        "{names:?}"
    );
    drop(served);

    let answering = env
        .command(&["ev"])
        .env("FERRY_ELICIT", "defaults")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let answering = String::from_utf8_lossy(&answering.stdout);
    assert!(
        answering.contains("trigger-elicitation-request()"),
        "{answering}"
    );
    assert!(
        !answering.contains("trigger-sampling-request"),
        "{answering}"
    );

    let env = Test::with(env).args(&["ev"]).stdout(&piped.stdout).run();
    let env = Test::with(env)
        .args(&["tokens", "ev"])
        .stdout(&measured.stdout)
        .stderr(&measured.stderr)
        .run();
    let call = env.run(&["ev", "trigger-sampling-request", "--prompt", "hi"]);
    assert_eq!(call.code, 2, "{}", call.stderr);
    assert!(
        call.stderr
            .starts_with("error: unknown tool \"trigger-sampling-request\""),
        "{}",
        call.stderr
    );
}

/// Issue 27, item 2: a server a piped call listed (13 tools) offers the proxy more, since the
/// proxy declares sampling and elicitation (16). The first session's `find` and `call` wait
/// for the proxy's own listing, so the tools only it is offered are found and called at once,
/// not only from the second session on.
#[test]
fn the_first_proxy_session_finds_what_only_the_proxy_is_offered() {
    let env = Env::new();
    env.write(
        "config/servers.json",
        &serde_json::json!({"mcpServers": {
            "ev": {"command": "sh", "args": ["-c", everything()]},
        }})
        .to_string(),
    );
    let piped = env.run(&["ev"]);
    assert_eq!(piped.code, 0, "{}", piped.stderr);
    assert!(
        !piped.stdout.contains("trigger-sampling-request"),
        "{}",
        piped.stdout
    );
    let mut served = Served::start(&env, &["--servers", "ev"]);
    let found =
        Served::text(&served.call_tool(1, "find", serde_json::json!({"query": "sampling"})));
    assert!(found.starts_with("ev/trigger-sampling-request("), "{found}");
    // A call by a name only the proxy's listing has reaches the server too: it asks the host
    // for input, which this client (declaring no elicitation) cannot give, so it is declined.
    let called = served.call_tool(
        2,
        "call",
        serde_json::json!({"tool": "ev/trigger-elicitation-request", "arguments": {}}),
    );
    assert_eq!(
        Served::text(&called),
        "❌ User declined to provide the requested information.",
        "{called}"
    );
}
