//! `[[tools]]`: a tool's command, parameters, output, limits, confirmation and permissions.

use super::{place, Reader};
use crate::manifest::files::confine;
use crate::manifest::model::*;
use crate::manifest::template;
use crate::manifest::toml_tree::{Node, NodeValue};
use serde_json::{Map, Value};

impl Reader {
    pub(super) fn tool(&self, node: &Node, server: &ServerDef) -> Result<ToolDef, ManifestError> {
        self.keys(node, &TOOL_KEYS, "a tool")?;
        let name = self.required_string(node, "name", "a tool")?;
        let valid = !name.is_empty()
            && name.len() <= 128
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c));
        if !valid {
            return Err(self.fail(
                node.line_of("name"),
                format!("tool name {name:?} must be 1 to 128 letters, digits, '_', '.' or '-'"),
            ));
        }
        let what = format!("tool {name:?}");
        let description = self.required_string(node, "description", &what)?;
        let command_node = node
            .get("command")
            .ok_or_else(|| self.fail(node.line, format!("{what} needs a command")))?;
        let command = self.command(command_node, &what)?;
        self.program_first(&command, command_node.line, &what)?;
        let params = self.params(
            node.get("params"),
            &what,
            &["string", "integer", "number", "boolean", "path", "array"],
        )?;
        let stdin = self.opt_string(node, "stdin", &what)?;
        if let Some(s) = &stdin {
            match params.iter().find(|p| &p.name == s) {
                Some(p) if p.kind == ParamKind::String => {}
                Some(_) => {
                    return Err(self.fail(
                        node.line_of("stdin"),
                        format!("{what}: the stdin parameter {s:?} must be a string"),
                    ))
                }
                None => {
                    return Err(self.fail(
                        node.line_of("stdin"),
                        format!("{what}: stdin names {s:?}, which is not one of its params"),
                    ))
                }
            }
        }
        self.check_placeholders(
            &command,
            &params,
            stdin.as_deref(),
            command_node.line,
            &what,
        )?;
        self.check_code_arguments(&command, &params, command_node.line, &what)?;
        let annotations = match node.get("annotations") {
            None => Map::new(),
            Some(
                n @ Node {
                    value: NodeValue::Table(_),
                    ..
                },
            ) => match n.to_json() {
                Value::Object(map) => map,
                _ => Map::new(),
            },
            Some(other) => {
                return Err(self.fail(other.line, format!("{what}: annotations must be a table")))
            }
        };
        let ok_exit = match node.get("ok_exit") {
            None => vec![0],
            Some(Node {
                value: NodeValue::Array(items),
                line,
            }) => {
                let codes: Vec<i32> = items
                    .iter()
                    .map(|i| match i.value {
                        NodeValue::Int(c) if (0..=255).contains(&c) => Ok(c as i32),
                        _ => Err(self.fail(
                            i.line,
                            format!("{what}: ok_exit holds exit codes from 0 to 255"),
                        )),
                    })
                    .collect::<Result<_, _>>()?;
                if codes.is_empty() {
                    return Err(self.fail(
                        *line,
                        format!("{what}: ok_exit must list at least one code"),
                    ));
                }
                codes
            }
            Some(other) => {
                return Err(self.fail(
                    other.line,
                    format!("{what}: ok_exit must be an array of exit codes"),
                ))
            }
        };
        let output = match self.opt_string(node, "output", &what)?.as_deref() {
            None | Some("text") => OutputKind::Text,
            Some("json") => OutputKind::Json,
            Some("content") => OutputKind::Content,
            Some(mime) if is_mime(mime) => OutputKind::Mime(mime.to_string()),
            Some(other) => return Err(self.fail(node.line_of("output"), format!("{what}: output {other:?} is not text, json, content or a MIME type such as image/png"))),
        };
        let output_schema = match node.get("output_schema") {
            None => None,
            Some(n) if output != OutputKind::Json && output != OutputKind::Content => {
                return Err(self.fail(
                    n.line,
                    format!("{what}: output_schema applies to output = \"json\" or \"content\""),
                ))
            }
            Some(
                n @ Node {
                    value: NodeValue::Table(_),
                    ..
                },
            ) => Some(n.to_json()),
            Some(
                n @ Node {
                    value: NodeValue::Str(_),
                    ..
                },
            ) => {
                let text = self.string(n, "output_schema")?;
                match serde_json::from_str::<Value>(&text) {
                    Ok(v @ Value::Object(_)) => Some(v),
                    _ => {
                        return Err(self.fail(
                            n.line,
                            format!("{what}: output_schema must be a table or a JSON object"),
                        ))
                    }
                }
            }
            Some(other) => {
                return Err(self.fail(
                    other.line,
                    format!("{what}: output_schema must be a table or a JSON object"),
                ))
            }
        };
        let permissions = self.permissions(node, &what, server, true)?;
        let confirm = self.opt_string(node, "confirm", &what)?;
        if let Some(confirm) = &confirm {
            let line = node.line_of("confirm");
            self.text_params(confirm, &params, line, &format!("{what}'s confirm"))?;
        }
        let task = match node.get("task") {
            None => TaskSupport::Never,
            Some(Node {
                value: NodeValue::Bool(true),
                ..
            }) => TaskSupport::Required,
            Some(Node {
                value: NodeValue::Bool(false),
                ..
            }) => TaskSupport::Never,
            Some(n) if matches!(&n.value, NodeValue::Str(s) if s == "optional") => {
                TaskSupport::Optional
            }
            Some(other) => {
                return Err(self.fail(
                    other.line,
                    format!("{what}: task is true (always a task), \"optional\" or false"),
                ))
            }
        };
        let mut needs = Vec::new();
        if let Some(n) = node.get("needs") {
            let NodeValue::Array(items) = &n.value else {
                return Err(self.fail(
                    n.line,
                    format!("{what}: needs must be an array such as [\"sampling\"]"),
                ));
            };
            for item in items {
                let capability = self.string(item, "a capability")?;
                if !CLIENT_CAPABILITIES.contains(&capability.as_str()) {
                    return Err(self.fail(
                        item.line,
                        format!(
                            "{what}: needs {capability:?}, which is not one of {}",
                            CLIENT_CAPABILITIES.join(", ")
                        ),
                    ));
                }
                needs.push(capability);
            }
        }
        let read_only = crate::protocol::tools::Annotations::read(&annotations).read_only();
        if let (true, Some(writes)) = (read_only, node.get("writes")) {
            return Err(self.fail(
                writes.line,
                format!("{what} is read-only (readOnlyHint = true), so it takes no writes; drop one of them"),
            ));
        }
        let progress = self.opt_string(node, "progress", &what)?;
        if let Some(p) = &progress {
            match fancy_regex::Regex::new(p) {
                Ok(re) if re.captures_len() >= 2 => {}
                _ => return Err(self.fail(node.line_of("progress"), format!("{what}: progress must be a regular expression with a group for the amount done (and one for the total), such as '^(\\d+)/(\\d+)$'"))),
            }
        }
        Ok(ToolDef {
            title: self.opt_string(node, "title", &what)?,
            timeout: node
                .get("timeout")
                .map(|n| self.seconds(n, "timeout"))
                .transpose()?,
            name,
            description,
            command,
            annotations,
            ok_exit,
            output,
            output_schema,
            stdin,
            progress,
            params,
            permissions,
            confirm,
            needs,
            task,
            line: node.line,
        })
    }

    /// Checks that the `{param}`s of a text name parameters; returns their names.
    pub(super) fn text_params(
        &self,
        text: &str,
        params: &[Param],
        line: usize,
        what: &str,
    ) -> Result<Vec<String>, ManifestError> {
        let element = template::parse_element(text).map_err(|why| self.fail(line, why))?;
        let mut named = Vec::new();
        element.params(&mut named);
        let mut names = Vec::new();
        for (n, _) in named {
            if !params.iter().any(|p| p.name == n) {
                return Err(self.fail(
                    line,
                    format!("{what} names {{{n}}}, which is not one of its params"),
                ));
            }
            names.push(n);
        }
        Ok(names)
    }

    /// A tool's, resource's or template's `reads`, `writes` (only where `writes` is true),
    /// `exec` and `network`.
    pub(super) fn permissions(
        &self,
        node: &Node,
        what: &str,
        server: &ServerDef,
        writes: bool,
    ) -> Result<Permissions, ManifestError> {
        let list = |key: &str| -> Result<Vec<(String, usize)>, ManifestError> {
            match node.get(key) {
                None => Ok(Vec::new()),
                Some(Node {
                    value: NodeValue::Array(items),
                    ..
                }) => items
                    .iter()
                    .map(|i| Ok((self.string(i, &format!("{what}'s {key}"))?, i.line)))
                    .collect(),
                Some(other) => Err(self.fail(
                    other.line,
                    format!("{what}: {key} must be an array of strings"),
                )),
            }
        };
        let root = server.roots.working_dir();
        let mut permissions = Permissions::default();
        for (text, _) in list("reads")? {
            let path = place(&text, root);
            permissions
                .reads
                .push(std::fs::canonicalize(&path).unwrap_or(path));
        }
        if writes && node.get("writes").is_some() {
            let mut places = Vec::new();
            for (text, line) in list("writes")? {
                let path =
                    confine(&place(&text, root), server.roots.all(), false).map_err(|why| {
                        self.fail(
                            line,
                            format!(
                            "{what}: writes {text:?}: {why}; a tool writes only under the roots"
                        ),
                        )
                    })?;
                places.push(path);
            }
            permissions.writes = Some(places);
        }
        for (text, line) in list("exec")? {
            if text.is_empty() {
                return Err(self.fail(line, format!("{what}: exec names an empty program")));
            }
            permissions.exec.push(text);
        }
        if let Some(n) = node.get("network") {
            permissions.network = self.boolean(n, &format!("{what}'s network"))?;
        }
        Ok(permissions)
    }
}

fn is_mime(text: &str) -> bool {
    match text.split_once('/') {
        Some((a, b)) => {
            !a.is_empty()
                && !b.is_empty()
                && text
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "/.+-".contains(c))
        }
        None => false,
    }
}
