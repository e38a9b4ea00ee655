//! A deliberately misbehaving MCP server for ferry's integration tests.
//!
//! Speaks newline-delimited JSON-RPC 2.0 over stdin/stdout. The first
//! command-line argument picks the fault (default `normal`):
//!
//! - `normal`: tools `echo(text)` (returns the text) and `fail` (isError).
//! - `crash`: like normal, but any tool call prints a few stderr lines and
//!   exits with status 1 without answering.
//! - `hang`: initialize and tools/list answer; a tool call never answers (it writes
//!   "hanging on tools/call" to stderr when it arrives).
//! - `garbage`: prints non-JSON lines (text, half an object, bytes 0xff 0xfe)
//!   to stdout before every real answer.
//! - `huge`: adds tool `huge(mb = 20)` returning exactly mb MiB of text lines,
//!   the first starting `line 00000000`, the last ending `END\n`.
//! - `stderr-flood`: writes some stderr at start-up, and 50 MiB of stderr
//!   before answering each `echo` call.
//! - `slow-start`: sleeps 2 seconds before reading stdin, then like normal.
//! - `malformed-tool`: tools/list mixes `echo` and `fail` with two invalid
//!   entries (`42` and `{"name": 7, "inputSchema": "nope"}`).
//! - `paginate`: tools/list returns tool_1..tool_6 over three pages
//!   (cursors "page2", "page3"); tool_N returns "tool_N".
//! - `exit-early`: writes "cannot start: missing config" to stderr and exits
//!   with status 3 before reading anything.
//! - `null-id-error`: answers `initialize` with an error whose id is null, as
//!   servers do for a request they could not read.
//!
//! Notifications and responses from the client are ignored, `ping` answers
//! `{}`, any other unknown method gets -32601. Exits 0 when stdin closes.

use serde_json::{json, Map, Value};
use std::fmt::Write as _;
use std::io::{self, BufRead, Write};
use std::process::exit;
use std::thread::sleep;
use std::time::Duration;

const MODES: &[&str] = &[
    "normal",
    "crash",
    "hang",
    "garbage",
    "huge",
    "stderr-flood",
    "slow-start",
    "malformed-tool",
    "paginate",
    "exit-early",
    "null-id-error",
];
const VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
const MIB: usize = 1024 * 1024;

type RpcResult = Result<Value, (i64, String)>;

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "normal".into());
    if !MODES.contains(&mode.as_str()) {
        eprintln!("fault_server: unknown mode {mode:?}; expected one of {MODES:?}");
        exit(2);
    }
    match mode.as_str() {
        "exit-early" => {
            eprintln!("cannot start: missing config");
            exit(3);
        }
        "slow-start" => sleep(Duration::from_secs(2)),
        "stderr-flood" => eprintln!("fault-server: starting\nfault-server: ready"),
        _ => {}
    }

    let mut out = io::stdout().lock();
    for line in io::stdin().lock().split(b'\n') {
        let Ok(line) = line else { break };
        let Ok(Value::Object(msg)) = serde_json::from_slice::<Value>(&line) else {
            continue; // Not a JSON object: ignore.
        };
        // Responses (no method) and notifications (no id) get no answer.
        let (Some(method), Some(id)) = (msg.get("method").and_then(Value::as_str), msg.get("id"))
        else {
            continue;
        };
        let params = msg.get("params").cloned().unwrap_or(Value::Null);
        let id = if mode == "null-id-error" && method == "initialize" {
            &Value::Null
        } else {
            id
        };
        let reply = match handle(&mode, method, &params) {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err((code, message)) => {
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
            }
        };
        if mode == "garbage" {
            let noise: &[u8] = b"this is not json\n{\"jsonrpc\": \"2.0\", \"id\": \n\xff\xfe\n";
            if out.write_all(noise).is_err() {
                break;
            }
        }
        let mut text = reply.to_string();
        text.push('\n');
        if out
            .write_all(text.as_bytes())
            .and_then(|_| out.flush())
            .is_err()
        {
            break;
        }
    }
}

fn handle(mode: &str, method: &str, params: &Value) -> RpcResult {
    match method {
        "initialize" if mode == "null-id-error" => {
            Err((-32600, "Invalid request: bad clientInfo".into()))
        }
        "initialize" => {
            let requested = params.get("protocolVersion").and_then(Value::as_str);
            let version = requested
                .filter(|v| VERSIONS.contains(v))
                .unwrap_or(VERSIONS[0]);
            Ok(json!({
                "protocolVersion": version,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "fault-server", "version": "1.0.0"},
            }))
        }
        "ping" => Ok(json!({})),
        "tools/list" => list_tools(mode, params.get("cursor").and_then(Value::as_str)),
        "tools/call" => {
            let name = params.get("name").and_then(Value::as_str).unwrap_or("");
            let empty = Map::new();
            let args = params
                .get("arguments")
                .and_then(Value::as_object)
                .unwrap_or(&empty);
            call_tool(mode, name, args)
        }
        _ => Err((-32601, "Method not found".into())),
    }
}

fn tool(name: &str, description: &str, properties: Value, required: &[&str]) -> Value {
    json!({
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": properties, "required": required},
    })
}

fn echo_tool() -> Value {
    let props = json!({"text": {"type": "string", "description": "Text to echo back"}});
    tool("echo", "Echo the given text", props, &["text"])
}

fn fail_tool() -> Value {
    tool("fail", "Always fails", json!({}), &[])
}

fn list_tools(mode: &str, cursor: Option<&str>) -> RpcResult {
    let tools = match mode {
        "malformed-tool" => vec![
            echo_tool(),
            json!(42),
            json!({"name": 7, "inputSchema": "nope"}),
            fail_tool(),
        ],
        "paginate" => {
            let (page, next) = match cursor {
                None => (0, Some("page2")),
                Some("page2") => (1, Some("page3")),
                Some("page3") => (2, None),
                Some(other) => return Err((-32602, format!("Invalid cursor: {other}"))),
            };
            let props = json!({"text": {"type": "string"}});
            let tools: Vec<Value> = (page * 2 + 1..=page * 2 + 2)
                .map(|n| {
                    tool(
                        &format!("tool_{n}"),
                        &format!("Tool number {n}"),
                        props.clone(),
                        &[],
                    )
                })
                .collect();
            let mut result = json!({"tools": tools});
            if let Some(next) = next {
                result["nextCursor"] = json!(next);
            }
            return Ok(result);
        }
        "huge" => {
            let props =
                json!({"mb": {"type": "integer", "default": 20, "description": "MiB to return"}});
            vec![
                echo_tool(),
                fail_tool(),
                tool("huge", "Return a huge text block", props, &[]),
            ]
        }
        _ => vec![echo_tool(), fail_tool()],
    };
    Ok(json!({"tools": tools}))
}

fn text_result(text: &str, is_error: bool) -> RpcResult {
    Ok(json!({"content": [{"type": "text", "text": text}], "isError": is_error}))
}

fn call_tool(mode: &str, name: &str, args: &Map<String, Value>) -> RpcResult {
    match mode {
        "crash" => {
            eprintln!("fatal: simulated crash");
            for i in 1..=5 {
                eprintln!("line {i}");
            }
            exit(1);
        }
        "hang" => {
            // Says when the call has arrived (in the server's log), so a test can wait on it.
            eprintln!("hanging on tools/call");
            loop {
                sleep(Duration::from_secs(3600));
            }
        }
        "stderr-flood" if name == "echo" => flood_stderr(50 * MIB),
        "paginate" => {
            let known = name
                .strip_prefix("tool_")
                .and_then(|n| n.parse::<u32>().ok())
                .is_some_and(|n| (1..=6).contains(&n));
            if !known {
                return Err((-32602, format!("Unknown tool: {name}")));
            }
            return text_result(name, false);
        }
        _ => {}
    }
    match name {
        "echo" => match args.get("text").and_then(Value::as_str) {
            Some(text) => text_result(text, false),
            None => text_result("missing required string argument: text", true),
        },
        "fail" => text_result("it failed", true),
        "huge" if mode == "huge" => match args.get("mb").map_or(Some(20), Value::as_u64) {
            Some(mb) => text_result(&huge_text(mb as usize * MIB), false),
            None => text_result("mb must be a non-negative integer", true),
        },
        _ => Err((-32602, format!("Unknown tool: {name}"))),
    }
}

/// Exactly `len` bytes of 64-byte lines "line NNNNNNNN xxx...\n"; the last
/// line ends with "END\n".
fn huge_text(len: usize) -> String {
    let filler = "x".repeat(64 - "line 00000000 \n".len());
    let mut text = String::with_capacity(len + 64);
    for i in 0..len.div_ceil(64) {
        let _ = writeln!(text, "line {i:08} {filler}");
    }
    if len >= 4 {
        text.truncate(len - 4);
        text.push_str("END\n");
    } else {
        text.truncate(len);
    }
    text
}

/// Write `total` bytes of numbered text lines to stderr in 64 KiB chunks.
fn flood_stderr(total: usize) {
    let mut err = io::stderr().lock();
    let filler = "y".repeat(64 - "stderr 00000000 \n".len());
    let (mut written, mut n) = (0, 0usize);
    while written < total {
        let mut chunk = String::with_capacity(64 * 1024);
        for _ in 0..1024 {
            let _ = writeln!(chunk, "stderr {n:08} {filler}");
            n += 1;
        }
        if err
            .write_all(chunk.as_bytes())
            .and_then(|_| err.flush())
            .is_err()
        {
            return;
        }
        written += chunk.len();
    }
}
