//! What the lazy proxy (`ferry serve --servers`) shows a host: its three tools, exactly, and
//! the one-line-per-server catalog in its instructions. Here, not in serve, because the meter
//! counts them too.

use crate::protocol::tools::Tool;
use serde_json::{json, Value};
use std::fmt::Write;

/// How many results `find` shows unless asked.
pub const FIND_DEFAULT: usize = 3;
pub const FIND_MAX: usize = 20;

/// The three tools, exactly as listed (byte-stable, so a host's prompt cache holds).
pub fn three_tools() -> Vec<Value> {
    let always = json!({"anthropic/alwaysLoad": true});
    vec![
        json!({
            "name": "find",
            "description": "Find tools across the connected MCP servers by what you want to do. Returns the best matches, one line each as server/tool(required args) - summary, and the top match's full argument help. Use it before call.",
            "inputSchema": {"type": "object", "properties": {
                "query": {"type": "string", "description": "What you want to do, in a few words"},
                "limit": {"type": "integer", "minimum": 1, "maximum": FIND_MAX, "description": "How many matches (default 3)"}
            }, "required": ["query"], "additionalProperties": false},
            "annotations": {"readOnlyHint": true, "openWorldHint": false},
            "_meta": always,
        }),
        json!({
            "name": "describe",
            "description": "Show one tool's arguments: name, type, whether required, default, constraints and description.",
            "inputSchema": {"type": "object", "properties": {
                "tool": {"type": "string", "description": "The tool as server/tool"}
            }, "required": ["tool"], "additionalProperties": false},
            "annotations": {"readOnlyHint": true, "openWorldHint": false},
            "_meta": always,
        }),
        json!({
            "name": "call",
            "description": "Call a tool of a connected MCP server with its arguments; returns the tool's own result.",
            "inputSchema": {"type": "object", "properties": {
                "tool": {"type": "string", "description": "The tool as server/tool"},
                "arguments": {"type": "object", "description": "The tool's arguments, as describe or find shows them"}
            }, "required": ["tool"], "additionalProperties": false},
            "_meta": always,
        }),
    ]
}

/// The instructions for servers given as (name, tool count if known, their instructions).
pub fn instructions_text(servers: &[(String, Option<usize>, Option<String>)]) -> String {
    let mut out = String::from(
        "Tools of these MCP servers are reached through find (search by task), describe and call:\n",
    );
    for (name, count, server_instructions) in servers {
        let count = count.map_or("?".to_string(), |n| n.to_string());
        let words = server_instructions
            .as_deref()
            .map(crate::render::summary)
            .filter(|s| !s.is_empty())
            .map(|s| s.split_whitespace().take(6).collect::<Vec<_>>().join(" "))
            .unwrap_or_default();
        let _ = if words.is_empty() {
            writeln!(out, "- {name} ({count} tools)")
        } else {
            writeln!(out, "- {name} ({count} tools): {words}")
        };
    }
    out.trim_end().to_string()
}

/// The three tools as a host receives them, for the meter.
pub fn listed_tools() -> Vec<Tool> {
    three_tools()
        .into_iter()
        .filter_map(|raw| Tool::from_owned(raw).ok())
        .collect()
}
