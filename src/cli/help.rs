//! The listing line and the `--help` text of a tool, both rendered from the schema model.

use crate::protocol::tools::{collapse_whitespace, first_sentence, Tool};
use crate::schema::{render_type, render_value, signature, Kind, Prop, Shape, ToolSchema};
use std::fmt::Write;

/// `name(sig) - first sentence`: one line per tool.
pub fn listing_line(tool: &Tool) -> String {
    let schema = ToolSchema::from_input_schema(&tool.input_schema);
    let summary = first_sentence(&tool.description);
    if summary.is_empty() {
        format!("{}({})", tool.name, signature(&schema))
    } else {
        format!("{}({}) - {summary}", tool.name, signature(&schema))
    }
}

/// The whole usage text for one tool: how to call it, what it does, every property.
pub fn tool_help(server: &str, tool: &Tool) -> String {
    let schema = ToolSchema::from_input_schema(&tool.input_schema);
    let mut out = String::new();
    let _ = write!(out, "usage: ferry {server} {}", tool.name);
    let must_give: Vec<&Prop> = schema.must_give().collect();
    let positional = must_give.len() == 1;
    for prop in &schema.props {
        let value = usage_value(&prop.shape);
        let word = if positional && prop.required && prop.shape.default.is_none() {
            format!("<{}>", prop.name)
        } else if prop.shape.kind == Kind::Bool {
            format!("--{}", prop.name)
        } else {
            format!("--{} {value}", prop.name)
        };
        if prop.required {
            let _ = write!(out, " {word}");
        } else {
            let _ = write!(out, " [{word}]");
        }
    }
    out.push('\n');
    let description = tool.description.trim();
    if !description.is_empty() {
        out.push_str(description);
        out.push('\n');
    }
    for prop in &schema.props {
        let _ = write!(out, "  --{} {}", prop.name, render_type(&prop.shape));
        write_facts(&mut out, &prop.shape, prop.required);
        out.push('\n');
        write_nested(&mut out, &prop.shape, 4);
    }
    out
}

/// How a value is written on the command line, for the usage line.
fn usage_value(shape: &Shape) -> String {
    match &shape.kind {
        Kind::Array(items) if items.is_scalar() => format!("{}...", usage_value(items)),
        Kind::Enum(values) if values.len() <= 6 => values
            .iter()
            .map(render_value)
            .collect::<Vec<_>>()
            .join("|"),
        kind if shape.is_scalar() => match kind {
            Kind::Int => "<int>".into(),
            Kind::Num => "<num>".into(),
            _ => "<str>".into(),
        },
        _ => "<json>".into(),
    }
}

/// ` (required) = default [min 1]: description` after the type.
fn write_facts(out: &mut String, shape: &Shape, required: bool) {
    if required {
        out.push_str(" (required)");
    }
    if let Some(default) = &shape.default {
        let _ = write!(out, " = {}", render_value(default));
    }
    if !shape.constraints.is_empty() {
        let facts: Vec<String> = shape
            .constraints
            .iter()
            .map(|(k, v)| format!("{k} {}", render_value(v)))
            .collect();
        let _ = write!(out, " [{}]", facts.join(", "));
    }
    if let Some(description) = &shape.description {
        let description = collapse_whitespace(description);
        if !description.is_empty() {
            let _ = write!(out, ": {description}");
        }
    }
}

/// Nested properties that carry more than their type (a description, default or constraint).
fn write_nested(out: &mut String, shape: &Shape, indent: usize) {
    let props = match &shape.kind {
        Kind::Object { props, .. } => props,
        Kind::Array(items) => {
            // What each item is, when the schema says more than its type.
            let has_facts = items.description.is_some()
                || items.default.is_some()
                || !items.constraints.is_empty();
            if has_facts {
                let _ = write!(out, "{:indent$}[]", "");
                write_facts(out, items, false);
                out.push('\n');
            }
            return write_nested(out, items, indent);
        }
        Kind::Union(variants) => {
            for variant in variants {
                write_nested(out, variant, indent);
            }
            return;
        }
        _ => return,
    };
    for prop in props {
        let shape = &prop.shape;
        let has_facts =
            shape.description.is_some() || shape.default.is_some() || !shape.constraints.is_empty();
        if has_facts {
            let _ = write!(out, "{:indent$}{}", "", prop.name);
            write_facts(out, shape, false);
            out.push('\n');
        }
        write_nested(out, shape, indent + 2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(value: serde_json::Value) -> Tool {
        Tool::from_value(&value).unwrap()
    }

    #[test]
    fn listing_line_is_compact() {
        let t = tool(
            json!({"name": "read_file", "description": "Read a file as text. Handles utf-8.",
            "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}, "head": {"type": "integer"}}, "required": ["path"]}}),
        );
        assert_eq!(
            listing_line(&t),
            "read_file(path:str, head?:int) - Read a file as text."
        );
    }

    #[test]
    fn help_shows_every_fact() {
        let t = tool(json!({"name": "edit_file", "description": "Edit a file.",
            "inputSchema": {"type": "object", "properties": {
                "path": {"type": "string"},
                "edits": {"type": "array", "items": {"type": "object", "properties": {
                    "oldText": {"type": "string", "description": "Text to search for"},
                    "newText": {"type": "string", "description": "Text to replace with"}}, "required": ["oldText", "newText"]}},
                "dryRun": {"type": "boolean", "default": false, "description": "Preview changes"},
                "mode": {"type": "string", "enum": ["a", "b"], "default": "a"}},
            "required": ["path", "edits"]}}));
        assert_eq!(
            tool_help("fs", &t),
            "usage: ferry fs edit_file --path <str> --edits <json> [--dryRun] [--mode a|b]\n\
             Edit a file.\n  \
             --path str (required)\n  \
             --edits {oldText:str, newText:str}[] (required)\n    \
             oldText: Text to search for\n    \
             newText: Text to replace with\n  \
             --dryRun bool = false: Preview changes\n  \
             --mode a|b = a\n"
        );
    }
}
