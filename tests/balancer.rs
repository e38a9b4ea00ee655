//! `ferry serve --http` as several instances behind a real load balancer (HAProxy, installed
//! by tests/fixtures/setup.sh), configured as docs/deploy.md says: the official conformance
//! suite scores through the balancer as against one instance directly; an instance told to
//! stop drains (its calls finish, new work gets 503, `/healthz` says so) and exits 0; with an
//! instance gone, calls through the balancer all succeed; `--public-url` widens the Host and
//! Origin checks by exactly its own name; instances that share `--state-key-file` take over
//! each other's input-required rounds, and a task's requests reach the instance running it.
//! Every process a test starts is stopped by it, by pid.

mod support;

use serde_json::{json, Value};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use support::*;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// A free loopback port (the balancer's; instances pick their own with port 0).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// HAProxy in front of the instances, as docs/deploy.md configures it: round robin, a
/// handshake session kept on the instance that opened it, tasks routed by their id's prefix,
/// `/healthz` checked (503, draining, puts an instance in HAProxy's NOLB state: its sessions
/// still reach it, new work does not), and a request an instance refused with 503 (draining)
/// or never got (stopped) tried on another one.
struct Balancer {
    child: Child,
    port: u16,
    /// HAProxy's stats socket.
    socket: PathBuf,
}

impl Balancer {
    /// HAProxy on 127.0.0.1:`port` in front of `instances` (name, port).
    fn start(env: &Env, port: u16, instances: &[(&str, u16)]) -> Balancer {
        let haproxy = haproxy();
        let mut config = format!(
            "global\n  maxconn 1000\n  stats socket {}\n\
             defaults\n  mode http\n  timeout connect 2s\n  timeout client 60s\n  timeout server 60s\n  \
             option redispatch\n  retries 3\n  retry-on conn-failure 503\n\
             frontend mcp\n  bind 127.0.0.1:{port}\n  default_backend ferry\n\
             backend ferry\n  balance roundrobin\n  option httpchk\n  \
             http-check send meth GET uri /healthz\n  \
             http-check expect ! status 503 error-status L7OKC\n  \
             http-check expect status 200\n  default-server check inter 300ms fall 1 rise 2\n  \
             stick-table type string len 64 size 100k expire 30m\n  \
             stick match req.hdr(mcp-session-id)\n  stick store-response res.hdr(mcp-session-id)\n",
            env.path("haproxy.sock").display()
        );
        for (name, _) in instances {
            config.push_str(&format!(
                "  use-server {name} if {{ req.hdr(mcp-method) -m beg tasks/ }} {{ req.hdr(mcp-name) -m beg {name}. }}\n"
            ));
        }
        for (name, port) in instances {
            config.push_str(&format!("  server {name} 127.0.0.1:{port}\n"));
        }
        let file = env.path("haproxy.cfg");
        std::fs::write(&file, config).unwrap();
        let child = Command::new(haproxy)
            .arg("-db")
            .arg("-f")
            .arg(&file)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let balancer = Balancer {
            child,
            port,
            socket: env.path("haproxy.sock"),
        };
        assert!(
            wait_until(10, || get(balancer.port, "/healthz").0 == 200),
            "HAProxy did not come up"
        );
        balancer
    }
}

impl Balancer {
    /// What HAProxy thinks of an instance: UP, NOLB (draining), DOWN...
    fn status_of(&self, instance: &str) -> String {
        let Ok(mut socket) = std::os::unix::net::UnixStream::connect(&self.socket) else {
            return String::new();
        };
        let _ = socket.write_all(b"show stat\n");
        let mut csv = String::new();
        let _ = socket.read_to_string(&mut csv);
        // pxname,svname,...: the status is the 18th field.
        csv.lines()
            .map(|line| line.split(',').collect::<Vec<_>>())
            .find(|fields| fields.len() > 17 && fields[0] == "ferry" && fields[1] == instance)
            .map(|fields| fields[17].to_string())
            .unwrap_or_default()
    }
}

impl Drop for Balancer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// HAProxy from PATH, or where Debian puts it (/usr/sbin is not on every user's PATH).
fn haproxy() -> PathBuf {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join("haproxy"))
            .find(|path| path.is_file())
    });
    found
        .or_else(|| Some(PathBuf::from("/usr/sbin/haproxy")).filter(|p| p.is_file()))
        .unwrap_or_else(|| panic!("haproxy is missing: run tests/fixtures/setup.sh"))
}

/// One raw HTTP/1.1 exchange with 127.0.0.1:`port` (`support::http_exchange`).
fn exchange(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, Vec<(String, String)>, String) {
    http_exchange(port, method, path, headers, "", body)
}

fn get(port: u16, path: &str) -> (u16, Vec<(String, String)>, String) {
    exchange(port, "GET", path, &[], "")
}

/// A 2026-07-28 request from a client that declares elicitation and tasks: its status and
/// its JSON-RPC response (an event stream's last message).
fn modern_call(port: u16, method: &str, params: Value, extra: &[(&str, &str)]) -> (u16, Value) {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"}
    });
    let name = params
        .get("name")
        .or_else(|| params.get("taskId"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", method),
    ];
    if let Some(name) = &name {
        headers.push(("Mcp-Name", name));
    }
    headers.extend_from_slice(extra);
    let (status, _, body) = exchange(port, "POST", "/mcp", &headers, &body);
    let message = body
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("data: "))
        .map_or_else(
            || serde_json::from_str(&body).unwrap_or(Value::Null),
            |d| serde_json::from_str(d).unwrap_or(Value::Null),
        );
    (status, message)
}

fn call_tool(port: u16, tool: &str, arguments: Value) -> (u16, Value) {
    modern_call(
        port,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
        &[],
    )
}

fn signal(pid: u32, signal: i32) {
    // SAFETY: kill has no memory preconditions; the pid is a child this test started.
    assert_eq!(unsafe { libc::kill(pid as i32, signal) }, 0);
}

/// A manifest with a tool that sleeps as long as it is told, then says so.
fn sleeper(env: &Env) -> String {
    env.write(
        "work/sleeper.toml",
        r#"[server]
name = "sleeper"

[[tools]]
name = "sleep"
description = "Sleep some seconds, then say so."
command = ["sh", "-c", 'sleep "$1"; printf "slept %s" "$1"', "sh", "{seconds}"]
exec = ["sleep"]

[tools.params.seconds]
type = "number"
minimum = 0
"#,
    );
    env.path("work/sleeper.toml").display().to_string()
}

/// The official suite against `url` at `version`, with the expected failures of a manifest
/// served directly: whether it passed, and its total line.
fn conformance(env: &Env, url: &str, version: &str, label: &str) -> (bool, String) {
    let node = fixtures().join("node_modules/node/bin/node");
    assert!(
        node.exists(),
        "{} is missing: run tests/fixtures/setup.sh",
        node.display()
    );
    let suite = fixtures().join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    let expected = fixtures().join(format!("conformance-expected-{version}.yaml"));
    let output = Command::new(node)
        .arg(suite)
        .args(["server", "--url", url, "--requirements", version])
        .arg("--expected-failures")
        .arg(expected)
        .arg("-o")
        .arg(env.path(&format!("conformance-{label}-{version}")))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let total = stdout
        .lines()
        .find(|l| l.starts_with("Total:"))
        .unwrap_or("")
        .to_string();
    if !output.status.success() {
        eprintln!("{label} {version}:\n{stdout}");
    }
    (output.status.success(), total)
}

/// Three instances of `args` sharing a state key, named a1, a2, a3, each answering as the
/// balancer's public URL.
fn three_instances(env: &Env, args: &[&str], public: &str) -> Vec<HttpServed> {
    env.write("work/state.key", &"k".repeat(48));
    let key = env.path("work/state.key").display().to_string();
    ["a1", "a2", "a3"]
        .iter()
        .map(|name| {
            let mut all = args.to_vec();
            all.extend_from_slice(&[
                "--public-url",
                public,
                "--state-key-file",
                &key,
                "--instance",
                name,
            ]);
            HttpServed::start(env, &all)
        })
        .collect()
}

fn named(instances: &[HttpServed]) -> Vec<(&'static str, u16)> {
    ["a1", "a2", "a3"]
        .into_iter()
        .zip(instances.iter().map(|i| i.port))
        .collect()
}

#[test]
fn the_conformance_suite_scores_through_the_balancer_as_against_one_instance() {
    let env = Env::new();
    let manifest = fixtures().join("conformance.toml").display().to_string();
    let port = free_port();
    // The suite sends no token; what it reaches is the balancer's address.
    let public = format!("http://localhost:{port}/mcp");
    let instances = three_instances(&env, &["--manifest", &manifest, "--no-token"], &public);
    let balancer = Balancer::start(&env, port, &named(&instances));
    for version in ["2025-11-25", "2026-07-28"] {
        let direct = conformance(&env, &instances[0].url, version, "direct");
        let through = conformance(&env, &public, version, "balanced");
        assert!(direct.0, "direct at {version}: {}", direct.1);
        assert!(
            through.0,
            "through the balancer at {version}: {}",
            through.1
        );
        assert_eq!(through.1, direct.1, "at {version}");
        eprintln!(
            "{version}: direct {}; through HAProxy {}",
            direct.1, through.1
        );
    }
    drop(balancer);
}

#[test]
fn a_call_in_flight_finishes_when_its_instance_drains_and_it_exits_0() {
    let env = Env::new();
    let manifest = sleeper(&env);
    let mut server = HttpServed::start(
        &env,
        &[
            "--manifest",
            &manifest,
            "--no-token",
            "--drain-timeout",
            "20",
        ],
    );
    let port = server.port;
    let (status, _, body) = get(port, "/healthz");
    assert_eq!((status, body.as_str()), (200, "ok\n"));
    let call = std::thread::spawn(move || call_tool(port, "sleep", json!({"seconds": 2.5})));
    assert!(
        wait_until(10, || !processes_matching("sleep 2.5").is_empty()),
        "the call's command did not start"
    );
    let told = std::time::Instant::now();
    signal(server.pid(), libc::SIGTERM);
    // Draining: the balancer's check fails, new work is refused with a time to retry, and a
    // new handshake session is sent elsewhere.
    assert!(wait_until(5, || get(port, "/healthz").0 == 503));
    let (status, headers, body) = get(port, "/healthz");
    assert_eq!((status, body.as_str()), (503, "draining\n"));
    assert_eq!(header(&headers, "retry-after"), Some("1"));
    let (status, refused) = call_tool(port, "sleep", json!({"seconds": 0}));
    assert_eq!(status, 503, "{refused}");
    assert!(text_of(&refused).contains("shutting down"), "{refused}");
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}).to_string();
    let json_headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    let (status, headers, _) = exchange(port, "POST", "/mcp", &json_headers, &initialize);
    assert_eq!(status, 503);
    assert_eq!(header(&headers, "retry-after"), Some("1"));
    // The call in flight finishes, and then the instance exits 0, well within its drain time.
    let (status, answer) = call.join().unwrap();
    assert_eq!(
        (status, text_of(&answer).as_str()),
        (200, "slept 2.5"),
        "{answer}"
    );
    let exit = server.exit_within(10).expect("the instance did not exit");
    assert_eq!(exit.code(), Some(0));
    assert!(told.elapsed() < std::time::Duration::from_secs(10));
}

#[test]
fn a_drain_that_runs_out_of_time_stops_what_is_left_and_exits_4() {
    let env = Env::new();
    let manifest = sleeper(&env);
    let mut server = HttpServed::start(
        &env,
        &[
            "--manifest",
            &manifest,
            "--no-token",
            "--drain-timeout",
            "1",
        ],
    );
    let port = server.port;
    let call = std::thread::spawn(move || call_tool(port, "sleep", json!({"seconds": 300})));
    assert!(wait_until(10, || !processes_matching("sleep 300").is_empty()));
    signal(server.pid(), libc::SIGTERM);
    let exit = server.exit_within(10).expect("the instance did not exit");
    assert_eq!(exit.code(), Some(4), "non-zero: a call had to be stopped");
    assert!(
        wait_until(5, || processes_matching("sleep 300").is_empty()),
        "the call's command was left running"
    );
    // Its client sees the call end without an answer (the connection closed).
    let (_, answer) = call.join().unwrap();
    assert!(answer.get("result").is_none(), "{answer}");
}

#[test]
fn calls_through_the_balancer_all_succeed_while_an_instance_drains_and_once_it_is_gone() {
    let env = Env::new();
    let manifest = sleeper(&env);
    let port = free_port();
    let public = format!("http://127.0.0.1:{port}/mcp");
    env.write("work/token", &"t".repeat(32));
    let token_file = env.path("work/token").display().to_string();
    let mut instances = three_instances(
        &env,
        &["--manifest", &manifest, "--token-file", &token_file],
        &public,
    );
    let balancer = Balancer::start(&env, port, &named(&instances));
    let bearer = format!("Bearer {}", "t".repeat(32));
    let authorized = [("Authorization", bearer.as_str())];
    let through = |seconds: u32| {
        let (status, answer) = modern_call(
            balancer.port,
            "tools/call",
            json!({"name": "sleep", "arguments": {"seconds": seconds}}),
            &authorized,
        );
        (status, text_of(&answer))
    };
    assert_eq!(through(0), (200, "slept 0".to_string()));
    // The first instance is told to stop while a call runs on it: until it is gone, the
    // balancer still sends it some requests, which it refuses (503) and HAProxy retries on
    // another instance.
    let first = instances[0].port;
    let long = std::thread::spawn(move || {
        let bearer = format!("Bearer {}", "t".repeat(32));
        let (status, answer) = modern_call(
            first,
            "tools/call",
            json!({"name": "sleep", "arguments": {"seconds": 1.5}}),
            &[("Authorization", bearer.as_str())],
        );
        (status, text_of(&answer))
    });
    assert!(wait_until(10, || !processes_matching("sleep 1.5").is_empty()));
    signal(instances[0].pid(), libc::SIGTERM);
    assert!(wait_until(5, || get(first, "/healthz").0 == 503));
    for n in 0..20 {
        assert_eq!(
            through(0),
            (200, "slept 0".to_string()),
            "call {n}, draining"
        );
    }
    assert_eq!(long.join().unwrap(), (200, "slept 1.5".to_string()));
    assert_eq!(instances[0].exit_within(10).and_then(|s| s.code()), Some(0));
    // With the instance gone, 20 calls in a row all succeed.
    for n in 0..20 {
        assert_eq!(
            through(0),
            (200, "slept 0".to_string()),
            "call {n}, stopped"
        );
    }
    drop(balancer);
}

#[test]
fn healthz_needs_no_token_and_names_nothing() {
    let env = Env::new();
    let server = HttpServed::start(&env, &["--manifest", &serve_manifest()]);
    let (status, headers, body) = get(server.port, "/healthz");
    assert_eq!((status, body.as_str()), (200, "ok\n"));
    assert_eq!(
        header(&headers, "content-type"),
        Some("text/plain; charset=utf-8")
    );
    // The endpoint itself still wants the token.
    assert_eq!(get(server.port, "/mcp").0, 401);
    let (status, _, _) = exchange(server.port, "POST", "/healthz", &[], "");
    assert_eq!(status, 405);
}

#[test]
fn a_public_url_admits_its_own_host_and_origin_and_nothing_more() {
    let env = Env::new();
    let server = HttpServed::start(
        &env,
        &[
            "--cli",
            "echo",
            "--no-token",
            "--public-url",
            "https://MCP.example.com/mcp",
            "--public-url",
            "http://localhost:8080/mcp",
        ],
    );
    let port = server.port;
    let ping = |headers: &[(&str, &str)]| {
        let mut all = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "server/discover"),
        ];
        all.extend_from_slice(headers);
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": modern_meta()}}).to_string();
        exchange(port, "POST", "/mcp", &all, &body).0
    };
    let bound = format!("127.0.0.1:{port}");
    // The public names, as a balancer passes them on, and the address bound.
    for host in [
        "mcp.example.com",
        "mcp.example.com:443",
        "localhost:8080",
        &bound,
    ] {
        assert_eq!(ping(&[("Host", host)]), 200, "Host {host}");
    }
    for origin in ["https://mcp.example.com", "http://localhost:8080"] {
        assert_eq!(
            ping(&[("Host", "mcp.example.com"), ("Origin", origin)]),
            200,
            "{origin}"
        );
    }
    // Everything else is refused as before: other hosts and ports, another scheme.
    for host in [
        "evil.example.com",
        "mcp.example.com:8443",
        "localhost:8081",
        "localhost",
    ] {
        assert_eq!(ping(&[("Host", host)]), 421, "Host {host}");
    }
    for origin in [
        "http://mcp.example.com",
        "https://evil.example.com",
        "http://localhost:8081",
        "https://mcp.example.com:8443",
    ] {
        assert_eq!(
            ping(&[("Host", "mcp.example.com"), ("Origin", origin)]),
            403,
            "{origin}"
        );
    }
    // A URL that is not one is a usage error, in one line.
    Test::with(env)
        .args(&[
            "serve",
            "--cli",
            "echo",
            "--http",
            "127.0.0.1:0",
            "--public-url",
            "mcp.example.com",
        ])
        .status(2)
        .stderr_has("error: --public-url expects an http(s) URL such as https://mcp.example.com/mcp, not \"mcp.example.com\"")
        .run();
}

#[test]
fn instances_sharing_a_state_key_take_over_each_others_rounds_and_route_tasks() {
    let env = Env::new();
    let manifest = fixtures().join("conformance.toml").display().to_string();
    let instances = three_instances(
        &env,
        &["--manifest", &manifest, "--no-token"],
        "http://localhost/mcp",
    );
    let (a1, a2) = (instances[0].port, instances[1].port);
    let ask = json!({"name": "test_input_required_result_multi_round", "arguments": {}});
    // Round one on a1, its answer to a2, round two's answer to a3: each instance runs the
    // request again with every answer given so far, and the last one finishes it.
    let (_, first) = modern_call(a1, "tools/call", ask.clone(), &[]);
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let accept = |content: Value| json!({"action": "accept", "content": content});
    let mut retry = ask.clone();
    retry["requestState"] = first["result"]["requestState"].clone();
    retry["inputResponses"] = json!({"step1": accept(json!({"name": "Ada"}))});
    let (_, second) = modern_call(a2, "tools/call", retry.clone(), &[]);
    assert_eq!(second["result"]["resultType"], "input_required", "{second}");
    assert!(
        second["result"]["inputRequests"].get("step2").is_some(),
        "{second}"
    );
    retry["requestState"] = second["result"]["requestState"].clone();
    retry["inputResponses"] = json!({"step2": accept(json!({"color": "green"}))});
    let (_, done) = modern_call(instances[2].port, "tools/call", retry.clone(), &[]);
    assert_eq!(text_of(&done), "both steps answered", "{done}");
    // An instance without the key cannot tell the state from a forged one, and says what to do.
    let stranger = HttpServed::start(&env, &["--manifest", &manifest, "--no-token"]);
    let (status, refused) = modern_call(stranger.port, "tools/call", retry, &[]);
    assert_eq!(status, 400);
    assert_eq!(
        text_of(&refused),
        "error: requestState failed its integrity check (altered, or signed by a server that does not share this one's --state-key-file): send the request again without it"
    );
    // A task lives where its command runs: its id names that instance, and another says so.
    let (_, task) = modern_call(
        a1,
        "tools/call",
        json!({"name": "slow_compute", "arguments": {"seconds": 3}}),
        &[],
    );
    let id = task["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no task: {task}"))
        .to_string();
    assert!(id.starts_with("a1."), "{id}");
    let (_, elsewhere) = modern_call(a2, "tasks/get", json!({"taskId": id}), &[]);
    assert!(
        text_of(&elsewhere).starts_with(&format!(
            "error: task \"{id}\" runs on instance \"a1\", not on this one (\"a2\")"
        )),
        "{elsewhere}"
    );
    let (status, here) = modern_call(a1, "tasks/cancel", json!({"taskId": id}), &[]);
    assert_eq!(status, 200, "{here}");
}

/// The suite's protocol scenarios (as tests/conformance.rs runs them for every provider)
/// through the balancer.
fn protocol_scenarios_pass_through_a_balancer(env: &Env, args: &[&str]) {
    let port = free_port();
    let public = format!("http://localhost:{port}/mcp");
    let instances = three_instances(env, args, &public);
    let _balancer = Balancer::start(env, port, &named(&instances));
    let node = fixtures().join("node_modules/node/bin/node");
    let suite = fixtures().join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    let baseline = fixtures().join("conformance-quick-expected.yaml");
    let scenarios = [
        ("2025-11-25", "server-initialize"),
        ("2025-11-25", "tools-list"),
        ("2025-11-25", "server-sse-multiple-streams"),
        ("2025-11-25", "dns-rebinding-protection"),
        ("2026-07-28", "server-stateless"),
        ("2026-07-28", "tools-list"),
        ("2026-07-28", "dns-rebinding-protection"),
    ];
    for (version, scenario) in scenarios {
        let mut command = Command::new(&node);
        command
            .arg(&suite)
            .args([
                "server",
                "--url",
                &public,
                "--scenario",
                scenario,
                "--spec-version",
                version,
            ])
            .arg("-o")
            .arg(env.path(&format!("protocol-{scenario}-{version}")))
            .stdin(Stdio::null());
        if scenario == "server-stateless" {
            command.arg("--expected-failures").arg(&baseline);
        }
        let output = command.output().unwrap();
        assert!(
            output.status.success(),
            "{scenario} at {version} through the balancer:\n{}",
            String::from_utf8_lossy(&output.stdout)
        );
    }
}

#[test]
fn quick_mode_passes_the_protocol_scenarios_through_the_balancer() {
    let env = Env::new();
    protocol_scenarios_pass_through_a_balancer(&env, &["--cli", "echo", "--no-token"]);
}

#[test]
fn the_proxy_passes_the_protocol_scenarios_through_the_balancer() {
    let env = Env::new();
    env.write(
        "config/servers.json",
        &json!({"mcpServers": {"ev": {"command": "sh", "args": ["-c", everything()]}}}).to_string(),
    );
    assert_eq!(env.run(&["ev"]).code, 0);
    protocol_scenarios_pass_through_a_balancer(&env, &["--servers", "--no-token"]);
}

#[test]
fn a_bad_balancer_option_is_one_line_and_exit_2() {
    let env = Env::new();
    env.write("work/short.key", "too short");
    let short = env.path("work/short.key").display().to_string();
    let missing = env.path("work/none.key").display().to_string();
    let cases: [(&[&str], String); 5] = [
        (
            &["--drain-timeout", "soon"],
            "error: --drain-timeout expects whole seconds from 0 to 86400, not \"soon\"".into(),
        ),
        (
            &["--state-key-file", &short],
            format!("error: the state key in {short} is shorter than 32 characters"),
        ),
        (
            &["--state-key-file", &missing],
            format!("error: cannot read the state key file {missing}: "),
        ),
        (
            &["--instance", "a.1"],
            "error: --instance expects 1 to 32 letters, digits, '_' or '-', not \"a.1\"".into(),
        ),
        (
            &["--public-url", "https://mcp.example.com/mcp?x"],
            "error: --public-url expects an http(s) URL such as https://mcp.example.com/mcp, not \"https://mcp.example.com/mcp?x\"".into(),
        ),
    ];
    for (option, message) in cases {
        let mut args = vec!["serve", "--cli", "echo", "--http", "127.0.0.1:0"];
        args.extend_from_slice(option);
        let run = env.run(&args);
        assert_eq!(run.code, 2, "{option:?}: {}", run.stderr);
        let lines: Vec<&str> = run
            .stderr
            .lines()
            .filter(|l| l.starts_with("error:"))
            .collect();
        assert_eq!(lines.len(), 1, "{}", run.stderr);
        assert!(lines[0].starts_with(&message), "{option:?}: {}", run.stderr);
        assert!(run.stderr.contains("\nhint: "), "{}", run.stderr);
    }
    // They are about HTTP serving: without --http, clap says so.
    let run = env.run(&["serve", "--cli", "echo", "--drain-timeout", "5"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
}

#[test]
fn a_handshake_session_keeps_its_draining_instance_until_it_has_exited() {
    let env = Env::new();
    let manifest = sleeper(&env);
    let port = free_port();
    let public = format!("http://127.0.0.1:{port}/mcp");
    let mut instances = three_instances(&env, &["--manifest", &manifest, "--no-token"], &public);
    let balancer = Balancer::start(&env, port, &named(&instances));
    let json_headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}).to_string();
    let (status, headers, _) = exchange(port, "POST", "/mcp", &json_headers, &initialize);
    assert_eq!(status, 200);
    let session = header(&headers, "mcp-session-id").unwrap().to_string();
    let in_session = |port: u16, body: &str| {
        let mut headers = json_headers.to_vec();
        headers.extend([
            ("Mcp-Session-Id", session.as_str()),
            ("MCP-Protocol-Version", "2025-11-25"),
        ]);
        exchange(port, "POST", "/mcp", &headers, body)
    };
    let ping = json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}).to_string();
    let owner = instances
        .iter()
        .position(|i| in_session(i.port, &ping).0 == 200)
        .expect("no instance has the session");
    let name = ["a1", "a2", "a3"][owner];
    // A call of the session runs on its instance, which is told to stop.
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "sleep", "arguments": {"seconds": 1.75}}}).to_string();
    let running = std::thread::scope(|scope| {
        let long = scope.spawn(|| in_session(port, &call));
        assert!(wait_until(10, || !processes_matching("sleep 1.75").is_empty()));
        signal(instances[owner].pid(), libc::SIGTERM);
        assert!(
            wait_until(5, || balancer.status_of(name) == "NOLB"),
            "HAProxy did not see {name} draining: {}",
            balancer.status_of(name)
        );
        // The session's requests still reach it; a new session goes to another instance.
        let (status, _, body) = in_session(port, &ping);
        assert_eq!(status, 200, "{body}");
        let (status, headers, _) = exchange(port, "POST", "/mcp", &json_headers, &initialize);
        assert_eq!(status, 200);
        let elsewhere = header(&headers, "mcp-session-id").unwrap().to_string();
        assert_ne!(elsewhere, session);
        long.join().unwrap()
    });
    assert!(running.2.contains("slept 1.75"), "{}", running.2);
    assert_eq!(
        instances[owner].exit_within(10).and_then(|s| s.code()),
        Some(0)
    );
    // Once it has exited, the session is gone: another instance says so (404), and the
    // client starts a new one.
    assert!(wait_until(5, || in_session(port, &ping).0 == 404));
}
