//! Loading a manifest: the TOML read line by line, every key checked against what its table
//! takes, and every rule of the format enforced, so a bad manifest is refused with its file,
//! line and reason and a loaded one needs no further checks.

use super::files::{confine, mime_for_path};
use super::listing::input_schema;
use super::model::*;
use super::policy;
use super::template::{self, Element};
use super::toml_tree::{self, Node, NodeValue};
use super::uri::uri_variables;
use crate::schema::validate;
use crate::schema::ToolSchema;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Reads a manifest file.
pub fn load(path: &Path) -> Result<Manifest, ManifestError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| ManifestError {
        file: shown.clone(),
        line: 1,
        reason: format!("cannot read it: {e}"),
    })?;
    parse(&text, path)
}

/// Parses a manifest's text; relative roots and files are relative to `path`'s directory.
pub fn parse(text: &str, path: &Path) -> Result<Manifest, ManifestError> {
    let file = path.display().to_string();
    let fail = |line: usize, reason: String| ManifestError {
        file: file.clone(),
        line,
        reason,
    };
    let tree = toml_tree::parse(text)
        .map_err(|(line, why)| fail(line, format!("not valid TOML: {why}")))?;
    let reader = Reader { file: file.clone() };
    reader.keys(
        &tree,
        &[
            "server",
            "tools",
            "resources",
            "resource_templates",
            "prompts",
        ],
        "the manifest",
    )?;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("ferry")
        .to_string();
    let server = reader.server(tree.get("server"), &dir, &stem)?;
    let mut manifest = Manifest {
        file: path.to_path_buf(),
        server,
        tools: Vec::new(),
        resources: Vec::new(),
        templates: Vec::new(),
        prompts: Vec::new(),
    };
    for node in reader.tables(tree.get("tools"), "tools")? {
        let tool = reader.tool(node, &manifest.server)?;
        if manifest.tools.iter().any(|t| t.name == tool.name) {
            return Err(fail(
                node.line,
                format!("a second tool named {:?}", tool.name),
            ));
        }
        manifest.tools.push(tool);
    }
    for node in reader.tables(tree.get("resources"), "resources")? {
        let resource = reader.resource(node, &manifest.server)?;
        if manifest.resources.iter().any(|r| r.uri == resource.uri) {
            return Err(fail(
                node.line,
                format!("a second resource {:?}", resource.uri),
            ));
        }
        manifest.resources.push(resource);
    }
    for node in reader.tables(tree.get("resource_templates"), "resource_templates")? {
        manifest
            .templates
            .push(reader.template(node, &manifest.server)?);
    }
    for node in reader.tables(tree.get("prompts"), "prompts")? {
        let prompt = reader.prompt(node, &manifest)?;
        if manifest.prompts.iter().any(|p| p.name == prompt.name) {
            return Err(fail(
                node.line,
                format!("a second prompt named {:?}", prompt.name),
            ));
        }
        manifest.prompts.push(prompt);
    }
    if manifest.tools.is_empty()
        && manifest.resources.is_empty()
        && manifest.templates.is_empty()
        && manifest.prompts.is_empty()
    {
        return Err(fail(
            1,
            "it declares no [[tools]], [[resources]], [[resource_templates]] or [[prompts]]".into(),
        ));
    }
    Ok(manifest)
}

/// Reads nodes, naming the file and line of anything wrong.
struct Reader {
    file: String,
}

impl Reader {
    fn fail(&self, line: usize, reason: impl Into<String>) -> ManifestError {
        ManifestError {
            file: self.file.clone(),
            line,
            reason: reason.into(),
        }
    }

    /// Refuses keys a table does not take (with the nearest known one).
    fn keys(&self, node: &Node, known: &[&str], what: &str) -> Result<(), ManifestError> {
        if !matches!(node.value, NodeValue::Table(_)) {
            return Err(self.fail(
                node.line,
                format!("{what} must be a table, not {}", node.kind()),
            ));
        }
        for (key, value) in node.entries() {
            if !known.contains(&key.as_str()) {
                let near = crate::words::closest(key, known.iter().copied())
                    .map(|k| format!(" (did you mean {k:?}?)"))
                    .unwrap_or_default();
                return Err(self.fail(
                    value.line,
                    format!(
                        "{what} has no key {key:?}{near}; it takes {}",
                        known.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    fn tables<'a>(
        &self,
        node: Option<&'a Node>,
        what: &str,
    ) -> Result<Vec<&'a Node>, ManifestError> {
        match node {
            None => Ok(Vec::new()),
            Some(Node {
                value: NodeValue::Array(items),
                ..
            }) => {
                for item in items {
                    if !matches!(item.value, NodeValue::Table(_)) {
                        return Err(self.fail(
                            item.line,
                            format!("each of {what} must be a table ([[{what}]])"),
                        ));
                    }
                }
                Ok(items.iter().collect())
            }
            Some(other) => Err(self.fail(
                other.line,
                format!("{what} must be written [[{what}]], an array of tables"),
            )),
        }
    }

    fn string(&self, node: &Node, what: &str) -> Result<String, ManifestError> {
        match &node.value {
            NodeValue::Str(s) if s.contains('\0') => {
                Err(self.fail(node.line, format!("{what} contains a NUL byte")))
            }
            NodeValue::Str(s) => Ok(s.clone()),
            _ => Err(self.fail(
                node.line,
                format!("{what} must be a string, not {}", node.kind()),
            )),
        }
    }

    fn opt_string(
        &self,
        table: &Node,
        key: &str,
        what: &str,
    ) -> Result<Option<String>, ManifestError> {
        table
            .get(key)
            .map(|n| self.string(n, &format!("{what}'s {key}")))
            .transpose()
    }

    fn required_string(
        &self,
        table: &Node,
        key: &str,
        what: &str,
    ) -> Result<String, ManifestError> {
        match table.get(key) {
            Some(node) => self.string(node, &format!("{what}'s {key}")),
            None => Err(self.fail(table.line, format!("{what} needs a {key}"))),
        }
    }

    fn number(&self, node: &Node, what: &str) -> Result<f64, ManifestError> {
        match node.value {
            NodeValue::Int(i) => Ok(i as f64),
            NodeValue::Float(f) if f.is_finite() => Ok(f),
            _ => Err(self.fail(
                node.line,
                format!("{what} must be a number, not {}", node.kind()),
            )),
        }
    }

    fn count(&self, node: &Node, what: &str) -> Result<u64, ManifestError> {
        match node.value {
            NodeValue::Int(i) if i >= 0 => Ok(i as u64),
            _ => Err(self.fail(
                node.line,
                format!("{what} must be a whole number of 0 or more"),
            )),
        }
    }

    fn boolean(&self, node: &Node, what: &str) -> Result<bool, ManifestError> {
        match node.value {
            NodeValue::Bool(b) => Ok(b),
            _ => Err(self.fail(
                node.line,
                format!("{what} must be true or false, not {}", node.kind()),
            )),
        }
    }

    fn seconds(&self, node: &Node, what: &str) -> Result<Duration, ManifestError> {
        let secs = self.number(node, what)?;
        if secs <= 0.0 || secs > crate::words::MAX_TIMEOUT_SECS {
            return Err(self.fail(
                node.line,
                format!("{what} must be a number of seconds above 0 and at most a week"),
            ));
        }
        Ok(Duration::from_secs_f64(secs))
    }

    fn server(
        &self,
        node: Option<&Node>,
        dir: &Path,
        stem: &str,
    ) -> Result<ServerDef, ManifestError> {
        let empty = Node {
            line: 1,
            value: NodeValue::Table(Vec::new()),
        };
        let node = node.unwrap_or(&empty);
        self.keys(node, &SERVER_KEYS, "[server]")?;
        let name = self
            .opt_string(node, "name", "[server]")?
            .unwrap_or_else(|| stem.to_string());
        let mut roots = Vec::new();
        match node.get("roots") {
            None => roots.push(canonical_root(dir).map_err(|why| self.fail(node.line, why))?),
            Some(Node {
                value: NodeValue::Array(items),
                line,
            }) => {
                if items.is_empty() {
                    return Err(self.fail(*line, "roots must name at least one directory"));
                }
                for item in items {
                    let text = self.string(item, "a root")?;
                    roots.push(
                        canonical_root(&dir.join(&text))
                            .map_err(|why| self.fail(item.line, why))?,
                    );
                }
            }
            Some(other) => {
                return Err(self.fail(other.line, "roots must be an array of directories"))
            }
        }
        let env = match node.get("env") {
            None => Vec::new(),
            Some(Node {
                value: NodeValue::Array(items),
                ..
            }) => items
                .iter()
                .map(|i| self.string(i, "an env glob"))
                .collect::<Result<_, _>>()?,
            Some(other) => {
                return Err(self.fail(other.line, "env must be an array of variable names (globs)"))
            }
        };
        let timeout = match node.get("timeout") {
            Some(n) => self.seconds(n, "timeout")?,
            None => DEFAULT_TIMEOUT,
        };
        let max_output = match node.get("max_output") {
            Some(n) => match self.count(n, "max_output")? {
                0 => return Err(self.fail(n.line, "max_output must be at least 1 byte")),
                bytes => bytes as usize,
            },
            None => DEFAULT_MAX_OUTPUT,
        };
        let concurrency = match node.get("concurrency") {
            Some(n) => match self.count(n, "concurrency")? {
                0 => return Err(self.fail(n.line, "concurrency must be at least 1")),
                c => c as usize,
            },
            None => DEFAULT_CONCURRENCY,
        };
        Ok(ServerDef {
            name,
            instructions: self.opt_string(node, "instructions", "[server]")?,
            roots,
            env,
            timeout,
            max_output,
            concurrency,
        })
    }

    /// A command template: strings and nested arrays (optional groups).
    fn command(&self, node: &Node, what: &str) -> Result<Vec<Element>, ManifestError> {
        let NodeValue::Array(items) = &node.value else {
            return Err(self.fail(
                node.line,
                format!("{what}'s command must be an array: [\"program\", \"arg\", \"{{param}}\"]"),
            ));
        };
        let mut elements = Vec::new();
        for item in items {
            match &item.value {
                NodeValue::Str(_) => {
                    let text = self.string(item, "a command element")?;
                    elements.push(
                        template::parse_element(&text).map_err(|why| self.fail(item.line, why))?,
                    );
                }
                NodeValue::Array(_) => {
                    let inner = self.command(item, what)?;
                    if inner.is_empty() {
                        return Err(self.fail(
                            item.line,
                            "an optional group must hold at least one element",
                        ));
                    }
                    elements.push(Element::Group(inner));
                }
                _ => {
                    return Err(self.fail(
                        item.line,
                        format!(
                            "command elements are strings or arrays (optional groups), not {}",
                            item.kind()
                        ),
                    ))
                }
            }
        }
        Ok(elements)
    }

    /// Checks that a command starts with a fixed program.
    fn program_first(
        &self,
        elements: &[Element],
        line: usize,
        what: &str,
    ) -> Result<(), ManifestError> {
        match elements.first() {
            Some(Element::Word(word)) if !word.is_empty() => Ok(()),
            Some(_) => Err(self.fail(
                line,
                format!(
                    "{what}'s command must start with a fixed program, not a parameter or group"
                ),
            )),
            None => Err(self.fail(line, format!("{what}'s command is empty"))),
        }
    }

    fn params(
        &self,
        node: Option<&Node>,
        what: &str,
        allow: &[&str],
    ) -> Result<Vec<Param>, ManifestError> {
        let Some(node) = node else {
            return Ok(Vec::new());
        };
        if !matches!(node.value, NodeValue::Table(_)) {
            return Err(self.fail(
                node.line,
                format!("{what}'s params must be a table of parameters"),
            ));
        }
        let params = node
            .entries()
            .iter()
            .map(|(name, param)| self.param(name, param, what, allow))
            .collect::<Result<Vec<Param>, ManifestError>>()?;
        if let Some(problem) = crate::protocol::tools::header_problem(&input_schema(&params)) {
            return Err(self.fail(node.line, format!("{what}'s params: header {problem}")));
        }
        Ok(params)
    }

    /// Refuses `header` on the parameters of what is not a tool: only a tool call carries
    /// `Mcp-Param` headers.
    fn no_headers(&self, node: &Node, params: &[Param], what: &str) -> Result<(), ManifestError> {
        match params.iter().find(|p| p.header.is_some()) {
            Some(p) => Err(self.fail(
                node.get("params").map_or(node.line, |n| n.line),
                format!(
                    "{what}'s parameter {:?}: header applies to tool parameters only",
                    p.name
                ),
            )),
            None => Ok(()),
        }
    }

    fn param(
        &self,
        name: &str,
        node: &Node,
        what: &str,
        allow: &[&str],
    ) -> Result<Param, ManifestError> {
        let here = format!("{what}'s parameter {name:?}");
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            || name.starts_with(|c: char| c.is_ascii_digit() || c == '-')
        {
            return Err(self.fail(
                node.line,
                format!("{here}: a parameter name is letters, digits, '_' and '-'"),
            ));
        }
        self.keys(node, &PARAM_KEYS, &here)?;
        let type_node = node.get("type").ok_or_else(|| {
            self.fail(
                node.line,
                format!("{here} needs a type ({})", allow.join(", ")),
            )
        })?;
        let type_name = self.string(type_node, "type")?;
        if !allow.contains(&type_name.as_str()) {
            return Err(self.fail(
                type_node.line,
                format!(
                    "{here}: type {type_name:?} is not one of {}",
                    allow.join(", ")
                ),
            ));
        }
        let kind = match type_name.as_str() {
            "string" => ParamKind::String,
            "integer" => ParamKind::Integer,
            "number" => ParamKind::Number,
            "boolean" => ParamKind::Boolean,
            "path" => ParamKind::Path,
            _ => {
                let items = node.get("items").ok_or_else(|| {
                    self.fail(node.line, format!("{here}: an array needs items (string, integer, number, path, or an array of allowed values)"))
                })?;
                ParamKind::Array(match &items.value {
                    NodeValue::Str(s) => match s.as_str() {
                        "string" => ItemKind::String,
                        "integer" => ItemKind::Integer,
                        "number" => ItemKind::Number,
                        "path" => ItemKind::Path,
                        other => return Err(self.fail(items.line, format!("{here}: items {other:?} is not string, integer, number, path or an array of values"))),
                    },
                    NodeValue::Array(values) if !values.is_empty() => ItemKind::Enum(values.iter().map(Node::to_json).collect()),
                    _ => return Err(self.fail(items.line, format!("{here}: items must be a type name or a non-empty array of allowed values"))),
                })
            }
        };
        if node.get("items").is_some() && !matches!(kind, ParamKind::Array(_)) {
            return Err(self.fail(node.line, format!("{here}: items applies to arrays only")));
        }
        let only = |key: &str, ok: bool, kinds: &str| -> Result<(), ManifestError> {
            match node.get(key) {
                Some(n) if !ok => {
                    Err(self.fail(n.line, format!("{here}: {key} applies to {kinds} only")))
                }
                _ => Ok(()),
            }
        };
        let stringy = matches!(kind, ParamKind::String | ParamKind::Path);
        let numeric = matches!(kind, ParamKind::Integer | ParamKind::Number);
        let array = matches!(kind, ParamKind::Array(_));
        only("pattern", stringy, "strings")?;
        only("min_length", stringy, "strings")?;
        only("max_length", stringy, "strings")?;
        only("enum", stringy || numeric, "strings and numbers")?;
        only("minimum", numeric, "numbers")?;
        only("maximum", numeric, "numbers")?;
        only("min_items", array, "arrays")?;
        only("max_items", array, "arrays")?;
        only("flag", kind == ParamKind::Boolean, "booleans")?;
        only(
            "exists",
            kind == ParamKind::Path || matches!(kind, ParamKind::Array(ItemKind::Path)),
            "paths",
        )?;
        let description = self.opt_string(node, "description", &here)?;
        let default = node.get("default").map(Node::to_json);
        let required = match node.get("required") {
            Some(n) => self.boolean(n, "required")?,
            None => default.is_none(),
        };
        let enum_values = match node.get("enum") {
            None => Vec::new(),
            Some(Node {
                value: NodeValue::Array(values),
                line,
            }) => {
                if values.is_empty() {
                    return Err(
                        self.fail(*line, format!("{here}: enum must list at least one value"))
                    );
                }
                values.iter().map(Node::to_json).collect()
            }
            Some(other) => {
                return Err(self.fail(
                    other.line,
                    format!("{here}: enum must be an array of values"),
                ))
            }
        };
        let pattern = self.opt_string(node, "pattern", &here)?;
        if let Some(p) = &pattern {
            if fancy_regex::Regex::new(p).is_err() {
                return Err(self.fail(
                    node.get("pattern").map_or(node.line, |n| n.line),
                    format!("{here}: pattern {p:?} is not a valid regular expression"),
                ));
            }
        }
        let flag = self.opt_string(node, "flag", &here)?;
        if let Some(f) = &flag {
            if !f.starts_with('-') || f.contains(char::is_whitespace) {
                return Err(self.fail(
                    node.line,
                    format!("{here}: flag {f:?} must be one option word such as --stat"),
                ));
            }
        }
        let header = self.opt_string(node, "header", &here)?;
        if let Some(h) = &header {
            let tchar = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
            if h.is_empty() || !h.chars().all(tchar) {
                return Err(self.fail(
                    node.get("header").map_or(node.line, |n| n.line),
                    format!(
                        "{here}: header {h:?} must be one HTTP header name word such as Region"
                    ),
                ));
            }
            if !matches!(
                kind,
                ParamKind::String | ParamKind::Path | ParamKind::Integer | ParamKind::Boolean
            ) {
                return Err(self.fail(
                    node.get("header").map_or(node.line, |n| n.line),
                    format!("{here}: header applies to strings, paths, integers and booleans only"),
                ));
            }
        }
        let param = Param {
            name: name.to_string(),
            kind,
            description,
            default,
            required,
            enum_values,
            pattern,
            min_length: node
                .get("min_length")
                .map(|n| self.count(n, "min_length"))
                .transpose()?,
            max_length: node
                .get("max_length")
                .map(|n| self.count(n, "max_length"))
                .transpose()?,
            minimum: node
                .get("minimum")
                .map(|n| self.number(n, "minimum"))
                .transpose()?,
            maximum: node
                .get("maximum")
                .map(|n| self.number(n, "maximum"))
                .transpose()?,
            min_items: node
                .get("min_items")
                .map(|n| self.count(n, "min_items"))
                .transpose()?,
            max_items: node
                .get("max_items")
                .map(|n| self.count(n, "max_items"))
                .transpose()?,
            flag,
            allow_dash: node
                .get("allow_dash")
                .map(|n| self.boolean(n, "allow_dash"))
                .transpose()?
                .unwrap_or(false),
            exists: node
                .get("exists")
                .map(|n| self.boolean(n, "exists"))
                .transpose()?
                .unwrap_or(true),
            header,
        };
        // The default must itself be a valid value.
        if let Some(default) = &param.default {
            let schema = ToolSchema::from_input_schema(&input_schema(std::slice::from_ref(&param)));
            if let Some(prop) = schema.prop(&param.name) {
                if let Err(v) = validate::check_value(&schema, &prop.shape, default, &param.name, 0)
                {
                    return Err(self.fail(
                        node.get("default").map_or(node.line, |n| n.line),
                        format!("{here}: the default does not fit: {}", v.message()),
                    ));
                }
            }
        }
        Ok(param)
    }

    fn tool(&self, node: &Node, server: &ServerDef) -> Result<ToolDef, ManifestError> {
        self.keys(node, &TOOL_KEYS, "a tool")?;
        let name = self.required_string(node, "name", "a tool")?;
        let valid = !name.is_empty()
            && name.len() <= 128
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c));
        if !valid {
            return Err(self.fail(
                node.get("name").map_or(node.line, |n| n.line),
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
                        node.get("stdin").map_or(node.line, |n| n.line),
                        format!("{what}: the stdin parameter {s:?} must be a string"),
                    ))
                }
                None => {
                    return Err(self.fail(
                        node.get("stdin").map_or(node.line, |n| n.line),
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
        self.check_code_arguments(&command, command_node.line, &what)?;
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
            Some(other) => return Err(self.fail(node.get("output").map_or(node.line, |n| n.line), format!("{what}: output {other:?} is not text, json, content or a MIME type such as image/png"))),
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
            let line = node.get("confirm").map_or(node.line, |n| n.line);
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
        let read_only = annotations.get("readOnlyHint") == Some(&Value::Bool(true));
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
                _ => return Err(self.fail(node.get("progress").map_or(node.line, |n| n.line), format!("{what}: progress must be a regular expression with a group for the amount done (and one for the total), such as '^(\\d+)/(\\d+)$'"))),
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
    fn text_params(
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
    fn permissions(
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
        let root = &server.roots[0];
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
                let path = confine(&place(&text, root), &server.roots, false).map_err(|why| {
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

    /// In a command whose program runs its arguments as code (`sh -c`, `python -c`, `node -e`,
    /// `awk`, `env`, `xargs`...), a value may only come after the script, where the program
    /// reads it as data (`$1`, `sys.argv`): a placeholder in the script, or before it (where it
    /// could become the script), is refused.
    fn check_code_arguments(
        &self,
        command: &[Element],
        line: usize,
        what: &str,
    ) -> Result<(), ManifestError> {
        let Some(Element::Word(program)) = command.first() else {
            return Ok(());
        };
        if !policy::runs_arguments(program) {
            return Ok(());
        }
        let mut flat = Vec::new();
        flatten(&command[1..], &mut flat);
        let is_option =
            |e: &Element| matches!(e, Element::Word(w) if w.starts_with('-') && w.len() > 1);
        // The script: what follows the first script flag, else the first operand.
        let flagged = flat
            .iter()
            .position(|e| matches!(e, Element::Word(w) if policy::is_script_flag(w)));
        let script = match flagged {
            Some(at) => flat[at + 1..]
                .iter()
                .position(|e| !is_option(e))
                .map(|i| at + 1 + i),
            None => flat.iter().position(|e| !is_option(e)),
        };
        let Some(script) = script else {
            return Ok(());
        };
        if let Some(param) = flat[..=script].iter().find_map(|e| named_param(e)) {
            return Err(self.fail(
                line,
                format!(
                    "{what}: {{{param}}} is in or before the script {} runs, so a model's value could become code; pass values after the script, as data: {}",
                    policy::program_name(program),
                    policy::safe_form(program)
                ),
            ));
        }
        Ok(())
    }

    /// Every placeholder names a parameter, and every parameter is used.
    fn check_placeholders(
        &self,
        command: &[Element],
        params: &[Param],
        stdin: Option<&str>,
        line: usize,
        what: &str,
    ) -> Result<(), ManifestError> {
        let mut named = Vec::new();
        for element in command {
            element.params(&mut named);
        }
        for (name, spread) in &named {
            let Some(param) = params.iter().find(|p| &p.name == name) else {
                return Err(self.fail(
                    line,
                    format!("{what}: the command names {{{name}}}, which is not one of its params"),
                ));
            };
            let is_array = matches!(param.kind, ParamKind::Array(_));
            if *spread && !is_array {
                return Err(self.fail(
                    line,
                    format!(
                        "{what}: {{{name}*}} spreads an array, but {name} is a {}",
                        param.kind.name()
                    ),
                ));
            }
            if !*spread && is_array {
                return Err(self.fail(line, format!("{what}: {name} is an array; write \"{{{name}*}}\" for one element per item")));
            }
        }
        for param in params {
            let used =
                named.iter().any(|(n, _)| *n == param.name) || stdin == Some(param.name.as_str());
            if !used {
                return Err(self.fail(
                    line,
                    format!(
                        "{what}: parameter {:?} is used neither in the command nor as stdin",
                        param.name
                    ),
                ));
            }
        }
        Ok(())
    }

    fn resource(&self, node: &Node, server: &ServerDef) -> Result<ResourceDef, ManifestError> {
        self.keys(
            node,
            &[
                "uri",
                "name",
                "title",
                "description",
                "mime_type",
                "file",
                "command",
                "reads",
                "exec",
                "network",
            ],
            "a resource",
        )?;
        let uri = self.required_string(node, "uri", "a resource")?;
        if !uri.contains(':') {
            return Err(self.fail(
                node.get("uri").map_or(node.line, |n| n.line),
                format!("resource uri {uri:?} needs a scheme, such as repo://readme"),
            ));
        }
        let what = format!("resource {uri:?}");
        let source = match (node.get("file"), node.get("command")) {
            (Some(f), None) => {
                let file = self.string(f, "file")?;
                let root = &server.roots[0];
                let path = confine(&root.join(&file), &server.roots, true)
                    .map_err(|why| self.fail(f.line, format!("{what}: file {file:?}: {why}")))?;
                ResourceSource::File(path)
            }
            (None, Some(c)) => {
                let command = self.command(c, &what)?;
                self.program_first(&command, c.line, &what)?;
                let mut named = Vec::new();
                command.iter().for_each(|e| e.params(&mut named));
                if let Some((name, _)) = named.first() {
                    return Err(self.fail(c.line, format!("{what}: a resource's command takes no parameters ({{{name}}}); use a resource template")));
                }
                ResourceSource::Command(command, self.permissions(node, &what, server, false)?)
            }
            _ => {
                return Err(self.fail(
                    node.line,
                    format!("{what} needs exactly one of file or command"),
                ))
            }
        };
        Ok(ResourceDef {
            name: self
                .opt_string(node, "name", &what)?
                .unwrap_or_else(|| uri.clone()),
            title: self.opt_string(node, "title", &what)?,
            description: self.opt_string(node, "description", &what)?,
            mime_type: self.opt_string(node, "mime_type", &what)?,
            uri,
            source,
        })
    }

    fn template(&self, node: &Node, server: &ServerDef) -> Result<TemplateDef, ManifestError> {
        self.keys(
            node,
            &[
                "uri_template",
                "name",
                "title",
                "description",
                "mime_type",
                "command",
                "params",
                "reads",
                "exec",
                "network",
            ],
            "a resource template",
        )?;
        let uri_template = self.required_string(node, "uri_template", "a resource template")?;
        let what = format!("resource template {uri_template:?}");
        let command_node = node
            .get("command")
            .ok_or_else(|| self.fail(node.line, format!("{what} needs a command")))?;
        let command = self.command(command_node, &what)?;
        self.program_first(&command, command_node.line, &what)?;
        let mut params = self.params(
            node.get("params"),
            &what,
            &["string", "integer", "number", "path"],
        )?;
        self.no_headers(node, &params, &what)?;
        // Placeholders of the URI template are parameters too (strings unless declared).
        for name in uri_variables(&uri_template)
            .map_err(|why| self.fail(node.line, format!("{what}: {why}")))?
        {
            match params.iter_mut().find(|p| p.name == name) {
                Some(p) => p.required = true,
                None => params.push(string_param(&name)),
            }
        }
        for param in &params {
            if !uri_variables(&uri_template)
                .unwrap_or_default()
                .contains(&param.name)
            {
                return Err(self.fail(
                    node.line,
                    format!(
                        "{what}: parameter {:?} is not in the URI template",
                        param.name
                    ),
                ));
            }
        }
        self.check_placeholders(&command, &params, None, command_node.line, &what)?;
        self.check_code_arguments(&command, command_node.line, &what)?;
        Ok(TemplateDef {
            name: self.required_string(node, "name", &what)?,
            title: self.opt_string(node, "title", &what)?,
            description: self.opt_string(node, "description", &what)?,
            mime_type: self.opt_string(node, "mime_type", &what)?,
            permissions: self.permissions(node, &what, server, false)?,
            uri_template,
            command,
            params,
        })
    }

    fn prompt(&self, node: &Node, manifest: &Manifest) -> Result<PromptDef, ManifestError> {
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
                self.check_code_arguments(&command, c.line, &what)?;
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
                        &manifest.server.roots[0].join(&file),
                        &manifest.server.roots,
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

/// A string parameter as a URI template variable.
fn string_param(name: &str) -> Param {
    Param::new(name, ParamKind::String)
}

/// A command's elements with its optional groups opened, in order.
fn flatten<'a>(elements: &'a [Element], out: &mut Vec<&'a Element>) {
    for element in elements {
        match element {
            Element::Group(items) => flatten(items, out),
            other => out.push(other),
        }
    }
}

/// The first parameter an element names, if any.
fn named_param(element: &Element) -> Option<String> {
    let mut named = Vec::new();
    element.params(&mut named);
    named.into_iter().next().map(|(n, _)| n)
}

/// A place a manifest names: `~` and `~/...` under the home directory, an absolute path as it
/// is, anything else relative to `root`.
fn place(text: &str, root: &Path) -> PathBuf {
    let home = crate::paths::home_dir();
    match text {
        "~" => home,
        _ => match text.strip_prefix("~/") {
            Some(rest) => home.join(rest),
            None => root.join(text),
        },
    }
}

fn canonical_root(dir: &Path) -> Result<PathBuf, String> {
    let path = std::fs::canonicalize(dir)
        .map_err(|e| format!("root {} cannot be used: {e}", dir.display()))?;
    if !path.is_dir() {
        return Err(format!("root {} is not a directory", dir.display()));
    }
    Ok(path)
}
