//! `ferry demo`: ferry's main job end to end on a server built into ferry itself, so a newcomer
//! sees a listing, a tool's help and calls in seconds with nothing installed.
//!
//! The built-in server (`ferry demo --server`) is a real MCP server over stdio that speaks both
//! protocol eras; the demo wraps it as a child process exactly as it would wrap any other.

use serde_json::{json, Value};
use std::io::{BufRead, Write};

const PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

fn tools() -> Value {
    json!([
        {"name": "word_count", "description": "Count the words, lines and characters of a text. Optionally count distinct words.",
         "inputSchema": {"type": "object", "properties": {
            "text": {"type": "string", "description": "The text to measure"},
            "unique": {"type": "boolean", "default": false, "description": "Also count distinct words"}},
          "required": ["text"]}},
        {"name": "convert_temperature", "description": "Convert a temperature between Celsius, Fahrenheit and Kelvin.",
         "inputSchema": {"type": "object", "properties": {
            "value": {"type": "number"},
            "from": {"type": "string", "enum": ["C", "F", "K"]},
            "to": {"type": "string", "enum": ["C", "F", "K"], "default": "C"}},
          "required": ["value", "from"]},
         "outputSchema": {"type": "object", "properties": {"value": {"type": "number"}, "unit": {"type": "string"}}}},
        {"name": "pixel", "description": "Return a one-pixel PNG image.",
         "inputSchema": {"type": "object", "properties": {}}}
    ])
}

fn call(name: &str, args: &Value) -> Value {
    match name {
        "word_count" => {
            let text = args.get("text").and_then(Value::as_str).unwrap_or("");
            let mut summary = format!(
                "{} words, {} lines, {} characters",
                text.split_whitespace().count(),
                text.lines().count(),
                text.chars().count()
            );
            if args.get("unique").and_then(Value::as_bool) == Some(true) {
                let distinct: std::collections::BTreeSet<String> =
                    text.split_whitespace().map(str::to_lowercase).collect();
                summary.push_str(&format!(", {} distinct words", distinct.len()));
            }
            json!({"content": [{"type": "text", "text": summary}]})
        }
        "convert_temperature" => {
            let value = args.get("value").and_then(Value::as_f64).unwrap_or(0.0);
            let from = args.get("from").and_then(Value::as_str).unwrap_or("C");
            let to = args.get("to").and_then(Value::as_str).unwrap_or("C");
            let celsius = match from {
                "F" => (value - 32.0) * 5.0 / 9.0,
                "K" => value - 273.15,
                _ => value,
            };
            let out = match to {
                "F" => celsius * 9.0 / 5.0 + 32.0,
                "K" => celsius + 273.15,
                _ => celsius,
            };
            let out = (out * 100.0).round() / 100.0;
            let structured = json!({"value": out, "unit": to});
            json!({"content": [{"type": "text", "text": structured.to_string()}], "structuredContent": structured})
        }
        "pixel" => {
            json!({"content": [{"type": "image", "mimeType": "image/png", "data": PIXEL_PNG}]})
        }
        _ => {
            json!({"content": [{"type": "text", "text": format!("unknown tool {name}")}], "isError": true})
        }
    }
}

/// Runs the built-in server on stdin/stdout until stdin closes.
pub fn serve_stdio() -> i32 {
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let Some(id) = message.get("id").cloned() else {
            continue;
        };
        let Some(method) = message.get("method").and_then(Value::as_str) else {
            continue;
        };
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let info = json!({"name": "ferry-demo", "version": env!("CARGO_PKG_VERSION")});
        let outcome = match method {
            "server/discover" => Ok(json!({
                "resultType": "complete",
                "supportedVersions": [crate::protocol::STATELESS_VERSION],
                "capabilities": {"tools": {}},
                "ttlMs": 0, "cacheScope": "public",
                "_meta": {"io.modelcontextprotocol/serverInfo": info},
            })),
            "initialize" => Ok(
                json!({"protocolVersion": crate::protocol::HANDSHAKE_VERSION, "capabilities": {"tools": {}}, "serverInfo": info}),
            ),
            "ping" => Ok(json!({})),
            "tools/list" => Ok(json!({"tools": tools(), "resultType": "complete"})),
            "tools/call" => {
                let name = params.get("name").and_then(Value::as_str).unwrap_or("");
                Ok(call(name, params.get("arguments").unwrap_or(&Value::Null)))
            }
            _ => Err(
                json!({"code": crate::protocol::METHOD_NOT_FOUND, "message": "Method not found"}),
            ),
        };
        let reply = match outcome {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
        };
        if writeln!(stdout, "{reply}")
            .and_then(|_| stdout.flush())
            .is_err()
        {
            break;
        }
    }
    0
}
