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

/// Servers whose listing failed, each with why: `(name, why)`.
pub type Failures<'a> = &'a [(String, String)];

/// The instructions for servers given as (name, tool count if known, their instructions);
/// `failed`: the servers whose listing failed, with why.
pub fn instructions_text(
    servers: &[(String, Option<usize>, Option<String>)],
    failed: Failures,
) -> String {
    let mut out = String::from(
        "Tools of these MCP servers are reached through find (search by task), describe and call:\n",
    );
    catalog_lines(&mut out, servers, failed);
    out.trim_end().to_string()
}

/// The instructions with `--expose all`: the same catalog for tools listed as `server__tool`,
/// then each server's own instructions, which the host would have had from it directly.
pub fn exposed_instructions_text(
    servers: &[(String, Option<usize>, Option<String>)],
    failed: Failures,
) -> String {
    let mut out = String::from("Tools of these MCP servers are listed as server__tool:\n");
    catalog_lines(&mut out, servers, failed);
    for (name, _, instructions) in servers {
        let Some(text) = instructions
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
        else {
            continue;
        };
        let text: String = text.chars().take(SERVER_INSTRUCTIONS_MAX).collect();
        let _ = write!(
            out,
            "\n## {} (its instructions)\n{}\n",
            crate::render::text::escape_line(name),
            crate::render::text::escape_text(&text)
        );
    }
    out.trim_end().to_string()
}

/// The most characters of one server's instructions passed on.
const SERVER_INSTRUCTIONS_MAX: usize = 8_000;

/// A line per server: its name, its tool count in proper number, and a few words of what it
/// is for.
fn catalog_lines(
    out: &mut String,
    servers: &[(String, Option<usize>, Option<String>)],
    failed: Failures,
) {
    for (name, count, server_instructions) in servers {
        let why = failed.iter().find(|(n, _)| n == name).map(|(_, why)| why);
        let name = crate::render::text::escape_line(name);
        let count = match (count, why) {
            (Some(1), _) => "1 tool".to_string(),
            (Some(n), _) => format!("{n} tools"),
            // Not "not listed yet" for a listing that will not come: the model is told why.
            (None, Some(why)) => {
                let why: String = why.chars().take(FAILURE_CHARS).collect();
                format!(
                    "tools could not be listed: {}",
                    crate::render::text::escape_line(&why)
                )
            }
            (None, None) => "tools not listed yet".to_string(),
        };
        let words = server_instructions
            .as_deref()
            .map(catalog_words)
            .unwrap_or_default();
        let _ = if words.is_empty() {
            writeln!(out, "- {name} ({count})")
        } else {
            writeln!(out, "- {name} ({count}): {words}")
        };
    }
}

/// The most characters of why a listing failed that a catalog line takes.
const FAILURE_CHARS: usize = 160;

/// The most words a catalog line takes from a server's instructions.
const CATALOG_WORDS: usize = 6;

/// A few plain words from a server's instructions: the first line that says something, without
/// markdown (heading marks, list marks, emphasis, code quotes), and without the part of a
/// title that only says these are instructions ("Everything Server - Server Instructions").
pub fn catalog_words(instructions: &str) -> String {
    for line in instructions.lines() {
        let line = line
            .trim()
            .trim_start_matches('#')
            .trim_start()
            .trim_start_matches(['-', '*', '>', '+'])
            .trim();
        let plain: String = line.chars().filter(|c| !matches!(c, '*' | '`')).collect();
        let plain = plain
            .split([':', '\u{2013}', '\u{2014}', '|'])
            .chain(std::iter::once(""))
            .map(str::trim)
            .find(|part| !part.is_empty() && !part.to_lowercase().contains("instruction"))
            .unwrap_or("");
        let summary = crate::render::summary(plain);
        let words: Vec<&str> = summary.split_whitespace().take(CATALOG_WORDS).collect();
        if !words.is_empty() {
            return crate::render::text::escape_line(&words.join(" ")).into_owned();
        }
    }
    String::new()
}

/// The three tools as a host receives them, for the meter.
pub fn listed_tools() -> Vec<Tool> {
    three_tools()
        .into_iter()
        .filter_map(|raw| Tool::from_owned(raw).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalog_lines_speak_plainly_in_proper_number() {
        let text = instructions_text(
            &[
                (
                    "everything".into(),
                    Some(13),
                    Some(
                        "# Everything Server \u{2013} Server Instructions\n\nAudience: ...".into(),
                    ),
                ),
                (
                    "one".into(),
                    Some(1),
                    Some("**Reads** `notes` from a folder.".into()),
                ),
                ("fresh".into(), None, None),
                ("broken".into(), None, None),
            ],
            &[("broken".into(), "command \"nope\" not found".into())],
        );
        assert_eq!(
            text,
            "Tools of these MCP servers are reached through find (search by task), describe and call:\n\
             - everything (13 tools): Everything Server\n\
             - one (1 tool): Reads notes from folder\n\
             - fresh (tools not listed yet)\n\
             - broken (tools could not be listed: command \"nope\" not found)"
        );
    }
}
