//! `ferry serve --http` as a team's service: `/readyz` beside `/healthz` (ready once started,
//! 503 while starting or draining), `/metrics` in Prometheus' text format behind the token and
//! scraped by a real Prometheus (Debian's, installed by tests/fixtures/setup.sh), and a call's
//! W3C `traceparent` in ferry's log lines.

mod support;

use serde_json::{json, Value};
use std::process::{Child, Stdio};
use support::*;

/// A manifest with a tool that works, one that fails, and one the sandbox refuses (it writes
/// outside its root).
fn manifest(env: &Env) -> String {
    env.write(
        "work/tools.toml",
        r#"[server]
name = "svc"
instructions = "Tools for the service tests."
roots = ["."]

[[tools]]
name = "echo"
description = "Print the text."
command = ["printf", "%s\n", "{text}"]
[tools.params.text]
type = "string"

[[tools]]
name = "fail"
description = "Exit 3."
command = ["sh", "-c", "exit 3"]

[[tools]]
name = "make_dir"
description = "Make a directory outside the root: the sandbox refuses."
command = ["mkdir", "/var/tmp/ferry-service-test-refused"]

[[tools]]
name = "slow"
description = "Sleep for some seconds."
command = ["sleep", "{seconds}"]
[tools.params.seconds]
type = "number"
"#,
    );
    env.path("work/tools.toml").display().to_string()
}

const TOKEN: &str = "service-test-token-0123456789";

/// `ferry serve --http` with a known token, its stderr kept in a file for the log checks.
struct Service {
    child: Child,
    port: u16,
    log: std::path::PathBuf,
}

impl Service {
    fn start(env: &Env, args: &[&str], port: u16) -> Service {
        env.write("work/token", TOKEN);
        let log = env.path("work/serve.log");
        let address = format!("127.0.0.1:{port}");
        let token_file = env.path("work/token").display().to_string();
        let mut all = vec!["serve", "--http", &address, "--token-file", &token_file];
        all.extend_from_slice(args);
        let child = env
            .command(&all)
            .env("FERRY_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        Service { child, port, log }
    }

    /// Started on a free port, once it says where it listens.
    fn ready(env: &Env, args: &[&str]) -> Service {
        let mut service = Service::start(env, args, 0);
        let mut url = None;
        assert!(
            wait_until(30, || {
                url = service
                    .log()
                    .lines()
                    .find_map(|l| l.strip_prefix("ferry serve: http://127.0.0.1:"))
                    .map(str::to_string);
                url.is_some()
            }),
            "no address line: {}",
            service.log()
        );
        service.port = url.unwrap().trim_end_matches("/mcp").parse().unwrap();
        service
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn get(&self, path: &str, token: Option<&str>) -> (u16, Vec<(String, String)>, String) {
        let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
        http_exchange(self.port, "GET", path, &[], &auth, "")
    }

    fn call(&self, tool: &str, arguments: Value, meta: Value) -> Value {
        call(self.port, tool, arguments, meta)
    }
}

/// A 2026-07-28 `tools/call` with these `_meta` keys besides the protocol's: its JSON-RPC
/// response.
fn call(port: u16, tool: &str, arguments: Value, meta: Value) -> Value {
    let mut all = modern_meta();
    all.as_object_mut()
        .unwrap()
        .extend(meta.as_object().cloned().unwrap_or_default());
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments, "_meta": all}}).to_string();
    let headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", tool),
    ];
    let auth = format!("Authorization: Bearer {TOKEN}\r\n");
    let (_, _, body) = http_exchange(port, "POST", "/mcp", &headers, &auth, &body);
    body.lines()
        .rev()
        .find_map(|l| l.strip_prefix("data: "))
        .map_or_else(
            || serde_json::from_str(&body).unwrap_or(Value::Null),
            |d| serde_json::from_str(d).unwrap_or(Value::Null),
        )
}

impl Drop for Service {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A loopback port nothing listens on (for a server that must be reached before it says
/// where it listens).
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// The value of the sample `name` exactly (labels included) in a text exposition.
fn sample(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
}

#[test]
fn readyz_is_ready_once_serving_and_draining_after_a_signal() {
    let env = Env::new();
    let manifest = manifest(&env);
    let service = Service::ready(&env, &["--manifest", &manifest, "--drain-timeout", "20"]);
    // No token: a probe carries no secret, and the answer names nothing served.
    let (status, _, body) = service.get("/readyz", None);
    assert_eq!((status, body.as_str()), (200, "ready\n"));
    let port = service.port;
    let call = std::thread::spawn(move || call(port, "slow", json!({"seconds": 2.37}), json!({})));
    assert!(wait_until(10, || !processes_matching("sleep 2.37").is_empty()));
    // SAFETY: kill has no memory preconditions; the pid is a child this test started.
    assert_eq!(
        unsafe { libc::kill(service.child.id() as i32, libc::SIGTERM) },
        0
    );
    assert!(wait_until(5, || service.get("/readyz", None).0 == 503));
    let (status, headers, body) = service.get("/readyz", None);
    assert_eq!((status, body.as_str()), (503, "draining\n"));
    assert_eq!(header(&headers, "retry-after"), Some("1"));
    // Still alive while it drains: the call in flight finishes.
    let answered = call.join().unwrap();
    assert!(
        answered["result"].is_object() && answered["result"]["isError"] != true,
        "{answered}"
    );
}

#[test]
fn readyz_is_503_and_mcp_waits_while_the_servers_behind_it_are_listed() {
    let env = Env::new();
    // A server that never answers: --expose all waits for its listing before serving.
    let config = json!({"mcpServers": {"mute": {"command": "sleep", "args": ["60"]}}});
    env.write("config/servers.json", &config.to_string());
    let port = free_port();
    let service = Service::start(&env, &["--servers", "--expose", "all"], port);
    assert!(
        wait_until(20, || service.get("/healthz", None).0 == 200),
        "{}",
        service.log()
    );
    let (status, _, body) = service.get("/readyz", None);
    assert_eq!((status, body.as_str()), (503, "starting\n"));
    let discover = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": modern_meta()}}).to_string();
    let auth = format!("Authorization: Bearer {TOKEN}\r\n");
    let (status, headers, body) = http_exchange(
        port,
        "POST",
        "/mcp",
        &[("Content-Type", "application/json")],
        &auth,
        &discover,
    );
    assert_eq!((status, body.as_str()), (503, "starting\n"));
    assert_eq!(header(&headers, "retry-after"), Some("1"));
    assert!(!service.log().contains("ferry serve: http://"));
}

#[test]
fn metrics_need_the_token_and_count_calls_refusals_and_connections() {
    let env = Env::new();
    let manifest = manifest(&env);
    let service = Service::ready(&env, &["--manifest", &manifest]);
    assert_eq!(service.get("/metrics", None).0, 401);
    let (status, headers, _) = http_exchange(service.port, "POST", "/metrics", &[], "", "");
    assert_eq!(
        (status, header(&headers, "allow")),
        (405, Some("GET, HEAD"))
    );
    assert_eq!(
        service.get("/metrics", Some("wrong-token-0123456789")).0,
        401
    );
    let host = format!("evil.example.com:{}", service.port);
    let auth = format!("Authorization: Bearer {TOKEN}\r\n");
    let (status, _, _) = http_exchange(
        service.port,
        "GET",
        "/metrics",
        &[("Host", &host)],
        &auth,
        "",
    );
    assert_eq!(status, 421);
    assert_eq!(
        service.call("echo", json!({"text": "hi"}), json!({}))["result"]["content"][0]["text"],
        "hi\n"
    );
    service.call("echo", json!({"text": "again"}), json!({}));
    assert_eq!(
        service.call("fail", json!({}), json!({}))["result"]["isError"],
        true
    );
    let refused = service.call("make_dir", json!({}), json!({}));
    assert!(
        refused["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .contains("refused by the sandbox"),
        "{refused}"
    );
    let unknown = service.call("made-up\"name", json!({}), json!({}));
    assert_eq!(unknown["result"]["isError"], true, "{unknown}");
    // A handshake-era session, open until it is deleted.
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}).to_string();
    let json_headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    let (status, headers, _) = http_exchange(
        service.port,
        "POST",
        "/mcp",
        &json_headers,
        &auth,
        &initialize,
    );
    assert_eq!(status, 200);
    assert!(header(&headers, "mcp-session-id").is_some());
    let (status, headers, text) = service.get("/metrics", Some(TOKEN));
    assert_eq!(status, 200);
    assert_eq!(
        header(&headers, "content-type"),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    for (name, value) in [
        (r#"ferry_tool_calls_total{tool="echo",outcome="ok"}"#, 2.0),
        (
            r#"ferry_tool_calls_total{tool="fail",outcome="error"}"#,
            1.0,
        ),
        (
            r#"ferry_tool_calls_total{tool="make_dir",outcome="error"}"#,
            1.0,
        ),
        (
            r#"ferry_tool_calls_total{tool="(unknown)",outcome="error"}"#,
            1.0,
        ),
        (
            r#"ferry_tool_call_duration_seconds_count{tool="echo"}"#,
            2.0,
        ),
        (
            r#"ferry_tool_call_duration_seconds_bucket{tool="echo",le="+Inf"}"#,
            2.0,
        ),
        (r#"ferry_sandbox_refusals_total{rule="write"}"#, 1.0),
        ("ferry_sessions", 1.0),
        ("ferry_tasks", 0.0),
    ] {
        assert_eq!(sample(&text, name), Some(value), "{name} in:\n{text}");
    }
    // This request's own connection at least (the calls' may still be closing).
    assert!(
        sample(&text, "ferry_http_connections").is_some_and(|n| n >= 1.0),
        "{text}"
    );
    assert!(!text.contains("made-up"), "{text}");
    assert!(text.contains("# TYPE ferry_tool_call_duration_seconds histogram"));
}

#[test]
fn a_calls_traceparent_is_in_its_log_lines_and_a_forged_one_is_not() {
    let env = Env::new();
    let manifest = manifest(&env);
    let service = Service::ready(&env, &["--manifest", &manifest]);
    let traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    service.call(
        "echo",
        json!({"text": "traced"}),
        json!({"traceparent": traceparent}),
    );
    let forged = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\nINFO forged";
    service.call("fail", json!({}), json!({"traceparent": forged}));
    service.call("made-up-tool", json!({}), json!({}));
    let mut log = String::new();
    assert!(wait_until(10, || {
        log = service.log();
        log.lines().filter(|l| l.contains("tool call")).count() == 3
    }));
    assert!(log.contains("call{tool=\"(unknown)\"}"), "{log}");
    let traced: Vec<&str> = log.lines().filter(|l| l.contains(traceparent)).collect();
    assert_eq!(traced.len(), 1, "{log}");
    assert!(
        traced[0].contains("tool=\"echo\"") || traced[0].contains("tool=echo"),
        "{log}"
    );
    assert!(traced[0].contains("outcome=\"ok\""), "{log}");
    assert!(!log.contains("forged"), "{log}");
    assert!(!log.contains("made-up"), "{log}");
}

#[test]
fn prometheus_scrapes_the_metrics_with_the_token() {
    let prometheus = ["/usr/bin/prometheus", "/usr/sbin/prometheus"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .expect("prometheus: run tests/fixtures/setup.sh (apt-get install prometheus)");
    let env = Env::new();
    let manifest = manifest(&env);
    let service = Service::ready(&env, &["--manifest", &manifest]);
    for text in ["one", "two", "three"] {
        service.call("echo", json!({"text": text}), json!({}));
    }
    let web = free_port();
    env.write(
        "work/prometheus.yml",
        &format!(
            r#"global:
  scrape_interval: 1s
scrape_configs:
  - job_name: ferry
    metrics_path: /metrics
    authorization:
      type: Bearer
      credentials_file: {}
    static_configs:
      - targets: ["127.0.0.1:{}"]
"#,
            env.path("work/token").display(),
            service.port
        ),
    );
    let mut scraper = std::process::Command::new(prometheus)
        .arg(format!(
            "--config.file={}",
            env.path("work/prometheus.yml").display()
        ))
        .arg(format!(
            "--storage.tsdb.path={}",
            env.path("work/tsdb").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{web}"))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(env.path("work/prometheus.log")).unwrap())
        .spawn()
        .unwrap();
    let query = |q: &str| -> Value {
        let path = format!("/api/v1/query?query={}", form_urlencode(q));
        let (_, _, body) = http_exchange(web, "GET", &path, &[], "", "");
        serde_json::from_str(&body).unwrap_or(Value::Null)
    };
    let calls = r#"ferry_tool_calls_total{job="ferry",tool="echo",outcome="ok"}"#;
    let mut seen = Value::Null;
    let scraped = wait_until(60, || {
        seen = query(calls);
        seen["data"]["result"][0]["value"][1] == "3"
    });
    let up = query(r#"up{job="ferry"}"#);
    let _ = scraper.kill();
    let _ = scraper.wait();
    assert!(
        scraped,
        "{seen}\n{}",
        std::fs::read_to_string(env.path("work/prometheus.log")).unwrap_or_default()
    );
    assert_eq!(up["data"]["result"][0]["value"][1], "1", "{up}");
}

/// A query string value, percent-encoded.
fn form_urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
