//! `ferry serve` as a hostile model would try it: values that want a shell, values that want
//! to be options, paths that want out of the roots, names that want into the environment,
//! commands that outlive their time. Each is refused or contained, and a marker file proves
//! that nothing ran that should not. Then the protocol itself: both eras, the 2026 validation
//! ladder, output kinds, resources, prompts, logging, cancellation and the concurrency limit.

mod support;

use serde_json::{json, Value};
use std::time::{Duration, Instant};
use support::*;

fn marker(env: &Env, name: &str) -> std::path::PathBuf {
    env.path(&format!("marker-{name}"))
}

#[test]
fn shell_metacharacters_are_just_text() {
    let env = Env::new();
    let mut served = Served::start(&env, &["--manifest", &serve_manifest()]);
    let m = marker(&env, "shell");
    let m = m.display();
    let values = [
        format!("; touch {m}"),
        format!("| touch {m}"),
        format!("$(touch {m})"),
        format!("`touch {m}`"),
        format!("x\ntouch {m}"),
        format!("& touch {m}"),
        format!("x > {m}"),
    ];
    for (i, value) in values.iter().enumerate() {
        let result = served.call_tool(
            i as u64 + 1,
            "kinds",
            json!({"text": value, "items": [value]}),
        );
        assert!(!Served::is_error(&result), "{result}");
        let text = Served::text(&result);
        assert_eq!(text.matches(value.as_str()).count(), 2, "{text}");
    }
    assert!(!marker(&env, "shell").exists(), "nothing ran in a shell");
}

#[test]
fn values_never_become_options() {
    let env = Env::new();
    let mut served = Served::start(&env, &["--manifest", &serve_manifest()]);
    let cases = [
        json!({"text": "--output=/tmp/x"}),
        json!({"text": "-rf"}),
        json!({"text": "ok", "items": ["fine", "--exec=x"]}),
        json!({"text": "ok", "opt": "--upload-pack=sh"}),
    ];
    for (i, arguments) in cases.iter().enumerate() {
        let result = served.call_tool(i as u64 + 1, "kinds", arguments.clone());
        assert!(Served::is_error(&result), "{arguments}: {result}");
        assert!(Served::text(&result).starts_with("Refused: "), "{result}");
        assert!(
            Served::text(&result).contains("may not start with '-'"),
            "{result}"
        );
    }
    // Where the template puts text before the value, a dash is only text.
    let result = served.call_tool(9, "kinds", json!({"text": "ok", "mode": "b"}));
    assert!(Served::text(&result).contains("[--mode=b]"), "{result}");
}

#[test]
fn quick_mode_refuses_options_that_run_code_or_write_files() {
    let env = Env::new();
    let m = marker(&env, "quick");
    let mut served = Served::start(&env, &["--cli", "git"]);
    let refused = [
        json!(["-c", format!("alias.x=!touch {}", m.display()), "x"]),
        json!(["log", format!("--output={}", m.display())]),
        json!(["--exec-path=/tmp", "log"]),
        json!(["diff", "--ext-diff"]),
        json!(["-C", "/", "log"]),
        // Configuration that names a program git runs later: refused as a subcommand.
        json!(["config", "core.fsmonitor", format!("touch {}", m.display())]),
        json!([
            "--no-pager",
            "config",
            "alias.x",
            format!("!touch {}", m.display())
        ]),
        json!(["rebase", "-x", format!("touch {}", m.display()), "HEAD~1"]),
    ];
    for (i, args) in refused.iter().enumerate() {
        let result = served.call_tool(i as u64 + 1, "git", json!({"args": args}));
        assert!(Served::is_error(&result), "{args}: {result}");
        assert!(
            Served::text(&result).starts_with("Refused: git "),
            "{result}"
        );
    }
    assert!(!m.exists());
    let tools = served.call(20, "tools/list", json!({}), &mut Vec::new());
    assert_eq!(
        tools["result"]["tools"][0]["annotations"],
        json!({"destructiveHint": true, "openWorldHint": true})
    );
    let version = served.call_tool(21, "git", json!({"args": ["--version"]}));
    assert!(
        Served::text(&version).starts_with("git version"),
        "{version}"
    );
    drop(served);

    // --allow limits git to named subcommands.
    let mut limited = Served::start(&env, &["--cli", "git", "--allow", "git:version,status"]);
    let push = limited.call_tool(1, "git", json!({"args": ["push"]}));
    assert!(
        Served::text(&push).contains("limited to the subcommands version, status"),
        "{push}"
    );
    let version = limited.call_tool(2, "git", json!({"args": ["version"]}));
    assert!(
        Served::text(&version).starts_with("git version"),
        "{version}"
    );

    // rg --pre runs a program on every file searched: refused in both spellings.
    drop(limited);
    let mut rg = Served::start(&env, &["--cli", "rg"]);
    for (i, args) in [
        json!(["--pre", "sh", "x", "."]),
        json!([format!("--pre=touch {}", m.display()), "x", "."]),
    ]
    .iter()
    .enumerate()
    {
        let result = rg.call_tool(i as u64 + 1, "rg", json!({"args": args}));
        assert!(
            Served::text(&result).starts_with("Refused: rg "),
            "{args}: {result}"
        );
    }
    let version = rg.call_tool(9, "rg", json!({"args": ["--version"]}));
    assert!(Served::text(&version).starts_with("ripgrep "), "{version}");
    assert!(!m.exists());
    // rg's "no match" (exit 1) is an answer, not an error; exit 2 still is.
    env.write("work/hay.txt", "needle\n");
    let none = rg.call_tool(10, "rg", json!({"args": ["absent", "hay.txt"]}));
    assert!(!Served::is_error(&none), "{none}");
    assert_eq!(Served::text(&none), "");
    let found = rg.call_tool(11, "rg", json!({"args": ["needle", "hay.txt"]}));
    assert_eq!(Served::text(&found), "needle\n", "{found}");
    let broken = rg.call_tool(12, "rg", json!({"args": ["(", "hay.txt"]}));
    assert!(Served::is_error(&broken), "{broken}");

    // Shells and command runners are never served in quick mode.
    drop(rg);
    Test::with(env)
        .args(&["serve", "--cli", "sh"])
        .status(2)
        .stderr("error: sh cannot be served in quick mode: a shell runs its arguments as code\nhint: write a manifest whose commands fix what may vary (ferry serve init)\n")
        .run();
}

/// A manifest in a temporary directory: a root, a sibling sharing its prefix, a symlink out.
fn confined(env: &Env) -> String {
    let base = env.path("confine");
    std::fs::create_dir_all(base.join("work/sub")).unwrap();
    std::fs::create_dir_all(base.join("work2")).unwrap();
    std::fs::write(base.join("work/inside.txt"), "inside\n").unwrap();
    std::fs::write(base.join("work2/secret"), "secret\n").unwrap();
    std::os::unix::fs::symlink(base.join("work2"), base.join("work/link")).unwrap();
    // A dangling link inside the root, pointing out (a checkout can hold one).
    std::os::unix::fs::symlink(base.join("work2/planted"), base.join("work/dangling")).unwrap();
    std::fs::write(
        base.join("m.toml"),
        "[server]\nroots = [\"work\"]\n\n[[tools]]\nname = \"read\"\ndescription = \"Read a file.\"\ncommand = [\"cat\", \"--\", \"{file}\"]\n[tools.params.file]\ntype = \"path\"\n\n[[tools]]\nname = \"create\"\ndescription = \"Create a file.\"\ncommand = [\"touch\", \"--\", \"{file}\"]\n[tools.params.file]\ntype = \"path\"\nexists = false\n",
    )
    .unwrap();
    base.join("m.toml").display().to_string()
}

#[test]
fn paths_stay_inside_the_roots() {
    let env = Env::new();
    let manifest = confined(&env);
    let mut served = Served::start(&env, &["--manifest", &manifest]);
    let base = std::fs::canonicalize(env.path("confine")).unwrap();
    let outside = [
        ("read", "../work2/secret".to_string()),
        ("read", base.join("work2/secret").display().to_string()),
        ("read", "link/secret".to_string()),
        ("read", "/etc/passwd".to_string()),
        ("create", "link/new.txt".to_string()),
        ("create", "../escape.txt".to_string()),
        ("create", "sub/../../escape.txt".to_string()),
    ];
    for (i, (tool, path)) in outside.iter().enumerate() {
        let result = served.call_tool(i as u64 + 1, tool, json!({"file": path}));
        assert!(Served::is_error(&result), "{path}: {result}");
        assert!(
            Served::text(&result).contains("it is outside the served roots"),
            "{path}: {result}"
        );
    }
    assert!(!base.join("escape.txt").exists() && !base.join("work2/new.txt").exists());
    let dangling = served.call_tool(19, "create", json!({"file": "dangling"}));
    assert!(
        Served::text(&dangling).contains("it is a symbolic link to nothing"),
        "{dangling}"
    );
    assert!(
        !base.join("work2/planted").exists(),
        "a write went through a dangling link"
    );
    let missing = served.call_tool(20, "read", json!({"file": "nope.txt"}));
    assert!(
        Served::text(&missing).contains("it does not exist"),
        "{missing}"
    );
    let inside = served.call_tool(21, "read", json!({"file": "sub/../inside.txt"}));
    assert_eq!(Served::text(&inside), "inside\n");
    let created = served.call_tool(22, "create", json!({"file": "sub/new.txt"}));
    assert!(!Served::is_error(&created), "{created}");
    assert!(base.join("work/sub/new.txt").exists());
}

#[test]
fn the_environment_is_an_allowlist_and_names_are_not_variables() {
    let env = Env::new();
    let mut served = Served::start_with_env(
        &env,
        &["--manifest", &serve_manifest()],
        &[
            ("FERRY_TEST_SECRET", "s3cr3t"),
            ("FERRY_TEST_PASS_OK", "passed"),
            ("BASH_ENV", "/tmp/evil"),
        ],
    );
    let result = served.call_tool(1, "env_dump", json!({"LD_PRELOAD": "/tmp/evil.so"}));
    let text = Served::text(&result);
    assert!(
        !text.contains("s3cr3t") && !text.contains("LD_PRELOAD") && !text.contains("BASH_ENV"),
        "{text}"
    );
    assert!(text.contains("FERRY_TEST_PASS_OK=passed"), "{text}");
    assert!(text.contains("PATH="), "{text}");
    let nul = served.call_tool(2, "kinds", json!({"text": "a\u{0}b"}));
    assert!(Served::text(&nul).contains("contains a NUL byte"), "{nul}");
}

#[test]
fn output_is_capped_and_stdin_is_closed() {
    let env = Env::new();
    let mut served = Served::start(&env, &["--manifest", &serve_manifest()]);
    let huge = Served::text(&served.call_tool(1, "huge", json!({})));
    assert!(huge.len() < 70_000, "{}", huge.len());
    assert!(huge.starts_with("line\nline\n"));
    assert!(huge.contains("[ferry: 134464 bytes of output cut here; raise max_output in the manifest to keep more]\n"), "{}", &huge[30000..34000]);
    assert!(huge.ends_with("line\n"));
    assert_eq!(
        Served::text(&served.call_tool(2, "binary_text", json!({}))),
        "caf\u{fffd}"
    );
    let started = Instant::now();
    let quiet = served.call_tool(3, "reads_stdin", json!({}));
    assert_eq!(Served::text(&quiet), "");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "a command reading stdin is not left waiting"
    );
    let echoed = served.call_tool(4, "stdin_echo", json!({"input": "given\nlines"}));
    assert_eq!(Served::text(&echoed), "given\nlines");
}

/// What leaves its group (setsid) is stopped when the call ends; what ferry started is
/// stopped even when ferry is killed outright.
#[test]
fn nothing_outlives_its_call_not_even_a_setsid_or_a_killed_ferry() {
    let env = Env::new();
    let mut served = Served::start(&env, &["--manifest", &serve_manifest()]);
    let m = serve_root().join(format!("escaped-{}", std::process::id()));
    let result = served.call_tool(1, "escape", json!({"marker": m.display().to_string()}));
    assert!(!Served::is_error(&result), "{result}");
    drop(served);
    let m2 = serve_root().join(format!("survived-{}", std::process::id()));
    let mut served = Served::start(&env, &["--manifest", &serve_manifest()]);
    let marker2 = m2.display().to_string();
    served.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "outlive", "arguments": {"marker": marker2}, "_meta": modern_meta()}}));
    // The grandchild (a subshell, the marker on its command line) runs...
    assert!(wait_until(10, || processes_matching(&marker2).len() >= 2));
    // SAFETY (test): the ferry serve this test started.
    unsafe {
        libc::kill(served.child.id() as i32, libc::SIGKILL);
    }
    // ...and is gone (so the file can never be made) long before its 3 s are up.
    let marker1 = m.display().to_string();
    assert!(
        wait_until(10, || processes_matching(&marker2).is_empty()
            && processes_matching(&marker1).is_empty()),
        "a process outlived its call: {:?}",
        processes_matching(&marker2)
    );
    let (escaped, survived) = (m.exists(), m2.exists());
    let _ = std::fs::remove_file(&m);
    let _ = std::fs::remove_file(&m2);
    assert!(!escaped, "a process that called setsid outlived its call");
    assert!(!survived, "a grandchild outlived a killed ferry serve");
}

/// A request id already in flight is refused; when the client closes stdin, what runs stops
/// and the server exits.
#[test]
fn duplicate_ids_are_refused_and_a_client_that_leaves_stops_its_calls() {
    let env = Env::new();
    let mut served = Served::start(&env, &["--manifest", &serve_manifest()]);
    let slow = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "slow", "arguments": {"seconds": 46.75}, "_meta": modern_meta()}});
    served.send(&slow);
    assert!(wait_until(10, || processes_matching("sleep 46.75").len() == 1));
    served.send(&slow);
    let refused = served.wait(7, &mut Vec::new());
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert_eq!(processes_matching("sleep 46.75").len(), 1);
    drop(served.stdin_handle());
    let started = std::time::Instant::now();
    let exited = loop {
        if let Ok(Some(status)) = served.child.try_wait() {
            break Some(status);
        }
        if started.elapsed() > Duration::from_secs(5) {
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(
        exited.is_some(),
        "ferry serve did not exit when its input closed"
    );
    assert_eq!(processes_matching("sleep 46.75"), Vec::<String>::new());
}

#[test]
fn a_timeout_kills_grandchildren_and_a_cancellation_stops_the_command() {
    let env = Env::new();
    let mut served = Served::start(&env, &["--manifest", &serve_manifest()]);
    // The marker must be inside the served root to pass the path check; it is never made.
    let m = serve_root().join(format!("outlived-{}", std::process::id()));
    let result = served.call_tool(1, "outlive", json!({"marker": m.display().to_string()}));
    assert!(Served::is_error(&result), "{result}");
    assert!(
        Served::text(&result).starts_with("outlive timed out after 1s and was stopped"),
        "{result}"
    );
    // The grandchild (a subshell, the marker on its command line) died with its group, so
    // the file can never be made.
    let marker = m.display().to_string();
    assert!(
        wait_until(10, || processes_matching(&marker).is_empty()),
        "the grandchild outlived its group: {:?}",
        processes_matching(&marker)
    );
    let made = m.exists();
    let _ = std::fs::remove_file(&m);
    assert!(!made, "the grandchild died with its group");

    // notifications/cancelled stops the command, and no response follows.
    served.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "slow", "arguments": {"seconds": 47.25}, "_meta": modern_meta()}}));
    assert!(wait_until(10, || processes_matching("sleep 47.25").len() == 1));
    served.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2, "reason": "test"}}));
    assert!(
        wait_until(10, || processes_matching("sleep 47.25").is_empty()),
        "the cancelled command runs on"
    );
    let next = served.call_tool(3, "no_match", json!({}));
    assert_eq!(
        Served::text(&next),
        "nothing found\n",
        "the cancelled call got no response, the next one did"
    );
}

#[test]
fn the_concurrency_limit_holds() {
    let env = Env::new();
    let mut served = Served::start(&env, &["--manifest", &serve_manifest()]);
    let started = Instant::now();
    for id in 1..=8 {
        served.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "slow", "arguments": {"seconds": 0.4}, "_meta": modern_meta()}}));
    }
    let mut notes = Vec::new();
    for id in 1..=8 {
        let reply = served.wait(id, &mut notes);
        assert!(!Served::is_error(&reply), "{reply}");
    }
    // Four at a time: two rounds of 0.4 s at least.
    assert!(
        started.elapsed() >= Duration::from_millis(780),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn failures_output_kinds_and_progress() {
    let env = Env::new();
    let mut served = Served::start(&env, &["--manifest", &serve_manifest()]);
    let fail = served.call_tool(1, "fail", json!({}));
    assert!(Served::is_error(&fail));
    assert_eq!(
        Served::text(&fail),
        "partial\nfail failed: exit code 3\nstderr (last lines):\nwent wrong"
    );
    assert!(!Served::is_error(&served.call_tool(
        2,
        "no_match",
        json!({})
    )));
    let json_out = served.call_tool(3, "json_out", json!({"n": 7}));
    assert_eq!(
        json_out["result"]["structuredContent"],
        json!({"sum": 7, "ok": true})
    );
    let image = served.call_tool(4, "image_out", json!({}));
    let png = std::fs::read(serve_root().join("pixel.png")).unwrap();
    use base64::Engine;
    assert_eq!(image["result"]["content"][0]["type"], "image");
    assert_eq!(
        image["result"]["content"][0]["data"],
        base64::engine::general_purpose::STANDARD.encode(&png)
    );
    let content = served.call_tool(5, "content_out", json!({}));
    assert_eq!(content["result"]["content"].as_array().unwrap().len(), 2);
    let bad = served.call_tool(6, "bad_content", json!({}));
    assert_eq!(Served::text(&bad), "bad_content's output is not MCP content: block 1 (image) is missing a field it needs, or its data is not base64");
    let invalid = served.call_tool(7, "kinds", json!({"text": "x", "count": 99}));
    assert!(Served::text(&invalid).starts_with("Invalid arguments for kinds: count expects a value <= 10, not 99\nPrint every argument"), "{invalid}");
    // The help under it speaks JSON, as the model called: property names, not --flags.
    let help = Served::text(&invalid);
    assert!(
        help.contains("\ncount int =1 [minimum 1, maximum 10]\n"),
        "{help}"
    );
    assert!(!help.contains("--count"), "{help}");
    // A number sent as text is read as the number it is, where a number goes.
    let texted = served.call_tool(
        70,
        "kinds",
        json!({"text": "7", "count": "3", "ratio": "0.5"}),
    );
    assert_eq!(
        Served::text(&texted),
        "[7]\n[3]\n[0.5]\n[--mode=a]\n",
        "{texted}"
    );
    let unknown = served.call_tool(8, "kinds", json!({"text": "x", "PATH": "/tmp"}));
    assert!(
        Served::text(&unknown).starts_with("Invalid arguments for kinds: unknown argument PATH"),
        "{unknown}"
    );
    let mut notes = Vec::new();
    let progressed = served.call(
        9,
        "tools/call",
        json!({"name": "progress", "arguments": {}, "_meta": {"progressToken": "t9"}}),
        &mut notes,
    );
    assert_eq!(Served::text(&progressed), "finished\n");
    let steps: Vec<f64> = notes
        .iter()
        .filter(|n| n["params"]["progressToken"] == "t9")
        .map(|n| n["params"]["progress"].as_f64().unwrap())
        .collect();
    assert_eq!(steps, [1.0, 2.0, 3.0]);
}

#[test]
fn stderr_lines_are_log_messages_only_when_asked() {
    let env = Env::new();
    let mut served = Served::start(&env, &["--manifest", &serve_manifest()]);
    let mut quiet = Vec::new();
    served.call(
        1,
        "tools/call",
        json!({"name": "log_lines", "arguments": {}}),
        &mut quiet,
    );
    assert!(quiet.is_empty(), "{quiet:?}");
    let mut loud = Vec::new();
    served.call(2, "tools/call", json!({"name": "log_lines", "arguments": {}, "_meta": {"io.modelcontextprotocol/logLevel": "info"}}), &mut loud);
    let data: Vec<&str> = loud
        .iter()
        .filter(|n| n["method"] == "notifications/message")
        .map(|n| n["params"]["data"].as_str().unwrap())
        .collect();
    assert_eq!(data, ["one", "two", "three"]);
}

#[test]
fn both_eras_and_the_validation_ladder_over_stdio() {
    let env = Env::new();
    let mut served = Served::start(&env, &["--manifest", &serve_manifest()]);
    let mut notes = Vec::new();
    // Handshake era: requests before initialize are refused; after it, plain requests work.
    served.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    assert_eq!(served.wait(1, &mut notes)["error"]["code"], -32002);
    served.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}));
    let init = served.wait(2, &mut notes);
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(init["result"]["serverInfo"]["name"], "serve-test");
    served.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    served.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}));
    let listed = served.wait(3, &mut notes);
    assert!(listed["result"].get("resultType").is_none());
    assert_eq!(listed["result"]["tools"][0]["name"], "kinds");
    served.send(&json!({"jsonrpc": "2.0", "id": 4, "method": "ping"}));
    assert_eq!(served.wait(4, &mut notes)["result"], json!({}));
    // Stateless requests beside it, each checked.
    served.send(&json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}));
    assert_eq!(served.wait(5, &mut notes)["error"]["code"], -32602);
    let old = served.call(
        6,
        "tools/list",
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "1999-01-01"}}),
        &mut notes,
    );
    assert_eq!(old["error"]["code"], -32022);
    assert_eq!(
        old["error"]["data"],
        json!({"supported": ["2026-07-28"], "requested": "1999-01-01"})
    );
    for method in [
        "ping",
        "initialize",
        "logging/setLevel",
        "subscriptions/listen",
        "no/such",
    ] {
        assert_eq!(
            served.call(7, method, json!({}), &mut notes)["error"]["code"],
            -32601,
            "{method}"
        );
    }
    let listed = served.call(8, "tools/list", json!({}), &mut notes);
    assert_eq!(listed["result"]["resultType"], "complete");
    assert_eq!(listed["result"]["cacheScope"], "public");
    assert!(listed["result"]["ttlMs"].as_u64().is_some());
    // An unknown tool is a tool error the model reads, with a suggestion.
    let unknown = served.call(
        9,
        "tools/call",
        json!({"name": "kind", "arguments": {}}),
        &mut notes,
    );
    assert!(Served::is_error(&unknown), "{unknown}");
    assert_eq!(
        Served::text(&unknown),
        "Unknown tool: kind; did you mean kinds?"
    );
}

#[test]
fn resources_templates_prompts_and_completion() {
    let env = Env::new();
    let mut served = Served::start(&env, &["--manifest", &serve_manifest()]);
    let mut n = Vec::new();
    let listed = served.call(1, "resources/list", json!({}), &mut n);
    let uris: Vec<&str> = listed["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(uris, ["test://readme", "test://pixel", "test://year"]);
    let readme = served.call(2, "resources/read", json!({"uri": "test://readme"}), &mut n);
    assert_eq!(
        readme["result"]["contents"][0]["text"],
        "Test data for ferry serve.\nSecond line.\n"
    );
    let pixel = served.call(3, "resources/read", json!({"uri": "test://pixel"}), &mut n);
    assert_eq!(pixel["result"]["contents"][0]["mimeType"], "image/png");
    assert!(pixel["result"]["contents"][0]["blob"].is_string());
    let year = served.call(4, "resources/read", json!({"uri": "test://year"}), &mut n);
    assert_eq!(
        year["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .trim()
            .len(),
        4
    );
    let file = served.call(
        5,
        "resources/read",
        json!({"uri": "test://file/sub%2Fthree.txt"}),
        &mut n,
    );
    assert_eq!(file["result"]["contents"][0]["text"], "one\ntwo\nthree\n");
    let escape = served.call(
        6,
        "resources/read",
        json!({"uri": "test://file/..%2F..%2Fserve.toml"}),
        &mut n,
    );
    assert_eq!(escape["error"]["code"], -32602, "{escape}");
    let missing = served.call(
        7,
        "resources/read",
        json!({"uri": "test://nothing"}),
        &mut n,
    );
    assert_eq!(missing["error"]["code"], -32602);
    assert_eq!(missing["error"]["data"]["uri"], "test://nothing");
    let prompt = served.call(
        8,
        "prompts/get",
        json!({"name": "review", "arguments": {"path": "README.txt"}}),
        &mut n,
    );
    let messages = prompt["result"]["messages"].as_array().unwrap();
    assert_eq!(
        messages[0]["content"]["text"],
        "Review README.txt for bugs, {carefully}."
    );
    assert_eq!(messages[1]["content"]["resource"]["uri"], "test://readme");
    assert_eq!(messages[2]["content"]["type"], "image");
    let bad = served.call(
        9,
        "prompts/get",
        json!({"name": "review", "arguments": {"path": "/etc/passwd"}}),
        &mut n,
    );
    assert_eq!(bad["error"]["code"], -32602);
    let completion = served.call(10, "completion/complete", json!({"ref": {"type": "ref/prompt", "name": "review"}, "argument": {"name": "path", "value": "sub"}}), &mut n);
    assert_eq!(
        completion["result"]["completion"]["values"],
        json!(["sub/three.txt"])
    );
}

#[test]
fn a_bad_manifest_or_a_missing_command_is_refused_at_start() {
    let env = Env::new();
    env.write(
        "work/bad.toml",
        "[[tools]]\nname = \"x\"\ndescription = \"d\"\ncommand = [\"no-such-command-anywhere\"]\n",
    );
    let env = Test::with(env)
        .args(&["serve", "--manifest", "bad.toml"])
        .status(2)
        .stderr("error: tool \"x\": command \"no-such-command-anywhere\" not found\nhint: install it, or give its full path in the manifest\n")
        .run();
    env.write(
        "work/broken.toml",
        "[[tools]]\nname = \"x\"\ndescription = \"d\"\ncommand = [\"echo\", \"{y}\"]\n",
    );
    let env = Test::with(env)
        .args(&["serve", "--manifest", "broken.toml"])
        .status(2)
        .stderr("error: broken.toml:4: tool \"x\": the command names {y}, which is not one of its params\nhint: fix line 4 of broken.toml and start again\n")
        .run();
    // A model's value inside the script a shell runs would be code: refused at load, with
    // the form that passes it as data.
    env.write(
        "work/script.toml",
        "[[tools]]\nname = \"x\"\ndescription = \"d\"\ncommand = [\"sh\", \"-c\", \"echo {x}\"]\n[tools.params.x]\ntype = \"string\"\n",
    );
    let env = Test::with(env)
        .args(&["serve", "--manifest", "script.toml"])
        .status(2)
        .stderr("error: script.toml:4: tool \"x\": {x} is in or before the script sh runs, so a model's value could become code; pass values after the script, as data: [\"sh\", \"-c\", \"echo \\\"$1\\\"\", \"sh\", \"{x}\"]\nhint: fix line 4 of script.toml and start again\n")
        .run();
    let run = env.run(&[
        "serve",
        "--http",
        "0.0.0.0:0",
        "--no-token",
        "--manifest",
        &serve_manifest(),
    ]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("beyond this machine, needs a bearer token"),
        "{}",
        run.stderr
    );
}

/// A task tool's long call becomes a task the client polls (SEP-2663): its question waits in
/// `tasks/get` until `tasks/update` answers it, its result arrives there, and `tasks/cancel`
/// stops the command's whole process group. A client without the extension gets -32021 for a
/// tool that must be a task and a plain answer from one that may be.
#[test]
fn long_calls_become_tasks_that_ask_finish_and_cancel() {
    let env = Env::new();
    env.write(
        "work/tasks.toml",
        r#"[[tools]]
name = "build"
description = "Build for a while, then ask which target."
command = ["sh", "-c", 'sleep 0.75; target=$(ferry ask --key target --elicit "Which target?" --schema "$1") || exit; echo "built $target"', "sh", '{{"type":"object","properties":{{"t":{{"type":"string"}}}}}}']
task = true
exec = ["sleep"]

[[tools]]
name = "soak"
description = "Sleep long."
command = ["sleep", "{seconds}"]
task = "optional"
[tools.params.seconds]
type = "number"
required = true
"#,
    );
    let mut served = Served::start(&env, &["--manifest", "tasks.toml"]);
    let with_tasks = |params: Value| {
        let mut params = params;
        params["_meta"] = modern_meta();
        params["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
            json!({"extensions": {"io.modelcontextprotocol/tasks": {}}, "elicitation": {}});
        params
    };
    let mut notes = Vec::new();

    // Without the extension: a must-be-task tool is refused with what is missing.
    let refused = served.call_tool(1, "build", json!({}));
    assert_eq!(refused["error"]["code"], -32021, "{refused}");

    let created = served.call(
        2,
        "tools/call",
        with_tasks(json!({"name": "build", "arguments": {}})),
        &mut notes,
    );
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let id = created["result"]["taskId"].as_str().unwrap().to_string();
    let poll = |served: &mut Served, n: u64| {
        served.call(
            n,
            "tasks/get",
            with_tasks(json!({"taskId": id})),
            &mut Vec::new(),
        )
    };
    let mut n = 10;
    let asked = loop {
        n += 1;
        let got = poll(&mut served, n);
        if got["result"]["status"] == "input_required" {
            break got;
        }
        assert_eq!(got["result"]["status"], "working", "{got}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let question = &asked["result"]["inputRequests"]["target"];
    assert_eq!(question["method"], "elicitation/create", "{asked}");
    assert_eq!(question["params"]["message"], "Which target?", "{asked}");
    let updated = served.call(
        100,
        "tasks/update",
        with_tasks(json!({"taskId": id, "inputResponses": {"target": {"action": "accept", "content": {"t": "arm64"}}}})),
        &mut notes,
    );
    assert_eq!(updated["result"]["resultType"], "complete", "{updated}");
    let done = loop {
        n += 1;
        let got = poll(&mut served, n);
        if got["result"]["status"] != "working" {
            break got;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_eq!(done["result"]["status"], "completed", "{done}");
    assert!(
        done["result"]["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("built {\"t\":\"arm64\"}"),
        "{done}"
    );

    // Without the extension an optional task tool just answers (here: quickly).
    let quick = served.call_tool(200, "soak", json!({"seconds": 0.0625}));
    assert!(
        quick["result"]["content"].is_array() && !Served::is_error(&quick),
        "{quick}"
    );

    // Cancelled: the command is gone, and the task says so.
    let created = served.call(
        201,
        "tools/call",
        with_tasks(json!({"name": "soak", "arguments": {"seconds": 43.125}})),
        &mut notes,
    );
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    assert_eq!(processes_matching("sleep 43.125").len(), 1);
    let soak = created["result"]["taskId"].as_str().unwrap().to_string();
    let cancelled = served.call(
        202,
        "tasks/cancel",
        with_tasks(json!({"taskId": soak})),
        &mut notes,
    );
    assert_eq!(cancelled["result"]["resultType"], "complete", "{cancelled}");
    let started = std::time::Instant::now();
    while !processes_matching("sleep 43.125").is_empty() && started.elapsed().as_secs() < 5 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(processes_matching("sleep 43.125"), Vec::<String>::new());
    let got = served.call(
        203,
        "tasks/get",
        with_tasks(json!({"taskId": soak})),
        &mut notes,
    );
    assert_eq!(got["result"]["status"], "cancelled", "{got}");
    let unknown = served.call(
        204,
        "tasks/get",
        with_tasks(json!({"taskId": "no-such-task"})),
        &mut notes,
    );
    assert!(unknown["error"]["code"].is_i64(), "{unknown}");
}

/// ferry as the client of served tools that run as tasks (`task = true`, the 2026-07-28
/// extension), through `ferry --cmd 'ferry serve --manifest ...'`: a task that asks a question
/// (answered with its default, through `tasks/update`) prints its result; a command that
/// fails is the tool's error (exit 1); a task that fails with a JSON-RPC error is exit 3.
#[test]
fn served_task_tools_are_waited_for_by_ferry_as_their_client() {
    let env = Env::new();
    let server = served_tasks();
    let mut build = env.command(&["--cmd", &server, "build"]);
    build.env("FERRY_ELICIT", "defaults");
    let built: Run = build.output().unwrap().into();
    assert_eq!(built.code, 0, "{}", built.stderr);
    assert_eq!(built.stdout, "built {\"t\":\"arm64\"}\n");
    assert_eq!(built.stderr, "");

    let broken = env.run(&["--cmd", &server, "broken"]);
    assert_eq!(broken.code, 1, "{}", broken.stderr);
    assert_eq!(
        broken.stdout,
        "broken failed: exit code 1\nstderr (last lines):\nthe build broke\n"
    );

    let crashed = env.run(&["--cmd", &server, "crashed"]);
    assert_eq!(crashed.code, 3, "{}", crashed.stderr);
    assert_eq!(crashed.stdout, "");
    assert_eq!(
        crashed.stderr,
        "error: ferry's task failed: the job broke (code -32603)\n"
    );

    // An optional task tool that answers at once is an ordinary call.
    let quick = env.run(&["--cmd", &server, "soak", "--seconds", "0"]);
    assert_eq!(quick.code, 0, "{}", quick.stderr);
}

/// A 2026-07-28 server reached by URL keeps its tasks past the call, so a cold ferry may
/// detach one and fetch it later by id (its polls carry the task's id in `Mcp-Name`, which
/// serve checks): exit 75 while it runs, its result once done; an id it does not know is exit
/// 3 with the server's word.
#[test]
fn a_task_of_a_server_reached_by_url_is_fetched_cold() {
    let env = Env::new();
    let served = HttpServed::start(&env, &["--manifest", &tasks_manifest(), "--no-token"]);
    // The call declares what its client can answer (elicitation, given defaults).
    let mut detach = env.command(&[&served.url, "build", "--detach"]);
    detach.env("FERRY_ELICIT", "defaults");
    let detached: Run = detach.output().unwrap().into();
    assert_eq!(detached.code, 0, "{}", detached.stderr);
    let id = detached.stdout.trim_end().to_string();
    assert_eq!(
        detached.stderr,
        format!(
            "task {id} is working; fetch it with: ferry {} --task {id}\n",
            served.url
        )
    );
    let running = env.run(&[&served.url, "--task", &id]);
    assert_eq!(running.code, 75, "{}", running.stderr);
    assert_eq!(running.stdout, "working\n");
    // Its question is answered by whoever fetches it after it asked: with the default here.
    let mut done = None;
    assert!(wait_until(20, || {
        let mut fetch = env.command(&[&served.url, "--task", &id]);
        fetch.env("FERRY_ELICIT", "defaults");
        let fetched: Run = fetch.output().unwrap().into();
        let ended = fetched.code != 75;
        done = ended.then_some(fetched);
        ended
    }));
    let done = done.unwrap();
    assert_eq!(done.code, 0, "{}{}", done.stdout, done.stderr);
    assert_eq!(done.stdout, "built {\"t\":\"arm64\"}\n");

    // A task that failed with a JSON-RPC error is fetched as that error, exit 3.
    let detached = env.run(&[&served.url, "crashed", "--detach"]);
    assert_eq!(detached.code, 0, "{}", detached.stderr);
    let id = detached.stdout.trim_end().to_string();
    let mut failed = None;
    assert!(wait_until(20, || {
        let fetched = env.run(&[&served.url, "--task", &id]);
        let ended = fetched.code != 75;
        failed = ended.then_some(fetched);
        ended
    }));
    let failed = failed.unwrap();
    assert_eq!(failed.code, 3, "{}", failed.stderr);
    assert_eq!(
        failed.stderr,
        "error: mcp's task failed: the job broke (code -32603)\n"
    );

    // An unknown task ID is the caller's mistake (issue 27, item 5): exit 2, with a hint.
    let url = served.url.clone();
    Test::with(env)
        .args(&[&url, "--task", "nope"])
        .status(2)
        .stderr(
            "error: mcp refused tasks/get: no task \"nope\" here (it may have expired, or be \
             another server's) (code -32602)\nhint: the server may have dropped the task (its \
             ttl), or the id is another server's\n",
        )
        .run();
}

/// Ctrl-C on a cold call that became a task of a server reached by URL cancels the task before
/// ferry exits (the server, not ferry, runs it): its command stops.
#[test]
fn ctrl_c_on_a_cold_task_cancels_it_on_the_server() {
    let env = Env::new();
    let served = HttpServed::start(&env, &["--manifest", &tasks_manifest(), "--no-token"]);
    let child = env
        .command(&[&served.url, "soak", "--seconds", "37.25"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    assert!(wait_until(10, || processes_matching("sleep 37.25").len() == 1));
    // Past half a second the call is a task: wait until the server counts it as one.
    assert!(
        wait_until(10, || http_exchange(
            served.port,
            "GET",
            "/metrics",
            &[],
            "",
            ""
        )
        .2
        .lines()
        .any(|line| line == "ferry_tasks 1")),
        "the call never became a task"
    );
    // SAFETY (test): the ferry this test started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let interrupted = child.wait_with_output().unwrap();
    assert_eq!(interrupted.status.code(), Some(130));
    assert!(
        wait_until(10, || processes_matching("sleep 37.25").is_empty()),
        "the task's command still runs; ferry said: {}",
        String::from_utf8_lossy(&interrupted.stderr)
    );
}

#[test]
fn serve_modes_exclude_each_other() {
    // What is served is one of a manifest, quick mode's CLIs, the configured servers or the
    // demo: any two together are a usage error naming both, before anything starts.
    let modes: [(&[&str], &str); 4] = [
        (&["--manifest", "tools.toml"], "--manifest <FILE>"),
        (&["--cli", "git"], "--cli <NAME>"),
        (&["--servers"], "--servers [<NAME>...]"),
        (&["--demo"], "--demo"),
    ];
    for (first, first_shown) in modes {
        for (second, second_shown) in modes {
            if first == second {
                continue;
            }
            let args: Vec<&str> = ["serve"]
                .iter()
                .chain(first)
                .chain(second)
                .copied()
                .collect();
            Test::new()
                .args(&args)
                .stderr(&format!(
                    "error: the argument '{first_shown}' cannot be used with '{second_shown}'\nhint: see: ferry serve --help\n"
                ))
                .status(2)
                .run();
        }
    }
}
