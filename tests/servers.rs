//! ferry against real MCP servers from npm and PyPI (pinned in tests/fixtures).

mod support;

use support::*;

#[test]
fn lists_everything_one_line_per_tool_then_from_cache_without_spawning() {
    let env = Env::new();
    let (server, counter) = env.counted(&everything());
    let first = env.run(&["--cmd", &server]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    let lines: Vec<&str> = first.stdout.lines().collect();
    assert!(
        lines.contains(&"echo(message) - Echoes back input string"),
        "{}",
        first.stdout
    );
    assert!(lines.contains(&"get-sum(a, b) - Returns sum of two numbers"));
    assert!(lines.contains(&"get-tiny-image() - Returns tiny MCP logo image"));
    assert_eq!(
        lines[0], "echo(message) - Echoes back input string",
        "server order is kept"
    );
    assert_eq!(spawns(&counter), 1);

    let second = env.run(&["--cmd", &server]);
    assert_eq!(second.stdout, first.stdout);
    let help = env.run(&["--cmd", &server, "get-sum", "--help"]);
    assert_eq!(
        help.stdout,
        "Returns the sum of two numbers\n--a num required: First number\n--b num required: Second number\n"
    );
    assert_eq!(
        spawns(&counter),
        1,
        "listing and help from the cache must not start the server"
    );

    // --json lists the definitions exactly as the server sent them, still from the cache.
    let exact = env.run(&["--cmd", &server, "--json"]);
    let listed: serde_json::Value = serde_json::from_str(&exact.stdout).unwrap();
    let cache_dir = env.path("cache/tools");
    let cached = files_below(&cache_dir)
        .into_iter()
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .unwrap();
    let cached: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(cached).unwrap()).unwrap();
    assert_eq!(listed["tools"], cached["tools"]);
    assert_eq!(listed["tools"].as_array().unwrap().len(), lines.len());
    assert_eq!(spawns(&counter), 1);

    let refreshed = env.run(&["--cmd", &server, "--refresh"]);
    assert_eq!(refreshed.stdout, first.stdout);
    assert_eq!(spawns(&counter), 2);

    // server-everything announces tools/list_changed on every handshake: the cache must
    // survive a call and keep serving listings.
    assert_eq!(
        env.run(&["--cmd", &server, "echo", "hi"]).stdout,
        "Echo: hi\n"
    );
    assert_eq!(env.run(&["--cmd", &server]).stdout, first.stdout);
    assert_eq!(spawns(&counter), 3);
}

#[test]
fn local_validation_errors_exit_2_without_starting_the_server() {
    let mut env = Env::new();
    let (server, counter) = env.counted(&everything());
    assert_eq!(env.run(&["--cmd", &server]).code, 0);
    // Hints are commands that run as printed: they name the server as it was given.
    let named = format!("ferry --cmd {}", shlex::try_quote(&server).unwrap());
    let missing = format!(
        "error: missing required --message (str) for echo\nhint: see: {named} echo --help\n"
    );
    let extra = format!("error: unexpected argument \"extra\"\nhint: give arguments as --flags; see: {named} get-sum --help\n");
    // Type and enum errors point to the tool's help.
    let wrong_type =
        format!("error: --b expects a number, not \"two\"\nhint: see: {named} get-sum --help\n");
    let wrong_enum = format!("error: --messageType expects one of error, success, debug, not \"loud\"\nhint: see: {named} get-annotated-message --help\n");
    let cases: [(&[&str], &str); 5] = [
        (
            &["echo", "--mesage", "hi"],
            "error: unknown flag --mesage for echo\nhint: did you mean --message?\n",
        ),
        (&["echo"], &missing),
        (&["get-sum", "--a", "1", "--b", "two"], &wrong_type),
        (
            &["get-annotated-message", "--messageType", "loud"],
            &wrong_enum,
        ),
        (&["get-sum", "--a", "1", "--b", "2", "extra"], &extra),
    ];
    for (args, expected) in cases {
        let mut all = vec!["--cmd", server.as_str()];
        all.extend_from_slice(args);
        env = Test::with(env).args(&all).status(2).stderr(expected).run();
    }
    assert_eq!(
        spawns(&counter),
        1,
        "no server may be started for a usage error"
    );

    // An unknown tool refreshes the list once, then is an error.
    let _env = Test::with(env)
        .args(&["--cmd", &server, "ech", "--message", "x"])
        .status(2)
        .stderr(&format!("error: unknown tool \"ech\" on sh\nhint: did you mean `{named} echo`? `{named}` lists its tools\n"))
        .run();
    assert_eq!(spawns(&counter), 2);
}

#[test]
fn calls_with_strings_numbers_booleans_enums_and_json() {
    let server = everything();
    let env = Test::new()
        .args(&["--cmd", &server, "echo", "--message", "héllo, wörld ✓"])
        .stdout("Echo: héllo, wörld ✓\n")
        .run();

    let env = Test::with(env)
        .args(&["--cmd", &server, "echo", "just one word"])
        .stdout("Echo: just one word\n")
        .run();

    let env = Test::with(env)
        .args(&["--cmd", &server, "get-sum", "--a", "2.5", "--b=-4"])
        .stdout("The sum of 2.5 and -4 is -1.5.\n")
        .run();

    // Flags override --json keys.
    let env = Test::with(env)
        .args(&[
            "--cmd",
            &server,
            "get-sum",
            "--json",
            "{\"a\": 1, \"b\": 2}",
            "--b",
            "40",
        ])
        .stdout("The sum of 1 and 40 is 41.\n")
        .run();

    let env = Test::with(env)
        .args(&["--cmd", &server, "get-sum", "--json", "-"])
        .stdin("{\"a\": 3, \"b\": 4}")
        .stdout("The sum of 3 and 4 is 7.\n")
        .run();

    // Enum plus boolean true and false: the image block appears only with --includeImage.
    let with_image = env.run(&[
        "--cmd",
        &server,
        "get-annotated-message",
        "--messageType",
        "success",
        "--includeImage",
    ]);
    assert_eq!(with_image.code, 0, "{}", with_image.stderr);
    assert!(
        with_image.stdout.contains("[image image/png"),
        "{}",
        with_image.stdout
    );
    let without = env.run(&[
        "--cmd",
        &server,
        "get-annotated-message",
        "--messageType",
        "success",
        "--no-includeImage",
    ]);
    assert!(!without.stdout.contains("[image"), "{}", without.stdout);
    let explicit_false = env.run(&[
        "--cmd",
        &server,
        "get-annotated-message",
        "--messageType=debug",
        "--includeImage=false",
    ]);
    assert!(!explicit_false.stdout.contains("[image"));
    assert!(
        explicit_false.stdout.contains("Debug"),
        "{}",
        explicit_false.stdout
    );
}

#[test]
fn content_kinds_images_links_embedded_resources_and_structured_content() {
    let env = Env::new();
    let server = everything();
    let image = env.run(&["--cmd", &server, "get-tiny-image"]);
    assert_eq!(image.code, 0, "{}", image.stderr);
    let line = image
        .stdout
        .lines()
        .find(|l| l.starts_with("[image image/png "))
        .expect("image line");
    let path = line.rsplit(' ').next().unwrap();
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    assert!(path.starts_with(env.path("cache").to_str().unwrap()));

    let links = env.run(&["--cmd", &server, "get-resource-links", "--count", "2"]);
    let link_lines: Vec<&str> = links
        .stdout
        .lines()
        .filter(|l| l.starts_with("[resource link] "))
        .collect();
    assert_eq!(link_lines.len(), 2, "{}", links.stdout);
    assert!(
        link_lines[0].contains("demo://resource/"),
        "{}",
        link_lines[0]
    );

    let embedded = env.run(&[
        "--cmd",
        &server,
        "get-resource-reference",
        "--resourceType",
        "Text",
        "--resourceId",
        "2",
    ]);
    assert!(
        embedded
            .stdout
            .contains("[resource demo://resource/dynamic/text/2 (text/plain)]\nResource 2: "),
        "{}",
        embedded.stdout
    );

    let structured = env.run(&[
        "--cmd",
        &server,
        "get-structured-content",
        "--location",
        "Chicago",
    ]);
    assert_eq!(structured.code, 0);
    assert_eq!(
        structured.stdout.lines().count(),
        1,
        "structuredContent equal to the text is printed once: {}",
        structured.stdout
    );
    assert!(structured.stdout.contains("\"temperature\""));

    // The envelope is asked for before the tool (after it, --json is the arguments).
    let envelope = env.run(&[
        "--cmd",
        &server,
        "--json",
        "get-structured-content",
        "--location",
        "Chicago",
    ]);
    let value: serde_json::Value = serde_json::from_str(&envelope.stdout).unwrap();
    assert!(
        value["structuredContent"].is_object() && value["content"].is_array(),
        "{}",
        envelope.stdout
    );
}

#[test]
fn resources_and_prompts() {
    let server = everything();
    let env = Test::new()
        .args(&["--cmd", &server, "--resources"])
        .stdout(
            "demo://resource/static/document/architecture.md architecture.md (text/markdown) - Static document file exposed from /docs: architecture.md\n\
             demo://resource/static/document/extension.md extension.md (text/markdown) - Static document file exposed from /docs: extension.md\n\
             demo://resource/static/document/features.md features.md (text/markdown) - Static document file exposed from /docs: features.md\n\
             demo://resource/static/document/how-it-works.md how-it-works.md (text/markdown) - Static document file exposed from /docs: how-it-works.md\n\
             demo://resource/static/document/instructions.md instructions.md (text/markdown) - Static document file exposed from /docs: instructions.md\n\
             demo://resource/static/document/startup.md startup.md (text/markdown) - Static document file exposed from /docs: startup.md\n\
             demo://resource/static/document/structure.md structure.md (text/markdown) - Static document file exposed from /docs: structure.md\n\
             demo://resource/dynamic/text/{resourceId} Dynamic Text Resource (template)\n\
             demo://resource/dynamic/blob/{resourceId} Dynamic Blob Resource (template)\n",
        )
        .run();
    let uri = "demo://resource/static/document/architecture.md";
    let read = env.run(&["--cmd", &server, "--read", uri]);
    assert_eq!(read.code, 0, "{}", read.stderr);
    assert!(!read.stdout.is_empty());

    let prompts = env.run(&["--cmd", &server, "--prompts"]);
    assert!(
        prompts
            .stdout
            .lines()
            .any(|l| l.starts_with("simple-prompt(")),
        "{}",
        prompts.stdout
    );
    let prompt = env.run(&["--cmd", &server, "--prompt", "simple-prompt"]);
    assert_eq!(prompt.code, 0, "{}", prompt.stderr);
    assert!(prompt.stdout.starts_with("[user]\n"), "{}", prompt.stdout);
}

#[test]
fn filesystem_help_arrays_objects_stdin_and_tool_errors() {
    let env = Env::new();
    let dir = env.path("work");
    std::fs::write(dir.join("a.txt"), "alpha\nbeta\n").unwrap();
    std::fs::write(dir.join("b.txt"), "bravo\n").unwrap();
    let server = filesystem(&std::fs::canonicalize(&dir).unwrap());

    let env = Test::with(env)
        .args(&["--cmd", &server, "edit_file", "--help"])
        .stdout(
        "Make line-based edits to a text file. Each edit replaces exact line sequences with new content. Returns a git-style diff showing the changes made. Only works within allowed directories.\n\
         --path str required\n\
         --edits obj[] required\n  \
         oldText str required: Text to search for - must match exactly\n  \
         newText str required: Text to replace with\n\
         --dryRun bool =false: Preview changes using git-style diff format\n",
        )
        .run();

    let a = dir.join("a.txt").display().to_string();
    let b = dir.join("b.txt").display().to_string();
    let multiple = env.run(&[
        "--cmd",
        &server,
        "read_multiple_files",
        "--paths",
        &a,
        "--paths",
        &b,
    ]);
    assert_eq!(multiple.code, 0, "{}", multiple.stderr);
    assert!(
        multiple.stdout.contains("alpha\nbeta") && multiple.stdout.contains("bravo"),
        "{}",
        multiple.stdout
    );

    let env = Test::with(env)
        .args(&["--cmd", &server, "read_text_file", &a])
        .stdout("alpha\nbeta\n")
        .run();

    let edits = r#"[{"oldText": "beta", "newText": "gamma"}]"#;
    let edit = env.run_with_stdin(
        &["--cmd", &server, "edit_file", "--path", &a, "--edits", "-"],
        edits,
    );
    assert_eq!(edit.code, 0, "{}", edit.stderr);
    assert!(edit.stdout.contains("+gamma"), "{}", edit.stdout);
    assert_eq!(
        std::fs::read_to_string(dir.join("a.txt")).unwrap(),
        "alpha\ngamma\n"
    );

    let outside = env.run(&["--cmd", &server, "read_text_file", "/etc/hostname"]);
    assert_eq!(
        outside.code, 1,
        "a tool error is exit 1: {} {}",
        outside.stdout, outside.stderr
    );
    assert!(
        outside.stdout.to_lowercase().contains("access denied"),
        "{}",
        outside.stdout
    );
}

#[test]
fn stateless_server_is_probed_once_then_called_in_one_request() {
    let env = Env::new();
    let log = env.path("requests.log");
    let server = format!("sh -c 'tee -a {} | {}'", log.display(), time_server());
    let first = env.run(&["--cmd", &server, "get_current_time", "--timezone", "UTC"]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert!(
        first.stdout.contains("\"timezone\":\"UTC\""),
        "{}",
        first.stdout
    );
    let methods = |text: &str| -> Vec<String> {
        text.lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter_map(|v| v["method"].as_str().map(str::to_string))
            .collect()
    };
    let sent = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        methods(&sent),
        ["server/discover", "tools/list", "tools/call"],
        "{sent}"
    );
    assert!(sent.contains("\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\""));

    std::fs::remove_file(&log).unwrap();
    let second = env.run(&["--cmd", &server, "get_current_time", "UTC"]);
    assert_eq!(second.code, 0, "{}", second.stderr);
    let sent = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        methods(&sent),
        ["tools/call"],
        "a known stateless server needs exactly one request: {sent}"
    );
}

#[test]
fn handshake_server_gets_initialize_after_the_probe_then_only_initialize() {
    let env = Env::new();
    let log = env.path("requests.log");
    let server = format!("sh -c 'tee -a {} | {}'", log.display(), everything());
    assert_eq!(env.run(&["--cmd", &server]).code, 0);
    let sent = std::fs::read_to_string(&log).unwrap();
    assert!(
        sent.contains("server/discover") && sent.contains("\"initialize\""),
        "{sent}"
    );
    std::fs::remove_file(&log).unwrap();
    assert_eq!(
        env.run(&["--cmd", &server, "echo", "hi"]).stdout,
        "Echo: hi\n"
    );
    let sent = std::fs::read_to_string(&log).unwrap();
    assert!(
        !sent.contains("server/discover"),
        "the era is remembered: {sent}"
    );
}

#[test]
fn streamable_http_transport() {
    let env = Env::new();
    let (mut server, port) = everything_over_http("streamableHttp");
    let url = format!("http://127.0.0.1:{port}/mcp");
    let listing = env.run(&[&url]);
    let echo = env.run(&[&url, "echo", "--message", "over http"]);
    let image = env.run(&[&url, "get-tiny-image"]);
    let missing = env.run(&[&format!("http://127.0.0.1:{port}/nope"), "echo", "x"]);
    server.kill().unwrap();
    server.wait().unwrap();
    assert_eq!(listing.code, 0, "{}", listing.stderr);
    assert!(
        listing
            .stdout
            .starts_with("echo(message) - Echoes back input string\n"),
        "{}",
        listing.stdout
    );
    assert_eq!(
        (echo.code, echo.stdout.as_str()),
        (0, "Echo: over http\n"),
        "{}",
        echo.stderr
    );
    assert!(
        image.stdout.contains("[image image/png"),
        "{}",
        image.stdout
    );
    assert_eq!(missing.code, 3, "{}", missing.stderr);
    let refused = env.run(&[&url, "echo", "x"]);
    assert_eq!(
        refused.code, 3,
        "a server that is gone is a server failure: {}",
        refused.stderr
    );
    assert!(
        refused
            .stderr
            .starts_with("error: could not reach http://127.0.0.1:"),
        "{}",
        refused.stderr
    );
}

/// The 2024 HTTP+SSE transport, with server-everything's `sse` mode: chosen on its own when
/// the Streamable HTTP POST is refused, or by a host's `"type": "sse"` (imported).
#[test]
fn the_legacy_sse_transport() {
    let env = Env::new();
    let (mut server, port) = everything_over_http("sse");
    let url = format!("http://127.0.0.1:{port}/sse");
    let listing = env.run(&[&url]);
    let echo = env.run(&[&url, "echo", "--message", "over sse"]);
    env.write(
        "cursor.json",
        &serde_json::json!({"mcpServers": {"old": {"type": "sse", "url": url}}}).to_string(),
    );
    let imported = env.run(&["import", &env.path("cursor.json").display().to_string()]);
    let configured = env.run(&["old", "get-sum", "--a", "2", "--b", "3"]);
    server.kill().unwrap();
    server.wait().unwrap();
    assert!(
        listing.stdout.starts_with("echo(message) - "),
        "{}",
        listing.stderr
    );
    assert_eq!(echo.stdout, "Echo: over sse\n", "{}", echo.stderr);
    assert_eq!(imported.code, 0, "{}", imported.stderr);
    assert!(configured.stdout.contains('5'), "{}", configured.stderr);
}

/// A call that changes a server's tools (the official Python SDK's list_changed notice): the
/// next listing shows the new tool, whether ferry listed it in the server's shutdown grace or
/// marked the cache stale for the listing to ask. The start-up notice of server-everything is
/// covered above: it must not cost a listing a server start.
#[test]
fn a_call_that_changes_the_tools_is_seen_by_the_next_listing() {
    let env = Env::new();
    let state = env.path("grown.json");
    let (server, counter) = env.counted(&growing_server(&state));
    // The handshake era: the stateless era has no notices outside a request's own stream.
    let run = |args: &[&str]| -> Run {
        env.command(args)
            .env("FERRY_PROTOCOL_VERSION", "2025-11-25")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
            .into()
    };
    let first = run(&["--cmd", &server]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert!(!first.stdout.contains("alpha("), "{}", first.stdout);
    let grow = run(&["--cmd", &server, "grow", "--name", "alpha"]);
    assert_eq!(
        (grow.code, grow.stdout.as_str()),
        (0, "added alpha\n"),
        "{}",
        grow.stderr
    );
    let listed = run(&["--cmd", &server]);
    assert!(listed.stdout.contains("alpha()"), "{}", listed.stdout);
    // The first listing and the call started it; the listing after starts it once more only
    // when the call's shutdown grace did not list the new tools already.
    let started = spawns(&counter);
    assert!(
        started == 2 || started == 3,
        "{started} starts: the listing after the call starts the server at most once"
    );
    // Once listed, the new tool is called from the cache like any other.
    let called = run(&["--cmd", &server, "alpha"]);
    assert_eq!(called.stdout, "alpha answers\n", "{}", called.stderr);
}

/// Issue 27, item 1: server-everything restarted under a warm session answers the old
/// `Mcp-Session-Id` with 400 (-32000 "No valid session ID provided"). The daemon's session,
/// the proxy's (a long-lived cold client) and `--refresh` start a session again and the call
/// goes through; so does the first call after the server was down (connection refused, then
/// accepted). A server that cannot be reached is stopped after its idle time however often
/// it is called.
#[test]
fn a_restarted_http_server_gets_a_new_session_warm_cold_and_in_the_proxy() {
    let env = Env::warm();
    let (server, port) = everything_over_http("streamableHttp");
    let mut server = OnPort {
        child: Some(server),
        port,
    };
    let url = format!("http://127.0.0.1:{port}/mcp");
    let env = Test::with(env)
        .server("remote", serde_json::json!({"url": url}))
        .server("flaky", serde_json::json!({"url": url, "idleTimeout": 1}))
        .args(&["remote", "echo", "--message", "a"])
        .stdout("Echo: a\n")
        .run();
    let mut proxy = Served::start(&env, &["--servers", "remote", "--expose", "all"]);
    let first = proxy.call_tool(1, "remote__echo", serde_json::json!({"message": "p1"}));
    assert_eq!(Served::text(&first), "Echo: p1", "{first}");

    server.restart();
    let env = Test::with(env)
        .args(&["remote", "echo", "--message", "b"])
        .stdout("Echo: b\n")
        .run();
    let again = proxy.call_tool(2, "remote__echo", serde_json::json!({"message": "p2"}));
    assert_eq!(Served::text(&again), "Echo: p2", "{again}");
    server.restart();
    let env = Test::with(env)
        .args(&["--refresh", "remote", "echo", "--message", "c"])
        .stdout("Echo: c\n")
        .run();
    let env = Test::with(env)
        .args(&["--no-daemon", "remote", "echo", "--message", "cold"])
        .stdout("Echo: cold\n")
        .run();
    drop(proxy);

    // Down, then back on the same port: the call that finds it back goes through.
    server.stop();
    let down = env.run(&["remote", "echo", "--message", "down"]);
    assert_eq!(down.code, 3, "{}", down.stderr);
    server.restart();
    let env = Test::with(env)
        .args(&["remote", "echo", "--message", "d"])
        .stdout("Echo: d\n")
        .run();

    // Down for good: calls that fail do not keep the server warm.
    let _ = env.run(&["flaky", "echo", "--message", "e"]);
    server.stop();
    let stopped = wait_until(60, || {
        let failed = env.run(&["flaky", "echo", "--message", "f"]);
        assert_eq!(failed.code, 3, "{}", failed.stderr);
        !env.run(&["daemon", "status"]).stdout.contains("flaky")
    });
    assert!(
        stopped,
        "a server that cannot be reached stays warm while called"
    );
}

/// server-everything over Streamable HTTP on one port, stopped and started again at will, and
/// stopped when dropped (a failing test leaves nothing running).
struct OnPort {
    child: Option<std::process::Child>,
    port: u16,
}

impl OnPort {
    fn stop(&mut self) {
        if let Some(mut old) = self.child.take() {
            let _ = old.kill();
            let _ = old.wait();
        }
    }

    fn restart(&mut self) {
        self.stop();
        self.child = Some(everything_on_port("streamableHttp", self.port));
    }
}

impl Drop for OnPort {
    fn drop(&mut self) {
        self.stop();
    }
}

/// server-everything over HTTP (`streamableHttp` or `sse`) on a free loopback port, once it
/// accepts connections; the caller stops it.
fn everything_over_http(mode: &str) -> (std::process::Child, u16) {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    (everything_on_port(mode, port), port)
}

/// server-everything over HTTP on `port`, once it accepts connections.
fn everything_on_port(mode: &str, port: u16) -> std::process::Child {
    let server = std::process::Command::new("node")
        .args(["-r", &loopback_preload(), &everything_script(), mode])
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed().as_secs() < 30,
            "server-everything ({mode}) did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    server
}

/// The one line ferry prints for a saved file: `[KIND MIME SIZE] PATH`, with the file's bytes.
fn saved(line: &str, prefix: &str) -> Vec<u8> {
    assert!(line.starts_with(prefix), "{line}");
    let path = line[prefix.len()..]
        .trim_end()
        .split([' ', '"'])
        .next()
        .unwrap();
    std::fs::read(path).unwrap()
}

/// Issue 16, item 7: server-filesystem's `read_media_file` sends the file as a content block
/// and again as structuredContent (`{"content": [<the same block>]}`). The block is written to
/// a file and shown as one line; the structured copy is not printed (it was 400 KB of base64).
#[test]
fn structured_content_that_repeats_the_content_blocks_is_not_printed() {
    let env = Env::new();
    let dir = env.path("work");
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend((0..300_000u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8));
    std::fs::write(dir.join("photo.png"), &png).unwrap();
    let blob: Vec<u8> = (0..5000u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(dir.join("data.bin"), &blob).unwrap();
    let server = filesystem(&dir);
    let image = env.run(&["--cmd", &server, "read_media_file", "--path", "photo.png"]);
    assert_eq!(image.code, 0, "{}", image.stderr);
    assert_eq!(
        image.stdout.lines().count(),
        1,
        "{}",
        &image.stdout[..image.stdout.len().min(300)]
    );
    assert_eq!(saved(&image.stdout, "[image image/png 293.0 KB] "), png);
    let resource = env.run(&["--cmd", &server, "read_media_file", "--path", "data.bin"]);
    assert_eq!(
        resource.stdout.lines().count(),
        1,
        "{}",
        &resource.stdout[..resource.stdout.len().min(300)]
    );
    assert!(
        resource.stdout.ends_with(&format!(
            " file://{}/data.bin\n",
            std::fs::canonicalize(&dir).unwrap().display()
        )),
        "{}",
        resource.stdout
    );
    assert_eq!(
        saved(
            &resource.stdout,
            "[resource application/octet-stream 4.9 KB] "
        ),
        blob
    );
    // --json still gives the whole envelope.
    let envelope = env.run(&[
        "--json",
        "--cmd",
        &server,
        "read_media_file",
        "--path",
        "photo.png",
    ]);
    let value: serde_json::Value = serde_json::from_str(&envelope.stdout).unwrap();
    assert_eq!(
        value["structuredContent"]["content"][0],
        value["content"][0]
    );
}

/// Issue 16, item 7: binary fields of structured data (base64, `data:` URLs) are never printed
/// raw: they are written to files like any image and shown by their one-line note, also where
/// the official Python SDK repeats the dict as a JSON text block. Short base64 (a cursor)
/// stays text.
#[test]
fn binary_fields_of_structured_results_are_written_to_files() {
    let env = Env::new();
    env.write(
        "config/servers.json",
        &serde_json::json!({"mcpServers": {"media": {"command": "sh", "args": ["-c", media_server()]}}}).to_string(),
    );
    let thumbnail = env.run(&["media", "thumbnail", "--name", "logo"]);
    assert_eq!(thumbnail.code, 0, "{}", thumbnail.stderr);
    let lines: Vec<&str> = thumbnail.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", thumbnail.stdout);
    assert_eq!(lines[0], "name: logo");
    let png = saved(lines[1], "png: [image image/png 12.1 KB] ");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert!(png.ends_with(b"IEND\xaeB`\x82") && png.len() == 12_420);

    let attachment = env.run(&["media", "attachment", "--name", "report.pdf"]);
    let lines: Vec<&str> = attachment.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", attachment.stdout);
    let prefix = "file: {\"name\":\"report.pdf\",\"mimeType\":\"application/pdf\",\"data\":\"[data application/pdf 2.0 KB] ";
    let pdf = saved(lines[0], prefix);
    assert!(lines[0].ends_with(".pdf\"}"), "{}", lines[0]);
    assert!(pdf.starts_with(b"%PDF-1.4\n") && pdf.ends_with(b"%%EOF\n"));
    assert_eq!(lines[1], "pages: 2");

    let badge = env.run(&["media", "badge"]);
    let lines: Vec<&str> = badge.stdout.lines().collect();
    assert_eq!(lines[0], "label: ok");
    assert_eq!(
        &saved(lines[1], "icon: [image image/gif 43 B] ")[..6],
        b"GIF89a"
    );
    assert_eq!(lines.len(), 2, "{}", badge.stdout);

    let cursor = env.run(&["media", "cursor"]);
    assert_eq!(
        cursor.stdout,
        "{\"next\":\"eyJvZmZzZXQiOiAyfQ==\",\"items\":[\"a\",\"b\"]}\n"
    );
}

/// server-everything's simulate-research-query must run as a task (2025-11-25: the `task`
/// param, then `tasks/result`): ferry calls it so, waits through its stages and prints the
/// report as any result. A task that outlives its limit is cancelled, exit 4. Cold, a stdio
/// server's task cannot be left running: it would end with the server.
#[test]
fn a_tool_that_requires_a_task_is_called_as_one_and_prints_its_result() {
    let env = Env::new();
    let server = everything();
    let report = env.run(&[
        "--cmd",
        &server,
        "simulate-research-query",
        "--topic",
        "tides",
    ]);
    assert_eq!(report.code, 0, "{}", report.stderr);
    assert!(
        report.stdout.starts_with("# Research Report: tides\n"),
        "{}",
        report.stdout
    );
    assert!(report.stdout.contains("- Stage 4: Generating report ✓\n"));
    assert_eq!(report.stderr, "");

    // The question an ambiguous query asks mid-task reaches ferry on `tasks/result` and is
    // answered as a call's (declined here: its form has no defaults to accept).
    let mut ambiguous = env.command(&[
        "--cmd",
        &server,
        "simulate-research-query",
        "--topic",
        "python",
        "--ambiguous",
    ]);
    ambiguous.env("FERRY_ELICIT", "defaults");
    let asked: Run = ambiguous.output().unwrap().into();
    assert_eq!(asked.code, 0, "{}", asked.stderr);
    assert!(
        asked.stdout.starts_with(
            "# Research Report: python (User declined - using default interpretation)\n"
        ),
        "{}",
        asked.stdout
    );

    let late = env.run(&[
        "--cmd",
        &server,
        "simulate-research-query",
        "--topic",
        "tides",
        "--timeout",
        "3",
    ]);
    assert_eq!(late.code, 4, "{}", late.stderr);
    assert!(
        late.stderr
            .starts_with("error: index-js did not finish the task within 3s; it was cancelled\n"),
        "{}",
        late.stderr
    );

    let detached = env.run(&[
        "--cmd",
        &server,
        "simulate-research-query",
        "--topic",
        "tides",
        "--detach",
    ]);
    assert_eq!(detached.code, 2, "{}", detached.stderr);
    assert_eq!(detached.stdout, "");
    assert_eq!(
        detached.stderr,
        "error: a detached task needs the warm daemon: index-js's tasks live in its process, \
         which a cold call starts and stops\nhint: call it through the daemon (without \
         --no-daemon, FERRY_NO_DAEMON=1 or \"keepAlive\": false), or leave out --detach \
         and wait for the result\n"
    );
}

/// A configured stdio server's entry, from a fixture's command line.
fn entry(command_line: &str) -> serde_json::Value {
    let mut words = command_line.split(' ');
    let command = words.next().unwrap();
    serde_json::json!({"command": command, "args": words.collect::<Vec<_>>()})
}

/// Issue 27, item 5: asking a server for what it does not have is an answer, not a server
/// failure: a server that declares no resources or prompts says so (exit 0); an unknown URI,
/// a template's pattern filled with a value the server refuses and an unknown task ID are the
/// caller's mistake (exit 2, with a hint), the server's code said once.
#[test]
fn no_such_thing_is_the_callers_mistake_or_an_empty_answer() {
    let env = Env::warm();
    let files = filesystem(&env.path("work"));
    let env = Test::with(env)
        .server("filesystem", entry(&files))
        .server("everything", entry(&everything()))
        .args(&["filesystem", "--resources"])
        .stdout("filesystem offers no resources\n")
        .run();
    let env = Test::with(env)
        .args(&["filesystem", "--prompts"])
        .stdout("filesystem offers no prompts\n")
        .run();
    let env = Test::with(env)
        .args(&["filesystem", "--read", "file:///etc/hostname"])
        .stderr("error: filesystem offers no resources\nhint: `ferry filesystem --help` lists its tools\n")
        .status(2)
        .run();
    let env = Test::with(env)
        .args(&["everything", "--read", "demo://nope/x"])
        .stderr("error: everything refused resources/read: Resource demo://nope/x not found (code -32602)\nhint: `ferry everything --resources` lists what it offers, templates included\n")
        .status(2)
        .run();
    let env = Test::with(env)
        .args(&["everything", "--read", "demo://resource/dynamic/text/abc"])
        .stderr("error: everything refused resources/read: Unknown resource: demo://resource/dynamic/text/abc (code -32603)\nhint: `ferry everything --resources` lists what it offers, templates included\n")
        .status(2)
        .run();
    Test::with(env)
        .args(&["everything", "--task", "abc123"])
        .stderr("error: everything refused tasks/get: Failed to retrieve task: Task not found (code -32602)\nhint: a stdio server's tasks live in its process: only the warm server that ran the call has it, until it is stopped (idleTimeout, `ferry daemon stop`) or the task expires\n")
        .status(2)
        .run();
}
