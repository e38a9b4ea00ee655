//! A minimal MCP stdio client: the baseline that `benches/run.sh` compares ferry against.
//!
//! usage: raw_client [--stateless] [--tool NAME] [--args JSON] -- CMD ARGS...
//!
//! Spawns the server (stdin/stdout piped, stderr to /dev/null). In handshake mode (the
//! default) it sends `initialize`, waits for the response with id 1, sends
//! `notifications/initialized`, then `tools/call`. With `--stateless` it sends only the
//! `tools/call`, carrying the 2026-07-28 `_meta` keys. It prints the first text block of the
//! result, then SIGKILLs the server without waiting for it, as a minimal script would.
//!
//! No async runtime, no retries, no timeouts: the least work a client can do.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{exit, ChildStdout, Command, Stdio};

fn usage() -> ! {
    eprintln!("usage: raw_client [--stateless] [--tool NAME] [--args JSON] -- CMD ARGS...");
    exit(2);
}

/// Reads lines until the response carrying `id`; anything else (notifications, logs) is skipped.
fn wait_for(reader: &mut BufReader<ChildStdout>, id: i64) -> Value {
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => {
                eprintln!("raw_client: the server closed its output before answering {id}");
                exit(3);
            }
            Ok(_) => {}
        }
        let Ok(message) = serde_json::from_str::<Value>(line.trim()) else {
            continue;
        };
        if message.get("method").is_none() && message.get("id") == Some(&json!(id)) {
            return message;
        }
    }
}

fn send(stdin: &mut impl Write, message: &Value) {
    let mut bytes = serde_json::to_vec(message).expect("serializable");
    bytes.push(b'\n');
    if stdin.write_all(&bytes).and_then(|_| stdin.flush()).is_err() {
        eprintln!("raw_client: the server stopped reading its input");
        exit(3);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut stateless = false;
    let mut tool = "echo".to_string();
    let mut arguments = json!({"message": "hi"});
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--stateless" => stateless = true,
            "--tool" => {
                i += 1;
                tool = args.get(i).cloned().unwrap_or_else(|| usage());
            }
            "--args" => {
                i += 1;
                let text = args.get(i).unwrap_or_else(|| usage());
                arguments = serde_json::from_str(text).unwrap_or_else(|e| {
                    eprintln!("raw_client: --args is not JSON: {e}");
                    exit(2);
                });
            }
            "--" => {
                i += 1;
                break;
            }
            _ => usage(),
        }
        i += 1;
    }
    let command = &args[i.min(args.len())..];
    if command.is_empty() {
        usage();
    }

    let mut child = Command::new(&command[0])
        .args(&command[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| {
            eprintln!("raw_client: cannot start {:?}: {e}", command[0]);
            exit(3);
        });
    let mut stdin = child.stdin.take().expect("piped stdin");
    let mut reader = BufReader::new(child.stdout.take().expect("piped stdout"));

    let mut params = json!({"name": tool, "arguments": arguments});
    let call_id = if stateless {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        });
        1
    } else {
        send(
            &mut stdin,
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            }}),
        );
        let init = wait_for(&mut reader, 1);
        if let Some(error) = init.get("error") {
            eprintln!("raw_client: initialize failed: {error}");
            exit(3);
        }
        send(
            &mut stdin,
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        );
        2
    };
    send(
        &mut stdin,
        &json!({"jsonrpc": "2.0", "id": call_id, "method": "tools/call", "params": params}),
    );
    let response = wait_for(&mut reader, call_id);

    let text = response
        .pointer("/result/content")
        .and_then(Value::as_array)
        .and_then(|blocks| {
            blocks
                .iter()
                .find(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        })
        .and_then(|b| b.get("text"))
        .and_then(Value::as_str);
    let code = match (text, response.get("error")) {
        (Some(text), _) => {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{text}");
            let _ = out.flush();
            0
        }
        (None, Some(error)) => {
            eprintln!("raw_client: tools/call failed: {error}");
            3
        }
        (None, None) => {
            println!("{}", response.get("result").cloned().unwrap_or(Value::Null));
            0
        }
    };
    // Leave at once: close stdin, SIGKILL the server, do not wait for it.
    drop(stdin);
    let _ = child.kill();
    exit(code);
}
