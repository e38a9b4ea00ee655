//! A test server that replays a saved `tools/list` (one of `tests/corpus/`): it lists
//! exactly those tools, and answers a call with the tool's name and the arguments it got, so
//! a test can see what reached it. Stdio, handshake era.
//!
//! usage: replay_server SNAPSHOT.json

use serde_json::{json, Value};
use std::io::{BufRead, Write};

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: replay_server SNAPSHOT.json");
        std::process::exit(2);
    };
    let doc: Value = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_else(|| {
            eprintln!("replay_server: cannot read {path}");
            std::process::exit(2);
        });
    let tools = doc
        .get("tools")
        .or_else(|| doc.get("result").and_then(|r| r.get("tools")))
        .cloned()
        .unwrap_or_else(|| json!([]));
    let name = std::path::Path::new(&path)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("replay")
        .trim_end_matches(".tools")
        .to_string();
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let (Some(id), Some(method)) = (
            message.get("id").cloned(),
            message.get("method").and_then(Value::as_str),
        ) else {
            continue;
        };
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let reply = match method {
            "initialize" => json!({"result": {
                "protocolVersion": params.get("protocolVersion").cloned().unwrap_or(json!("2025-11-25")),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": name, "version": "1"}}}),
            "tools/list" => json!({"result": {"tools": tools}}),
            "tools/call" => {
                let tool = params.get("name").cloned().unwrap_or(Value::Null);
                let arguments = params.get("arguments").cloned().unwrap_or(json!({}));
                json!({"result": {"content": [{"type": "text",
                    "text": format!("called {} with {}", tool.as_str().unwrap_or("?"), arguments)}]}})
            }
            "ping" => json!({"result": {}}),
            other => {
                json!({"error": {"code": -32601, "message": format!("Method not found: {other}")}})
            }
        };
        let mut reply = reply;
        reply["jsonrpc"] = json!("2.0");
        reply["id"] = id;
        let _ = writeln!(out, "{reply}");
        let _ = out.flush();
    }
}
