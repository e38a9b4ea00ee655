//! `[[prompts]]`: messages of text, command output, resources and images, with parameters.

use super::Reader;
use crate::manifest::files::{confine, mime_for_path};
use crate::manifest::model::*;
use crate::manifest::template;
use crate::manifest::toml_tree::{Node, NodeValue};

impl Reader {
    pub(super) fn prompt(
        &self,
        node: &Node,
        manifest: &Manifest,
    ) -> Result<PromptDef, ManifestError> {
        self.keys(
            node,
            &[
                "name",
                "title",
                "description",
                "messages",
                "params",
                "reads",
                "exec",
                "network",
            ],
            "a prompt",
        )?;
        let name = self.required_string(node, "name", "a prompt")?;
        let what = format!("prompt {name:?}");
        let params = self.params(node.get("params"), &what, &["string"])?;
        self.no_headers(node, &params, &what)?;
        let Some(Node {
            value: NodeValue::Array(items),
            line,
        }) = node.get("messages")
        else {
            return Err(self.fail(
                node.line,
                format!("{what} needs messages = [{{ role = \"user\", text = \"...\" }}]"),
            ));
        };
        if items.is_empty() {
            return Err(self.fail(*line, format!("{what} needs at least one message")));
        }
        let mut messages = Vec::new();
        let mut used: Vec<String> = Vec::new();
        for item in items {
            self.keys(
                item,
                &["role", "text", "resource", "image", "command"],
                "a prompt message",
            )?;
            let role = self
                .opt_string(item, "role", "a prompt message")?
                .unwrap_or_else(|| "user".into());
            if role != "user" && role != "assistant" {
                return Err(self.fail(
                    item.line,
                    format!("{what}: role {role:?} is not user or assistant"),
                ));
            }
            if let Some(c) = item.get("command") {
                if item.get("text").is_some()
                    || item.get("resource").is_some()
                    || item.get("image").is_some()
                {
                    return Err(self.fail(
                        item.line,
                        format!("{what}: a message has one of text, resource, image or command"),
                    ));
                }
                let command = self.command(c, &what)?;
                self.program_first(&command, c.line, &what)?;
                self.check_code_arguments(&command, &params, c.line, &what)?;
                let mut named = Vec::new();
                command.iter().for_each(|e| e.params(&mut named));
                for (n, spread) in named {
                    if spread || !params.iter().any(|p| p.name == n) {
                        return Err(self.fail(
                            c.line,
                            format!(
                                "{what}: the command names {{{n}}}, which is not one of its params"
                            ),
                        ));
                    }
                    used.push(n);
                }
                messages.push(PromptMessage {
                    role,
                    part: MessagePart::Command(command),
                });
                continue;
            }
            let part = match (item.get("text"), item.get("resource"), item.get("image")) {
                (Some(t), None, None) => {
                    let text = self.string(t, "text")?;
                    let element =
                        template::parse_element(&text).map_err(|why| self.fail(t.line, why))?;
                    let mut named = Vec::new();
                    element.params(&mut named);
                    for (n, _) in named {
                        if !params.iter().any(|p| p.name == n) {
                            return Err(self.fail(t.line, format!("{what}: the text names {{{n}}}, which is not one of its params")));
                        }
                        used.push(n);
                    }
                    MessagePart::Text(text)
                }
                (None, Some(r), None) => {
                    let uri = self.string(r, "resource")?;
                    if !manifest.resources.iter().any(|res| res.uri == uri) {
                        return Err(self.fail(
                            r.line,
                            format!("{what}: resource {uri:?} is not declared in [[resources]]"),
                        ));
                    }
                    MessagePart::Resource(uri)
                }
                (None, None, Some(i)) => {
                    let file = self.string(i, "image")?;
                    let path = confine(
                        &manifest.server.roots.working_dir().join(&file),
                        manifest.server.roots.all(),
                        true,
                    )
                    .map_err(|why| self.fail(i.line, format!("{what}: image {file:?}: {why}")))?;
                    if !mime_for_path(&path).starts_with("image/") {
                        return Err(self.fail(
                            i.line,
                            format!(
                                "{what}: image {file:?} is not a PNG, JPEG, GIF, WebP or SVG file"
                            ),
                        ));
                    }
                    MessagePart::Image(path)
                }
                _ => {
                    return Err(self.fail(
                        item.line,
                        format!("{what}: each message has exactly one of text, resource or image"),
                    ))
                }
            };
            messages.push(PromptMessage { role, part });
        }
        for param in &params {
            if !used.contains(&param.name) {
                return Err(self.fail(
                    node.line,
                    format!(
                        "{what}: parameter {:?} is used in no message's text",
                        param.name
                    ),
                ));
            }
        }
        Ok(PromptDef {
            title: self.opt_string(node, "title", &what)?,
            description: self.opt_string(node, "description", &what)?,
            permissions: self.permissions(node, &what, &manifest.server, false)?,
            name,
            messages,
            params,
        })
    }
}
