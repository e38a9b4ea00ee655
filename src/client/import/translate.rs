//! Host variables in an imported entry, rewritten into what ferry expands: `${NAME}` from the
//! caller's environment.
//!
//! Hosts expand their own forms: VS Code `${env:X}`, `${workspaceFolder}`, `${userHome}`,
//! `${input:ID}` (a prompt), `${config:...}` and `${command:...}`; Windsurf `${file:...}`; a
//! desktop extension's `${user_config.KEY}`. Copied verbatim they fail at the first call with
//! a name no shell can export. Those with a meaning in a shell are translated (`${env:X}` is
//! `${X}`, the workspace is `${PWD}`, the user's home `${HOME}`); those only the host can
//! supply become `${CAPS_NAME}`, and the import says, per server, what to export.

use serde_json::{Map, Value};

/// One host-only value of an entry: what it was, and the variable that now stands for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostValue {
    /// The host's form, as written (`${input:github_token}`).
    pub original: String,
    /// The environment variable ferry reads instead (`GITHUB_TOKEN`).
    pub name: String,
    /// What the host did with it ("a value the host prompts for").
    pub what: &'static str,
}

/// The keys of an entry whose strings ferry expands.
const EXPANDED: [&str; 6] = ["command", "args", "env", "cwd", "url", "headers"];

/// Rewrites the host variables in the strings ferry expands (`command`, `args`, `env`, `cwd`,
/// `url`, `headers`); returns the host-only values it replaced, each once, in order.
pub fn translate_entry(entry: &mut Map<String, Value>) -> Vec<HostValue> {
    let mut found = Vec::new();
    for key in EXPANDED {
        if let Some(value) = entry.get_mut(key) {
            translate_value(value, &mut found);
        }
    }
    found
}

fn translate_value(value: &mut Value, found: &mut Vec<HostValue>) {
    match value {
        Value::String(s) => {
            let (text, values) = translate_text(s);
            *s = text;
            for v in values {
                if !found.contains(&v) {
                    found.push(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| translate_value(v, found)),
        Value::Object(map) => map.values_mut().for_each(|v| translate_value(v, found)),
        _ => {}
    }
}

/// What a `${...}` means to ferry.
#[derive(Debug, PartialEq, Eq)]
pub enum Meaning {
    /// A variable ferry reads as it is: `${X}`, `${X:-default}`, `${env:X}`.
    Variable(String),
    /// A host's name for a shell variable: `${workspaceFolder}` is `PWD`.
    Shell(&'static str),
    /// A literal the host substitutes (`${pathSeparator}`).
    Literal(&'static str),
    /// A value only the host can supply, read from this variable instead.
    HostOnly(String, &'static str),
}

/// The meaning of the inside of a `${...}` (`env:X`, `input:tok`, `workspaceFolder`).
pub fn meaning(inner: &str) -> Meaning {
    if let Some(name) = inner.strip_prefix("env:") {
        return Meaning::Variable(name.to_string());
    }
    match inner {
        "workspaceFolder" | "workspaceRoot" | "cwd" => return Meaning::Shell("PWD"),
        "userHome" => return Meaning::Shell("HOME"),
        "pathSeparator" | "/" => return Meaning::Literal("/"),
        _ => {}
    }
    if let Some(folder) = inner.strip_prefix("workspaceFolder:") {
        // A multi-root workspace's named folder: only the host knows where it is.
        return Meaning::HostOnly(shell_name(folder), "a workspace folder of the host's");
    }
    let host_only: [(&str, &'static str); 5] = [
        ("input:", "a value the host prompts for"),
        ("config:", "a setting of the host's"),
        ("command:", "the result of a host command"),
        ("file:", "a file's content the host reads in"),
        ("user_config.", "a value the host's extension settings hold"),
    ];
    for (prefix, what) in host_only {
        if let Some(rest) = inner.strip_prefix(prefix) {
            let rest = if prefix == "file:" {
                // Name it after the file, not its directories: `~/.keys/github` is GITHUB.
                rest.rsplit(['/', '\\'])
                    .find(|s| !s.is_empty())
                    .unwrap_or(rest)
            } else {
                rest
            };
            return Meaning::HostOnly(shell_name(rest), what);
        }
    }
    if !inner.contains(":-") && !is_shell_name(inner) {
        if let Some((_, rest)) = inner.split_once(':') {
            return Meaning::HostOnly(shell_name(rest), "a value only the host supplies");
        }
        return Meaning::HostOnly(shell_name(inner), "a value only the host supplies");
    }
    Meaning::Variable(inner.to_string())
}

/// A part of a config string: text as written, or the inside of a `${...}`.
pub enum Piece<'a> {
    Text(&'a str),
    Placeholder(&'a str),
}

/// `text` cut at its `${...}`s, in order; an unclosed `${` stays text.
pub fn pieces(text: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            break;
        };
        if start > 0 {
            out.push(Piece::Text(&rest[..start]));
        }
        out.push(Piece::Placeholder(&after[..end]));
        rest = &after[end + 1..];
    }
    if !rest.is_empty() {
        out.push(Piece::Text(rest));
    }
    out
}

/// Rewrites every `${...}` of `text`; returns the text and the host-only values it replaced.
pub fn translate_text(text: &str) -> (String, Vec<HostValue>) {
    let mut out = String::with_capacity(text.len());
    let mut found = Vec::new();
    for piece in pieces(text) {
        let inner = match piece {
            Piece::Text(text) => {
                out.push_str(text);
                continue;
            }
            Piece::Placeholder(inner) => inner,
        };
        match meaning(inner) {
            Meaning::Variable(name) => out.push_str(&format!("${{{name}}}")),
            Meaning::Shell(name) => out.push_str(&format!("${{{name}}}")),
            Meaning::Literal(text) => out.push_str(text),
            Meaning::HostOnly(name, what) => {
                out.push_str(&format!("${{{name}}}"));
                found.push(HostValue {
                    original: format!("${{{inner}}}"),
                    name,
                    what,
                });
            }
        }
    }
    (out, found)
}

/// Whether a shell can `export` the name: a letter or `_`, then letters, digits and `_`.
pub fn is_shell_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A shell variable's name for a host's id: `github_token` and `github.token` are
/// `GITHUB_TOKEN`, `apiKey` is `API_KEY`.
pub fn shell_name(id: &str) -> String {
    let mut out = String::new();
    let mut prev_lower = false;
    for c in id.chars() {
        if c.is_ascii_alphanumeric() {
            if c.is_ascii_uppercase() && prev_lower {
                out.push('_');
            }
            prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
            out.push(c.to_ascii_uppercase());
        } else {
            if !out.is_empty() && !out.ends_with('_') {
                out.push('_');
            }
            prev_lower = false;
        }
    }
    let out = out.trim_end_matches('_').to_string();
    match out.chars().next() {
        None => "VALUE".to_string(),
        Some(c) if c.is_ascii_digit() => format!("_{out}"),
        Some(_) => out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shell_forms_are_translated_and_host_only_values_named() {
        let mut entry = json!({
            "command": "node",
            "args": ["${workspaceFolder}/server.js", "--root", "${workspaceRoot}", "${cwd}",
                     "--home", "${userHome}${pathSeparator}x", "${env:LOG_DIR}", "${KEEP:-1}"],
            "env": {"TOKEN": "${input:github_token}", "KEY": "${config:mcp.apiKey}",
                    "PICK": "${command:pickFile}", "SECRET": "${file:~/.keys/openai}",
                    "EXT": "${user_config.api_key}", "AGAIN": "${input:github_token}"},
            "disabled": "${input:not_expanded}"
        });
        let found = translate_entry(entry.as_object_mut().unwrap());
        assert_eq!(
            entry["args"],
            json!([
                "${PWD}/server.js",
                "--root",
                "${PWD}",
                "${PWD}",
                "--home",
                "${HOME}/x",
                "${LOG_DIR}",
                "${KEEP:-1}"
            ])
        );
        assert_eq!(
            entry["env"],
            json!({"TOKEN": "${GITHUB_TOKEN}", "KEY": "${MCP_API_KEY}", "PICK": "${PICK_FILE}",
                   "SECRET": "${OPENAI}", "EXT": "${API_KEY}", "AGAIN": "${GITHUB_TOKEN}"})
        );
        // Keys ferry never expands are left as they are.
        assert_eq!(entry["disabled"], "${input:not_expanded}");
        let names: Vec<(&str, &str)> = found
            .iter()
            .map(|v| (v.original.as_str(), v.name.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("${input:github_token}", "GITHUB_TOKEN"),
                ("${config:mcp.apiKey}", "MCP_API_KEY"),
                ("${command:pickFile}", "PICK_FILE"),
                ("${file:~/.keys/openai}", "OPENAI"),
                ("${user_config.api_key}", "API_KEY"),
            ]
        );
    }

    #[test]
    fn every_name_a_host_value_becomes_is_a_shell_name() {
        for id in ["tok", "1st-key", "a.b.c", "", "--", "apiKey", "ÄÖ", "x:y"] {
            let name = shell_name(id);
            assert!(is_shell_name(&name), "{id:?} -> {name:?}");
        }
        assert_eq!(shell_name("tok"), "TOK");
        assert_eq!(shell_name("1st-key"), "_1ST_KEY");
    }
}
