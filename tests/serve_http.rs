//! `ferry serve --http`: the rules of the endpoint itself, checked with raw HTTP requests:
//! DNS-rebinding guards (Host 421, Origin 403), the bearer token, body limits, sessions (400
//! without one, 404 for an unknown one, DELETE), GET streams, the 2026 header checks.

mod support;

use serde_json::{json, Value};
use std::io::Write;
use support::*;

/// One raw HTTP/1.1 exchange at `/mcp`, with the run's token unless the request sets its own:
/// the status, the headers (lower-case names) and the body.
fn exchange(
    endpoint: &Endpoint,
    method: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, Vec<(String, String)>, String) {
    let token = authorization(endpoint, headers);
    http_exchange(endpoint.port, method, "/mcp", headers, &token, body)
}

/// The token's header line, as a client configured with it sends it, unless the request sets
/// its own.
fn authorization(endpoint: &Endpoint, headers: &[(&str, &str)]) -> String {
    match &endpoint.token {
        Some(token)
            if !headers
                .iter()
                .any(|(k, _)| k.eq_ignore_ascii_case("authorization")) =>
        {
            format!("Authorization: Bearer {token}\r\n")
        }
        _ => String::new(),
    }
}

fn modern(method: &str, params: Value, id: u64) -> (Vec<(&'static str, String)>, String) {
    let mut params = params;
    params["_meta"] = modern_meta();
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
    let mut headers = vec![
        ("Content-Type", "application/json".to_string()),
        ("Accept", "application/json, text/event-stream".to_string()),
        ("MCP-Protocol-Version", "2026-07-28".to_string()),
        ("Mcp-Method", method.to_string()),
    ];
    if let Some(name) = params
        .get("name")
        .or_else(|| params.get("uri"))
        .and_then(Value::as_str)
    {
        headers.push(("Mcp-Name", name.to_string()));
    }
    (headers, body)
}

fn send(
    endpoint: &Endpoint,
    (headers, body): &(Vec<(&'static str, String)>, String),
) -> (u16, Vec<(String, String)>, String) {
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    exchange(endpoint, "POST", &headers, body)
}

/// Sends a POST and returns its connection unread, for a test to close when it likes.
fn post_and_keep_open(
    endpoint: &Endpoint,
    headers: &[(&str, &str)],
    body: &str,
) -> std::net::TcpStream {
    let port = endpoint.port;
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str(&authorization(endpoint, headers));
    request.push_str("\r\n");
    request.push_str(body);
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    stream
}

/// The headers of a JSON-RPC POST.
const JSON_HEADERS: [(&str, &str); 2] = [
    ("Content-Type", "application/json"),
    ("Accept", "application/json, text/event-stream"),
];

/// A 2025-11-25 `initialize` request.
fn initialize_body() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}).to_string()
}

#[test]
fn dns_rebinding_is_refused_and_loopback_names_are_accepted() {
    let env = Env::new();
    let server = HttpServed::start(&env, &["--manifest", &serve_manifest()]);
    let discover = modern("server/discover", json!({}), 1);
    let evil_host = exchange(
        &server.endpoint,
        "POST",
        &[
            ("Host", "evil.example.com"),
            ("Content-Type", "application/json"),
        ],
        &discover.1,
    );
    assert_eq!(evil_host.0, 421);
    let evil_origin = exchange(
        &server.endpoint,
        "POST",
        &[
            ("Origin", "http://evil.example.com"),
            ("Content-Type", "application/json"),
        ],
        &discover.1,
    );
    assert_eq!(evil_origin.0, 403);
    for host in ["localhost", "127.0.0.1", "[::1]"] {
        let host = format!("{host}:{}", server.port);
        let origin = format!("http://{host}");
        let mut headers: Vec<(&str, &str)> =
            discover.0.iter().map(|(k, v)| (*k, v.as_str())).collect();
        headers.push(("Host", &host));
        headers.push(("Origin", &origin));
        let ok = exchange(&server.endpoint, "POST", &headers, &discover.1);
        assert_eq!(ok.0, 200, "{host}: {}", ok.2);
        assert_eq!(
            json_of(&ok.2)["result"]["supportedVersions"],
            json!(["2026-07-28"])
        );
    }
}

#[test]
fn a_token_guards_the_endpoint_and_bodies_are_limited() {
    let env = Env::new();
    let token = "0123456789abcdef0123456789abcdef";
    let server = HttpServed::start_with_env(
        &env,
        &["--manifest", &serve_manifest()],
        &[("FERRY_SERVE_TOKEN", token)],
    );
    let bare = Endpoint {
        port: server.port,
        token: None,
    };
    let discover = modern("server/discover", json!({}), 1);
    assert_eq!(send(&bare, &discover).0, 401);
    let mut with = discover.clone();
    with.0.push(("Authorization", format!("Bearer {token}")));
    assert_eq!(send(&bare, &with).0, 200);
    let mut wrong = discover.clone();
    wrong.0.push(("Authorization", "Bearer nope".into()));
    assert_eq!(send(&bare, &wrong).0, 401);
    let big = "x".repeat(5 * 1024 * 1024);
    let mut huge = with.clone();
    huge.1 = big;
    assert_eq!(send(&bare, &huge).0, 413);
}

/// Loopback is open to every account on the machine: without a token of its own, serve makes
/// one for the run and says how a host sends it; `--no-token` is a loopback-only opt-out that
/// says what it means.
#[test]
fn http_wants_a_token_by_default() {
    let env = Env::new();
    let mut child = env
        .command(&[
            "serve",
            "--manifest",
            &serve_manifest(),
            "--http",
            "127.0.0.1:0",
        ])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    // Warnings may come first (serving as root, a kernel without Landlock); then the address,
    // the token and the host's config entry, in that order.
    let mut lines = Vec::new();
    while lines.len() < 3 {
        let mut line = String::new();
        std::io::BufRead::read_line(&mut stderr, &mut line).unwrap();
        assert!(!line.is_empty(), "serve ended early: {lines:?}");
        if lines.is_empty() && !line.starts_with("ferry serve: http") {
            continue;
        }
        lines.push(line.trim_end().to_string());
    }
    let url = lines[0].strip_prefix("ferry serve: ").unwrap().to_string();
    let port: u16 = url
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap();
    let token = lines[1]
        .strip_prefix(
            "ferry serve: token for this run (clients send \"Authorization: Bearer TOKEN\"): ",
        )
        .unwrap_or_else(|| panic!("{lines:?}"))
        .to_string();
    assert_eq!(token.len(), 48, "{token}");
    let snippet: Value = serde_json::from_str(
        lines[2]
            .strip_prefix("ferry serve: a host's config entry for it: ")
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        snippet,
        json!({"type": "http", "url": url, "headers": {"Authorization": format!("Bearer {token}")}})
    );
    let discover = modern("server/discover", json!({}), 1);
    let bare = Endpoint { port, token: None };
    assert_eq!(send(&bare, &discover).0, 401, "no token, no answer");
    let with = Endpoint {
        port,
        token: Some(token),
    };
    assert_eq!(send(&with, &discover).0, 200);
    let _ = child.kill();
    let _ = child.wait();

    // A new run, a new token.
    let again = HttpServed::start(&env, &["--manifest", &serve_manifest()]);
    assert_ne!(again.token, with.token);

    // --no-token: loopback only, and said at start.
    let refused = env.run(&[
        "serve",
        "--manifest",
        &serve_manifest(),
        "--http",
        "0.0.0.0:0",
        "--no-token",
    ]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused
            .stderr
            .contains("beyond this machine, needs a bearer token"),
        "{}",
        refused.stderr
    );
    let open = HttpServed::start(&env, &["--manifest", &serve_manifest(), "--no-token"]);
    assert_eq!(send(&open.endpoint, &discover).0, 200);
}

#[test]
fn the_2026_headers_must_agree_with_the_body() {
    let env = Env::new();
    let server = HttpServed::start(&env, &["--manifest", &serve_manifest()]);
    let mut call = modern(
        "tools/call",
        json!({"name": "no_match", "arguments": {}}),
        7,
    );
    let (status, headers, body) = send(&server.endpoint, &call);
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        json_of(&body)["result"]["content"][0]["text"],
        "nothing found\n"
    );
    assert!(
        header(&headers, "mcp-session-id").is_none(),
        "no session in the stateless era"
    );
    call.0.retain(|(k, _)| *k != "Mcp-Name");
    call.0.push(("Mcp-Name", "other".into()));
    let (status, _, body) = send(&server.endpoint, &call);
    assert_eq!(
        (status, json_of(&body)["error"]["code"].clone()),
        (400, json!(-32020))
    );
    assert_eq!(json_of(&body)["id"], 7);
    let mut encoded = modern(
        "tools/call",
        json!({"name": "no_match", "arguments": {}}),
        8,
    );
    encoded.0.retain(|(k, _)| *k != "Mcp-Name");
    encoded
        .0
        .push(("Mcp-Name", "=?base64?bm9fbWF0Y2g=?=".into()));
    assert_eq!(send(&server.endpoint, &encoded).0, 200);
    let unknown = modern("no/such/method", json!({}), 9);
    let (status, _, body) = send(&server.endpoint, &unknown);
    assert_eq!(
        (status, json_of(&body)["error"]["code"].clone()),
        (404, json!(-32601))
    );
    let mut mismatch = modern("tools/list", json!({}), 10);
    mismatch.0.retain(|(k, _)| *k != "MCP-Protocol-Version");
    mismatch
        .0
        .push(("MCP-Protocol-Version", "2025-11-25".into()));
    assert_eq!(send(&server.endpoint, &mismatch).0, 400);
    // A progress report turns the answer into an event stream.
    let progress = modern(
        "tools/call",
        json!({"name": "progress", "arguments": {}, "_meta": {"progressToken": "p"}}),
        11,
    );
    let mut progress = progress;
    progress.1 = progress
        .1
        .replace("\"_meta\":{", "\"_meta\":{\"progressToken\":\"p\",");
    let (status, headers, body) = send(&server.endpoint, &progress);
    assert_eq!(status, 200);
    assert_eq!(header(&headers, "content-type"), Some("text/event-stream"));
    assert_eq!(body.matches("notifications/progress").count(), 3, "{body}");
    assert_eq!(json_of(&body)["result"]["content"][0]["text"], "finished\n");
    assert!(!body.contains("\nid:"), "no event ids in the stateless era");
    let get = exchange(
        &server.endpoint,
        "GET",
        &[("Accept", "text/event-stream")],
        "",
    );
    assert_eq!(get.0, 405);
}

#[test]
fn handshake_sessions_over_http() {
    let env = Env::new();
    let server = HttpServed::start(&env, &["--manifest", &serve_manifest()]);
    let base = JSON_HEADERS;
    let init = initialize_body();
    let (status, headers, body) = exchange(&server.endpoint, "POST", &base, &init);
    assert_eq!(status, 200, "{body}");
    let session = header(&headers, "mcp-session-id").unwrap().to_string();
    // 16 random bytes in hex: visible ASCII, as the transport asks.
    assert!(
        session.len() == 32 && session.bytes().all(|b| b.is_ascii_hexdigit()),
        "{session}"
    );
    assert_eq!(json_of(&body)["result"]["protocolVersion"], "2025-11-25");
    let mut with = base.to_vec();
    with.push(("Mcp-Session-Id", &session));
    with.push(("MCP-Protocol-Version", "2025-11-25"));
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    assert_eq!(
        exchange(&server.endpoint, "POST", &with, &initialized).0,
        202
    );
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    let (status, _, body) = exchange(&server.endpoint, "POST", &with, &list);
    assert_eq!(status, 200);
    assert_eq!(json_of(&body)["result"]["tools"][0]["name"], "kinds");
    assert_eq!(
        exchange(&server.endpoint, "POST", &base, &list).0,
        400,
        "no session, no handshake-era request"
    );
    let mut stale = base.to_vec();
    stale.push(("Mcp-Session-Id", "0000"));
    assert_eq!(exchange(&server.endpoint, "POST", &stale, &list).0, 404);
    assert_eq!(exchange(&server.endpoint, "DELETE", &with, "").0, 200);
    assert_eq!(
        exchange(&server.endpoint, "POST", &with, &list).0,
        404,
        "a deleted session is gone"
    );
}

/// A stateless request is cancelled when its client leaves, even in the first moments, before
/// its answer has become an event stream; in a session, a request id already in flight is
/// refused (its answer could not be told apart, nor could it be cancelled).
#[test]
fn a_stateless_client_that_leaves_stops_its_command_and_duplicate_ids_are_refused() {
    let env = Env::new();
    let server = HttpServed::start(&env, &["--manifest", &serve_manifest()]);
    let (headers, body) = modern(
        "tools/call",
        json!({"name": "slow", "arguments": {"seconds": 47.25}}),
        1,
    );
    let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let stream = post_and_keep_open(&server.endpoint, &headers, &body);
    let started = std::time::Instant::now();
    while processes_matching("sleep 47.25").is_empty() {
        assert!(
            started.elapsed().as_secs() < 10,
            "the command never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    // Gone as soon as the command runs (well inside the first 300 ms on an idle machine).
    drop(stream);
    let left = std::time::Instant::now();
    while !processes_matching("sleep 47.25").is_empty() && left.elapsed().as_secs() < 5 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(processes_matching("sleep 47.25"), Vec::<String>::new());

    // A session: the same id twice while the first runs.
    let base = JSON_HEADERS;
    let init = initialize_body();
    let (_, headers, _) = exchange(&server.endpoint, "POST", &base, &init);
    let session = header(&headers, "mcp-session-id").unwrap().to_string();
    let mut with = base.to_vec();
    with.push(("Mcp-Session-Id", &session));
    with.push(("MCP-Protocol-Version", "2025-11-25"));
    let slow = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "slow", "arguments": {"seconds": 1.625}}}).to_string();
    let endpoint = server.endpoint.clone();
    let owned: Vec<(String, String)> = with
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let first_body = slow.clone();
    let first = std::thread::spawn(move || {
        let headers: Vec<(&str, &str)> = owned
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        exchange(&endpoint, "POST", &headers, &first_body)
    });
    let started = std::time::Instant::now();
    while processes_matching("sleep 1.625").is_empty() && started.elapsed().as_secs() < 10 {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let (status, _, body) = exchange(&server.endpoint, "POST", &with, &slow);
    assert_eq!(status, 200, "{body}");
    assert_eq!(json_of(&body)["error"]["code"], -32600, "{body}");
    // The first runs to its end and answers.
    let (_, _, body) = first.join().unwrap();
    let answer = json_of(&body);
    assert_eq!(answer["id"], 9, "{body}");
    assert!(answer["result"]["content"].is_array(), "{body}");

    // A session request whose client leaves at once runs on (2025-11-25), and once it has
    // finished its id may be used again.
    // How many calls of `slow` have ended, as the server's metrics count them.
    let slow_ended = || -> u64 {
        let auth = server.token.as_ref().map(|t| format!("Bearer {t}"));
        let headers: Vec<(&str, &str)> =
            auth.iter().map(|a| ("Authorization", a.as_str())).collect();
        http_exchange(server.port, "GET", "/metrics", &headers, "", "")
            .2
            .lines()
            .find_map(|l| l.strip_prefix("ferry_tool_call_duration_seconds_count{tool=\"slow\"} "))
            .map_or(0, |n| n.parse().unwrap())
    };
    let ended_before = slow_ended();
    let leaving = json!({"jsonrpc": "2.0", "id": 12, "method": "tools/call", "params": {"name": "slow", "arguments": {"seconds": 0.4375}}}).to_string();
    let stream = post_and_keep_open(&server.endpoint, &with, &leaving);
    let started = std::time::Instant::now();
    while processes_matching("sleep 0.4375").is_empty() && started.elapsed().as_secs() < 10 {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    drop(stream);
    while !processes_matching("sleep 0.4375").is_empty() && started.elapsed().as_secs() < 10 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(
        wait_until(10, || slow_ended() == ended_before + 1),
        "the call whose client left never ended"
    );
    let again = json!({"jsonrpc": "2.0", "id": 12, "method": "tools/list"}).to_string();
    let (status, _, body) = exchange(&server.endpoint, "POST", &with, &again);
    assert_eq!(status, 200, "{body}");
    assert!(json_of(&body)["result"]["tools"].is_array(), "{body}");
}

/// A flood of `initialize` requests cannot push out a working client's session: when the
/// table is full of recently used sessions, a new one is refused with 503 and Retry-After.
#[test]
fn a_flood_of_sessions_is_refused_rather_than_evicting_working_clients() {
    let env = Env::new();
    let server = HttpServed::start(&env, &["--manifest", &serve_manifest()]);
    let base = JSON_HEADERS;
    let init = initialize_body();
    let (_, headers, _) = exchange(&server.endpoint, "POST", &base, &init);
    let victim = header(&headers, "mcp-session-id").unwrap().to_string();
    let mut with = base.to_vec();
    with.push(("Mcp-Session-Id", &victim));
    with.push(("MCP-Protocol-Version", "2025-11-25"));
    // The client works: its session is in use (the flood's never are).
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    assert_eq!(
        exchange(&server.endpoint, "POST", &with, &initialized).0,
        202
    );
    let mut refused = None;
    for _ in 0..1100 {
        let (status, headers, body) = exchange(&server.endpoint, "POST", &base, &init);
        if status != 200 {
            refused = Some((
                status,
                header(&headers, "retry-after").map(str::to_string),
                body,
            ));
            break;
        }
    }
    let (status, retry, body) = refused.expect("the session table has a limit");
    assert_eq!(status, 503, "{body}");
    assert_eq!(retry.as_deref(), Some("60"));
    assert!(body.contains("too many open sessions"), "{body}");
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    let (status, _, body) = exchange(&server.endpoint, "POST", &with, &list);
    assert_eq!(status, 200, "the first client's session survives: {body}");
}

/// `--allow-origin` admits a browser origin: its CORS preflight is answered (before any
/// token: a preflight carries none), its requests get the headers that let it read the
/// answer; every other origin is still refused.
#[test]
fn an_admitted_browser_origin_gets_cors_and_others_do_not() {
    let env = Env::new();
    let server = HttpServed::start(
        &env,
        &[
            "--manifest",
            &serve_manifest(),
            "--allow-origin",
            "https://App.example.com/",
        ],
    );
    let preflight = |origin: &str| {
        exchange(
            &Endpoint {
                port: server.port,
                token: None,
            },
            "OPTIONS",
            &[
                ("Origin", origin),
                ("Access-Control-Request-Method", "POST"),
                (
                    "Access-Control-Request-Headers",
                    "authorization, content-type, mcp-session-id",
                ),
            ],
            "",
        )
    };
    let (status, headers, _) = preflight("https://app.example.com");
    assert_eq!(status, 204);
    assert_eq!(
        header(&headers, "access-control-allow-origin"),
        Some("https://app.example.com")
    );
    assert_eq!(
        header(&headers, "access-control-allow-methods"),
        Some("GET, POST, DELETE")
    );
    let allowed = header(&headers, "access-control-allow-headers").unwrap();
    for name in [
        "Authorization",
        "Content-Type",
        "Mcp-Session-Id",
        "MCP-Protocol-Version",
    ] {
        assert!(allowed.contains(name), "{allowed}");
    }
    assert_eq!(preflight("https://evil.example.com").0, 403);

    let discover = modern("server/discover", json!({}), 1);
    let mut from_app = discover.clone();
    from_app
        .0
        .push(("Origin", "https://app.example.com".into()));
    let (status, headers, _) = send(&server.endpoint, &from_app);
    assert_eq!(status, 200);
    assert_eq!(
        header(&headers, "access-control-allow-origin"),
        Some("https://app.example.com")
    );
    assert!(header(&headers, "access-control-expose-headers")
        .unwrap()
        .contains("Mcp-Session-Id"));
    let mut from_evil = discover.clone();
    from_evil
        .0
        .push(("Origin", "https://evil.example.com".into()));
    assert_eq!(send(&server.endpoint, &from_evil).0, 403);
    // Without its token the admitted origin is refused, and may read why.
    let bare = Endpoint {
        port: server.port,
        token: None,
    };
    let (status, headers, _) = send(&bare, &from_app);
    assert_eq!(status, 401);
    assert_eq!(
        header(&headers, "access-control-allow-origin"),
        Some("https://app.example.com")
    );
    // A bad origin is a usage error at start.
    let bad = env.run(&[
        "serve",
        "--manifest",
        &serve_manifest(),
        "--http",
        "127.0.0.1:0",
        "--allow-origin",
        "https://app.example.com/path",
    ]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(
        bad.stderr
            .starts_with("error: --allow-origin expects an origin"),
        "{}",
        bad.stderr
    );
}

/// Parameters a tool mirrors into headers (`header = "Region"`, x-mcp-header): ferry's own
/// client sends them (Base64 where plain text cannot go) and the call runs; a header missing,
/// different, badly encoded, or sent without its value is refused with 400 and -32020.
#[test]
fn parameters_mirrored_into_headers_must_agree_with_the_body() {
    let env = Env::new();
    env.write(
        "work/route.toml",
        r#"[[tools]]
name = "route"
description = "Say where a request goes."
command = ["echo", "{region} {shard}"]
[tools.params.region]
type = "string"
header = "Region"
[tools.params.shard]
type = "integer"
header = "Shard"
required = false
"#,
    );
    let server = HttpServed::start(&env, &["--manifest", "route.toml"]);
    let token = server.token.clone().unwrap();
    let added = env.run(&[
        "add",
        "routes",
        &server.url,
        "--header",
        &format!("Authorization: Bearer {token}"),
    ]);
    assert_eq!(added.code, 0, "{}", added.stderr);
    let listed = env.run(&["routes", "route", "--help"]);
    assert_eq!(listed.code, 0, "{}", listed.stderr);
    for region in ["eu-west", " padded ", "Zürich", "=?base64?literal?="] {
        let run = env.run(&["routes", "route", "--region", region, "--shard", "7"]);
        assert_eq!(
            (run.code, run.stdout.as_str()),
            (0, format!("{region} 7\n").as_str()),
            "{}",
            run.stderr
        );
    }

    let call = |arguments: Value, extra: &[(&'static str, &str)], id: u64| {
        let mut request = modern(
            "tools/call",
            json!({"name": "route", "arguments": arguments}),
            id,
        );
        for (k, v) in extra {
            request.0.push((k, v.to_string()));
        }
        let (status, _, body) = send(&server.endpoint, &request);
        (status, json_of(&body)["error"]["code"].clone(), body)
    };
    let refused = (400, json!(-32020));
    let ok = |(status, code, body): (u16, Value, String)| {
        assert_eq!((status, code), (200, Value::Null), "{body}");
    };
    let no = |(status, code, body): (u16, Value, String)| {
        assert_eq!((status, code), refused, "{body}");
    };
    ok(call(
        json!({"region": "us"}),
        &[("Mcp-Param-Region", "us")],
        1,
    ));
    ok(call(
        json!({"region": "Hello"}),
        &[("mcp-param-region", "=?base64?SGVsbG8=?=")],
        2,
    ));
    ok(call(
        json!({"region": "us", "shard": 42}),
        &[("Mcp-Param-Region", "us"), ("Mcp-Param-Shard", "42.0")],
        3,
    ));
    no(call(json!({"region": "us"}), &[], 4));
    no(call(
        json!({"region": "us"}),
        &[("Mcp-Param-Region", "eu")],
        5,
    ));
    no(call(
        json!({"region": "Hello"}),
        &[("Mcp-Param-Region", "=?base64?SGVsbG8?=")],
        6,
    ));
    no(call(
        json!({"region": "Hello"}),
        &[("Mcp-Param-Region", "=?base64?SGVs!!bG8=?=")],
        7,
    ));
    no(call(
        json!({"region": "us"}),
        &[("Mcp-Param-Region", "us"), ("Mcp-Param-Shard", "1")],
        8,
    ));
    no(call(
        json!({"region": "us", "shard": 2}),
        &[("Mcp-Param-Region", "us"), ("Mcp-Param-Shard", "3")],
        9,
    ));
    // A header no parameter declares is any unknown header: ignored.
    ok(call(
        json!({"region": "us"}),
        &[("Mcp-Param-Region", "us"), ("Mcp-Param-Other", "x")],
        10,
    ));

    // A manifest's header names are checked at start.
    env.write(
        "work/twice.toml",
        "[[tools]]\nname = \"x\"\ndescription = \"d\"\ncommand = [\"echo\", \"{a}\", \"{b}\"]\n[tools.params.a]\ntype = \"string\"\nheader = \"Zone\"\n[tools.params.b]\ntype = \"string\"\nheader = \"zone\"\n",
    );
    let env = Test::with(env)
        .args(&["serve", "--manifest", "twice.toml"])
        .status(2)
        .stderr_has("declared twice")
        .run();
    env.write(
        "work/arrayed.toml",
        "[[tools]]\nname = \"x\"\ndescription = \"d\"\ncommand = [\"echo\", \"{a}\"]\n[tools.params.a]\ntype = \"array\"\nitems = \"string\"\nheader = \"Zone\"\n",
    );
    Test::with(env)
        .args(&["serve", "--manifest", "arrayed.toml"])
        .status(2)
        .stderr_has("header applies to strings, paths, integers and booleans only")
        .run();
}
