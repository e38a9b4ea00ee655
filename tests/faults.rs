//! Faults no real server produces, from our own fault server (examples/fault_server.rs).

mod support;

use support::*;

#[test]
fn crash_mid_call_is_exit_3_with_the_stderr_tail() {
    let env = Env::new();
    let log = env.path("cache/logs/fault_server.log");
    Test::with(env)
        .args(&["--cmd", &fault("crash"), "echo", "--text", "hi"])
        .status(3)
        .stderr(&format!(
            "error: fault_server stopped: the server closed its output (exit status 1)\n\
             server stderr (last lines):\n  fatal: simulated crash\n  line 1\n  line 2\n  \
             line 3\n  line 4\n  line 5\nhint: its stderr is in {}\n",
            log.display()
        ))
        .run();
}

#[test]
fn a_server_that_never_answers_times_out_with_exit_4_and_is_killed() {
    let marker = format!("hang-marker-{}", std::process::id());
    let _env = Test::new()
        .args(&[
            "--timeout",
            "1",
            "--cmd",
            &format!("{} {marker}", fault("hang")),
            "echo",
            "--text",
            "hi",
        ])
        .status(4)
        .stderr(
            "error: fault_server did not answer tools/call within 1s\n\
             server stderr (last lines):\n  hanging on tools/call\n\
             hint: raise the limit with --timeout SECONDS or \"timeout\" in the server's config\n",
        )
        .run();
    assert_eq!(
        processes_matching(&marker),
        Vec::<String>::new(),
        "the hung server must be stopped"
    );
}

#[test]
fn garbage_on_stdout_is_skipped() {
    Test::new()
        .args(&["--cmd", &fault("garbage"), "echo", "--text", "still works"])
        .stdout("still works\n")
        .run();
}

#[test]
fn a_20_mb_result_arrives_whole_and_a_budget_keeps_head_and_tail() {
    let env = Env::new();
    let run = env.run(&["--cmd", &fault("huge"), "huge"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.len(), 20 * 1024 * 1024);
    assert!(run.stdout.starts_with("line 00000000") && run.stdout.ends_with("END\n"));

    let cut = env.run(&["--cmd", &fault("huge"), "huge", "--max-tokens", "2000"]);
    assert_eq!(cut.code, 0);
    let tokens = ferry::tokenizer::Tokenizer::get(ferry::tokenizer::Encoding::O200kBase).unwrap();
    assert!(
        tokens.count(&cut.stdout) <= 2000,
        "{} tokens",
        tokens.count(&cut.stdout)
    );
    assert!(
        cut.stdout.len() > 4000,
        "the budget is counted in tokens, not bytes"
    );
    assert!(cut.stdout.starts_with("line 00000000") && cut.stdout.ends_with("END\n"));
    let marker = cut
        .stdout
        .lines()
        .find(|l| l.starts_with("[ferry: cut "))
        .expect("marker line");
    let path = marker
        .rsplit("full output: ")
        .next()
        .unwrap()
        .trim_end_matches(']');
    assert_eq!(std::fs::metadata(path).unwrap().len(), 20 * 1024 * 1024);
}

#[test]
fn a_50_mb_stderr_flood_neither_blocks_nor_reaches_the_screen() {
    let env = Env::new();
    let run = env.run(&[
        "--cmd",
        &fault("stderr-flood"),
        "echo",
        "--text",
        "answered",
    ]);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "answered\n"),
        "{}",
        &run.stderr[..run.stderr.len().min(500)]
    );
    assert_eq!(run.stderr, "");
    let log = env.path("cache/logs/fault_server.log");
    let size = std::fs::metadata(&log).unwrap().len();
    assert!(
        size > 1024 * 1024 && size < 9 * 1024 * 1024,
        "the log is kept but capped: {size}"
    );
}

#[test]
fn a_slow_start_is_waited_for() {
    Test::new()
        .args(&["--cmd", &fault("slow-start"), "echo", "--text", "late"])
        .stdout("late\n")
        .run();
}

#[test]
fn a_malformed_tool_is_skipped_and_the_rest_listed() {
    Test::new()
        .args(&["--cmd", &fault("malformed-tool")])
        .stdout("echo(text) - Echo text\nfail() - Always fails\n")
        .stderr("warning: fault_server: skipped tool #2: tool entry is not an object\nwarning: fault_server: skipped tool #3: tool entry has no string \"name\"\n")
        .run();
}

#[test]
fn pagination_is_followed() {
    let env = Test::new()
        .args(&["--cmd", &fault("paginate")])
        .stdout(
            "tool_1([text]) - Tool number 1\ntool_2([text]) - Tool number 2\n\
             tool_3([text]) - Tool number 3\ntool_4([text]) - Tool number 4\n\
             tool_5([text]) - Tool number 5\ntool_6([text]) - Tool number 6\n",
        )
        .run();
    Test::with(env)
        .args(&["--cmd", &fault("paginate"), "tool_6", "--text", "x"])
        .stdout("tool_6\n")
        .run();
}

#[test]
fn a_server_that_cannot_start_is_exit_3_with_its_reason() {
    let env = Env::new();
    let log = env.path("cache/logs/fault_server.log");
    let env = Test::with(env)
        .args(&["--cmd", &fault("exit-early")])
        .status(3)
        .stderr(&format!(
            "error: fault_server stopped: the server closed its output (exit status 3)\n\
             server stderr (last lines):\n  cannot start: missing config\n\
             hint: its stderr is in {}\n",
            log.display()
        ))
        .run();

    Test::with(env)
        .args(&["--cmd", "/nonexistent/server --flag"])
        .status(3)
        .stderr("error: could not start server: command \"/nonexistent/server\" not found\nhint: check the server's \"command\" in its configuration\n")
        .run();
}

#[test]
fn a_tool_error_is_exit_1_with_its_text() {
    Test::new()
        .args(&["--cmd", &fault("normal"), "fail"])
        .status(1)
        .stdout("it failed\n")
        .run();
}

#[test]
fn ctrl_c_during_a_call_stops_the_server_too() {
    let env = Env::new();
    let marker = format!("interrupt-marker-{}", std::process::id());
    let child = env
        .command(&[
            "--cmd",
            &format!("{} {marker}", fault("hang")),
            "echo",
            "--text",
            "hi",
        ])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the call is in flight: the server says in its log that it has the call.
    let log = env.path("cache/logs/fault_server.log");
    assert!(
        wait_until(20, || std::fs::read_to_string(&log)
            .is_ok_and(|text| text.contains("hanging on tools/call\n"))),
        "the call never reached the server"
    );
    // SAFETY: signalling the ferry process this test started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert_eq!(stderr, "error: interrupted; the server was stopped\n");
    let started = std::time::Instant::now();
    while !processes_matching(&marker).is_empty() {
        assert!(
            started.elapsed().as_secs() < 5,
            "the server outlived ferry: {:?}",
            processes_matching(&marker)
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn a_reader_that_goes_away_ends_ferry_quietly() {
    let env = Env::new();
    let mut child = env
        .command(&["--cmd", &fault("huge"), "huge"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 64];
    std::io::Read::read_exact(&mut stdout, &mut first).unwrap();
    drop(stdout);
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "",
        "no panic, no noise"
    );
    // Quiet, but not success: the output was not all delivered (as a shell reports SIGPIPE).
    assert_eq!(output.status.code(), Some(141));
}

#[test]
fn an_http_server_that_wants_credentials_is_exit_5() {
    let env = Env::new();
    let (mut server, url) = http_fault_server("unauthorized");
    // The one command that fixes it: sign in (or configure a header).
    Test::with(env)
        .args(&[&url, "echo", "x"])
        .status(5)
        .stderr(&format!("error: {url} needs you to sign in (HTTP 401)\nhint: run `ferry auth {url}`, then this command again (or put an Authorization header in the server's \"headers\")\n"))
        .run();
    server.kill().unwrap();
    server.wait().unwrap();
}

#[test]
fn an_error_with_a_null_id_answers_the_pending_request() {
    let started = std::time::Instant::now();
    Test::new()
        .args(&["--timeout", "30", "--cmd", &fault("null-id-error")])
        .status(3)
        .stderr("error: fault_server answered initialize with an error: Invalid request: bad clientInfo (code -32600)\n")
        .run();
    // Answered, not waited out: far below the 30 s limit (a generous bound, not a benchmark).
    assert!(started.elapsed().as_secs() < 20);
}

/// A tiny HTTP server for faults no real MCP server shows: it answers the handshake, lists one
/// tool `slow`, and then behaves as `mode` says.
fn http_fault_server(mode: &str) -> (std::process::Child, String) {
    let script = r#"
import http.server, json, sys, time
mode = sys.argv[1]
class Handler(http.server.BaseHTTPRequestHandler):
    def reply(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def do_POST(self):
        if mode == "not-found":
            return self.reply(404, {"detail": "Not Found"})
        if mode == "unauthorized":
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Bearer realm="test"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        msg = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        method, id = msg.get("method"), msg.get("id")
        if id is None:
            self.send_response(202); self.send_header("Content-Length", "0"); self.end_headers(); return
        if method == "initialize":
            return self.reply(200, {"jsonrpc": "2.0", "id": id, "result": {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "slow", "version": "1"}}})
        if method == "tools/list":
            return self.reply(200, {"jsonrpc": "2.0", "id": id, "result": {"tools": [{"name": "slow", "inputSchema": {"type": "object"}}]}})
        if method == "tools/call":
            time.sleep(30)
            return self.reply(200, {"jsonrpc": "2.0", "id": id, "result": {"content": []}})
        return self.reply(400, {"jsonrpc": "2.0", "id": None, "error": {"code": -32601, "message": "Method not found"}})
    def log_message(self, *args):
        pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_port, flush=True)
server.serve_forever()
"#;
    let mut server = std::process::Command::new("python3")
        .args(["-c", script, mode])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut port = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(server.stdout.as_mut().unwrap()),
        &mut port,
    )
    .unwrap();
    (server, format!("http://127.0.0.1:{}/mcp", port.trim()))
}

#[test]
fn the_timeout_covers_an_http_server_that_holds_the_post() {
    let env = Env::new();
    let (mut server, url) = http_fault_server("slow");
    let listed = env.run(&[&url]);
    let started = std::time::Instant::now();
    let run = env.run(&["--timeout", "1", &url, "slow"]);
    let elapsed = started.elapsed();
    server.kill().unwrap();
    server.wait().unwrap();
    assert_eq!(
        (listed.code, listed.stdout.as_str()),
        (0, "slow()\n"),
        "{}",
        listed.stderr
    );
    assert_eq!(run.code, 4, "{}", run.stderr);
    assert!(
        run.stderr
            .starts_with("error: mcp did not answer tools/call within 1s\n"),
        "{}",
        run.stderr
    );
    assert!(
        elapsed.as_secs() < 20,
        "the call was held past its limit: {elapsed:?}"
    );
}

#[test]
fn a_json_http_error_that_is_not_json_rpc_is_a_server_failure() {
    let env = Env::new();
    let (mut server, url) = http_fault_server("not-found");
    let run = env.run(&["--timeout", "30", &url]);
    server.kill().unwrap();
    server.wait().unwrap();
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert!(
        run.stderr
            .starts_with("error: unexpected HTTP 404 Not Found from http://127.0.0.1:"),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("{\"detail\": \"Not Found\"}"),
        "{}",
        run.stderr
    );
}

#[test]
fn out_of_range_options_are_usage_errors() {
    let mut env = Env::new();
    let cases: [(&[&str], &str); 4] = [
        (&["--timeout", "1e300", "demo", "pixel"], "error: --timeout must be a number of seconds above 0 and at most 604800, not \"1e300\"\nhint: for example: --timeout 120\n"),
        (&["--max-tokens", "5", "demo", "pixel"], "error: --max-tokens must be at least 64: the line that reports a cut takes about 40\nhint: give --max-tokens 64 or more\n"),
        (&["ftp://example.com/mcp"], "error: unsupported URL scheme \"ftp\" in \"ftp://example.com/mcp\"\nhint: MCP servers are reached over http:// or https://, or started as a command with --cmd\n"),
        (&["demo", "word_count", "x", "--timeout", "0"], "error: --timeout must be a number of seconds above 0 and at most 604800, not \"0\"\nhint: for example: --timeout 120\n"),
    ];
    for (args, expected) in cases {
        env = Test::with(env).args(args).status(2).stderr(expected).run();
    }
}

#[test]
fn a_timeout_after_the_tool_name_holds_on_a_cold_cache_too() {
    // With nothing cached, the session that lists the tools also makes the call: it must take
    // the call's own --timeout, not the default minute.
    let marker = format!("cold-timeout-marker-{}", std::process::id());
    Test::new()
        .args(&[
            "--cmd",
            &format!("{} {marker}", fault("hang")),
            "echo",
            "--text",
            "hi",
            "--timeout",
            "1",
        ])
        .status(4)
        .stderr(
            "error: fault_server did not answer tools/call within 1s\n\
             server stderr (last lines):\n  hanging on tools/call\n\
             hint: raise the limit with --timeout SECONDS or \"timeout\" in the server's config\n",
        )
        .run();
}
