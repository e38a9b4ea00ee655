//! Benchmark of `ferry serve` (run by benches/run.sh; prints figures, asserts nothing).
//!
//! `serve_bench FERRY [CALLS]` measures, in one run:
//! - start-up: spawn `ferry serve --manifest M`, send one `tools/list`, time to its response;
//! - per-call overhead: one client holding one session calls a tool running `/bin/echo`,
//!   interleaved with the same call to a server started `--unconfined` (no kernel sandbox)
//!   and with spawning `/bin/echo` directly; medians, and their differences; and with a
//!   server whose calls get no mount and IPC namespace (`FERRY_SANDBOX_NAMESPACE=off`:
//!   Landlock and seccomp alone), for the namespace's share;
//! - the same over Streamable HTTP, on one keep-alive connection;
//! - 64 concurrent calls of a tool running `sleep 0.2` with `concurrency = 8`: errors, wall
//!   time (at least 8 rounds of 0.2 s if the limit holds), and the most children seen at once;
//! - the server's peak RSS (VmHWM) after all of it;
//! - an ask round trip: a script that runs `ferry ask --confirm` once and prints, against the
//!   same script asking nothing, over stdio in both eras (a request to the client on the
//!   call's stream; input_required and the retry) and over HTTP (input_required).

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

const MANIFEST: &str = r#"[server]
name = "bench"
concurrency = 8

[[tools]]
name = "say"
description = "Print the text."
command = ["echo", "{text}"]
params.text = { type = "string", required = true, description = "What to print" }

[[tools]]
name = "nap"
description = "Sleep a while."
command = ["sleep", "{secs}"]
params.secs = { type = "string", required = true, description = "Seconds", pattern = "^[0-9.]+$" }

[[tools]]
name = "plain"
description = "A script that prints, asking nothing (the baseline of ask_once)."
command = ["sh", "-c", "echo yes"]

[[tools]]
name = "ask_once"
description = "A script that asks the person once, then prints."
command = ["sh", "-c", "ferry ask --confirm Go? && echo yes"]
"#;

fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "serve_bench", "version": "1"}
    })
}

fn request(id: u64, method: &str, mut params: Value) -> String {
    params["_meta"] = meta();
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

struct Stdio_ {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Stdio_ {
    fn start(ferry: &str, manifest: &str, dir: &std::path::Path, extra: &[&str]) -> Stdio_ {
        Stdio_::start_with(ferry, manifest, dir, extra, &[])
    }

    fn start_with(
        ferry: &str,
        manifest: &str,
        dir: &std::path::Path,
        extra: &[&str],
        vars: &[(&str, &str)],
    ) -> Stdio_ {
        let mut child = Command::new(ferry)
            .args(["serve", "--manifest", manifest])
            .args(extra)
            .envs(vars.iter().copied())
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn ferry serve");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Stdio_ {
            child,
            stdin,
            stdout,
        }
    }

    fn send(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Reads messages until a response; returns it.
    fn response(&mut self) -> Value {
        let mut line = String::new();
        loop {
            line.clear();
            if self.stdout.read_line(&mut line).unwrap() == 0 {
                panic!("ferry serve closed its stdout");
            }
            let message: Value = serde_json::from_str(&line).unwrap();
            if message.get("id").is_some() {
                return message;
            }
        }
    }
}

impl Drop for Stdio_ {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn percentile(mut values: Vec<f64>, p: f64) -> f64 {
    values.sort_by(f64::total_cmp);
    values[((values.len() - 1) as f64 * p).round() as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Commands `sleep` that `pid` runs now (their parent in /proc/*/stat; ferry's own helper,
/// the reaper, is a child too and is not counted).
fn children_of(pid: u32) -> usize {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter(|stat| stat.contains("(sleep)"))
        .filter(|stat| {
            // pid (comm) state ppid ...: comm may hold spaces, so read after the last ')'.
            stat.rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|ppid| ppid.parse::<u32>().ok())
                == Some(pid)
        })
        .count()
}

fn status_kb(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// One HTTP/1.1 POST of a `say` call on a kept-alive connection; returns the body.
fn post(
    stream: &mut std::net::TcpStream,
    reader: &mut BufReader<std::net::TcpStream>,
    port: u16,
    token: &str,
    body: &str,
) -> String {
    let name = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|b| b["params"]["name"].as_str().map(str::to_string))
        .unwrap_or_default();
    write!(
        stream,
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: {name}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    stream.flush().unwrap();
    let mut length = None;
    let mut chunked = false;
    let mut line = String::new();
    loop {
        line.clear();
        reader.read_line(&mut line).unwrap();
        let trimmed = line.trim_end();
        if trimmed.is_empty() {
            break;
        }
        let lower = trimmed.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("content-length:") {
            length = v.trim().parse::<usize>().ok();
        }
        if lower.starts_with("transfer-encoding:") && lower.contains("chunked") {
            chunked = true;
        }
    }
    let mut body = Vec::new();
    if let Some(n) = length {
        body.resize(n, 0);
        reader.read_exact(&mut body).unwrap();
    } else if chunked {
        loop {
            line.clear();
            reader.read_line(&mut line).unwrap();
            let size = usize::from_str_radix(line.trim(), 16).unwrap_or(0);
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk).unwrap();
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    }
    String::from_utf8_lossy(&body).into_owned()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let ferry = args.next().expect("usage: serve_bench FERRY [CALLS]");
    // Children run in a scratch directory: a relative path would not be found from there.
    let ferry = std::fs::canonicalize(&ferry)
        .expect("FERRY is a path to the ferry binary")
        .display()
        .to_string();
    let calls: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(300);
    let dir = std::env::temp_dir().join(format!("ferry-serve-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let manifest = dir.join("bench.toml");
    std::fs::write(&manifest, MANIFEST).unwrap();
    let manifest = manifest.display().to_string();
    let echo = which_echo();

    // Start-up to the first answered request.
    let mut startups = Vec::new();
    for _ in 0..(calls / 10).max(10) {
        let started = Instant::now();
        let mut served = Stdio_::start(&ferry, &manifest, &dir, &[]);
        served.send(&request(1, "tools/list", json!({})));
        let answer = served.response();
        startups.push(ms(started.elapsed()));
        assert!(answer.get("result").is_some(), "{answer}");
    }

    // Per-call overhead over stdio, interleaved with direct spawns.
    let mut served = Stdio_::start(&ferry, &manifest, &dir, &[]);
    let mut unconfined = Stdio_::start(&ferry, &manifest, &dir, &["--unconfined"]);
    let mut flat = Stdio_::start_with(
        &ferry,
        &manifest,
        &dir,
        &[],
        &[("FERRY_SANDBOX_NAMESPACE", "off")],
    );
    let call = |id: u64| {
        request(
            id,
            "tools/call",
            json!({"name": "say", "arguments": {"text": "hello"}}),
        )
    };
    for id in 0..20 {
        served.send(&call(id));
        served.response();
        unconfined.send(&call(id));
        unconfined.response();
        flat.send(&call(id));
        flat.response();
        Command::new(&echo)
            .arg("hello")
            .stdout(Stdio::null())
            .status()
            .unwrap();
    }
    let (mut through, mut bare, mut direct) = (Vec::new(), Vec::new(), Vec::new());
    let mut alone = Vec::new();
    let mut errors = 0;
    for i in 0..calls {
        let started = Instant::now();
        served.send(&call(100 + i as u64));
        let answer = served.response();
        through.push(ms(started.elapsed()));
        if answer["result"]["isError"] == json!(true) || answer.get("error").is_some() {
            errors += 1;
        }
        let started = Instant::now();
        unconfined.send(&call(100 + i as u64));
        let answer = unconfined.response();
        bare.push(ms(started.elapsed()));
        if answer["result"]["isError"] == json!(true) || answer.get("error").is_some() {
            errors += 1;
        }
        let started = Instant::now();
        flat.send(&call(100 + i as u64));
        let answer = flat.response();
        alone.push(ms(started.elapsed()));
        if answer["result"]["isError"] == json!(true) || answer.get("error").is_some() {
            errors += 1;
        }
        let started = Instant::now();
        let output = Command::new(&echo).arg("hello").output().unwrap();
        direct.push(ms(started.elapsed()));
        assert!(output.status.success());
    }
    let stdio_pid = served.child.id();
    drop(unconfined);
    drop(flat);

    // 64 concurrent calls against concurrency = 8.
    let started = Instant::now();
    for i in 0..64 {
        served.send(&request(
            10_000 + i,
            "tools/call",
            json!({"name": "nap", "arguments": {"secs": "0.2"}}),
        ));
    }
    let watcher = {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let seen = stop.clone();
        let handle = std::thread::spawn(move || {
            let mut peak = 0;
            while !seen.load(std::sync::atomic::Ordering::Relaxed) {
                peak = peak.max(children_of(stdio_pid));
                std::thread::sleep(Duration::from_millis(10));
            }
            peak
        });
        (stop, handle)
    };
    let mut concurrent_errors = 0;
    for _ in 0..64 {
        let answer = served.response();
        if answer["result"]["isError"] == json!(true) || answer.get("error").is_some() {
            concurrent_errors += 1;
        }
    }
    let concurrent_wall = ms(started.elapsed());
    watcher.0.store(true, std::sync::atomic::Ordering::Relaxed);
    let peak_children = watcher.1.join().unwrap_or(0);
    let hwm = status_kb(stdio_pid, "VmHWM:");
    let rss = status_kb(stdio_pid, "VmRSS:");
    drop(served);

    // The same call over Streamable HTTP, one keep-alive connection.
    let mut http = Command::new(&ferry)
        .args(["serve", "--manifest", &manifest, "--http", "127.0.0.1:0"])
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ferry serve --http");
    let mut stderr = BufReader::new(http.stderr.take().unwrap());
    // The address line, after any warnings (serving as root warns first).
    let mut line = String::new();
    while stderr.read_line(&mut line).unwrap() > 0 && !line.contains("http://") {
        line.clear();
    }
    // The next line holds the token made for this run.
    let mut token_line = String::new();
    stderr.read_line(&mut token_line).unwrap();
    let token = token_line
        .trim()
        .rsplit(": ")
        .next()
        .unwrap_or("")
        .to_string();
    let port: u16 = line
        .trim()
        .rsplit(':')
        .next()
        .and_then(|p| p.trim_end_matches("/mcp").parse().ok())
        .expect("ferry serve printed its address");
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.set_nodelay(true).unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    for id in 0..20 {
        post(&mut stream, &mut reader, port, &token, &call(id));
    }
    let mut over_http = Vec::new();
    let mut http_errors = 0;
    for i in 0..calls {
        let started = Instant::now();
        let body = post(
            &mut stream,
            &mut reader,
            port,
            &token,
            &call(100 + i as u64),
        );
        over_http.push(ms(started.elapsed()));
        if !body.contains("hello") {
            http_errors += 1;
        }
    }
    // An ask round trip over HTTP (2026-07-28): input_required, then the retry.
    let rounds = (calls / 3).max(20);
    let (mut http_plain, mut http_ask) = (Vec::new(), Vec::new());
    let mut ask_errors = 0;
    for i in 0..rounds {
        let id = 50_000 + 2 * i as u64;
        let started = Instant::now();
        let body = post(
            &mut stream,
            &mut reader,
            port,
            &token,
            &asking_call(id, "plain"),
        );
        http_plain.push(ms(started.elapsed()));
        ask_errors += usize::from(
            !last_json(&body)["result"]["content"][0]["text"]
                .as_str()
                .is_some_and(|t| t.starts_with("yes")),
        );
        let started = Instant::now();
        let first = last_json(&post(
            &mut stream,
            &mut reader,
            port,
            &token,
            &asking_call(id + 1, "ask_once"),
        ));
        let retry = retry_of(&first, id + 1);
        let body = post(&mut stream, &mut reader, port, &token, &retry);
        http_ask.push(ms(started.elapsed()));
        ask_errors += usize::from(
            !last_json(&body)["result"]["content"][0]["text"]
                .as_str()
                .is_some_and(|t| t.starts_with("yes")),
        );
    }
    let http_hwm = status_kb(http.id(), "VmHWM:");
    let _ = http.kill();
    let _ = http.wait();
    let (stdio_plain, stdio_ask, stdio_errors) = stdio_asks(&ferry, &manifest, &dir, rounds, false);
    let (legacy_plain, legacy_ask, legacy_errors) =
        stdio_asks(&ferry, &manifest, &dir, rounds, true);
    ask_errors += stdio_errors + legacy_errors;
    let _ = std::fs::remove_dir_all(&dir);

    let (t, b, d, h) = (
        median(through.clone()),
        median(bare.clone()),
        median(direct.clone()),
        median(over_http.clone()),
    );
    println!("  f. ferry serve (manifest tools; one client, one session; {calls} calls each)");
    println!(
        "    {:44} {:>10} {:>9}  target",
        "measurement", "median ms", "p90 ms"
    );
    println!(
        "    {:44} {:>10.2} {:>9.2}  < 10 ms",
        format!("start-up to first answer ({} runs)", startups.len()),
        median(startups.clone()),
        percentile(startups, 0.9)
    );
    println!(
        "    {:44} {:>10.2} {:>9.2}",
        "spawn /bin/echo directly",
        d,
        percentile(direct, 0.9)
    );
    println!(
        "    {:44} {:>10.2} {:>9.2}",
        "tools/call echo over stdio",
        t,
        percentile(through, 0.9)
    );
    println!(
        "    {:44} {:>10.2} {:>9}  < 2 ms",
        "  overhead over the direct spawn",
        t - d,
        ""
    );
    println!(
        "    {:44} {:>10.2} {:>9.2}",
        "tools/call echo over stdio, --unconfined",
        b,
        percentile(bare, 0.9)
    );
    println!(
        "    {:44} {:>10.2} {:>9}  < 1 ms",
        "  the kernel sandbox's share of a call",
        t - b,
        ""
    );
    let a = median(alone.clone());
    println!(
        "    {:44} {:>10.2} {:>9.2}",
        "tools/call echo, Landlock and seccomp alone",
        a,
        percentile(alone, 0.9)
    );
    println!(
        "    {:44} {:>10.2} {:>9}  < 1 ms",
        "  the namespace's share of a call",
        t - a,
        ""
    );
    println!(
        "    {:44} {:>10.2} {:>9.2}",
        "tools/call echo over HTTP (keep-alive)",
        h,
        percentile(over_http, 0.9)
    );
    println!(
        "    {:44} {:>10.2} {:>9}",
        "  overhead over the direct spawn",
        h - d,
        ""
    );
    println!("    errors: stdio {errors}, HTTP {http_errors}");
    println!(
        "    64 concurrent `sleep 0.2` calls, concurrency 8: {concurrent_errors} errors, {:.0} ms (the limit holding means >= 1600), at most {peak_children} commands running at once (limit 8)",
        concurrent_wall
    );
    println!("    ask round trip ({rounds} calls each): a script asking `ferry ask --confirm` once, then printing, against the same script asking nothing");
    for (label, plain, asked) in [
        (
            "stdio, 2025-11-25 (a request on the call's stream)",
            legacy_plain,
            legacy_ask,
        ),
        (
            "stdio, 2026-07-28 (input_required, then the retry)",
            stdio_plain,
            stdio_ask,
        ),
        (
            "HTTP, 2026-07-28 (input_required, then the retry)",
            http_plain,
            http_ask,
        ),
    ] {
        let (p, a) = (median(plain), median(asked.clone()));
        println!(
            "    {:52} asking nothing {:>6.2} ms, asking once {:>6.2} ms (p90 {:.2}): the ask adds {:.2} ms",
            label,
            p,
            a,
            percentile(asked, 0.9),
            a - p
        );
    }
    println!("    ask errors: {ask_errors}");
    println!("    server RSS: {:.1} MB now, {:.1} MB peak over stdio; {:.1} MB peak over HTTP (target < 20 MB)", rss as f64 / 1024.0, hwm as f64 / 1024.0, http_hwm as f64 / 1024.0);
}

/// A stateless `tools/call` from a client that can answer elicitation.
fn asking_call(id: u64, tool: &str) -> String {
    let mut params = json!({"name": tool, "arguments": {}});
    params["_meta"] = meta();
    params["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({"elicitation": {}});
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string()
}

/// The retry of an input_required answer, saying yes to every question it asked.
fn retry_of(answer: &Value, id: u64) -> String {
    let mut responses = serde_json::Map::new();
    if let Some(asked) = answer["result"]["inputRequests"].as_object() {
        for key in asked.keys() {
            responses.insert(
                key.clone(),
                json!({"action": "accept", "content": {"confirm": true}}),
            );
        }
    }
    let mut params = json!({
        "name": "ask_once",
        "arguments": {},
        "inputResponses": responses,
        "requestState": answer["result"]["requestState"],
    });
    params["_meta"] = meta();
    params["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({"elicitation": {}});
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string()
}

/// A body as JSON: the body itself, or an event stream's last data line.
fn last_json(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|_| {
        body.lines()
            .rev()
            .find_map(|l| l.strip_prefix("data: "))
            .and_then(|d| serde_json::from_str(d).ok())
            .unwrap_or(Value::Null)
    })
}

/// The ask round trip over stdio, in the 2025-11-25 era (`legacy`: after `initialize`, the
/// question is a request on the call's stream) or the 2026-07-28 era (input_required and the
/// retry). Returns the times asking nothing, asking once, and the errors.
fn stdio_asks(
    ferry: &str,
    manifest: &str,
    dir: &std::path::Path,
    rounds: usize,
    legacy: bool,
) -> (Vec<f64>, Vec<f64>, usize) {
    let mut served = Stdio_::start(ferry, manifest, dir, &[]);
    if legacy {
        served.send(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}, "clientInfo": {"name": "serve_bench", "version": "1"}}}).to_string());
        served.response();
        served.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
    }
    let call = |id: u64, tool: &str| {
        if legacy {
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": {}}}).to_string()
        } else {
            asking_call(id, tool)
        }
    };
    // Reads until the response to `id`, answering yes to any request of the server's.
    let finish = |served: &mut Stdio_, id: u64| -> Value {
        let mut line = String::new();
        loop {
            line.clear();
            if served.stdout.read_line(&mut line).unwrap() == 0 {
                panic!("ferry serve closed its stdout");
            }
            let message: Value = serde_json::from_str(&line).unwrap();
            if message.get("method").is_some() && message.get("id").is_some() {
                served.send(&json!({"jsonrpc": "2.0", "id": message["id"], "result": {"action": "accept", "content": {"confirm": true}}}).to_string());
            } else if message.get("id") == Some(&json!(id)) {
                return message;
            }
        }
    };
    let ok = |answer: &Value| {
        answer["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("yes"))
    };
    let (mut plain, mut asked, mut errors) = (Vec::new(), Vec::new(), 0);
    for i in 0..rounds + 5 {
        let id = 2 * i as u64 + 1;
        let started = Instant::now();
        served.send(&call(id, "plain"));
        let answer = finish(&mut served, id);
        let plain_ms = ms(started.elapsed());
        errors += usize::from(!ok(&answer));
        let started = Instant::now();
        served.send(&call(id + 1, "ask_once"));
        let mut answer = finish(&mut served, id + 1);
        if !legacy {
            served.send(&retry_of(&answer, id + 1));
            answer = finish(&mut served, id + 1);
        }
        let asked_ms = ms(started.elapsed());
        errors += usize::from(!ok(&answer));
        // The first few warm the caches.
        if i >= 5 {
            plain.push(plain_ms);
            asked.push(asked_ms);
        }
    }
    (plain, asked, errors)
}

fn which_echo() -> String {
    for candidate in ["/bin/echo", "/usr/bin/echo"] {
        if std::path::Path::new(candidate).exists() {
            return candidate.to_string();
        }
    }
    "echo".to_string()
}
