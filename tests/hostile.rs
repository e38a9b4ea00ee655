//! What a hostile repository, server or network can do to ferry, each case with its exact exit
//! code, and a bounded time or memory where that is what is at stake. The servers are our own
//! (examples/hostile_server.rs): no real server misbehaves this way on purpose.

mod support;

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::Stdio;
use std::time::{Duration, Instant};
use support::*;

/// Characters that must never reach a terminal raw from a text rendering.
fn raw_controls(text: &str) -> Vec<char> {
    text.chars()
        .filter(|c| {
            (*c < ' ' && *c != '\n' && *c != '\t')
                || *c == '\u{7f}'
                || ('\u{80}'..='\u{9f}').contains(c)
                || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        })
        .collect()
}

fn config(env: &Env, servers: serde_json::Value) {
    env.write(
        "config/servers.json",
        &serde_json::json!({ "mcpServers": servers }).to_string(),
    );
}

// 1. Names never become paths, and every loader applies the same rule.

const BAD_NAMES: [&str; 8] = [
    "../../../../tmp/ferry-escaped",
    "a/b",
    ".hidden",
    "-dash",
    "add",
    "sp ace",
    "nul\u{0}byte",
    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
];

#[test]
fn every_loader_refuses_the_same_bad_names_and_nothing_is_written_outside_home() {
    let env = Env::new();
    let entry = serde_json::json!({"command": "true"});
    let servers: serde_json::Map<String, serde_json::Value> = BAD_NAMES
        .iter()
        .map(|n| (n.to_string(), entry.clone()))
        .chain(std::iter::once(("good".to_string(), entry.clone())))
        .collect();
    let doc = serde_json::json!({ "mcpServers": servers }).to_string();
    let vscode = serde_json::json!({ "servers": servers }).to_string();

    // The user's own file.
    env.write("config/servers.json", &doc);
    let run = env.run(&[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout.lines().count(),
        1,
        "only `good` is listed: {}",
        run.stdout
    );
    assert_eq!(
        run.stderr.matches("warning: skipped a server in").count(),
        BAD_NAMES.len(),
        "{}",
        run.stderr
    );
    std::fs::remove_file(env.path("config/servers.json")).unwrap();

    // Each project file.
    for file in [
        "work/.mcp.json",
        "work/.cursor/mcp.json",
        "work/.vscode/mcp.json",
    ] {
        let text = if file.ends_with("vscode/mcp.json") {
            &vscode
        } else {
            &doc
        };
        env.write(file, text);
        let run = env.run(&[]);
        assert_eq!(run.stdout.lines().count(), 1, "{file}: {}", run.stdout);
        assert_eq!(
            run.stderr.matches("warning: skipped a server in").count(),
            BAD_NAMES.len(),
            "{file}: {}",
            run.stderr
        );
        // Even trusted, a bad name is never started, never logged, never cached.
        assert_eq!(env.run(&["trust"]).code, 0);
        let call = env.run(&["../../../../tmp/ferry-escaped"]);
        assert_eq!(call.code, 2, "{}", call.stderr);
        std::fs::remove_file(env.path(file)).unwrap();
    }

    // Import.
    env.write("import.json", &doc);
    let import = env.run(&["import", env.path("import.json").to_str().unwrap()]);
    assert_eq!(import.code, 0, "{}", import.stderr);
    assert_eq!(
        import.stderr.matches("skipped ").count(),
        BAD_NAMES.len(),
        "{}",
        import.stderr
    );
    assert!(
        import.stdout.starts_with("imported 1 server(s)"),
        "{}",
        import.stdout
    );

    // Add.
    for name in BAD_NAMES {
        if name.contains('\0') {
            continue; // an argument cannot carry a NUL
        }
        let run = env.run(&["add", name, "--", "true"]);
        assert_eq!(run.code, 2, "{name}: {}", run.stderr);
        assert!(run.stderr.starts_with("error: "), "{}", run.stderr);
        assert!(run.stderr.contains("\nhint: "), "{}", run.stderr);
    }

    assert!(!std::path::Path::new("/tmp/ferry-escaped.log").exists());
    for file in files_below(&env.root) {
        assert!(file.starts_with(&env.root), "{}", file.display());
    }
}

// 2. Terminal control sequences never pass through raw.

#[test]
fn escape_sequences_from_a_server_are_escaped_in_every_text_rendering() {
    let env = Env::new();
    let server = hostile("escapes");
    let listing = env.run(&["--cmd", &server]);
    assert_eq!(listing.code, 0, "{}", listing.stderr);
    assert_eq!(
        raw_controls(&listing.stdout),
        Vec::<char>::new(),
        "{}",
        listing.stdout
    );
    assert!(
        listing
            .stdout
            .contains("evil\\x1b]52;c;aGFja2Vk\\x07\\u{202e}txt.exe\\x00"),
        "{}",
        listing.stdout
    );
    let call = env.run(&["--cmd", &server, "echo", "--text", "hi"]);
    assert_eq!(call.code, 0, "{}", call.stderr);
    assert_eq!(
        raw_controls(&call.stdout),
        Vec::<char>::new(),
        "{}",
        call.stdout
    );
    assert!(
        call.stdout
            .starts_with("hibefore\\x1b[2J\\x1b[?1049h\\x1b]0;pwned\\x07after\n"),
        "{}",
        call.stdout
    );
    let failed = env.run(&["--cmd", &server, "fail"]);
    assert_eq!(failed.code, 3, "{}", failed.stderr);
    assert_eq!(
        raw_controls(&failed.stderr),
        Vec::<char>::new(),
        "{}",
        failed.stderr
    );
    assert!(
        failed.stderr.contains("bad before\\x1b[2J") || failed.stderr.contains("badbefore\\x1b[2J"),
        "{}",
        failed.stderr
    );
    let help = env.run(&[
        "--cmd",
        &server,
        "evil\u{1b}]52;c;aGFja2Vk\u{7}\u{202e}txt.exe",
        "--help",
    ]);
    assert_eq!(raw_controls(&help.stdout), Vec::<char>::new());
    assert_eq!(raw_controls(&help.stderr), Vec::<char>::new());
    // --json stays exact: JSON itself escapes control characters.
    let exact = env.run(&["--json", "--cmd", &server, "echo", "--text", "hi"]);
    let value: serde_json::Value = serde_json::from_str(&exact.stdout).unwrap();
    assert_eq!(
        value["structuredContent"]["note"],
        "before\u{1b}[2J\u{1b}[?1049h\u{1b}]0;pwned\u{7}after"
    );
}

// 3. A repository's servers do not run, nor get the user's secrets, without consent.

#[test]
fn a_project_server_needs_trust_and_a_changed_file_needs_it_again() {
    let env = Env::new();
    let http = HostileHttp::start(&env, "ok");
    let project = serde_json::json!({"mcpServers": {"repo": {
        "url": format!("http://127.0.0.1:{}/mcp?key=${{FERRY_TEST_SECRET}}", http.port),
        "headers": {"X-Api-Key": "${FERRY_TEST_SECRET}"}
    }}});
    env.write("work/.mcp.json", &project.to_string());
    let refused = env
        .command(&["repo", "echo", "--text", "hi"])
        .env("FERRY_TEST_SECRET", "s3cr3t-value")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("which you have not trusted"), "{stderr}");
    assert!(
        stderr.contains("hint: read ") && stderr.contains("then run `ferry trust`"),
        "{stderr}"
    );
    assert!(!stderr.contains("s3cr3t-value"));
    assert_eq!(http.requests(), "", "nothing may be sent before trust");
    let listed = env.run(&[]);
    assert!(listed.stdout.contains("not trusted"), "{}", listed.stdout);

    assert_eq!(env.run(&["trust"]).code, 0);
    let called = env
        .command(&["repo", "echo", "--text", "hi"])
        .env("FERRY_TEST_SECRET", "s3cr3t-value")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&called.stdout), "hi\n");
    assert!(
        http.requests().contains("x-api-key: s3cr3t-value"),
        "{}",
        http.requests()
    );
    let list = env.run(&["trust", "--list"]);
    assert!(
        list.stdout.contains(".mcp.json  trusted"),
        "{}",
        list.stdout
    );

    // A changed file needs trust again.
    let mut changed = project.clone();
    changed["mcpServers"]["repo"]["headers"]["X-Other"] = serde_json::json!("1");
    env.write("work/.mcp.json", &changed.to_string());
    let again = env.run(&["repo", "echo", "--text", "hi"]);
    assert_eq!(again.code, 2);
    assert!(
        again.stderr.contains("changed since you trusted it"),
        "{}",
        again.stderr
    );
    assert_eq!(env.run(&["trust", "--revoke"]).code, 0);
    assert!(env
        .run(&["trust", "--list"])
        .stdout
        .contains("no project files are trusted"));
}

#[test]
fn error_messages_show_urls_as_configured_not_expanded() {
    let env = Env::new();
    let http = HostileHttp::start(&env, "html-500");
    config(
        &env,
        serde_json::json!({"remote": {"url": format!("http://127.0.0.1:{}/mcp?token=${{FERRY_TEST_SECRET}}", http.port)}}),
    );
    let run = env
        .command(&["remote", "echo", "--text", "x"])
        .env("FERRY_TEST_SECRET", "s3cr3t-value")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(3), "{stderr}");
    assert!(!stderr.contains("s3cr3t-value"), "{stderr}");
    // The 500's HTML page is one line, and a hint says what to do.
    assert_eq!(
        stderr,
        format!(
            "error: unexpected HTTP 500 Internal Server Error from http://127.0.0.1:{}/mcp?token=${{FERRY_TEST_SECRET}} (an HTML page)\nhint: the server failed; try again later, or check the server's own logs\n",
            http.port
        )
    );
}

// 4. Redirects never carry configured headers to another origin, nor turn a POST into a GET.

#[test]
fn redirects_to_another_origin_or_to_a_get_are_not_followed() {
    let env = Env::new();
    let other = HostileHttp::start(&env, "redirect-other-origin");
    config(
        &env,
        serde_json::json!({"moved": {"url": other.url(), "headers": {"X-Api-Key": "k"}}}),
    );
    let run = env.run(&["moved", "echo", "--text", "x"]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!(
            "redirected (HTTP 307) to http://127.0.0.1:{}/mcp: ferry does not follow a redirect to another origin",
            other.other_port
        )),
        "{}",
        run.stderr
    );
    assert!(
        !other
            .requests()
            .contains(&format!("[port {}]", other.other_port)),
        "nothing reaches the other origin: {}",
        other.requests()
    );

    let found = HostileHttp::start(&env, "redirect-302");
    let run = env.run(&[&found.url(), "echo", "--text", "x"]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr.contains("redirected (HTTP 302)"),
        "{}",
        run.stderr
    );
    assert!(
        !found.requests().contains("GET /elsewhere"),
        "{}",
        found.requests()
    );

    let same = HostileHttp::start(&env, "redirect-same-307");
    let run = env.run(&[&same.url(), "echo", "--text", "followed"]);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "followed\n"),
        "{}",
        run.stderr
    );
    assert!(
        !same.requests().to_lowercase().contains("referer"),
        "{}",
        same.requests()
    );
}

// 5. Memory is bounded, and signals are heard during long reads.

/// A command whose address space is limited, so unbounded growth fails loudly.
fn limited(env: &Env, args: &[&str], bytes: u64) -> std::process::Command {
    let mut command = env.command(args);
    unsafe {
        command.pre_exec(move || {
            let limit = libc::rlimit {
                rlim_cur: bytes,
                rlim_max: bytes,
            };
            libc::setrlimit(libc::RLIMIT_AS, &limit);
            Ok(())
        });
    }
    command
}

#[test]
fn a_reply_that_never_ends_is_an_error_that_names_the_setting() {
    let env = Env::new();
    config(
        &env,
        serde_json::json!({"endless": {"command": hostile_exe(), "args": ["stdio", "endless-line"], "maxMessageMB": 2}}),
    );
    let started = Instant::now();
    let run: Run = limited(&env, &["endless", "echo", "--text", "x"], 2 << 30)
        .stdin(Stdio::null())
        .output()
        .unwrap()
        .into();
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(run.stderr.contains("over 2 MB"), "{}", run.stderr);
    assert!(run.stderr.contains("\"maxMessageMB\""), "{}", run.stderr);
    assert!(started.elapsed() < Duration::from_secs(30));

    let http = HostileHttp::start(&env, "endless-body");
    config(
        &env,
        serde_json::json!({"endless": {"url": http.url(), "maxMessageMB": 2}}),
    );
    let run: Run = limited(&env, &["endless", "echo", "--text", "x"], 2 << 30)
        .stdin(Stdio::null())
        .output()
        .unwrap()
        .into();
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr.contains("over 2 MB") && run.stderr.contains("maxMessageMB"),
        "{}",
        run.stderr
    );
}

#[test]
fn an_endless_file_argument_is_refused_within_bounded_memory() {
    let env = Env::new();
    let run: Run = limited(
        &env,
        &["--cmd", &hostile("normal"), "echo", "--json", "@/dev/zero"],
        2 << 30,
    )
    .stdin(Stdio::null())
    .output()
    .unwrap()
    .into();
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        "error: @/dev/zero is over 32 MB; ferry reads at most that for one argument\nhint: pass a smaller file, or a path the tool reads itself\n"
    );
}

#[test]
fn sigterm_is_heard_while_opening_a_fifo_and_during_an_endless_read() {
    let env = Env::new();
    let fifo = env.path("fifo");
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let arg = format!("@{}", fifo.display());
    let child = env
        .command(&["--cmd", &hostile("normal"), "echo", "--json", &arg])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // ferry blocks opening the fifo (no writer ever comes): one of its threads sits in
    // openat(2), as /proc says.
    let pid = child.id();
    let openat = if cfg!(target_arch = "aarch64") {
        "56 "
    } else {
        "257 "
    };
    let blocked = wait_until(20, || {
        std::fs::read_dir(format!("/proc/{pid}/task")).is_ok_and(|tasks| {
            tasks.flatten().any(|t| {
                std::fs::read_to_string(t.path().join("syscall"))
                    .is_ok_and(|s| s.starts_with(openat))
            })
        })
    });
    assert!(blocked, "ferry never reached the fifo");
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let started = Instant::now();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130));
    assert!(started.elapsed() < Duration::from_secs(5));

    let http = HostileHttp::start(&env, "endless-body");
    config(
        &env,
        serde_json::json!({"endless": {"url": http.url(), "maxMessageMB": 4096}}),
    );
    let child = env
        .command(&["endless", "echo", "--text", "x"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The endless body is being read.
    assert!(
        wait_until(20, || std::fs::read_to_string(&http.log)
            .is_ok_and(|l| l.contains("POST"))),
        "ferry never sent its request"
    );
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let started = Instant::now();
    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130));
    assert!(started.elapsed() < Duration::from_secs(5));
}

// 6. A server that exits while a grandchild holds its pipe is noticed at once.

#[test]
fn a_crash_is_noticed_when_a_grandchild_holds_the_pipe() {
    let env = Env::new();
    let log = env.path("cache/logs/hostile_server.log");
    let started = Instant::now();
    Test::with(env)
        .args(&["--cmd", &hostile("fork-exit"), "echo", "--text", "x"])
        .status(3)
        .stderr(&format!(
            "error: hostile_server stopped: the server exited (exit status 9)\n\
             server stderr (last lines):\n  hostile: exiting during the call\n\
             hint: its stderr is in {}\n",
            log.display()
        ))
        .run();
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "not the 60 s timeout"
    );
}

// 7. Replies ferry cannot use are answered at once; a bad tool costs only itself.

#[test]
fn odd_replies_are_decoded_leniently_or_fail_at_once() {
    let env = Test::new()
        .args(&["--cmd", &hostile("bad-utf8"), "echo", "--text", "x"])
        .stdout("caf\u{fffd} ok\n")
        .run();
    let env = Test::with(env)
        .args(&["--cmd", &hostile("batch"), "echo", "--text", "x"])
        .stdout("batched x\n")
        .run();
    let started = Instant::now();
    Test::with(env)
        .args(&["--cmd", &hostile("no-result"), "echo", "--text", "x"])
        .status(3)
        .stderr("error: hostile_server answered tools/call with neither a result nor an error\nhint: the server broke the protocol; report it to its authors\n")
        .run();
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "not the 60 s timeout"
    );
}

#[test]
fn a_tool_nested_past_the_recursion_limit_costs_only_itself() {
    let server = hostile("deep-schema");
    let env = Test::new()
        .args(&["--cmd", &server])
        .stdout(
            "echo([text]) - Echo text back\nfail([text]) - Always fails\ndeep([x]) - Too deep\n",
        )
        .run();
    Test::with(env)
        .args(&["--cmd", &server, "echo", "--text", "still here"])
        .stdout("still here\n")
        .run();
}

// 8. Concurrent writes of the config all land.

#[test]
fn thirty_concurrent_adds_all_land() {
    let env = Env::new();
    let children: Vec<_> = (0..30)
        .map(|n| {
            env.command(&["add", &format!("s{n}"), "--", "true"])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(env.path("config/servers.json")).unwrap())
            .unwrap();
    assert_eq!(doc["mcpServers"].as_object().unwrap().len(), 30);
}

// 9. Write errors and a closed pipe never panic.

#[test]
fn a_closed_pipe_is_a_quiet_end_and_a_full_disk_is_exit_1() {
    let env = Env::new();
    for args in [
        &["--version"][..],
        &["--help"],
        &["tokens", "--help"],
        &["demo", "--tools"],
    ] {
        // The reader is gone before ferry writes a byte.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let output = env
            .command(args)
            .stdin(Stdio::null())
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&output.stderr), "", "{args:?}");
        assert_eq!(output.status.code(), Some(141), "{args:?}");
    }
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let output = env
        .command(&["--help"])
        .stdin(Stdio::null())
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "error: cannot write the output: No space left on device (os error 28)\nhint: check the free space and permissions where the output goes\n"
    );
}

// 10. The smaller ones.

#[test]
fn a_sampling_loop_is_refused_with_one_notice() {
    Test::new()
        .args(&["--cmd", &hostile("sampling-loop"), "echo", "--text", "x"])
        .stdout("sampled\n")
        .stderr("ferry: the server asked for sampling (an LLM completion), which ferry does not provide; refused\n")
        .run();
}

#[test]
fn json_arguments_are_type_checked_and_odd_results_are_errors() {
    let mut env = Env::new();
    let server = hostile("normal");
    let run = env.run(&["--cmd", &server, "echo", "--json", "{\"text\": 5}"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .starts_with("error: --json: text expects a string, not 5\n"),
        "{}",
        run.stderr
    );
    for (mode, kind) in [("content-string", "a string"), ("content-null", "null")] {
        env = Test::with(env)
            .args(&["--cmd", &hostile(mode), "echo", "--text", "x"])
            .status(3)
            .stderr(&format!("error: hostile_server sent a result ferry cannot read: its \"content\" is {kind}, not a list\nhint: run the same command with --json to see what it sent\n"))
            .run();
    }
}

#[test]
fn tools_named_like_options_are_called_after_double_dash() {
    let env = Env::new();
    config(
        &env,
        serde_json::json!({"dashes": {"command": hostile_exe(), "args": ["stdio", "dash-tools"]}}),
    );
    let env = Test::with(env)
        .args(&["dashes", "--", "-x", "--text", "one"])
        .stdout("one\n")
        .run();
    Test::with(env)
        .args(&["dashes", "--", "--help", "--text", "two"])
        .stdout("two\n")
        .run();
}

#[test]
fn odd_config_shapes_are_warned_about() {
    let env = Env::new();
    env.write("config/servers.json", "{\"mcpServers\": null}");
    let run = env.run(&[]);
    assert_eq!(run.code, 0);
    assert!(
        run.stderr.contains("warning: \"mcpServers\" in "),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("is null instead of an object"),
        "{}",
        run.stderr
    );
    env.write(
        "config/servers.json",
        "{\"mcpServers\": {\"s\": \"npx server\"}}",
    );
    let run = env.run(&[]);
    assert!(
        run.stderr.contains("warning: server \"s\" in "),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("is not an object (skipped)"),
        "{}",
        run.stderr
    );
    // A BOM is read as the editor meant it.
    let demo =
        serde_json::json!({"mcpServers": {"bom": {"command": FERRY, "args": ["serve", "--demo"]}}});
    env.write("config/servers.json", &format!("\u{feff}{demo}"));
    let expected = demo_file(&env, "a", "a b");
    let run = env.run(&["bom", "word_count", "a"]);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, expected.as_str()),
        "{}",
        run.stderr
    );
}

#[test]
fn find_with_a_zero_limit_is_a_usage_error() {
    Test::new()
        .args(&["find", "anything", "--limit", "0"])
        .status(2)
        .stderr("error: --limit must be 1 or more\nhint: for example: ferry find create issue --limit 10\n")
        .run();
}

#[test]
fn stdin_arguments_are_limited_too() {
    let env = Env::new();
    let mut child = env
        .command(&["--cmd", &hostile("normal"), "echo", "--json", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let chunk = vec![b' '; 1 << 20];
        for _ in 0..40 {
            if stdin.write_all(&chunk).is_err() {
                break;
            }
        }
    });
    let output = child.wait_with_output().unwrap();
    let _ = writer.join();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr).starts_with("error: standard input is over 32 MB"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A server that forgot the session (HTTP 404) gets one new handshake, and the call goes
/// through in the new session; the request was never processed, so sending it again is safe.
#[test]
fn a_session_the_server_forgot_is_started_again_once() {
    let env = Env::new();
    let http = HostileHttp::start(&env, "expire-session");
    let _env = Test::with(env)
        .args(&[&http.url(), "echo", "--text", "again"])
        .stdout("again\n")
        .run();
    // The call was sent in the first session, refused, then sent in a second one.
    let requests = http.requests().to_ascii_lowercase();
    assert!(requests.contains("mcp-session-id: s1"), "{requests}");
    assert!(requests.contains("mcp-session-id: s2"), "{requests}");
}
