//! `ferry serve` under load from clients that do not play fair: questions left unanswered,
//! idle connections, a flood of tasks, answers nobody was asked for, replayed request states,
//! and a backend that wants another backend's resources. Real processes on loopback sockets;
//! everything started here is stopped here.

mod support;

use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use support::*;

/// A manifest with a gated tool (`confirm`) that appends to `removed.log`, and one that
/// answers at once.
const GATED: &str = r#"
[server]
name = "fair"
concurrency = 8
timeout = 120

[[tools]]
name = "remove"
description = "Remove a note, once the person confirms."
command = ["sh", "-c", 'echo "$1" >> removed.log', "sh", "{note}"]
confirm = "Remove {note}?"
[tools.params.note]
type = "string"
pattern = "^[a-z]{1,20}$"

[[tools]]
name = "hello"
description = "Say hello."
command = ["echo", "hello"]
annotations = { readOnlyHint = true }
"#;

fn gated(env: &Env) -> String {
    env.write("work/fair.toml", GATED);
    env.path("work/fair.toml").display().to_string()
}

fn removed(env: &Env) -> String {
    std::fs::read_to_string(env.path("work/removed.log")).unwrap_or_default()
}

/// A 2026-07-28 request over its own connection: the status and the JSON-RPC response.
fn modern(
    port: u16,
    token: Option<&str>,
    method: &str,
    mut params: Value,
    capabilities: Value,
) -> (u16, Value) {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "fair", "version": "1"}
    });
    let name = params
        .get("name")
        .or_else(|| params.get("taskId"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let bearer = token.map(|t| format!("Bearer {t}"));
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", method),
        ("Mcp-Name", name.as_str()),
    ];
    if let Some(bearer) = &bearer {
        headers.push(("Authorization", bearer));
    }
    let (status, _, body) = http_exchange(port, "POST", "/mcp", &headers, "", &body);
    (status, json_of(&body))
}

/// Opens a 2025-11-25 session that can be asked (elicitation) and returns its id.
fn open_session(port: u16, token: &str) -> String {
    let bearer = format!("Bearer {token}");
    let headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Authorization", bearer.as_str()),
    ];
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "fair", "version": "1"}}})
    .to_string();
    let (status, answered, body) = http_exchange(port, "POST", "/mcp", &headers, "", &body);
    assert_eq!(status, 200, "{body}");
    let id = header(&answered, "mcp-session-id")
        .unwrap_or_else(|| panic!("no session id: {body}"))
        .to_string();
    let mut headers = headers.to_vec();
    headers.push(("Mcp-Session-Id", &id));
    headers.push(("MCP-Protocol-Version", "2025-11-25"));
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let (status, _, _) = http_exchange(port, "POST", "/mcp", &headers, "", &note);
    assert_eq!(status, 202);
    id
}

/// Calls the gated tool in a session and returns the open connection once the question has
/// arrived on its stream (left unanswered for as long as the connection is kept).
fn unanswered_confirm(port: u16, token: &str, session: &str) -> TcpStream {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "remove", "arguments": {"note": "keep"}}})
    .to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nAuthorization: Bearer {token}\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut seen = Vec::new();
    let mut buffer = [0u8; 4096];
    while !String::from_utf8_lossy(&seen).contains("elicitation/create") {
        let n = stream.read(&mut buffer).unwrap();
        assert!(
            n > 0,
            "the stream ended: {}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&buffer[..n]);
    }
    stream
}

#[test]
fn eight_unanswered_confirms_do_not_freeze_other_clients_calls() {
    let env = Env::new();
    let manifest = gated(&env);
    let served = HttpServed::start(&env, &["--manifest", &manifest]);
    let token = served.token.clone().unwrap();
    // As many questions left waiting as there are slots (concurrency = 8), each in its own
    // session, each connection kept open.
    let waiting: Vec<TcpStream> = (0..8)
        .map(|_| {
            let session = open_session(served.port, &token);
            unanswered_confirm(served.port, &token, &session)
        })
        .collect();
    // Another client's calls still run; a question holds no slot. (A frozen call's stream
    // only ever sends keep-alives: the wait for it is bounded here.)
    for _ in 0..3 {
        let (port, token) = (served.port, token.clone());
        let (sender, answered) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = sender.send(modern(
                port,
                Some(&token),
                "tools/call",
                json!({"name": "hello", "arguments": {}}),
                json!({}),
            ));
        });
        let (status, answer) = answered
            .recv_timeout(Duration::from_secs(60))
            .expect("no answer within a minute: the other client's call is frozen");
        assert_eq!(
            (status, text_of(&answer)),
            (200, "hello\n".into()),
            "{answer}"
        );
    }
    // Closing a session's stream ends its call: nothing it gated ever runs.
    drop(waiting);
    // Wait until the server counts the eight gated calls as ended.
    let bearer = format!("Bearer {token}");
    let ended = || -> u64 {
        http_exchange(
            served.port,
            "GET",
            "/metrics",
            &[("Authorization", &bearer)],
            "",
            "",
        )
        .2
        .lines()
        .find_map(|l| l.strip_prefix("ferry_tool_call_duration_seconds_count{tool=\"remove\"} "))
        .map_or(0, |n| n.parse().unwrap())
    };
    assert!(
        wait_until(30, || ended() == 8),
        "the closed streams' calls never ended"
    );
    assert_eq!(removed(&env), "");
}

#[test]
fn idle_connections_resending_healthz_do_not_starve_the_token_holder() {
    let env = Env::new();
    let manifest = gated(&env);
    let served = HttpServed::start(&env, &["--manifest", &manifest]);
    let port = served.port;
    let stop = Arc::new(AtomicBool::new(false));
    let rounds = Arc::new(AtomicUsize::new(0));
    // A peer without the token keeps 256 keep-alive connections busy with GET /healthz,
    // opening them again as they close.
    let flood = {
        let (stop, rounds) = (stop.clone(), rounds.clone());
        std::thread::spawn(move || {
            let mut connections: Vec<Option<TcpStream>> = (0..256).map(|_| None).collect();
            let ask = format!("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n");
            for _ in 0..600 {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                for slot in connections.iter_mut() {
                    if slot.is_none() {
                        *slot = TcpStream::connect(("127.0.0.1", port)).ok();
                        if let Some(stream) = slot.as_ref() {
                            stream.set_nonblocking(true).unwrap();
                        }
                    }
                    let Some(stream) = slot.as_mut() else {
                        continue;
                    };
                    let mut buffer = [0u8; 4096];
                    let closed = loop {
                        match stream.read(&mut buffer) {
                            Ok(0) => break true,
                            Ok(_) => continue,
                            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break false,
                            Err(_) => break true,
                        }
                    };
                    if closed || stream.write_all(ask.as_bytes()).is_err() {
                        *slot = None;
                    }
                }
                rounds.fetch_add(1, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    };
    assert!(wait_until(30, || rounds.load(Ordering::SeqCst) >= 3));
    let (status, answer) = modern(
        port,
        served.token.as_deref(),
        "tools/call",
        json!({"name": "hello", "arguments": {}}),
        json!({}),
    );
    stop.store(true, Ordering::SeqCst);
    flood.join().unwrap();
    assert_eq!(
        (status, text_of(&answer)),
        (200, "hello\n".into()),
        "{answer}"
    );
}

#[test]
fn a_thousand_and_one_quick_tasks_do_not_lock_out_a_new_one() {
    let env = Env::new();
    env.write(
        "work/jobs.toml",
        r#"
[server]
name = "jobs"
concurrency = 64

[[tools]]
name = "nap"
description = "Nap a moment."
command = ["sleep", "0.6"]
annotations = { readOnlyHint = true }
task = true
"#,
    );
    let manifest = env.path("work/jobs.toml").display().to_string();
    let served = HttpServed::start(&env, &["--manifest", &manifest, "--no-token"]);
    let port = served.port;
    let tasks = json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    let call = move || {
        modern(
            port,
            None,
            "tools/call",
            json!({"name": "nap", "arguments": {}}),
            tasks.clone(),
        )
    };
    let next = Arc::new(AtomicUsize::new(0));
    let refused = Arc::new(std::sync::Mutex::new(Vec::new()));
    let senders: Vec<_> = (0..24)
        .map(|_| {
            let (next, refused, call) = (next.clone(), refused.clone(), call.clone());
            std::thread::spawn(move || {
                while next.fetch_add(1, Ordering::SeqCst) < 1001 {
                    let (status, answer) = call();
                    if answer["result"]["resultType"] != "task" {
                        refused.lock().unwrap().push(format!("{status} {answer}"));
                    }
                }
            })
        })
        .collect();
    for sender in senders {
        sender.join().unwrap();
    }
    assert_eq!(*refused.lock().unwrap(), Vec::<String>::new());
    // A new client's task once they have run: the table makes room.
    let (status, answer) = call();
    assert_eq!(
        (status, answer["result"]["resultType"].clone()),
        (200, json!("task")),
        "{answer}"
    );
    let id = answer["result"]["taskId"].as_str().unwrap().to_string();
    let (_, got) = modern(
        port,
        None,
        "tasks/get",
        json!({"taskId": id}),
        json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}),
    );
    assert_eq!(got["result"]["taskId"], json!(id), "{got}");
}

#[test]
fn an_unsolicited_confirm_answer_runs_nothing_and_a_state_is_good_once() {
    let env = Env::new();
    let manifest = gated(&env);
    let mut served = Served::start(&env, &["--manifest", &manifest]);
    let meta = json!({"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}});
    let accept = json!({"confirm": {"action": "accept", "content": {"confirm": true}}});
    // An answer nobody asked for: the question is asked, and nothing runs.
    let unasked = served.call(
        1,
        "tools/call",
        json!({"name": "remove", "arguments": {"note": "first"}, "inputResponses": accept, "_meta": meta}),
        &mut Vec::new(),
    );
    assert_eq!(
        unasked["result"]["resultType"], "input_required",
        "{unasked}"
    );
    assert!(unasked["result"]["inputRequests"]["confirm"].is_object());
    assert_eq!(removed(&env), "");
    // The answer to the question asked, with its round's state: it runs, once.
    let retry = json!({"name": "remove", "arguments": {"note": "first"}, "inputResponses": accept,
        "requestState": unasked["result"]["requestState"], "_meta": meta});
    let done = served.call(2, "tools/call", retry.clone(), &mut Vec::new());
    assert!(!Served::is_error(&done), "{done}");
    assert_eq!(removed(&env), "first\n");
    let again = served.call(3, "tools/call", retry, &mut Vec::new());
    assert!(
        again["error"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("requestState names no call waiting here")),
        "{again}"
    );
    assert_eq!(removed(&env), "first\n");
}

#[test]
fn a_confirm_state_replayed_on_a_second_instance_sharing_the_key_is_refused() {
    let env = Env::new();
    let manifest = gated(&env);
    env.write("key/state.key", &"k".repeat(40));
    let key = env.path("key/state.key").display().to_string();
    let start = |name: &str| {
        HttpServed::start(
            &env,
            &[
                "--manifest",
                &manifest,
                "--no-token",
                "--state-key-file",
                &key,
                "--instance",
                name,
            ],
        )
    };
    let (a1, a2) = (start("a1"), start("a2"));
    let asks = json!({"elicitation": {}});
    let call = json!({"name": "remove", "arguments": {"note": "once"}});
    let (_, asked) = modern(a1.port, None, "tools/call", call.clone(), asks.clone());
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    let mut retry = call.clone();
    retry["requestState"] = asked["result"]["requestState"].clone();
    retry["inputResponses"] =
        json!({"confirm": {"action": "accept", "content": {"confirm": true}}});
    let (status, done) = modern(a1.port, None, "tools/call", retry.clone(), asks.clone());
    assert_eq!(status, 200, "{done}");
    assert_eq!(removed(&env), "once\n");
    // The same answered state on the other instance: refused, nothing runs again.
    let (status, replayed) = modern(a2.port, None, "tools/call", retry, asks);
    assert_eq!(status, 400, "{replayed}");
    assert_eq!(
        text_of(&replayed),
        "error: requestState answers a confirmation that instance \"a1\" asked, and only that instance takes its answer: send the retry there, or send the request again without requestState to be asked anew"
    );
    assert_eq!(removed(&env), "once\n");
}

#[test]
fn a_backends_link_to_another_backends_uri_does_not_reroute_it() {
    let env = Env::new();
    let config = json!({"mcpServers": {
        "ev": {"command": "sh", "args": ["-c", everything()]},
        "evil": {"command": "sh", "args": ["-c", hostile("steal")]},
    }});
    env.write("config/servers.json", &config.to_string());
    let mut served = Served::start(&env, &["--servers", "ev", "evil"]);
    let listed = served.call(1, "resources/list", json!({}), &mut Vec::new());
    let listed_uri = listed["result"]["resources"]
        .as_array()
        .and_then(|all| {
            all.iter()
                .find(|r| r["name"].as_str().is_some_and(|n| n.starts_with("ev/")))
        })
        .and_then(|r| r["uri"].as_str())
        .unwrap_or_else(|| panic!("ev lists no resource: {listed}"))
        .to_string();
    let templates = served.call(2, "resources/templates/list", json!({}), &mut Vec::new());
    assert!(
        templates
            .to_string()
            .contains("demo://resource/dynamic/text/{"),
        "{templates}"
    );
    let templated_uri = "demo://resource/dynamic/text/7";
    let mut id = 3;
    for uri in [listed_uri.as_str(), templated_uri] {
        // evil's result links to ev's URI (and embeds it), hoping for ev's later reads.
        let linked = served.call(
            id,
            "tools/call",
            json!({"name": "call", "arguments": {"tool": "evil/echo", "arguments": {"text": uri}}}),
            &mut Vec::new(),
        );
        assert!(linked.to_string().contains("mine now"), "{linked}");
        let read = served.call(
            id + 1,
            "resources/read",
            json!({"uri": uri}),
            &mut Vec::new(),
        );
        let contents = &read["result"]["contents"][0];
        assert_eq!(contents["uri"], json!(uri), "{read}");
        assert_ne!(
            contents["text"],
            json!("stolen"),
            "{uri} went to evil: {read}"
        );
        id += 2;
    }
}
