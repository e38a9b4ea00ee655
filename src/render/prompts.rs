//! One line per resource, resource template and prompt, and a prompt's arguments as a tool
//! schema, so the same flag parser and help serve prompts too.

use super::text::{escape_line, first_sentence};
use crate::protocol::messages::ListEntry;
use serde_json::{json, Map, Value};

/// `uri name (mime) - first sentence`.
pub fn resource_line(resource: &Value) -> String {
    let resource = ListEntry::read(resource);
    let uri = resource.uri.as_deref().unwrap_or("");
    let name = resource.name.as_deref().unwrap_or("");
    let mut out = uri.to_string();
    if !name.is_empty() && name != uri {
        out.push_str(&format!(" {name}"));
    }
    if let Some(mime) = &resource.mime_type {
        out.push_str(&format!(" ({mime})"));
    }
    let description = first_sentence(resource.description.as_deref().unwrap_or(""));
    if !description.is_empty() {
        out.push_str(&format!(" - {description}"));
    }
    escape_line(&out).into_owned()
}

/// `uriTemplate name (template)`.
pub fn template_line(template: &Value) -> String {
    let template = ListEntry::read(template);
    let line = format!(
        "{} {} (template)",
        template.uri_template.as_deref().unwrap_or(""),
        template.name.as_deref().unwrap_or("")
    );
    escape_line(&line).into_owned()
}

/// `name(arg:str, opt?:str) - first sentence`.
pub fn prompt_line(prompt: &Value) -> String {
    let prompt = ListEntry::read(prompt);
    let name = prompt.name.as_deref().unwrap_or("?");
    let args: Vec<String> = prompt
        .arguments()
        .map(|a| {
            a.iter()
                .map(|arg| {
                    let n = arg.name.as_deref().unwrap_or("?");
                    format!("{n}{}:str", if arg.is_required() { "" } else { "?" })
                })
                .collect()
        })
        .unwrap_or_default();
    let description = first_sentence(prompt.description.as_deref().unwrap_or(""));
    let line = if description.is_empty() {
        format!("{name}({})", args.join(", "))
    } else {
        format!("{name}({}) - {description}", args.join(", "))
    };
    escape_line(&line).into_owned()
}

/// A prompt's arguments as a tool schema (all strings), so the same parser and help apply.
pub fn prompt_schema(prompt: &Value) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for arg in ListEntry::read(prompt).arguments().into_iter().flatten() {
        let Some(name) = arg.name.as_deref() else {
            continue;
        };
        let mut prop = json!({"type": "string"});
        if let Some(d) = &arg.description {
            prop["description"] = d.clone();
        }
        properties.insert(name.to_string(), prop);
        if arg.is_required() {
            required.push(Value::String(name.to_string()));
        }
    }
    json!({"type": "object", "properties": properties, "required": required})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_for_resources_templates_and_prompts() {
        assert_eq!(
            resource_line(
                &json!({"uri": "repo://readme", "name": "readme", "mimeType": "text/markdown", "description": "The README. Long."})
            ),
            "repo://readme readme (text/markdown) - The README."
        );
        assert_eq!(
            template_line(&json!({"uriTemplate": "repo://commit/{sha}", "name": "commit"})),
            "repo://commit/{sha} commit (template)"
        );
        assert_eq!(
            prompt_line(
                &json!({"name": "review", "description": "Review a file", "arguments": [{"name": "path", "required": true}, {"name": "focus"}]})
            ),
            "review(path:str, focus?:str) - Review a file"
        );
        assert_eq!(
            prompt_line(&json!({"name": "evil\u{1b}[2J", "description": "x"})),
            "evil\\x1b[2J() - x"
        );
    }
}
