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
/// `/healthz` checked, and a request an instance refused with 503 (draining) or never got
/// (stopped) tried on another one.
struct Balancer {
    child: Child,
    port: u16,
}

impl Balancer {
    /// HAProxy on 127.0.0.1:`port` in front of `instances` (name, port).
    fn start(env: &Env, port: u16, instances: &[(&str, u16)]) -> Balancer {
        let haproxy = which("haproxy");
        let mut config = format!(
            "global\n  maxconn 1000\n\
             defaults\n  mode http\n  timeout connect 2s\n  timeout client 60s\n  timeout server 60s\n  \
             option redispatch\n  retries 3\n  retry-on conn-failure 503\n\
             frontend mcp\n  bind 127.0.0.1:{port}\n  default_backend ferry\n\
             backend ferry\n  balance roundrobin\n  option httpchk GET /healthz\n  \
             http-check expect status 200\n  default-server check inter 300ms fall 1 rise 2\n  \
             stick-table type string len 64 size 100k expire 30m\n  \
             stick match req.hdr(mcp-session-id)\n  stick store-response res.hdr(mcp-session-id)\n"
        );
        for (name, _) in instances {
            config.push_str(&format!(
                "  use-server {name} if {{ req.hdr(mcp-name) -m beg {name}. }}\n"
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
        let balancer = Balancer { child, port };
        assert!(
            wait_until(10, || get(balancer.port, "/healthz").0 == 200),
            "HAProxy did not come up"
        );
        balancer
    }
}

impl Drop for Balancer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn which(program: &str) -> PathBuf {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(program))
            .find(|path| path.is_file())
    });
    found.unwrap_or_else(|| panic!("{program} is missing: run tests/fixtures/setup.sh"))
}

/// One raw HTTP/1.1 exchange with 127.0.0.1:`port`: the status, the headers (lower-case
/// names) and the body. `Host` is the address reached unless `headers` say otherwise.
fn exchange(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, Vec<(String, String)>, String) {
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return (0, Vec::new(), String::new());
    };
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        request.push_str(&format!("Host: 127.0.0.1:{port}\r\n"));
    }
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    let _ = stream.write_all(request.as_bytes());
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body)
    } else {
        body.to_string()
    };
    (status, headers, body)
}

fn dechunk(body: &str) -> String {
    let mut out = String::new();
    let mut rest = body;
    while let Some((size, after)) = rest.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if n == 0 || after.len() < n {
            break;
        }
        out.push_str(&after[..n]);
        rest = after[n..].trim_start_matches("\r\n");
    }
    out
}

fn get(port: u16, path: &str) -> (u16, Vec<(String, String)>, String) {
    exchange(port, "GET", path, &[], "")
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
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

/// The text a tool call's result carries, or its error's message.
fn text_of(response: &Value) -> String {
    match response.get("error") {
        Some(error) => format!("error: {}", error["message"].as_str().unwrap_or("")),
        None => response["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .to_string(),
    }
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
