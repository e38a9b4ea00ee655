//! What a loaded manifest is: the server, its tools, resources, resource templates and
//! prompts, their parameters and permissions, the keys each table takes, and the defaults.

use super::template::Element;
use serde_json::{Map, Value};
use std::path::PathBuf;
use std::time::Duration;

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
pub const PARAM_KEYS: [&str; 18] = [
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
    "code",
    "exists",
    "header",
];

/// Environment variables every command gets (besides the manifest's own globs).
pub const BASE_ENV: [&str; 5] = ["PATH", "HOME", "LANG", "LC_*", "TZ"];
/// Defaults of the `[server]` table.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
pub const DEFAULT_MAX_OUTPUT: usize = 1024 * 1024;
pub const DEFAULT_CONCURRENCY: usize = 8;

/// A manifest that could not be loaded: where, and why (`FILE:LINE: reason`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}:{line}: {reason}")]
pub struct ManifestError {
    pub file: String,
    pub line: usize,
    pub reason: String,
}

/// A usage error (exit 2) that says which line to fix.
impl crate::error::Failure for ManifestError {
    fn kind(&self) -> crate::ErrorKind {
        crate::ErrorKind::Usage
    }
    fn hint(&self) -> Option<String> {
        Some(format!(
            "fix line {} of {} and start again",
            self.line, self.file
        ))
    }
}

impl ManifestError {
    /// As ferry's usage error (exit 2), keeping this one as its cause.
    pub fn into_error(self) -> crate::Error {
        self.into()
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

impl ParamKind {
    /// The kind's name as a manifest writes it (`type = "path"`).
    pub fn name(&self) -> &'static str {
        match self {
            ParamKind::String => "string",
            ParamKind::Integer => "integer",
            ParamKind::Number => "number",
            ParamKind::Boolean => "boolean",
            ParamKind::Path => "path",
            ParamKind::Array(_) => "array",
        }
    }
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
    /// The value is code the command runs (a sed script, SQL, a jq filter), declared so: it
    /// may stand where a program that runs code reads its script; the kernel sandbox confines it.
    pub code: bool,
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

/// What a command may touch beyond what every command gets (docs/sandbox.md): the kernel
/// sandbox of `serve` enforces it. Paths are absolute: `~/` is the
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
        crate::protocol::tools::Annotations::read(&self.annotations).read_only()
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
    pub roots: Roots,
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
            code: false,
            exists: true,
            header: None,
        }
    }
}

/// The served roots: canonical directories, never none (a manifest without `roots` serves its
/// own directory), so there is always a first one to run commands in.
#[derive(Debug, Clone, PartialEq)]
pub struct Roots(Vec<PathBuf>);

impl Roots {
    pub fn new(first: PathBuf, rest: impl IntoIterator<Item = PathBuf>) -> Roots {
        Roots(std::iter::once(first).chain(rest).collect())
    }

    /// The first root: where commands run, and what relative paths start from.
    pub fn working_dir(&self) -> &PathBuf {
        &self.0[0]
    }

    /// Every root, the first first.
    pub fn all(&self) -> &[PathBuf] {
        &self.0
    }
}
