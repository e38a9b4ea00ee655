//! `ferry skill <server>`: a small SKILL.md that teaches an agent to use a server through
//! ferry. Its frontmatter (always loaded by hosts) stays short whatever the number of tools;
//! the body carries the listing. A marker records what it was made from, so `--check` can tell
//! when the server's tools have changed since.

use crate::paths::fnv1a;
use crate::protocol::tools::Tool;
use crate::render::listing_lines;

/// Hosts reject longer descriptions (the Agent Skills format's limit).
const MAX_DESCRIPTION: usize = 1024;
/// And longer names.
const MAX_NAME: usize = 64;
/// The marker line's prefix.
pub const MARKER: &str = "<!-- ferry-skill:";

/// What the tools of a server hash to: names, descriptions and schemas in order.
pub fn fingerprint(tools: &[Tool]) -> String {
    let text: String = tools
        .iter()
        .map(|t| serde_json::to_string(&t.raw).unwrap_or_default() + "\n")
        .collect();
    format!("{:016x}", fnv1a(&text))
}

/// A skill name: lower-case letters, digits and hyphens.
pub fn skill_name(server: &str) -> String {
    let mut name: String = server
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect::<String>()
        .split('-')
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("-");
    name.truncate(MAX_NAME);
    if name.is_empty() {
        "server".into()
    } else {
        name
    }
}

/// The SKILL.md text for one server; `mark` gives a tool's pin mark (`(changed: ...)`,
/// `(new)`) for its listing line.
pub fn render_skill(
    server: &str,
    tools: &[Tool],
    instructions: Option<&str>,
    mark: &dyn Fn(&str) -> Option<String>,
) -> String {
    // The frontmatter is always loaded: a few names and the gist, whatever the tool count.
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    let shown = names.iter().take(5).copied().collect::<Vec<_>>().join(", ");
    let more = if names.len() > 5 {
        format!(", +{} more", names.len() - 5)
    } else {
        String::new()
    };
    // When to use it, in plain words: what the server's instructions call it, else what its
    // tools act on (never markdown, never the first tools' summaries).
    let purpose = instructions
        .map(crate::render::proxy::catalog_words)
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| topics(tools));
    let mut description =
        format!("Use the {server} MCP server's tools ({shown}{more}) through the ferry CLI. Use when a task needs {server} ({purpose}).");
    description = description.replace('\n', " ");
    if description.len() > MAX_DESCRIPTION {
        let mut cut = MAX_DESCRIPTION - 3;
        while !description.is_char_boundary(cut) {
            cut -= 1;
        }
        let cut = description[..cut].rfind(' ').unwrap_or(cut);
        description.truncate(cut);
        description.push_str("...");
    }
    let mut out = String::new();
    out.push_str("---\n");
    out.push_str(&format!("name: {}\n", skill_name(server)));
    out.push_str(&format!("description: {}\n", yaml_scalar(&description)));
    out.push_str("---\n");
    out.push_str(&format!(
        "{MARKER} server={server} tools={} fingerprint={} ferry={} -->\n\n",
        tools.len(),
        fingerprint(tools),
        env!("CARGO_PKG_VERSION")
    ));
    out.push_str(&format!("# {server} through ferry\n\n"));
    if let Some(instructions) = instructions.map(str::trim).filter(|i| !i.is_empty()) {
        // As `ferry SERVER --help` shows them: cut at the same length, and their headings set
        // below this file's own, so the server's text cannot restructure the skill.
        let (shown, total) = crate::render::tool::instructions_cut(instructions);
        for line in shown.lines() {
            if line.starts_with('#') {
                out.push_str("##");
            }
            out.push_str(line);
            out.push('\n');
        }
        if total > crate::render::tool::INSTRUCTIONS_MAX {
            out.push_str(&format!(
                "(the server's instructions are cut here: {} of {total} characters)\n",
                shown.chars().count()
            ));
        }
        out.push('\n');
    }
    out.push_str(&format!(
        "Read a tool's arguments first: `ferry {server} <tool> --help` (types, required marks, defaults, enums).\n\
         Call it: `ferry {server} <tool> --arg value`; booleans `--flag`/`--no-flag`; objects as JSON, `@file` or `-`; a string `@path` is that file's text when the file exists, and `-` is standard input.\n\
         Exit codes: 0 ok, 1 the tool reported an error, 2 usage error (nothing was sent), 3 server failure, 4 timeout, 5 auth.\n\
         Long output: add `--max-tokens N` (head and tail kept, full output saved to a file).\n\n## Tools\n\n"
    ));
    for (tool, line) in tools.iter().zip(listing_lines(tools)) {
        out.push_str(&line);
        if let Some(mark) = mark(&tool.name) {
            out.push(' ');
            out.push_str(&crate::render::text::escape_line(&mark));
        }
        out.push('\n');
    }
    out
}

/// Verbs of tool names: what a tool does, not what it acts on.
const NAME_VERBS: [&str; 24] = [
    "get", "list", "create", "read", "update", "delete", "set", "add", "remove", "search", "open",
    "write", "move", "edit", "find", "fetch", "run", "show", "make", "new", "toggle", "trigger",
    "with", "multiple",
];

/// What a server's tools act on: the nouns of their names, most used first, at most six
/// ("entity, relation, observation" for a knowledge graph).
fn topics(tools: &[Tool]) -> String {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for tool in tools {
        let words = tool
            .name
            .split(|c: char| !c.is_alphanumeric())
            .map(str::to_lowercase);
        for word in words {
            if word.len() < 3 || NAME_VERBS.contains(&word.as_str()) {
                continue;
            }
            match counts.iter_mut().find(|(w, _)| *w == word) {
                Some((_, n)) => *n += 1,
                None => counts.push((word, 1)),
            }
        }
    }
    // A stable sort keeps first appearance among equals.
    counts.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    let words: Vec<&str> = counts.iter().take(6).map(|(w, _)| w.as_str()).collect();
    if words.is_empty() {
        "tools".to_string()
    } else {
        words.join(", ")
    }
}

/// A YAML plain scalar when safe, else a double-quoted one.
fn yaml_scalar(text: &str) -> String {
    let plain = !text.is_empty()
        && !text.starts_with(|c: char| "!&*-?{}[],#|>@`\"'%: ".contains(c))
        && !text.contains(": ")
        && !text.contains(" #");
    if plain {
        text.to_string()
    } else {
        serde_json::to_string(text).unwrap_or_default()
    }
}

/// Reads `server=` and `fingerprint=` from a skill written by ferry.
pub fn read_marker(skill: &str) -> Option<(String, String)> {
    let line = skill.lines().find(|l| l.starts_with(MARKER))?;
    let field = |key: &str| {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(key))
            .map(str::to_string)
    };
    Some((field("server=")?, field("fingerprint=")?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn skill_has_frontmatter_marker_and_listing() {
        let tools = vec![Tool::from_value(&json!({"name": "get_time", "description": "Get the time in a timezone. More.",
            "inputSchema": {"type": "object", "properties": {"tz": {"type": "string"}}, "required": ["tz"]}}))
        .unwrap()];
        let skill = render_skill("my_time", &tools, None, &|_| None);
        assert!(skill.starts_with("---\nname: my-time\ndescription: Use the my_time MCP server's tools (get_time) through the ferry CLI. Use when a task needs my_time (time).\n---\n"), "{skill}");
        // Instructions in markdown give their plain words, never a heading's marks.
        let titled = render_skill(
            "ev",
            &tools,
            Some("# Everything Server – Server Instructions\n\nAudience: ..."),
            &|_| None,
        );
        assert!(
            titled.contains("Use when a task needs ev (Everything Server).\n"),
            "{titled}"
        );
        assert!(
            skill.ends_with("## Tools\n\nget_time(tz) - Get time in timezone\n"),
            "{skill}"
        );
        let (server, print) = read_marker(&skill).unwrap();
        assert_eq!(server, "my_time");
        assert_eq!(print, fingerprint(&tools));
    }

    #[test]
    fn yaml_scalars_are_quoted_when_needed() {
        assert_eq!(yaml_scalar("plain text"), "plain text");
        assert_eq!(yaml_scalar("has: colon"), "\"has: colon\"");
        assert_eq!(yaml_scalar("- dash"), "\"- dash\"");
    }
}
