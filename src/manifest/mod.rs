//! The serve manifest (DESIGN.md section 4): a TOML file that says which commands `ferry
//! serve` exposes as MCP tools, resources, resource templates and prompts, and with what
//! parameters. It compiles into the schema model (each tool's `inputSchema`, draft 2020-12,
//! `additionalProperties: false`), so listing, help, the meter and the checks serve applies
//! all agree. A bad manifest is refused with its file, line and reason.
//!
//! This module describes; it runs no tool (`serve` executes, `cli` meters). `template` is the
//! argv template, `toml_tree` the line-aware TOML reader, `quick` the no-manifest mode,
//! `policy` the one table of programs that run code, `help` reads a CLI's own `--help` (the
//! one place here that starts a program, with help arguments only), and `draft` drafts a
//! manifest from it.

pub mod draft;
pub mod help;
pub mod policy;
pub mod quick;
pub mod template;
pub mod toml_tree;

use crate::protocol::tools::Tool;
use crate::schema::validate;
use crate::schema::ToolSchema;
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;
use template::{Element, ParamView};
use toml_tree::{Node, NodeValue};

/// The keys the `[server]` table takes.
pub const SERVER_KEYS: [&str; 7] = [
    "name",
    "instructions",
    "roots",
    "env",
    "timeout",
    "max_output",
    "concurrency",
];
/// The keys a `[[tools]]` table takes.
pub const TOOL_KEYS: [&str; 19] = [
    "name",
    "title",
    "description",
    "command",
    "annotations",
    "timeout",
    "ok_exit",
    "output",
    "output_schema",
    "stdin",
    "progress",
    "params",
    "reads",
    "writes",
    "exec",
    "network",
    "confirm",
    "needs",
    "task",
];
/// The client capabilities a tool may say it needs (`needs = [...]`).
pub const CLIENT_CAPABILITIES: [&str; 3] = ["elicitation", "sampling", "roots"];

/// The keys a parameter table takes.
pub const PARAM_KEYS: [&str; 17] = [
    "type",
    "description",
    "default",
    "required",
    "enum",
    "pattern",
    "min_length",
    "max_length",
    "minimum",
    "maximum",
    "min_items",
    "max_items",
    "items",
    "flag",
    "allow_dash",
    "exists",
    "header",
];

/// Environment variables every command gets (besides the manifest's own globs).
pub const BASE_ENV: [&str; 5] = ["PATH", "HOME", "LANG", "LC_*", "TZ"];
/// Defaults of the `[server]` table.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
pub const DEFAULT_MAX_OUTPUT: usize = 1024 * 1024;
pub const DEFAULT_CONCURRENCY: usize = 8;

/// A manifest that could not be loaded: where, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct ManifestError {
    pub file: String,
    pub line: usize,
    pub reason: String,
}

impl ManifestError {
    /// As ferry's usage error (exit 2).
    pub fn into_error(self) -> crate::Error {
        crate::Error::usage(format!("{}:{}: {}", self.file, self.line, self.reason)).with_hint(
            format!("fix line {} of {} and start again", self.line, self.file),
        )
    }
}

/// The kinds a parameter can have.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamKind {
    String,
    Integer,
    Number,
    Boolean,
    Path,
    Array(ItemKind),
}

/// The kinds of an array's items.
#[derive(Debug, Clone, PartialEq)]
pub enum ItemKind {
    String,
    Integer,
    Number,
    Path,
    Enum(Vec<Value>),
}

/// One parameter of a tool, resource template or prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    pub name: String,
    pub kind: ParamKind,
    pub description: Option<String>,
    pub default: Option<Value>,
    pub required: bool,
    pub enum_values: Vec<Value>,
    pub pattern: Option<String>,
    pub min_length: Option<u64>,
    pub max_length: Option<u64>,
    pub minimum: Option<f64>,
    pub maximum: Option<f64>,
    pub min_items: Option<u64>,
    pub max_items: Option<u64>,
    /// The flag a boolean renders as when true.
    pub flag: Option<String>,
    pub allow_dash: bool,
    /// Mirrored into an `Mcp-Param-NAME` HTTP header (`x-mcp-header`), so a gateway can route
    /// on it; ferry serve checks the header against the body.
    pub header: Option<String>,
    /// A path must exist unless this is false.
    pub exists: bool,
}

/// What a tool's stdout becomes.
#[derive(Debug, Clone, PartialEq)]
pub enum OutputKind {
    Text,
    /// Parsed into `structuredContent`, the text kept.
    Json,
    /// MCP content JSON: an array of blocks, or an object with `content` (and
    /// `structuredContent`), checked before it is passed on.
    Content,
    /// Binary stdout as an image, audio or blob of this MIME type.
    Mime(String),
}

/// Whether a tool's calls run as MCP tasks (the tasks extension): a call that outlives a
/// request answers with a task the client polls.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum TaskSupport {
    /// Never: every call answers in its request.
    #[default]
    Never,
    /// As a task for clients that declared the extension, in its request for others.
    Optional,
    /// Only as a task: a client without the extension is refused.
    Required,
}

impl TaskSupport {
    /// The tool definition's `execution.taskSupport`, when it has one.
    pub fn name(self) -> Option<&'static str> {
        match self {
            TaskSupport::Never => None,
            TaskSupport::Optional => Some("optional"),
            TaskSupport::Required => Some("required"),
        }
    }
}

/// What a command may touch beyond what every command gets (DESIGN.md section 4,
/// "Confinement"): the kernel sandbox of `serve` enforces it. Paths are absolute: `~/` is the
/// home directory, a relative path is relative to the first root.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Permissions {
    /// More places to read (files or directories).
    pub reads: Vec<PathBuf>,
    /// Where the command may write, under the roots; `None`: the roots, unless the tool is
    /// read-only (`readOnlyHint = true`), which writes nothing.
    pub writes: Option<Vec<PathBuf>>,
    /// More programs it may run: names (found on PATH when serving starts) or paths.
    pub exec: Vec<String>,
    /// Whether it may reach the network.
    pub network: bool,
}

/// One tool.
#[derive(Debug, Clone)]
pub struct ToolDef {
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    pub command: Vec<Element>,
    pub annotations: Map<String, Value>,
    pub timeout: Option<Duration>,
    pub ok_exit: Vec<i32>,
    pub output: OutputKind,
    pub output_schema: Option<Value>,
    pub stdin: Option<String>,
    /// A regex whose first group is the progress done so far (and second, if any, the total).
    pub progress: Option<String>,
    pub params: Vec<Param>,
    pub permissions: Permissions,
    /// Asked of the person before the command runs (`{param}` filled in); no, or a client
    /// that cannot ask, runs nothing.
    pub confirm: Option<String>,
    /// The client capabilities the tool needs; a client without one is refused.
    pub needs: Vec<String>,
    /// Whether its calls run as tasks (`task = true | "optional"`).
    pub task: TaskSupport,
    pub line: usize,
}

impl ToolDef {
    /// Whether the tool says it changes nothing (`readOnlyHint = true`).
    pub fn read_only(&self) -> bool {
        self.annotations.get("readOnlyHint") == Some(&Value::Bool(true))
    }
}

/// Where a resource's content comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum ResourceSource {
    /// A file under a root.
    File(PathBuf),
    /// A command's stdout, run with these permissions (never writes).
    Command(Vec<Element>, Permissions),
}

/// One static resource.
#[derive(Debug, Clone)]
pub struct ResourceDef {
    pub uri: String,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub mime_type: Option<String>,
    pub source: ResourceSource,
}

/// One resource template: a URI template whose placeholders are parameters.
#[derive(Debug, Clone)]
pub struct TemplateDef {
    pub uri_template: String,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub mime_type: Option<String>,
    pub command: Vec<Element>,
    pub params: Vec<Param>,
    /// What its command may touch (never writes).
    pub permissions: Permissions,
}

/// One message of a prompt.
#[derive(Debug, Clone, PartialEq)]
pub enum MessagePart {
    Text(String),
    /// A command's output, as text (run with the prompt's permissions; it may ask the client).
    Command(Vec<Element>),
    /// The URI of a declared resource, embedded.
    Resource(String),
    /// A file under a root, by its MIME type.
    Image(PathBuf),
}

/// One prompt message.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptMessage {
    pub role: String,
    pub part: MessagePart,
}

/// One prompt.
#[derive(Debug, Clone)]
pub struct PromptDef {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub messages: Vec<PromptMessage>,
    pub params: Vec<Param>,
    /// What its messages' commands may touch (never writes).
    pub permissions: Permissions,
}

/// The `[server]` table.
#[derive(Debug, Clone)]
pub struct ServerDef {
    pub name: String,
    pub instructions: Option<String>,
    /// Canonical directories path parameters may point into; the first is the working
    /// directory.
    pub roots: Vec<PathBuf>,
    /// Environment variables passed through besides `BASE_ENV` (globs).
    pub env: Vec<String>,
    pub timeout: Duration,
    pub max_output: usize,
    pub concurrency: usize,
}

/// A loaded manifest.
#[derive(Debug, Clone)]
pub struct Manifest {
    pub file: PathBuf,
    pub server: ServerDef,
    pub tools: Vec<ToolDef>,
    pub resources: Vec<ResourceDef>,
    pub templates: Vec<TemplateDef>,
    pub prompts: Vec<PromptDef>,
}

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
                        kind_name(&param.kind)
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

fn kind_name(kind: &ParamKind) -> &'static str {
    match kind {
        ParamKind::String => "string",
        ParamKind::Integer => "integer",
        ParamKind::Number => "number",
        ParamKind::Boolean => "boolean",
        ParamKind::Path => "path",
        ParamKind::Array(_) => "array",
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

impl Param {
    /// A required parameter of a kind, with nothing else said about it.
    pub fn new(name: &str, kind: ParamKind) -> Param {
        Param {
            name: name.to_string(),
            kind,
            description: None,
            default: None,
            required: true,
            enum_values: Vec::new(),
            pattern: None,
            min_length: None,
            max_length: None,
            minimum: None,
            maximum: None,
            min_items: None,
            max_items: None,
            flag: None,
            allow_dash: false,
            exists: true,
            header: None,
        }
    }
}

/// A string parameter as a URI template variable.
fn string_param(name: &str) -> Param {
    Param::new(name, ParamKind::String)
}

/// The variables of a URI template (`repo://commit/{sha}` → `sha`): simple `{name}` forms.
pub fn uri_variables(template: &str) -> Result<Vec<String>, String> {
    let mut names = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        let after = &rest[start + 1..];
        let end = after.find('}').ok_or("a '{' with no '}'")?;
        let name = &after[..end];
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!(
                "{{{name}}} is not a simple variable (letters, digits, '_')"
            ));
        }
        names.push(name.to_string());
        rest = &after[end + 1..];
    }
    Ok(names)
}

/// Matches a URI against a template; the values of its variables when it matches, decoded.
/// A value never holds a control character, nor a `/` (percent-encoded or not) unless
/// `path_like(name)` says the variable is a path (which is then confined to the roots like
/// any path): `..%2F..` cannot climb out of a plain value's place.
pub fn match_uri(
    template: &str,
    uri: &str,
    path_like: impl Fn(&str) -> bool,
) -> Option<Map<String, Value>> {
    let mut values = Map::new();
    let mut rest_t = template;
    let mut rest_u = uri;
    loop {
        match rest_t.find('{') {
            None => return (rest_t == rest_u).then_some(values),
            Some(start) => {
                let literal = &rest_t[..start];
                rest_u = rest_u.strip_prefix(literal)?;
                let after = &rest_t[start + 1..];
                let end = after.find('}')?;
                let name = &after[..end];
                rest_t = &after[end + 1..];
                // The value runs to the next literal character of the template (or the end).
                let stop = rest_t.chars().next();
                let len = match stop {
                    Some(c) => rest_u.find(c)?,
                    None => rest_u.len(),
                };
                // Checked once decoded: `%2F` is a slash too, and `..%2F..` would climb.
                let value = percent_decode(&rest_u[..len])?;
                let slash = value.contains('/') && !path_like(name);
                if value.is_empty() || slash || value.contains(char::is_control) {
                    return None;
                }
                values.insert(name.to_string(), Value::String(value));
                rest_u = &rest_u[len..];
            }
        }
    }
}

fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
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

/// Resolves a path and accepts it only inside a root, by whole components, with symlinks
/// resolved; a path that need not exist is resolved through its parent.
pub fn confine(path: &Path, roots: &[PathBuf], must_exist: bool) -> Result<PathBuf, String> {
    let resolved = match std::fs::canonicalize(path) {
        Ok(p) => p,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !must_exist => {
            let name = path.file_name().ok_or("it names no file")?;
            if name == ".." || name == "." {
                return Err("it names no file".into());
            }
            // A dangling symlink does not resolve either, but writing to it writes where it
            // points: only a name that is truly free may be new.
            if std::fs::symlink_metadata(path).is_ok() {
                return Err("it is a symbolic link to nothing".into());
            }
            let parent = path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            std::fs::canonicalize(parent)
                .map_err(|_| "its directory does not exist".to_string())?
                .join(name)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err("it does not exist".into())
        }
        Err(e) => return Err(e.to_string()),
    };
    if roots.iter().any(|root| resolved.starts_with(root)) {
        Ok(resolved)
    } else {
        Err("it is outside the served roots".into())
    }
}

/// Reads a file as it is now, if it leads inside a root and not into a `hidden` place: the
/// check is made on the opened file (its real path, as the kernel knows it), so a file
/// swapped for a link since it was checked is refused; only a regular file of at most
/// `limit` bytes is read.
pub fn read_confined(
    path: &Path,
    roots: &[PathBuf],
    hidden: &[PathBuf],
    limit: usize,
) -> Result<Vec<u8>, String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        // A FIFO put in the file's place must not hang the server.
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| e.to_string())?;
    use std::os::fd::AsRawFd;
    let real = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()))
        .map_err(|e| format!("cannot tell where it leads: {e}"))?;
    if !roots.iter().any(|root| real.starts_with(root)) {
        return Err("it leads outside the served roots".into());
    }
    if hidden.iter().any(|h| real.starts_with(h)) {
        return Err("it leads into ferry's own files, which are never served".into());
    }
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("it is not a regular file".into());
    }
    if meta.len() as usize > limit {
        return Err(format!("it is over max_output ({limit} bytes)"));
    }
    let mut bytes = Vec::new();
    file.take(limit as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() > limit {
        return Err(format!("it is over max_output ({limit} bytes)"));
    }
    Ok(bytes)
}

/// The MIME type of a file, by its extension.
pub fn mime_for_path(path: &Path) -> &'static str {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("webp") => "image/webp",
        Some("svg") => "image/svg+xml",
        Some("wav") => "audio/wav",
        Some("mp3") => "audio/mpeg",
        Some("md" | "markdown") => "text/markdown",
        Some("txt" | "text" | "log") => "text/plain",
        Some("json") => "application/json",
        Some("toml") => "application/toml",
        Some("html" | "htm") => "text/html",
        Some("pdf") => "application/pdf",
        _ => "application/octet-stream",
    }
}

/// One parameter's JSON Schema.
fn param_schema(param: &Param) -> Value {
    let mut schema = match &param.kind {
        ParamKind::String => json!({"type": "string"}),
        ParamKind::Integer => json!({"type": "integer"}),
        ParamKind::Number => json!({"type": "number"}),
        ParamKind::Boolean => json!({"type": "boolean"}),
        ParamKind::Path => json!({"type": "string", "format": "path"}),
        ParamKind::Array(items) => {
            let items = match items {
                ItemKind::String => json!({"type": "string"}),
                ItemKind::Integer => json!({"type": "integer"}),
                ItemKind::Number => json!({"type": "number"}),
                ItemKind::Path => json!({"type": "string", "format": "path"}),
                ItemKind::Enum(values) => json!({"enum": values}),
            };
            json!({"type": "array", "items": items})
        }
    };
    let obj = schema.as_object_mut().expect("a schema object");
    if let Some(d) = &param.description {
        obj.insert("description".into(), json!(d));
    }
    if !param.enum_values.is_empty() {
        obj.insert("enum".into(), json!(param.enum_values));
    }
    let mut put = |key: &str, value: Option<Value>| {
        if let Some(v) = value {
            obj.insert(key.into(), v);
        }
    };
    put("pattern", param.pattern.as_ref().map(|p| json!(p)));
    put("minLength", param.min_length.map(|n| json!(n)));
    put("maxLength", param.max_length.map(|n| json!(n)));
    put("minimum", param.minimum.map(number));
    put("maximum", param.maximum.map(number));
    put("minItems", param.min_items.map(|n| json!(n)));
    put("maxItems", param.max_items.map(|n| json!(n)));
    put("default", param.default.clone());
    put("x-mcp-header", param.header.as_ref().map(|h| json!(h)));
    schema
}

/// A whole number as an integer in JSON, so `minimum = 1` reads `1`, not `1.0`.
fn number(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        json!(n as i64)
    } else {
        json!(n)
    }
}

/// The `inputSchema` of a parameter list (draft 2020-12, closed).
pub fn input_schema(params: &[Param]) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for param in params {
        properties.insert(param.name.clone(), param_schema(param));
        if param.required && param.default.is_none() {
            required.push(json!(param.name));
        }
    }
    let mut schema = json!({
        "type": "object",
        "properties": properties,
        "additionalProperties": false,
    });
    if !required.is_empty() {
        schema["required"] = Value::Array(required);
    }
    schema
}

impl ParamView for Vec<Param> {
    fn allows_dash(&self, name: &str) -> bool {
        self.iter().any(|p| p.name == name && p.allow_dash)
    }
    fn flag(&self, name: &str) -> Option<&str> {
        self.iter()
            .find(|p| p.name == name)
            .and_then(|p| p.flag.as_deref())
    }
}

impl ToolDef {
    /// The tool as `tools/list` shows it.
    pub fn to_tool(&self) -> Tool {
        let mut raw = json!({
            "name": self.name,
            "description": self.description,
            "inputSchema": input_schema(&self.params),
        });
        if let Some(title) = &self.title {
            raw["title"] = json!(title);
        }
        if !self.annotations.is_empty() {
            raw["annotations"] = Value::Object(self.annotations.clone());
        }
        if let Some(schema) = &self.output_schema {
            raw["outputSchema"] = schema.clone();
        }
        if let Some(support) = self.task.name() {
            raw["execution"] = json!({"taskSupport": support});
        }
        Tool::from_owned(raw).expect("a compiled tool is valid")
    }

    /// The command's program and the fixed words that follow it, up to the first value or
    /// option (`["git", "log", "--oneline", "{n}"]` gives `git` and `[log]`).
    pub fn program_and_words(&self) -> Option<(&str, Vec<String>)> {
        let mut elements = self.command.iter();
        let Some(Element::Word(program)) = elements.next() else {
            return None;
        };
        let words = elements
            .map_while(|e| match e {
                Element::Word(word) if !word.starts_with('-') => Some(word.clone()),
                _ => None,
            })
            .collect();
        Some((program, words))
    }
}

impl Manifest {
    /// Every tool as `tools/list` shows it, in manifest order.
    pub fn tools(&self) -> Vec<Tool> {
        self.tools.iter().map(ToolDef::to_tool).collect()
    }
}

#[cfg(test)]
mod tests;
