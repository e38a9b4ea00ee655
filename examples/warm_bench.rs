//! Benchmark of the warm path (run by benches/run.sh; prints figures, asserts nothing).
//!
//! `warm_bench FERRY NODE_SERVER_SCRIPT [RUNS]`, with ferry's state in a scratch directory
//! (the caller sets FERRY_CACHE_DIR and FERRY_CONFIG_DIR):
//! - a warm `ferry --cmd 'node everything' echo` as a whole process, interleaved with a bare
//!   `/bin/true`, `ferry --version`, the listing and `echo --help` answered by the daemon, and
//!   a cold call (`--no-daemon`), medians and ratios to `/bin/true`;
//! - the same `echo` sent by a client that already holds an open session (the floor);
//! - 20 warm calls started at once: total wall time;
//! - the daemon's RSS with no server and with five.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn run(program: &str, args: &[&str]) -> Duration {
    let started = Instant::now();
    let status = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("spawn");
    let took = started.elapsed();
    assert!(status.success(), "{program} {args:?} failed");
    took
}

fn output(program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("spawn");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The daemon's own RSS from `ferry daemon status` (its first line), in MB.
fn daemon_rss(ferry: &str) -> String {
    let status = output(ferry, &["daemon", "status"]);
    status
        .lines()
        .next()
        .and_then(|l| l.rsplit(", ").next())
        .unwrap_or("?")
        .to_string()
}

/// The echo latency through a session this process holds open (handshake done once).
fn held_session(node_script: &str, runs: usize) -> f64 {
    let mut child = Command::new("node")
        .args([node_script, "stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("node");
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send = |message: Value| {
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    };
    let mut wait = |id: u64| {
        let mut line = String::new();
        loop {
            line.clear();
            if stdout.read_line(&mut line).unwrap() == 0 {
                panic!("the server closed its output");
            }
            if let Ok(message) = serde_json::from_str::<Value>(&line) {
                if message.get("id") == Some(&json!(id)) && message.get("method").is_none() {
                    return;
                }
            }
        }
    };
    send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "warm_bench", "version": "1"}}}),
    );
    wait(0);
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let mut times = Vec::new();
    for id in 1..=(runs as u64 + 5) {
        let started = Instant::now();
        send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"message": "hi"}}}));
        wait(id);
        if id > 5 {
            times.push(ms(started.elapsed()));
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    median(times)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let ferry = args
        .next()
        .expect("usage: warm_bench FERRY NODE_SCRIPT [RUNS]");
    let script = args
        .next()
        .expect("usage: warm_bench FERRY NODE_SCRIPT [RUNS]");
    let runs: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(50);
    let server = format!("node {script} stdio");
    let call = ["--cmd", server.as_str(), "echo", "--message", "hi"];
    let cold_call = [
        "--no-daemon",
        "--cmd",
        server.as_str(),
        "echo",
        "--message",
        "hi",
    ];
    let _ = output(&ferry, &["daemon", "stop"]);

    // The daemon with no server: a call whose server cannot start leaves it empty.
    let _ = Command::new(&ferry)
        .args(["--cmd", "false", "x"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let rss_empty = daemon_rss(&ferry);

    // Warm the cache and the daemon.
    run(&ferry, &call);
    run(&ferry, &call);
    let listing = ["--cmd", server.as_str()];
    let help = ["--cmd", server.as_str(), "echo", "--help"];
    let (mut warm, mut cold, mut floor) = (Vec::new(), Vec::new(), Vec::new());
    let (mut version, mut listed, mut helped) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..runs {
        floor.push(ms(run("/bin/true", &[])));
        warm.push(ms(run(&ferry, &call)));
        version.push(ms(run(&ferry, &["--version"])));
        listed.push(ms(run(&ferry, &listing)));
        helped.push(ms(run(&ferry, &help)));
        if i % 5 == 0 {
            cold.push(ms(run(&ferry, &cold_call)));
        }
    }
    let held = held_session(&script, runs);

    // 20 at once.
    let started = Instant::now();
    let children: Vec<_> = (0..20)
        .map(|i| {
            Command::new(&ferry)
                .args([
                    "--cmd",
                    server.as_str(),
                    "echo",
                    "--message",
                    &format!("m{i}"),
                ])
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .expect("ferry")
        })
        .collect();
    let mut correct = 0;
    for (i, child) in children.into_iter().enumerate() {
        let out = child.wait_with_output().expect("ferry");
        if String::from_utf8_lossy(&out.stdout) == format!("Echo: m{i}\n") {
            correct += 1;
        }
    }
    let parallel = ms(started.elapsed());

    // Five servers warm.
    let fixtures = std::path::Path::new(&script)
        .ancestors()
        .nth(3)
        .map(|p| p.to_path_buf())
        .unwrap_or_default();
    let memory = fixtures.join("server-memory/dist/index.js");
    let filesystem = fixtures.join("server-filesystem/dist/index.js");
    let others = [
        format!("node {} stdio", script),
        format!("node {}", memory.display()),
        format!("node {} /tmp", filesystem.display()),
        format!("{ferry} serve --demo"),
        format!("{ferry} serve --cli echo"),
    ];
    for server in &others {
        let _ = Command::new(&ferry)
            .args(["--cmd", server])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _ = Command::new(&ferry)
            .args(["--cmd", server, "--read", "none://x"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    let status = output(&ferry, &["daemon", "status"]);
    let servers = status.lines().skip(2).count();
    let rss_five = daemon_rss(&ferry);
    let _ = output(&ferry, &["daemon", "stop"]);

    let (warm, cold, floor) = (median(warm), median(cold), median(floor));
    let (version, listed, helped) = (median(version), median(listed), median(helped));
    println!(
        "  g. the warm path: server-everything echo, {runs} runs interleaved (cold: {} runs)",
        runs.div_ceil(5)
    );
    println!("    {:52} {:>10}  target", "measurement", "median ms");
    println!("    {:52} {:>10.2}", "bare spawn of /bin/true", floor);
    let against_floor = |label: &str, value: f64, most: f64| {
        println!(
            "    {label:52} {value:>10.2}  <= {most:.1}x /bin/true ({:.2}x)",
            value / floor
        );
    };
    against_floor("ferry --version", version, 1.3);
    against_floor("ferry echo, warm (whole process)", warm, 2.0);
    against_floor("listing, daemon running (whole process)", listed, 2.0);
    against_floor("echo --help, daemon running (whole process)", helped, 2.0);
    println!(
        "    {:52} {:>10.2}",
        "echo through a session the client holds open", held
    );
    println!(
        "    {:52} {:>10.2}  < 5 ms ({:.2} ms)",
        "  what ferry adds over the held session",
        warm - held,
        warm - held
    );
    println!("    {:52} {:>10.2}", "ferry echo, cold (--no-daemon)", cold);
    println!(
        "    20 warm calls at once: {parallel:.0} ms in all, {correct} of 20 correct and distinct"
    );
    println!("    daemon RSS: {rss_empty} with no server, {rss_five} with {servers} servers (the servers' own memory apart)");
}
